package directory

// Guarding references: a write that makes an entry refer to another one
// (a DN value, a preferred-site name) goes in one transaction with a
// "touch" of the entry it refers to, so that the reference cannot land on
// an entry renamed or deleted meanwhile.

import (
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/ldapschema"
)

// How a reference is kept from dangling when a rename or a delete races
// the write that adds it (issue 22: `site update London --rename LondonX`
// against `pod create racepod --site London` left the pod pointing at
// cn=London, and both exited 0):
//
//   - the writer of a reference touches, in the same transaction, the entry
//     it refers to: an empty modify (slapd 2.5 takes a modify without
//     changes and gives the entry a new entryCSN, as any modify) that
//     asserts the entryCSN this store read, when it read the entry; so the
//     transaction fails (exit 5) when the entry is gone (no such object)
//     or changed since it was read. It also touches the entry's ancestors
//     that are objects (the pod above a pool, the farm and pod above an
//     RDS host), without an assertion: each touch gives its entry a new
//     entryCSN;
//   - a rename or a delete asserts the entryCSN its plan read, before it
//     searched for the entries that refer to what it renames or deletes
//     (Store.assertRead on the first write of each entry read, and the move
//     of a subtree carries its root's assertion).
//
// The server runs transactions one after the other. If the writer's
// commits first, the rename's assertion fails (its entry has a new
// entryCSN); if the rename's commits first, the writer's touch finds no
// entry. Either way one of the two exits 5 and nothing dangles. Two
// writers that refer to the same entry exclude each other the same way
// (the second exits 5): a rule checked against what they read (a pool in
// at most one entitlement, a farm's capacity) holds at the commit.

// Referring returns w with the entries it makes its entry refer to given
// (DNs): what Store.ApplyPlan touches instead of every DN value and
// preferred site its changes hold. A planner that rewrites a whole
// attribute (a replace of a group's members) names only the values it
// adds, so that a change of one member of a large group touches one entry.
func (w Write) Referring(dns ...string) Write {
	w.refs, w.refsGiven = dns, true
	return w
}

// referredDNs returns the DNs a write makes its entry refer to, as
// written: those given with Referring, else the DN values it adds and the
// sites of the preferred-site values it adds.
func (s *Store) referredDNs(w Write) []string {
	if w.refsGiven {
		return w.refs
	}
	var out []string
	collect := func(attr string, values []string) {
		if ldapschema.IsOrderedAttribute(attr) {
			list, _ := ldapschema.DecodePreferredSites(values)
			for _, n := range list.Names() {
				out = append(out, s.DIT.Site(n))
			}
			return
		}
		if isDNAttribute(attr) {
			out = append(out, values...)
		}
	}
	switch {
	case w.req.Add != nil:
		for _, a := range w.req.Add.Attributes {
			collect(a.Type, a.Vals)
		}
	case w.req.Modify != nil:
		for _, c := range w.req.Modify.Changes {
			if c.Operation == ldap.AddAttribute || c.Operation == ldap.ReplaceAttribute {
				collect(c.Modification.Type, c.Modification.Vals)
			}
		}
	}
	return out
}

// guardScope is what a whole plan writes, for the touches of each of its
// transactions: the entries it writes, and those it creates (adds, and
// the new names of renames). Normalized DNs.
type guardScope struct {
	written, created map[string]bool
}

func scopeOf(writes []Write) *guardScope {
	g := &guardScope{written: make(map[string]bool, len(writes)), created: map[string]bool{}}
	for _, w := range writes {
		dn := w.normal()
		k := dn.Key()
		g.written[k] = true
		switch {
		case w.req.Add != nil:
			g.created[k] = true
		case w.req.Rename != nil:
			parent := w.req.Rename.NewSuperior
			if parent == "" {
				parent = dn.Parent().String()
			}
			g.created[ldapschema.NormalizeDN(w.req.Rename.NewRDN+","+parent)] = true
		}
	}
	return g
}

// createdByPlan reports whether the entry dn, or one above it, is one the
// plan creates: O(depth) look-ups of keys sliced from dn's.
func (g *guardScope) createdByPlan(dn ldapschema.NormalDN) bool {
	if g.created[dn.Key()] {
		return true
	}
	for k := dn.ParentKey(); k != ""; k = ldapschema.ParentKey(k) {
		if g.created[k] {
			return true
		}
	}
	return false
}

// touches returns the touches that guard the references writes (one
// transaction's writes, of a plan whose scope is plan) add: for each entry
// referred to, an empty modify of it and of its ancestors that are
// objects, each entry once. Not touched: the entries the transaction
// writes itself (their own write fails when they are gone, and asserts
// what was read), and those the plan creates (an add, the new name of a
// rename, and what lies below them: a plan of several transactions does
// not guard its references to the entries it added in an earlier one,
// which no one else has read). The referred entry (not an ancestor)
// asserts the entryCSN this store read, unless the plan writes it (which
// changes the entryCSN, in this transaction or another); an entry not
// read is asserted to exist only. O(r·d) for r references of depth d.
func (s *Store) touches(writes []Write, plan *guardScope) []Write {
	mine := writtenDNs(writes)
	base := ldapschema.NormalDNOf(s.DIT.Base)
	containers := map[string]bool{base.Key(): true}
	for _, c := range s.DIT.Containers() {
		containers[ldapschema.NormalizeDN(c)] = true
	}
	type touch struct {
		dn       ldapschema.NormalDN
		referred bool // referred to, not only above an entry referred to
	}
	at := map[string]int{} // normalized DN -> index in touched
	var touched []touch
	for _, w := range writes {
		for _, value := range s.referredDNs(w) {
			// Each value is read once, and walked up by its parents.
			dn := ldapschema.NormalDNOf(value)
			for up := 0; dn.String() != "" && dn.IsUnder(base); up++ {
				k := dn.Key()
				if containers[k] {
					break
				}
				if i, ok := at[k]; ok {
					touched[i].referred = touched[i].referred || up == 0
				} else if !mine[k] && !plan.createdByPlan(dn) {
					at[k] = len(touched)
					touched = append(touched, touch{dn: dn, referred: up == 0})
				}
				dn = dn.Parent()
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Write, len(touched))
	for i, t := range touched {
		var controls []ldap.Control
		k := t.dn.Key()
		if csn, ok := s.read[k]; ok && t.referred && !plan.written[k] {
			if ctl, err := ldapconn.AssertionControl(ldapclient.Filter(ldapschema.AttrEntryCSN, csn)); err == nil {
				controls = append(controls, ctl)
			}
		}
		out[i] = modifyWrite("touch", t.dn.String(), t.dn, nil, controls...)
	}
	return out
}

// writtenDNs returns the entries writes write (normalized DNs).
func writtenDNs(writes []Write) map[string]bool {
	out := make(map[string]bool, len(writes))
	for _, w := range writes {
		out[w.normal().Key()] = true
	}
	return out
}
