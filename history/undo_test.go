package history

import (
	"encoding/hex"
	"errors"
	"reflect"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
)

func TestInverse(t *testing.T) {
	d := ldapschema.DIT{Base: "dc=x"}
	changes := []Change{
		{Op: "add", DN: "cn=Mars,ou=Sites,dc=x"},
		{Op: "modify", DN: "cn=India,ou=Sites,dc=x", Attrs: []AttrChange{{Attr: "pae-PreferredSite", Old: []string{"{0}UK"}, New: []string{"{0}US"}}}},
		{Op: "modrdn", DN: "cn=Germany,ou=Sites,dc=x", NewDN: "cn=Deutschland,ou=Sites,dc=x"},
		{Op: "delete", DN: "cn=Old,ou=Sites,dc=x", Attrs: []AttrChange{{Attr: "cn", Old: []string{"Old"}}}},
	}
	got, err := Inverse(d, changes)
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{
		{Op: "add", DN: "cn=Old,ou=Sites,dc=x", Attrs: []AttrChange{{Attr: "cn", Old: []string{"Old"}}}},
		{Op: "rename", DN: "cn=Deutschland,ou=Sites,dc=x", NewRDN: "cn=Germany"},
		{Op: "modify", DN: "cn=India,ou=Sites,dc=x", Attrs: changes[1].Attrs},
		{Op: "delete", DN: "cn=Mars,ou=Sites,dc=x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("steps:\n got %+v\nwant %+v", got, want)
	}
	moved, err := Inverse(d, []Change{{Op: "modrdn", DN: "cn=p,cn=A,ou=Pods,dc=x", NewDN: "cn=p,ou=Trash,dc=x"}})
	if err != nil || moved[0].NewSuperior != "cn=A,ou=Pods,dc=x" {
		t.Errorf("a move back: %+v %v", moved, err)
	}
	if _, err := Inverse(d, []Change{{Op: "modify", DN: "uid=a,dc=x", Attrs: []AttrChange{{Attr: "userPassword", Hidden: true}}}}); err == nil {
		t.Error("a password change is undone")
	}
}

// TestUndoScan: the run's writes are found; a later written change of one
// of its objects (under its new name) refuses the undo; a later change
// that was not committed, or of another object, does not.
func TestUndoScan(t *testing.T) {
	d := ldapschema.DIT{Base: "dc=x"}
	ctl := func(id string, txn int) []string {
		r := Run{ID: id, Command: "cpactl x", Txn: txn}
		out := []string{}
		if txn > 0 {
			out = append(out, `{0}{`+OIDTxnSpec+` criticality TRUE controlValue ""}`)
		}
		return append(out, `{1}{`+ldapschema.OIDRunControl+` controlValue "`+hex.EncodeToString(r.Value())+`"}`)
	}
	rec := func(start, typ, dn string, result int, controls []string) Record {
		r := Record{Start: start, Type: typ, DN: dn, Result: result, Controls: controls, EntryUUID: "u-" + dn, Session: "1",
			Mod: []string{"description:= " + start}, Old: []string{"description: x"}}
		if typ == "modrdn" {
			r.NewRDN, r.Mod, r.Old = "cn=Deutschland", nil, nil
		}
		return r
	}
	base := []Record{
		rec("20261203100000.000001Z", "modify", "cn=UK,dc=x", 0, ctl("111111111111", 0)),
		rec("20261203100001.000001Z", "modrdn", "cn=Germany,dc=x", 0, ctl("222222222222", 0)),
		rec("20261203100002.000001Z", "modify", "cn=India,dc=x", 0, ctl("333333333333", 0)),
		// Not committed: a transaction refused at its second write.
		rec("20261203100003.000001Z", "modify", "cn=Deutschland,dc=x", 0, ctl("444444444444", 1)),
		rec("20261203100003.000002Z", "modify", "cn=Common,dc=x", 50, ctl("444444444444", 1)),
	}
	for _, tc := range []struct {
		name, run string
		more      []Record
		found     bool
		again     string
	}{
		{name: "nothing since", run: "222222222222", found: true},
		{name: "unknown run", run: "999999999999"},
		{name: "changed again under its new name", run: "222222222222", found: true, again: "cn=Deutschland,dc=x",
			more: []Record{rec("20261203100004.000001Z", "modify", "cn=Deutschland,dc=x", 0, nil)}},
		{name: "changed again by UUID", run: "111111111111", found: true, again: "cn=UK,dc=x",
			more: []Record{func() Record {
				r := rec("20261203100004.000001Z", "modrdn", "cn=UK,dc=x", 0, ctl("555555555555", 0))
				return r
			}()}},
	} {
		u := NewUndoScan(tc.run)
		for _, r := range append(append([]Record(nil), base...), tc.more...) {
			if err := u.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		e, found, err := u.Result(d)
		if found != tc.found {
			t.Errorf("%s: found %v", tc.name, found)
			continue
		}
		var again *ChangedAgainError
		switch {
		case tc.again == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.again != "" && (!errors.As(err, &again) || again.Object != d.Describe(tc.again)):
			t.Errorf("%s: %v, want changed again: %s", tc.name, err, tc.again)
		}
		if found && len(e.WrittenChanges()) != 1 {
			t.Errorf("%s: %d written changes", tc.name, len(e.WrittenChanges()))
		}
	}
}
