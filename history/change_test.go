package history

import (
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
)

func TestDecode(t *testing.T) {
	site := "cn=India,ou=Sites,dc=x"
	for _, tc := range []struct {
		name string
		r    Record
		ok   bool
		want []AttrChange
		dn   string // NewDN
	}{
		{name: "a reorder of preferred sites",
			r: Record{Type: "modify", DN: site,
				Mod: []string{"pae-PreferredSite:= {0}US", "pae-PreferredSite:= {1}UK", "entryCSN:= 1", "modifiersName:= cn=a"},
				Old: []string{"pae-PreferredSite: {0}UK", "pae-PreferredSite: {1}US"}},
			ok: true, want: []AttrChange{{Attr: "pae-PreferredSite", Old: []string{"{0}UK", "{1}US"}, New: []string{"{0}US", "{1}UK"}}}},
		{name: "an add and a delete of values, a value set where there was none",
			r: Record{Type: "modify", DN: site,
				Mod: []string{"member:+ uid=b", "member:- uid=a", "description:= new"},
				Old: []string{"member: uid=a", "member: uid=c"}},
			ok: true, want: []AttrChange{{Attr: "member", Old: []string{"uid=a", "uid=c"}, New: []string{"uid=c", "uid=b"}},
				{Attr: "description", New: []string{"new"}}}},
		{name: "an attribute deleted whole",
			r:  Record{Type: "modify", DN: site, Mod: []string{"description:-"}, Old: []string{"description: old"}},
			ok: true, want: []AttrChange{{Attr: "description", Old: []string{"old"}}}},
		{name: "a touch changes nothing",
			r:  Record{Type: "modify", DN: site, Mod: []string{"entryCSN:= 1", "modifiersName:= cn=a", "modifyTimestamp:= 2"}},
			ok: false},
		{name: "the write probe",
			r:  Record{Type: "modify", DN: "dc=x", Result: 122, Mod: []string{"description:- " + probeValue}},
			ok: false},
		{name: "a transaction's placeholder",
			r:  Record{Type: "add", DN: "ou=cpactl-txn-1,ou=Sessions,dc=x", Mod: []string{"ou:+ cpactl-txn-1"}},
			ok: false},
		{name: "an add: its attributes, operational ones left out",
			r:  Record{Type: "add", DN: site, Mod: []string{"cn:+ India", "entryUUID:+ u-1", "description:+ d"}},
			ok: true, want: []AttrChange{{Attr: "cn", New: []string{"India"}}, {Attr: "description", New: []string{"d"}}}},
		{name: "a delete: the old entry",
			r:  Record{Type: "delete", DN: site, Old: []string{"cn: India", "entryCSN: 1", "description: d"}},
			ok: true, want: []AttrChange{{Attr: "cn", Old: []string{"India"}}, {Attr: "description", Old: []string{"d"}}}},
		{name: "a rename",
			r:  Record{Type: "modrdn", DN: "cn=Germany,ou=Sites,dc=x", NewRDN: "cn=Deutschland", DeleteOldRDN: true},
			ok: true, want: []AttrChange{{Attr: "cn", Old: []string{"Germany"}, New: []string{"Deutschland"}}}, dn: "cn=Deutschland,ou=Sites,dc=x"},
		{name: "a password: changed, no value kept",
			r:  Record{Type: "modify", DN: "uid=a,dc=x", Mod: []string{"userPassword:= {SSHA}x"}, Old: []string{"userPassword: {SSHA}x"}},
			ok: true, want: []AttrChange{{Attr: "userPassword", Old: []string{"{SSHA}x"}, New: []string{"{SSHA}x"}, Hidden: true}}},
	} {
		c, ok := Decode(tc.r)
		if ok != tc.ok {
			t.Errorf("%s: ok %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if ok && (!reflect.DeepEqual(c.Attrs, tc.want) || c.NewDN != tc.dn) {
			t.Errorf("%s:\n got %+v %q\nwant %+v %q", tc.name, c.Attrs, c.NewDN, tc.want, tc.dn)
		}
	}
}

// TestCollector: one line per run; writes of a transaction refused part
// way are not written, those of a committed one are; another client's
// writes are one line each.
func TestCollector(t *testing.T) {
	run := func(id string, txn int) []string {
		r := Run{ID: id, Command: "cpactl x", Version: "v", Txn: txn}
		out := []string{}
		if txn > 0 {
			out = append(out, `{0}{`+OIDTxnSpec+` criticality TRUE controlValue ""}`)
		}
		return append(out, `{1}{`+ldapschema.OIDRunControl+` controlValue "`+hex.EncodeToString(r.Value())+`"}`)
	}
	mod := func(start, dn string, result int, controls []string) Record {
		return Record{Start: start, Type: "modify", DN: dn, Result: result, Controls: controls, Session: "1",
			Mod: []string{"description:= " + start}, Old: []string{"description: before"}}
	}
	records := []Record{
		mod("20261203100000.000001Z", "cn=a,dc=x", 0, run("aaaaaaaaaaaa", 0)),
		mod("20261203100001.000001Z", "cn=b,dc=x", 0, run("bbbbbbbbbbbb", 1)),  // phantom: its transaction
		mod("20261203100001.000002Z", "cn=c,dc=x", 50, run("bbbbbbbbbbbb", 1)), // was refused here
		mod("20261203100002.000001Z", "cn=d,dc=x", 0, run("bbbbbbbbbbbb", 2)),  // a later one of the same run committed
		mod("20261203100003.000001Z", "cn=e,dc=x", 0, nil),
		mod("20261203100004.000001Z", "cn=f,dc=x", 50, run("cccccccccccc", 0)),
		mod("20261203100005.000001Z", "cn=g,dc=x", 0, []string{`{0}{` + OIDTxnSpec + ` criticality TRUE controlValue ""}`}),
		mod("20261203100005.000002Z", "cn=h,dc=x", 32, []string{`{0}{` + OIDTxnSpec + ` criticality TRUE controlValue ""}`}),
		// A run control that cannot be read: shown as another client's.
		mod("20261203100006.000001Z", "cn=i,dc=x", 0, []string{`{0}{` + ldapschema.OIDRunControl + ` controlValue "7B7D"}`}),
	}
	c := NewCollector()
	for _, r := range records {
		if err := c.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	type line struct {
		run, status string
		written     []bool
	}
	var got []line
	for _, e := range c.Entries() {
		l := line{run: e.Run, status: e.Status()}
		for _, ch := range e.Changes {
			l.written = append(l.written, ch.Written)
		}
		got = append(got, l)
	}
	want := []line{
		{"", "ok", []bool{true}},
		{"", "rolled back", []bool{false, false}}, // another client's transaction
		{"cccccccccccc", "refused", []bool{false}},
		{"", "ok", []bool{true}},
		{"bbbbbbbbbbbb", "partly refused", []bool{false, false, true}},
		{"aaaaaaaaaaaa", "ok", []bool{true}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries:\n got %+v\nwant %+v", got, want)
	}
	if c.Oldest != records[0].Start {
		t.Errorf("oldest %q", c.Oldest)
	}
	refused := Filter{Refused: true}.Apply(c.Entries())
	if len(refused) != 3 {
		t.Errorf("--refused keeps %d runs, want 3", len(refused))
	}
	byRun := Filter{Run: "AAAAAAAAAAAA"}.Apply(c.Entries())
	if len(byRun) != 1 || byRun[0].Run != "aaaaaaaaaaaa" {
		t.Errorf("--run keeps %+v", byRun)
	}
}

// TestFilterFollowsRenames: --object finds an object's changes under its
// old and its new name.
func TestFilterFollowsRenames(t *testing.T) {
	c := NewCollector()
	for _, r := range []Record{
		{Start: "20261203100000.000001Z", Type: "modify", DN: "cn=Germany,ou=Sites,dc=x", EntryUUID: "u1", Mod: []string{"description:= a"}},
		{Start: "20261203100001.000001Z", Type: "modrdn", DN: "cn=Germany,ou=Sites,dc=x", EntryUUID: "u1", NewRDN: "cn=Deutschland"},
		{Start: "20261203100002.000001Z", Type: "modify", DN: "cn=Deutschland,ou=Sites,dc=x", EntryUUID: "u1", Mod: []string{"description:= b"}},
		{Start: "20261203100003.000001Z", Type: "modify", DN: "cn=UK,ou=Sites,dc=x", EntryUUID: "u2", Mod: []string{"description:= c"}},
	} {
		if err := c.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	// The old name, which no entry has any more: found by DN, then by
	// the UUID its records carry.
	f := Filter{ObjectDNs: map[string]bool{ldapschema.NormalizeDN("cn=Germany,ou=Sites,dc=x"): true}, ObjectUUIDs: map[string]bool{}}
	if got := f.Apply(c.Entries()); len(got) != 3 {
		t.Errorf("site/Germany: %d changes, want 3", len(got))
	}
	// The current object, known by its UUID.
	f = Filter{ObjectDNs: map[string]bool{ldapschema.NormalizeDN("cn=Deutschland,ou=Sites,dc=x"): true}, ObjectUUIDs: map[string]bool{"u1": true}}
	if got := f.Apply(c.Entries()); len(got) != 3 {
		t.Errorf("site/Deutschland with its UUID: %d changes, want 3", len(got))
	}
}
