package directory

// Referential integrity: who refers to an entry, what deleting or renaming
// it must also change.
//
// References between entries are DN-valued attributes (every attribute of
// DN syntax in ldapschema, and member), except the ordered preferred-site
// lists, which hold site names (docs/schema.md). When a referred entry goes away,
// a referrer either loses the value (an optional reference, such as a group
// member or a session's pool) or goes away too (a required reference, such
// as a pod's site, and every reference of a home-site row, which means
// nothing without its user or group, site and entitlement).

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// Referrer is an entry that refers to another one (or lies below it).
type Referrer struct {
	DN   string `json:"dn"`
	Kind string `json:"kind"` // "pod", "site", "home-site row", ...
	Name string `json:"name"`
	// Via says how it refers: an attribute name, "preferred sites" or
	// "child" for an entry below the referred one.
	Via string `json:"via"`
}

// Via values that are not attribute names.
const (
	ViaChild          = "child"
	ViaPreferredSites = "preferred sites"
)

// DNAttributes lists the attributes whose values refer to entries: every
// attribute of DN syntax in the schema, and member.
func DNAttributes() []string { return ldapschema.ReferenceAttributes() }

// DescribeEntry names an entry for people, from its object classes: its kind
// ("pod", "home-site row", ...) and its name.
func DescribeEntry(e *ldap.Entry) (kind, name string) {
	return describeNamed(e, ldapschema.NameOf(e.DN))
}

// describeNamed is DescribeEntry for an entry whose name (its DN's first
// RDN value) is known.
func describeNamed(e *ldap.Entry, name string) (string, string) {
	has := func(c string) bool { return ldapschema.HasClass(e, c) }
	switch {
	case has(ldapschema.ClassSite):
		return objkind.Site, name
	case has(ldapschema.ClassPod):
		return objkind.Pod, name
	case has(ldapschema.ClassConnectionServer):
		return objkind.ConnectionServer, name
	case has(ldapschema.ClassDesktopPool), has(ldapschema.ClassFarmPool):
		return objkind.Pool, name
	case has(ldapschema.ClassRDSFarm):
		return objkind.Farm, name
	case has(ldapschema.ClassRDSHost):
		return objkind.Host, name
	case has(ldapschema.ClassGlobalEntitlement):
		return objkind.Entitlement, name
	case has(ldapschema.ClassHomeSite):
		return objkind.HomeSiteRow, homeSiteRowName(e)
	case has(ldapschema.ClassSession):
		return objkind.Session, name
	case has(ldapschema.ClassPodAssignment):
		return objkind.Assignment, fmt.Sprintf("of user %s for entitlement %s",
			ldapschema.NameOf(e.GetEqualFoldAttributeValue(ldapschema.AttrUserDN)),
			ldapschema.NameOf(e.GetEqualFoldAttributeValue(ldapschema.AttrEntitlementDN)))
	case has(ldapschema.ClassGroup):
		return objkind.Group, name
	case has(ldapschema.ClassInetOrgPerson):
		return objkind.User, name
	case has(ldapschema.ClassDevice):
		return objkind.Computer, name
	}
	return objkind.Entry, e.DN
}

// homeSiteRowName renders a row as "of user alice (global)" or "of group
// Sales for entitlement Desktops".
func homeSiteRowName(e *ldap.Entry) string {
	who := "user " + ldapschema.NameOf(e.GetEqualFoldAttributeValue(ldapschema.AttrUserDN))
	if g := e.GetEqualFoldAttributeValue(ldapschema.AttrGroupDN); g != "" {
		who = "group " + ldapschema.NameOf(g)
	}
	if ge := e.GetEqualFoldAttributeValue(ldapschema.AttrEntitlementDN); ge != "" {
		return "of " + who + " for entitlement " + ldapschema.NameOf(ge)
	}
	return "of " + who + " (global)"
}

// goesWithReference reports whether a referrer must be deleted when the
// entry its attribute refers to goes away: the attribute is required by one
// of its classes, or the referrer is a home-site row.
func goesWithReference(e *ldap.Entry, attr string) bool {
	if ldapschema.HasClass(e, ldapschema.ClassHomeSite) {
		return true
	}
	for _, c := range ldapschema.Classes {
		if !ldapschema.HasClass(e, c.Name) {
			continue
		}
		if fold.Contains(c.Must, attr) {
			return true
		}
	}
	return false
}

// namedEntry is an entry read with its DN read once (ldapschema.NormalDN):
// a plan compares, names and sorts it by that.
type namedEntry struct {
	*ldap.Entry
	dn ldapschema.NormalDN
}

// describe is DescribeEntry, the name taken from the DN read.
func (e namedEntry) describe() (kind, name string) { return describeNamed(e.Entry, e.dn.Name()) }

// refHit is one attribute value of a referrer that names a target.
type refHit struct {
	namedEntry // the referrer
	attr       string
	value      string              // as stored
	target     ldapschema.NormalDN // value, read
}

// findReferences finds the DN-valued attributes that name any of targets,
// searching the whole base in chunks. Each referrer's DN and each value
// that names a target is read once.
func (s *Store) findReferences(targets []ldapschema.NormalDN) ([]refHit, error) {
	set := make(map[string]bool, len(targets))
	for _, t := range targets {
		set[t.Key()] = true
	}
	attrs := DNAttributes()
	var hits []refHit
	seen := map[string]bool{}
	const chunk = 40
	for i := 0; i < len(targets); i += chunk {
		end := min(i+chunk, len(targets))
		var fs []string
		for _, t := range targets[i:end] {
			for _, a := range attrs {
				fs = append(fs, ldapclient.Filter(a, t.String()))
			}
		}
		entries, err := s.Find(s.DIT.Base, ldap.ScopeWholeSubtree, ldapclient.Or(fs...))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			var referrer ldapschema.NormalDN // read at its first hit
			for _, a := range attrs {
				for _, v := range e.GetEqualFoldAttributeValues(a) {
					target := ldapschema.NormalDNOf(v)
					if !set[target.Key()] {
						continue
					}
					if referrer.String() == "" {
						referrer = ldapschema.NormalDNOf(e.DN)
					}
					key := referrer.Key() + "\x00" + strings.ToLower(a) + "\x00" + target.Key()
					if !seen[key] {
						seen[key] = true
						hits = append(hits, refHit{namedEntry: namedEntry{e, referrer}, attr: a, value: v, target: target})
					}
				}
			}
		}
	}
	return hits, nil
}

// sitesPreferring reads the sites whose preferred-site list names any of
// names (compared without regard to case).
func (s *Store) sitesPreferring(names []string) ([]ldapschema.Site, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var fs []string
	for _, n := range names {
		// "{rank}name": the value ends with "}" and the name; the decoded
		// list is checked below, as "}name" may also end a longer name.
		fs = append(fs, ldapclient.Suffix(ldapschema.AttrPreferredSite, "}"+n))
	}
	entries, err := s.Find(s.DIT.Sites(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassSite), ldapclient.Or(fs...)))
	if err != nil {
		return nil, err
	}
	var out []ldapschema.Site
	for _, e := range entries {
		site, err := ldapschema.SiteFromEntry(e)
		if err != nil {
			return nil, err
		}
		for _, p := range site.PreferredSites {
			if fold.Contains(names, p) {
				out = append(out, site)
				break
			}
		}
	}
	return out, nil
}

// subtree reads dn and every entry below it, parents first, and remembers
// their entryCSNs: the delete or rename planned from this read asserts
// them (assertRead), so an entry changed since, or referred to since (see
// guard.go), makes it fail. A plan reads the subtree before it searches
// for referrers.
// Each entry's DN is read once.
func (s *Store) subtree(dn string) ([]namedEntry, error) {
	entries, err := s.Find(dn, ldap.ScopeWholeSubtree, ldapclient.AnyEntry, objectAttrs...)
	if err != nil {
		return nil, err
	}
	out := make([]namedEntry, len(entries))
	for i, e := range entries {
		out[i] = namedEntry{e, ldapschema.NormalDNOf(e.DN)}
		s.rememberKey(e, out[i].dn.Key())
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].dn.Depth() < out[j].dn.Depth() })
	return out, nil
}

func depth(dn string) int {
	parsed, err := ldap.ParseDN(dn)
	if err != nil {
		return 0
	}
	return len(parsed.RDNs)
}

// DeletePlan is what deleting an entry involves.
type DeletePlan struct {
	// Children are the entries below the target, deleted with it.
	Children []Referrer
	// Referrers are the entries outside the target's subtree that refer to
	// it or to its children.
	Referrers []Referrer
	// Plan deletes the target and its children and removes every
	// reference (deleting referrers that cannot live without it, and so on),
	// in one transaction. Without Children and Referrers it is just the
	// delete.
	Plan
}

// Blocked reports whether the delete needs --force.
func (d *DeletePlan) Blocked() bool { return len(d.Children) > 0 || len(d.Referrers) > 0 }

// PlanDelete plans deleting the entry dn (kind and name for messages),
// with everything below it and every reference to them.
func (s *Store) PlanDelete(kind, name, dn string) (*DeletePlan, error) {
	dp := &DeletePlan{}
	// What a conflict names: the object (changed, or referred to since
	// it was read), and the preferred lists rewritten.
	dp.Conflict = kind + " " + name
	// Every DN is read once (ldapschema.NormalDN), where it is found: the
	// target here, the entries of a subtree, the referrers and the values
	// that name the doomed entries; the maps are keyed by the keys read.
	target := ldapschema.NormalDNOf(dn)
	type doomedEntry struct {
		namedEntry
		round int // the cascade round that doomed it
	}
	doomed := map[string]*doomedEntry{} // normalized DN -> entry
	var doomedOrder []*doomedEntry
	rounds := 0
	var removals []refHit                      // optional references to remove
	preferredRemovals := map[string][]string{} // normalized site DN -> names to drop
	preferredSites := map[string]ldapschema.Site{}
	var preferredOrder []string

	queue := []ldapschema.NormalDN{target}
	first := true
	for len(queue) > 0 {
		var fresh []ldapschema.NormalDN // newly doomed DNs
		var freshSites []string
		for _, q := range queue {
			if doomed[q.Key()] != nil {
				continue
			}
			entries, err := s.subtree(q.String())
			if err != nil {
				return nil, err
			}
			if len(entries) == 0 && first {
				return nil, s.notFound(kind, name)
			}
			for _, e := range entries {
				k := e.dn.Key()
				if doomed[k] != nil {
					continue
				}
				d := &doomedEntry{e, rounds}
				doomed[k] = d
				doomedOrder = append(doomedOrder, d)
				fresh = append(fresh, e.dn)
				if ldapschema.HasClass(e.Entry, ldapschema.ClassSite) {
					freshSites = append(freshSites, e.dn.Name())
				}
				if first && !e.dn.Equal(target) {
					k, n := e.describe()
					dp.Children = append(dp.Children, Referrer{DN: e.DN, Kind: k, Name: n, Via: ViaChild})
				}
			}
		}
		queue = nil
		hits, err := s.findReferences(fresh)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			if doomed[h.dn.Key()] != nil {
				continue
			}
			if first {
				k, n := h.describe()
				dp.Referrers = append(dp.Referrers, Referrer{DN: h.DN, Kind: k, Name: n, Via: h.attr})
			}
			if goesWithReference(h.Entry, h.attr) {
				queue = append(queue, h.dn)
			} else {
				removals = append(removals, h)
			}
		}
		sites, err := s.sitesPreferring(freshSites)
		if err != nil {
			return nil, err
		}
		for _, site := range sites {
			k := ldapschema.NormalizeDN(site.DN)
			if doomed[k] != nil {
				continue
			}
			if first {
				dp.Referrers = append(dp.Referrers, Referrer{DN: site.DN, Kind: objkind.Site, Name: site.Name, Via: ViaPreferredSites})
			}
			if _, ok := preferredSites[k]; !ok {
				preferredSites[k] = site
				preferredOrder = append(preferredOrder, k)
			}
			for _, p := range site.PreferredSites {
				if fold.Contains(freshSites, p) {
					preferredRemovals[k] = append(preferredRemovals[k], p)
				}
			}
		}
		first = false
		rounds++
	}

	// Value removals and list rewrites first, on entries that stay.
	byEntry := map[string][]refHit{}
	var entryOrder []string
	for _, r := range removals {
		k := r.dn.Key()
		if doomed[k] != nil {
			continue
		}
		if _, ok := byEntry[k]; !ok {
			entryOrder = append(entryOrder, k)
		}
		byEntry[k] = append(byEntry[k], r)
	}
	for _, k := range entryOrder {
		rs := byEntry[k]
		var changes []ldap.Change
		var whats []string
		for _, r := range rs {
			changes = append(changes, ldap.Change{Operation: ldap.DeleteAttribute,
				Modification: ldap.PartialAttribute{Type: r.attr, Vals: []string{r.value}}})
			// The referred entry is named from the doomed set when it is
			// there, else from its DN alone.
			tk, tn := "entry", r.target.Name()
			if d := doomed[r.target.Key()]; d != nil {
				tk, tn = d.describe()
			}
			whats = append(whats, tk+" "+tn)
		}
		rk, rn := rs[0].describe()
		dp.Add(modifyWrite("remove", fmt.Sprintf("%s from %s %s", strings.Join(whats, ", "), rk, rn), rs[0].dn, changes))
	}
	var conflicts []string
	for _, k := range preferredOrder {
		site := preferredSites[k]
		drop := preferredRemovals[k]
		var keep []string
		for _, p := range site.PreferredSites {
			if !fold.Contains(drop, p) {
				keep = append(keep, p)
			}
		}
		w, err := PreferredWrite("remove", fmt.Sprintf("%s from the preferred sites of site %s", strings.Join(drop, ", "), site.Name), site, keep)
		if err != nil {
			return nil, err
		}
		dp.Add(w)
		conflicts = append(conflicts, PreferredConflict(site.Name))
	}
	if len(conflicts) > 0 {
		dp.Conflict = strings.Join(append([]string{dp.Conflict}, conflicts...), ", ")
	}
	// Then the deletes: referrers before what they refer to (later cascade
	// rounds first), children before parents.
	sort.SliceStable(doomedOrder, func(i, j int) bool {
		if ri, rj := doomedOrder[i].round, doomedOrder[j].round; ri != rj {
			return ri > rj
		}
		return doomedOrder[i].dn.Depth() > doomedOrder[j].dn.Depth()
	})
	for _, e := range doomedOrder {
		k, n := e.describe()
		dp.Add(deleteWrite("delete", k+" "+n, e.dn))
	}
	return dp, nil
}

// PlanRename plans renaming the entry dn (kind and name for messages) to
// newName under the same parent, keeping its RDN attribute: the entry and
// its subtree move with one modrdn, and every reference to them is
// rewritten (DN values; site names in preferred-site lists; the names of
// home-site rows and pod assignments, derived from the DNs they hold), all
// in one transaction.
func (s *Store) PlanRename(kind, name, dn, newName string) (*Plan, error) {
	parsed, err := ldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) < 2 {
		return nil, fmt.Errorf("%s %q: cannot rename %q", kind, name, dn)
	}
	rdnAttr := parsed.RDNs[0].Attributes[0].Type
	newRDN := ldapschema.RDN(rdnAttr, newName)
	newDN := newRDN + "," + ldapschema.ParentOf(dn)

	entries, err := s.subtree(dn)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, s.notFound(kind, name)
	}
	target := ldapschema.NormalDNOf(dn)
	dns := make([]ldapschema.NormalDN, 0, len(entries))
	isSite := false
	for _, e := range entries {
		dns = append(dns, e.dn)
		if e.dn.Equal(target) && ldapschema.HasClass(e.Entry, ldapschema.ClassSite) {
			isSite = true
		}
	}
	hits, err := s.findReferences(dns)
	if err != nil {
		return nil, err
	}
	p := &Plan{Conflict: fmt.Sprintf("%s %s", kind, name)}
	// Group the rewrites by referrer.
	type rewrite struct{ attr, from, to string }
	byEntry := map[string][]rewrite{}
	entryOf := map[string]*ldap.Entry{}
	var order []string
	for _, h := range hits {
		k := h.dn.Key()
		if _, ok := entryOf[k]; !ok {
			entryOf[k] = h.Entry
			order = append(order, k)
		}
		byEntry[k] = append(byEntry[k], rewrite{attr: h.attr, from: h.value, to: rebaseDN(h.value, dn, newDN)})
	}
	var rowRenames []Write
	for _, k := range order {
		e := entryOf[k]
		var changes []ldap.Change
		var attrs []string
		for _, r := range byEntry[k] {
			changes = append(changes,
				ldap.Change{Operation: ldap.DeleteAttribute, Modification: ldap.PartialAttribute{Type: r.attr, Vals: []string{r.from}}},
				ldap.Change{Operation: ldap.AddAttribute, Modification: ldap.PartialAttribute{Type: r.attr, Vals: []string{r.to}}})
			if !fold.Contains(attrs, r.attr) {
				attrs = append(attrs, r.attr)
			}
		}
		rk, rn := DescribeEntry(e)
		p.Add(ModifyWrite("update", fmt.Sprintf("%s %s (%s)", rk, rn, strings.Join(attrs, ", ")), e.DN, changes))
		// Rows named after the DNs they hold get a new name.
		if ldapschema.HasClass(e, ldapschema.ClassHomeSite) || ldapschema.HasClass(e, ldapschema.ClassPodAssignment) {
			value := func(attr string) string {
				v := e.GetEqualFoldAttributeValue(attr)
				for _, r := range byEntry[k] {
					if strings.EqualFold(r.attr, attr) {
						v = r.to
					}
				}
				return v
			}
			principal := value(ldapschema.AttrUserDN)
			if principal == "" {
				principal = value(ldapschema.AttrGroupDN)
			}
			id := ldapschema.RowID(principal, value(ldapschema.AttrEntitlementDN))
			if ldapschema.NameOf(e.DN) != id {
				// The row's cn follows its RDN (deleteOldRDN).
				rowRenames = append(rowRenames, RenameWrite("rename", rk+" "+rn, e.DN, ldapschema.RDN(ldapschema.AttrCN, id)))
			}
		}
	}
	if isSite {
		sites, err := s.sitesPreferring([]string{name})
		if err != nil {
			return nil, err
		}
		var conflicts []string
		for _, site := range sites {
			if ldapschema.EqualDN(site.DN, dn) {
				continue
			}
			names := make([]string, len(site.PreferredSites))
			for i, n := range site.PreferredSites {
				names[i] = n
				if strings.EqualFold(n, name) {
					names[i] = newName
				}
			}
			w, err := PreferredWrite("update", fmt.Sprintf("the preferred sites of site %s", site.Name), site, names)
			if err != nil {
				return nil, err
			}
			p.Add(w)
			conflicts = append(conflicts, PreferredConflict(site.Name))
		}
		p.Conflict = strings.Join(append([]string{p.Conflict}, conflicts...), ", ")
	}
	p.Add(rowRenames...)
	p.Add(RenameWrite("rename", fmt.Sprintf("%s %s to %s", kind, name, newName), dn, newRDN))
	return p, nil
}

// rebaseDN moves value, a DN at or below oldBase, under newBase.
func rebaseDN(value, oldBase, newBase string) string {
	v, err1 := ldap.ParseDN(value)
	o, err2 := ldap.ParseDN(oldBase)
	if err1 != nil || err2 != nil || len(v.RDNs) < len(o.RDNs) {
		return newBase
	}
	keep := v.RDNs[:len(v.RDNs)-len(o.RDNs)]
	if len(keep) == 0 {
		return newBase
	}
	parts := make([]string, 0, len(keep)+1)
	for _, r := range keep {
		parts = append(parts, ldapschema.RDNOf(r.Attributes))
	}
	return strings.Join(append(parts, newBase), ",")
}
