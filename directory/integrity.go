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
	has := func(c string) bool { return ldapschema.HasClass(e, c) }
	name = ldapschema.NameOf(e.DN)
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

// refHit is one attribute value of a referrer that names a target.
type refHit struct {
	entry *ldap.Entry
	attr  string
	value string // as stored
}

// findReferences finds the DN-valued attributes that name any of targets
// (normalized DN -> true), searching the whole base in chunks.
func (s *Store) findReferences(targets []string) ([]refHit, error) {
	set := map[string]bool{}
	for _, t := range targets {
		set[ldapschema.NormalizeDN(t)] = true
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
				fs = append(fs, Filter(a, t))
			}
		}
		entries, err := s.Find(s.DIT.Base, ldap.ScopeWholeSubtree, Or(fs...))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			for _, a := range attrs {
				for _, v := range e.GetEqualFoldAttributeValues(a) {
					key := ldapschema.NormalizeDN(e.DN) + "\x00" + strings.ToLower(a) + "\x00" + ldapschema.NormalizeDN(v)
					if set[ldapschema.NormalizeDN(v)] && !seen[key] {
						seen[key] = true
						hits = append(hits, refHit{entry: e, attr: a, value: v})
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
		fs = append(fs, Suffix(ldapschema.AttrPreferredSite, "}"+n))
	}
	entries, err := s.Find(s.DIT.Sites(), ldap.ScopeSingleLevel, And(ClassFilter(ldapschema.ClassSite), Or(fs...)))
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
func (s *Store) subtree(dn string) ([]*ldap.Entry, error) {
	entries, err := s.Find(dn, ldap.ScopeWholeSubtree, AnyEntry, objectAttrs...)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		s.remember(e)
	}
	sort.SliceStable(entries, func(i, j int) bool { return depth(entries[i].DN) < depth(entries[j].DN) })
	return entries, nil
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
	doomed := map[string]*ldap.Entry{} // normalized DN -> entry
	var doomedOrder []*ldap.Entry
	round := map[string]int{} // normalized DN -> cascade round that doomed it
	rounds := 0
	var removals []refHit                      // optional references to remove
	preferredRemovals := map[string][]string{} // normalized site DN -> names to drop
	preferredSites := map[string]ldapschema.Site{}
	var preferredOrder []string

	queue := []string{dn}
	first := true
	for len(queue) > 0 {
		var fresh []string // newly doomed DNs
		var freshSites []string
		for _, q := range queue {
			if doomed[ldapschema.NormalizeDN(q)] != nil {
				continue
			}
			entries, err := s.subtree(q)
			if err != nil {
				return nil, err
			}
			if len(entries) == 0 && first {
				return nil, s.notFound(kind, name)
			}
			for _, e := range entries {
				k := ldapschema.NormalizeDN(e.DN)
				if doomed[k] != nil {
					continue
				}
				doomed[k] = e
				round[k] = rounds
				doomedOrder = append(doomedOrder, e)
				fresh = append(fresh, e.DN)
				if ldapschema.HasClass(e, ldapschema.ClassSite) {
					freshSites = append(freshSites, ldapschema.NameOf(e.DN))
				}
				if first && !ldapschema.EqualDN(e.DN, dn) {
					k, n := DescribeEntry(e)
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
			if doomed[ldapschema.NormalizeDN(h.entry.DN)] != nil {
				continue
			}
			if first {
				k, n := DescribeEntry(h.entry)
				dp.Referrers = append(dp.Referrers, Referrer{DN: h.entry.DN, Kind: k, Name: n, Via: h.attr})
			}
			if goesWithReference(h.entry, h.attr) {
				queue = append(queue, h.entry.DN)
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
		k := ldapschema.NormalizeDN(r.entry.DN)
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
			tk, tn := describeDN(doomed, r.value)
			whats = append(whats, tk+" "+tn)
		}
		rk, rn := DescribeEntry(rs[0].entry)
		dp.Add(ModifyWrite("remove", fmt.Sprintf("%s from %s %s", strings.Join(whats, ", "), rk, rn), rs[0].entry.DN, changes))
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
		ri, rj := round[ldapschema.NormalizeDN(doomedOrder[i].DN)], round[ldapschema.NormalizeDN(doomedOrder[j].DN)]
		if ri != rj {
			return ri > rj
		}
		return depth(doomedOrder[i].DN) > depth(doomedOrder[j].DN)
	})
	for _, e := range doomedOrder {
		k, n := DescribeEntry(e)
		dp.Add(DeleteWrite("delete", k+" "+n, e.DN))
	}
	return dp, nil
}

// describeDN names a referred entry: from the doomed set when it is there,
// else from its DN alone.
func describeDN(known map[string]*ldap.Entry, dn string) (kind, name string) {
	if e := known[ldapschema.NormalizeDN(dn)]; e != nil {
		return DescribeEntry(e)
	}
	return "entry", ldapschema.NameOf(dn)
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
	var dns []string
	isSite := false
	for _, e := range entries {
		dns = append(dns, e.DN)
		if ldapschema.EqualDN(e.DN, dn) && ldapschema.HasClass(e, ldapschema.ClassSite) {
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
		k := ldapschema.NormalizeDN(h.entry.DN)
		if _, ok := entryOf[k]; !ok {
			entryOf[k] = h.entry
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
