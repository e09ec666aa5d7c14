package slapdtest

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldif"
)

// errNotEntry is returned by ReadEntries for a change record other than
// an add.
var errNotEntry = errors.New("a change record; only entries are read here")

// ReadEntries reads every entry (and add record) of an LDIF text, for
// small inputs such as test fixtures; any other change record is an error.
func ReadEntries(text string) ([]*ldap.Entry, error) {
	r := ldif.NewReader(strings.NewReader(text))
	var out []*ldap.Entry
	for {
		var rec ldif.Record
		err := r.Read(&rec)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if rec.ChangeType != "" && rec.ChangeType != ldif.ChangeAdd {
			return nil, fmt.Errorf("line %d: changetype %s: %w", rec.Line, rec.ChangeType, errNotEntry)
		}
		out = append(out, entryOf(&rec))
	}
}

// entryOf returns an entry or add record as an ldap.Entry: one attribute
// per name, names compared without regard to case (the first spelling is
// kept), attributes in the order they first appear, values in file order.
func entryOf(r *ldif.Record) *ldap.Entry {
	e := &ldap.Entry{DN: r.DN}
	for _, v := range r.Values {
		var a *ldap.EntryAttribute
		for _, have := range e.Attributes {
			if strings.EqualFold(have.Name, v.Name) {
				a = have
				break
			}
		}
		if a == nil {
			a = &ldap.EntryAttribute{Name: v.Name}
			e.Attributes = append(e.Attributes, a)
		}
		a.Values = append(a.Values, v.Value)
		a.ByteValues = append(a.ByteValues, []byte(v.Value))
	}
	return e
}
