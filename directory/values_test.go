package directory

import (
	"reflect"
	"testing"

	"github.com/go-ldap/ldap/v3"
)

func TestLDAPChanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []Change
		want []ldap.Change
	}{
		{"an add adds the values", []Change{{Op: ChangeAdd, Attr: "member", Values: []string{"uid=a"}}},
			[]ldap.Change{{Operation: ldap.AddAttribute, Modification: ldap.PartialAttribute{Type: "member", Vals: []string{"uid=a"}}}}},
		{"a remove deletes the values", []Change{{Op: ChangeRemove, Attr: "member", Values: []string{"uid=a", "uid=b"}}},
			[]ldap.Change{{Operation: ldap.DeleteAttribute, Modification: ldap.PartialAttribute{Type: "member", Vals: []string{"uid=a", "uid=b"}}}}},
		{"a remove without values never deletes the attribute", []Change{{Op: ChangeRemove, Attr: "member"}},
			[]ldap.Change{}},
		{"changes keep their order", []Change{
			{Op: ChangeRemove, Attr: "a", Values: []string{"x"}}, {Op: ChangeAdd, Attr: "a", Values: []string{"y"}}},
			[]ldap.Change{
				{Operation: ldap.DeleteAttribute, Modification: ldap.PartialAttribute{Type: "a", Vals: []string{"x"}}},
				{Operation: ldap.AddAttribute, Modification: ldap.PartialAttribute{Type: "a", Vals: []string{"y"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ldapChanges(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ldapChanges(%+v) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}
