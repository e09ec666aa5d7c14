package lint

// The rules on the topology and the objects that serve sessions: unreadable
// entries, duplicate names, settings, sites, pods, pools, farms and hosts.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/quote"
	"github.com/cpactl/cpactl/rules"
)

// unreadable: O(U) for U unreadable entries.
func (l *linter) unreadable() {
	for _, u := range l.d.Unreadable {
		kind := objkind.Entry
		name := ldapschema.NameOf(u.DN)
		if _, o := l.lookup(u.DN); o != nil {
			kind = o.kind
		}
		l.add(kind, name, CheckUnreadable, u.Reason,
			"correct the value (ldapmodify), or rewrite the object with its cpactl update command")
	}
}

// duplicates reports names used twice where names must be unique across
// the federation (pods, Connection Servers, pools, farms, RDS hosts):
// O(n log n), names grouped in a map and each group's DNs sorted.
func (l *linter) duplicates() {
	type named struct{ name, where string }
	check := func(kind string, items []named) {
		by := map[string][]named{}
		for _, it := range items {
			k := strings.ToLower(it.name)
			by[k] = append(by[k], it)
		}
		for _, group := range by {
			if len(group) < 2 {
				continue
			}
			var wheres []string
			for _, it := range group {
				wheres = append(wheres, it.where)
			}
			sort.Strings(wheres)
			l.add(kind, group[0].name, CheckDuplicateName,
				fmt.Sprintf("%d %ss are named %q (%s): names must be unique across the federation, and cpactl refuses to pick one",
					len(group), kind, group[0].name, strings.Join(wheres, "; ")),
				"delete all but one and create the others again under new names")
		}
	}
	var items []named
	for _, x := range l.d.Pools {
		items = append(items, named{x.Name, x.DN})
	}
	check(objkind.Pool, items)
	items = nil
	for _, x := range l.d.Farms {
		items = append(items, named{x.Name, x.DN})
	}
	check(objkind.Farm, items)
	items = nil
	for _, x := range l.d.Hosts {
		items = append(items, named{x.Name, x.DN})
	}
	check(objkind.Host, items)
	items = nil
	for _, x := range l.d.ConnectionServers {
		items = append(items, named{x.Name, x.DN})
	}
	check(objkind.ConnectionServer, items)
}

// settings: O(1), the five settings.
func (l *linter) settings() {
	for _, set := range ldapschema.Settings {
		v, _ := l.d.Settings.Value(set)
		if err := set.Check(v); err != nil {
			l.add(objkind.Settings, set.Attr, CheckOutOfRange, err.Error(),
				fmt.Sprintf("cpactl settings set %s=VALUE (%s), or cpactl settings reset %s", set.Attr, set.Range(), set.Attr))
		}
	}
}

// sites: O(S + R) for S sites and R preferred-site values.
func (l *linter) sites() {
	siteNames := map[string]bool{}
	for _, s := range l.d.Sites {
		siteNames[strings.ToLower(s.Name)] = true
	}
	for _, s := range l.d.Sites {
		fix := fmt.Sprintf("rewrite the list: cpactl site preferred %s --set SITE,... (or --clear)", quote.Shell(s.Name))
		list, _ := ldapschema.DecodePreferredSites(s.PreferredRaw)
		if list.Gaps {
			var ranks []string
			for _, r := range list.Sites {
				ranks = append(ranks, fmt.Sprintf("{%d}%s", r.Rank, r.Name))
			}
			l.add(objkind.Site, s.Name, CheckPreferredRanks,
				fmt.Sprintf("preferred-site ranks are not 0..%d without gaps: %s", len(list.Sites)-1, strings.Join(ranks, " ")), fix)
		}
		names := make([]string, len(list.Sites))
		for i, r := range list.Sites {
			names[i] = r.Name
		}
		self := map[int]bool{}
		for _, p := range rules.PreferredSiteProblems(s.Name, names) {
			r := list.Sites[p.Index]
			if p.Check == CheckPreferredSelf {
				self[p.Index] = true
				l.add(objkind.Site, s.Name, CheckPreferredSelf,
					fmt.Sprintf("the preferred-site list names the site itself (rank %d)", r.Rank), fix)
				continue
			}
			l.add(objkind.Site, s.Name, CheckPreferredDuplicate,
				fmt.Sprintf("preferred site %q is listed more than once", r.Name), fix)
		}
		for i, r := range list.Sites {
			if !self[i] && !siteNames[strings.ToLower(r.Name)] {
				l.add(objkind.Site, s.Name, CheckPreferredMissing,
					fmt.Sprintf("preferred site %q (rank %d) does not exist", r.Name, r.Rank), fix)
			}
		}
	}
}

// pods: O(P), and the pod's own pae-RDS* values checked as cn=Common's.
func (l *linter) pods() {
	for _, p := range l.d.Pods {
		l.ref(objkind.Pod, p.Name, fmt.Sprintf("cpactl pod update %s --site SITE", quote.Shell(p.Name)),
			ldapschema.AttrSiteDN, p.SiteDN, objkind.Site)
		for _, set := range ldapschema.Settings {
			v, ok := p.RDS[set.Attr]
			if !ok {
				continue
			}
			if err := set.Check(v); err != nil {
				pod := quote.Shell(p.Name)
				l.add(objkind.Pod, p.Name, CheckOutOfRange, err.Error(),
					fmt.Sprintf("cpactl settings set --pod %s %s=VALUE (%s), or cpactl settings reset --pod %s %s", pod, set.Attr, set.Range(), pod, set.Attr))
			}
		}
	}
}

// pools: O(P), the farm found by its DN, normalized once (index).
func (l *linter) pools() {
	for i, p := range l.d.Pools {
		update := "cpactl pool update " + quote.Shell(p.Name)
		for _, v := range rules.Pool(p) {
			l.addViolation(objkind.Pool, p.Name, update, v)
		}
		if v := rules.PoolOvercommit(p); v != nil {
			l.addViolation(objkind.Pool, p.Name, update, *v)
		}
		if p.Kind == ldapschema.KindDesktop {
			continue
		}
		if p.FarmDN == "" {
			l.add(objkind.Pool, p.Name, CheckDangling, "the farm-backed pool names no farm", update+" --farm FARM")
			continue
		}
		if !l.refKey(objkind.Pool, p.Name, update+" --farm FARM", ldapschema.AttrFarmDN, p.FarmDN, l.poolFarm[i], objkind.Farm) {
			continue
		}
		if f, ok := l.farmOf[l.poolFarm[i]]; ok {
			if v := rules.FarmFits(p, l.d.Farms[f]); v != nil {
				l.add(objkind.Pool, p.Name, v.Check, v.Message, update+" --farm FARM (a farm of pod "+quote.Shell(p.Pod)+")")
			}
		}
	}
}

// farmsAndHosts: O(F + H).
func (l *linter) farmsAndHosts() {
	for _, f := range l.d.Farms {
		for _, v := range rules.Farm(f) {
			l.addViolation(objkind.Farm, f.Name, "cpactl farm update "+quote.Shell(f.Name), v)
		}
	}
	farmNamed := make(map[farmKey]int, len(l.d.Farms))
	for i, f := range l.d.Farms {
		farmNamed[farmKey{fold.Key(f.Name), fold.Key(f.Pod)}] = i
	}
	for _, h := range l.d.Hosts {
		update := "cpactl host update " + quote.Shell(h.Name)
		for _, v := range rules.Host(h) {
			l.addViolation(objkind.Host, h.Name, update, v)
		}
		if fi, ok := farmNamed[farmKey{fold.Key(h.Farm), fold.Key(h.Pod)}]; ok {
			if v := rules.HostOvercommit(h, l.d.Farms[fi]); v != nil {
				l.addViolation(objkind.Host, h.Name, update, *v)
			}
		}
	}
}
