package directory

import (
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// TestTouches: which entries a transaction touches to guard the
// references its writes add, and which touches assert the entryCSN read.
func TestTouches(t *testing.T) {
	pool, farm := dit.Pool("P1", "pl"), dit.Farm("P1", "F1")
	read := []string{dit.Site("UK"), pool, dit.User("alice")} // read by name: entryCSN known
	member := func(dns ...string) ldap.Change {
		return ldap.Change{Operation: ldap.AddAttribute, Modification: ldap.PartialAttribute{Type: ldapschema.AttrMember, Vals: dns}}
	}
	tests := []struct {
		name   string
		writes []Write
		plan   []Write // the rest of the plan (other transactions); nil: writes alone
		want   []string
	}{
		{"a pod's site, asserted as read",
			[]Write{AddWrite("add", "pod Q", dit.Pod("Q"), ldapschema.Pod{Name: "Q", SiteDN: dit.Site("UK")}.Attrs())},
			nil, []string{dit.Site("UK") + " asserted"}},
		{"a pool and the pod above it, the pod not asserted",
			[]Write{ChangeWrite("add", "pool", dit.Entitlement("E"), Change{Op: ChangeAdd, Attr: ldapschema.AttrEntitlementPoolDN, Values: []string{pool}})},
			nil, []string{pool + " asserted", dit.Pod("P1")}},
		{"a host, its farm and its pod; a reference not read is not asserted",
			[]Write{ModifyWrite("update", "session", dit.Session("s"), []ldap.Change{{Operation: ldap.ReplaceAttribute,
				Modification: ldap.PartialAttribute{Type: ldapschema.AttrHostDN, Vals: []string{dit.Host("P1", "F1", "h1")}}}})},
			nil, []string{dit.Host("P1", "F1", "h1"), farm, dit.Pod("P1")}},
		{"preferred sites name sites",
			[]Write{ModifyWrite("update", "site India", dit.Site("India"), []ldap.Change{{Operation: ldap.ReplaceAttribute,
				Modification: ldap.PartialAttribute{Type: ldapschema.AttrPreferredSite, Vals: []string{"{0}UK", "{1}US"}}}})},
			nil, []string{dit.Site("UK") + " asserted", dit.Site("US")}},
		{"each entry once, asserted when referred to anywhere",
			[]Write{ChangeWrite("add", "pools", dit.Entitlement("E"), Change{Op: ChangeAdd, Attr: ldapschema.AttrEntitlementPoolDN,
				Values: []string{dit.Pool("P1", "other"), pool}})},
			nil, []string{dit.Pool("P1", "other"), dit.Pod("P1"), pool + " asserted"}},
		{"an entry the transaction adds is not touched, nor what lies below it",
			[]Write{AddWrite("add", "pod P1", dit.Pod("P1"), ldapschema.Pod{Name: "P1", SiteDN: dit.Site("UK")}.Attrs()),
				ChangeWrite("add", "pool", dit.Entitlement("E"), Change{Op: ChangeAdd, Attr: ldapschema.AttrEntitlementPoolDN, Values: []string{pool}})},
			nil, []string{dit.Site("UK") + " asserted"}},
		{"an entry the plan adds in another transaction is not touched",
			[]Write{ModifyWrite("add", "member", dit.Group("G"), []ldap.Change{member(dit.User("bob"))})},
			[]Write{AddWrite("add", "user bob", dit.User("bob"), ldapschema.Attrs{})}, nil},
		{"an entry the transaction writes is not touched",
			[]Write{ModifyWrite("add", "member", dit.Group("G"), []ldap.Change{member(dit.User("alice"))}),
				ModifyWrite("update", "alice", dit.User("alice"), []ldap.Change{{Operation: ldap.ReplaceAttribute,
					Modification: ldap.PartialAttribute{Type: ldapschema.AttrDescription, Vals: []string{"x"}}}})},
			nil, nil},
		{"an entry the plan writes in another transaction is touched, not asserted",
			[]Write{ModifyWrite("add", "member", dit.Group("G"), []ldap.Change{member(dit.User("alice"))})},
			[]Write{ModifyWrite("update", "alice", dit.User("alice"), nil)}, []string{dit.User("alice")}},
		{"the new name of a rename is not touched",
			[]Write{ModifyWrite("update", "pod", dit.Pod("Q"), []ldap.Change{{Operation: ldap.ReplaceAttribute,
				Modification: ldap.PartialAttribute{Type: ldapschema.AttrSiteDN, Vals: []string{dit.Site("UK2")}}}}),
				RenameWrite("rename", "site UK", dit.Site("UK"), "cn=UK2")},
			nil, nil},
		{"Referring names the references instead of the values",
			[]Write{ModifyWrite("update", "group", dit.Group("G"), []ldap.Change{{Operation: ldap.ReplaceAttribute,
				Modification: ldap.PartialAttribute{Type: ldapschema.AttrMember, Vals: []string{dit.User("alice"), dit.User("bob")}}}}).
				Referring(dit.User("bob"))},
			nil, []string{dit.User("bob")}},
		{"a remove refers to nothing",
			[]Write{ChangeWrite("remove", "member", dit.Group("G"), Change{Op: ChangeRemove, Attr: ldapschema.AttrMember, Values: []string{dit.User("alice")}})},
			nil, nil},
		{"a DN outside the base is not touched",
			[]Write{ModifyWrite("add", "member", dit.Group("G"), []ldap.Change{member("cn=x,dc=elsewhere")})},
			nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := NewStore(nil, dit.Base)
			for i, dn := range read {
				st.remember(&ldap.Entry{DN: dn, Attributes: []*ldap.EntryAttribute{{Name: ldapschema.AttrEntryCSN, Values: []string{"csn" + string(rune('0'+i))}}}})
			}
			var got []string
			for _, w := range st.touches(tc.writes, scopeOf(append(append([]Write(nil), tc.writes...), tc.plan...))) {
				if len(w.req.Modify.Changes) != 0 {
					t.Errorf("touch of %s changes %v", w.DN, w.req.Modify.Changes)
				}
				line := w.DN
				if hasAssertion(w.req.Modify.Controls) {
					line += " asserted"
				}
				got = append(got, line)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("touches\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
