package directory

import "github.com/go-ldap/ldap/v3"

// ChangeOp is what a Change does with its values.
type ChangeOp int

const (
	// ChangeAdd adds the values to the attribute. The server refuses a
	// value the attribute holds already, so add only the ones not in.
	ChangeAdd ChangeOp = iota + 1
	// ChangeRemove removes the values from the attribute. The server
	// refuses a value the attribute does not hold, so remove only the ones
	// in.
	ChangeRemove
)

// Change adds values to or removes values from one attribute of an entry,
// leaving its other values as they are: a group's members, an
// entitlement's pools or farms.
type Change struct {
	Op     ChangeOp
	Attr   string
	Values []string
}

// ldapChanges renders changes as the modify's changes, leaving out those
// with no values (a remove without values would delete the whole
// attribute).
func ldapChanges(changes []Change) []ldap.Change {
	out := make([]ldap.Change, 0, len(changes))
	for _, c := range changes {
		if len(c.Values) == 0 {
			continue
		}
		op := uint(ldap.AddAttribute)
		if c.Op == ChangeRemove {
			op = ldap.DeleteAttribute
		}
		out = append(out, ldap.Change{Operation: op, Modification: ldap.PartialAttribute{Type: c.Attr, Vals: c.Values}})
	}
	return out
}

// AddValues adds values to the attribute attr of dn, in one modify written
// directly (not in a transaction); it does nothing without values. Unlike
// Update it does not assert that the entry is as it was read: an added
// value does not depend on the others, so someone else's change of the
// entry in between is no conflict. A modify whose answer never came is
// settled by reading the entry again (see ApplyChanges).
func (s *Store) AddValues(dn, attr string, values ...string) error {
	return s.ApplyChanges(s.Client, dn, ldapChanges([]Change{{Op: ChangeAdd, Attr: attr, Values: values}}))
}

// RemoveValues removes values from the attribute attr of dn, as AddValues
// adds them; it does nothing without values (it never deletes the whole
// attribute).
func (s *Store) RemoveValues(dn, attr string, values ...string) error {
	return s.ApplyChanges(s.Client, dn, ldapChanges([]Change{{Op: ChangeRemove, Attr: attr, Values: values}}))
}

// ChangeWrite plans one modify of dn that makes changes (Changes without
// values are left out), for a Plan. Store.ApplyPlan makes it assert, as it
// does for every planned modify, that an entry this store read is
// unchanged since: a conflict is a *ConflictError.
func ChangeWrite(verb, object, dn string, changes ...Change) Write {
	return ModifyWrite(verb, object, dn, ldapChanges(changes))
}
