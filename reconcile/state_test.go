package reconcile

// The State built from a slice, and its accessors: what the tests compare
// (the commands build states from streams, NewStateFrom and
// NewCurrentState).

import (
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// NewState classifies entries under dit's base. Transient entries (the
// trash and placeholders of an interrupted write, directory.IsTransient)
// are skipped.
func NewState(dit ldapschema.DIT, entries []*ldap.Entry) *State {
	s := newState(dit)
	s.entries = make(map[string]*Entry, len(entries))
	for _, raw := range entries {
		s.Add(raw)
	}
	return s
}

// Entry returns the entry with this DN, or nil.
func (s *State) Entry(dn string) *Entry { return s.entries[ldapschema.NormalizeDN(dn)] }

// Entries returns the entries in report order.
func (s *State) Entries() []*Entry {
	out := make([]*Entry, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, e)
	}
	sortEntries(out, itself, rank)
	return out
}
