package snapshot

// LDIF change sets (ldapmodify's form) laid over an Overlay.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/ldif"
)

// IsChangeSet reports whether the LDIF file at path holds change records
// (any "changetype:" line, add included): ldapmodify's form. A file of
// entries only (what `cpactl export` writes) is a desired federation. It
// reads up to the first change record.
func IsChangeSet(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	rd := ldif.NewReader(f)
	var rec ldif.Record
	for {
		err := rd.Read(&rec)
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("%s: not valid LDIF: %w", path, err)
		}
		if rec.ChangeType != "" {
			return true, nil
		}
	}
}

// changeRecord is one record of a change set, copied out of the reader.
type changeRecord struct {
	line         int
	dn, kind     string
	values       []ldif.Value
	mods         []ldif.Mod
	newRDN       string
	deleteOldRDN bool
	newSuperior  string
}

// ApplyChangeSet reads the change records of the LDIF file at path and
// lays them over the overlay in file order, as ldapmodify would apply them
// to the directory: an add needs a new DN and an existing parent, a delete
// an existing entry without children, a modify an existing entry (add,
// delete, replace and increment, with ldapmodify's rules for values that
// are missing or already there), a modrdn an existing entry without
// children. A record that ldapmodify would refuse is an error naming the
// file and the record's line; entries in the file (no changetype) are
// refused. It returns the number of records applied.
func (o *Overlay) ApplyChangeSet(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var recs []changeRecord
	rd := ldif.NewReader(f)
	var rec ldif.Record
	for {
		err := rd.Read(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("%s: not valid LDIF: %w", path, err)
		}
		if rec.ChangeType == "" {
			return 0, fmt.Errorf("%s line %d: an entry without changetype: in a change set; write changetype: add (or pass a file of entries only, a desired federation)", path, rec.Line)
		}
		recs = append(recs, changeRecord{line: rec.Line, dn: rec.DN, kind: rec.ChangeType,
			values: append([]ldif.Value(nil), rec.Values...), mods: copyMods(rec.Mods),
			newRDN: rec.NewRDN, deleteOldRDN: rec.DeleteOldRDN, newSuperior: rec.NewSuperior})
	}
	for _, r := range recs {
		if err := o.applyRecord(r); err != nil {
			return 0, fmt.Errorf("%s line %d: %s %s: %v", path, r.line, r.kind, r.dn, err)
		}
	}
	return len(recs), nil
}

func copyMods(mods []ldif.Mod) []ldif.Mod {
	out := make([]ldif.Mod, len(mods))
	for i, m := range mods {
		out[i] = m
		out[i].Values = append([]string(nil), m.Values...)
	}
	return out
}

func (o *Overlay) applyRecord(r changeRecord) error {
	if _, err := ldapschema.NormalizeDNChecked(r.dn); err != nil || r.dn == "" {
		return fmt.Errorf("the DN does not parse")
	}
	current, err := o.Entry(r.dn)
	if err != nil {
		return err
	}
	switch r.kind {
	case ldif.ChangeAdd:
		if current != nil {
			return errors.New("the entry already exists (68)")
		}
		if err := o.needParent(r.dn); err != nil {
			return err
		}
		e := &ldap.Entry{DN: r.dn}
		for _, v := range r.values {
			addValues(e, v.Name, v.Value)
		}
		o.Set(r.dn, e)
		return nil
	case ldif.ChangeDelete:
		if current == nil {
			return errors.New("no such entry (32)")
		}
		if err := o.needLeaf(r.dn); err != nil {
			return err
		}
		o.Delete(r.dn)
		return nil
	case ldif.ChangeModify:
		if current == nil {
			return errors.New("no such entry (32)")
		}
		for _, m := range r.mods {
			if err := modify(current, m); err != nil {
				return fmt.Errorf("line %d: %s: %v", m.Line, m.Attribute, err)
			}
		}
		o.Set(r.dn, current)
		return nil
	}
	return o.rename(r, current)
}

// rename moves a leaf entry: a new first RDN, optionally a new parent.
func (o *Overlay) rename(r changeRecord, current *ldap.Entry) error {
	if current == nil {
		return errors.New("no such entry (32)")
	}
	if err := o.needLeaf(r.dn); err != nil {
		return err
	}
	rdn, err := ldap.ParseDN(r.newRDN)
	if err != nil || len(rdn.RDNs) != 1 {
		return fmt.Errorf("newrdn %q is not one RDN", r.newRDN)
	}
	parent := ldapschema.ParentOf(r.dn)
	if r.newSuperior != "" {
		parent = r.newSuperior
	}
	dn := r.newRDN
	if parent != "" {
		dn += "," + parent
	}
	if _, err := ldapschema.NormalizeDNChecked(dn); err != nil { // else it has no parent to check
		return fmt.Errorf("the new DN %q does not parse", dn)
	}
	if x, err := o.Entry(dn); err != nil || x != nil {
		if err != nil {
			return err
		}
		return fmt.Errorf("%s already exists (68)", dn)
	}
	if err := o.needParent(dn); err != nil {
		return err
	}
	if r.deleteOldRDN {
		if old, err := ldap.ParseDN(r.dn); err == nil && len(old.RDNs) > 0 {
			for _, a := range old.RDNs[0].Attributes {
				dropValue(current, a.Type, a.Value)
			}
		}
	}
	for _, a := range rdn.RDNs[0].Attributes {
		if !hasValue(current, a.Type, a.Value) {
			addValues(current, a.Type, a.Value)
		}
	}
	current.DN = dn
	o.Delete(r.dn)
	o.Set(dn, current)
	return nil
}

// needParent checks that dn's parent exists (the base's own parent is not
// asked for).
func (o *Overlay) needParent(dn string) error {
	parent := ldapschema.ParentOf(dn)
	if parent == "" {
		return nil
	}
	p, err := o.Entry(parent)
	if err != nil {
		return err
	}
	if p == nil {
		return fmt.Errorf("its parent %s does not exist (32)", parent)
	}
	return nil
}

// needLeaf checks that dn has no children: one one-level search for one
// entry.
func (o *Overlay) needLeaf(dn string) error {
	found := false
	err := o.SearchEach(ldap.NewSearchRequest(dn, ldap.ScopeSingleLevel, ldap.NeverDerefAliases, 0, 0, false,
		ldapclient.AnyEntry, []string{"1.1"}, nil), func(*ldap.Entry) error {
		found = true
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return err
	}
	if found {
		return errors.New("the entry has children, which a what-if does not delete or move (66)")
	}
	return nil
}

var errStop = errors.New("stop")

// modify applies one modification of a modify record to e.
func modify(e *ldap.Entry, m ldif.Mod) error {
	switch m.Op {
	case ldif.ModAdd:
		for _, v := range m.Values {
			if hasValue(e, m.Attribute, v) {
				return fmt.Errorf("value %q already exists (20)", v)
			}
			addValues(e, m.Attribute, v)
		}
	case ldif.ModDelete:
		if len(e.GetEqualFoldAttributeValues(m.Attribute)) == 0 {
			return errors.New("no such attribute (16)")
		}
		if len(m.Values) == 0 {
			SetValues(e, m.Attribute, nil)
			return nil
		}
		for _, v := range m.Values {
			if !hasValue(e, m.Attribute, v) {
				return fmt.Errorf("no value %q (16)", v)
			}
			dropValue(e, m.Attribute, v)
		}
	case ldif.ModReplace:
		SetValues(e, m.Attribute, m.Values)
	case ldif.ModIncrement:
		vs := e.GetEqualFoldAttributeValues(m.Attribute)
		if len(vs) != 1 || len(m.Values) != 1 {
			return errors.New("increment needs one stored value and one increment (16)")
		}
		x, err1 := strconv.Atoi(strings.TrimSpace(vs[0]))
		d, err2 := strconv.Atoi(strings.TrimSpace(m.Values[0]))
		if err1 != nil || err2 != nil {
			return errors.New("increment of a value that is not an integer (21)")
		}
		SetValues(e, m.Attribute, []string{strconv.Itoa(x + d)})
	}
	return nil
}

func hasValue(e *ldap.Entry, attr, v string) bool {
	for _, x := range e.GetEqualFoldAttributeValues(attr) {
		if compareValues(attr, x, v) == 0 {
			return true
		}
	}
	return false
}

func addValues(e *ldap.Entry, attr string, values ...string) {
	for _, a := range e.Attributes {
		if strings.EqualFold(a.Name, attr) {
			a.Values = append(a.Values, values...)
			return
		}
	}
	e.Attributes = append(e.Attributes, &ldap.EntryAttribute{Name: attr, Values: values})
}

func dropValue(e *ldap.Entry, attr, v string) {
	for _, a := range e.Attributes {
		if strings.EqualFold(a.Name, attr) {
			kept := a.Values[:0]
			for _, x := range a.Values {
				if compareValues(attr, x, v) != 0 {
					kept = append(kept, x)
				}
			}
			a.Values = kept
		}
	}
	SetValues(e, attr, e.GetEqualFoldAttributeValues(attr)) // drops the attribute when no value is left
}
