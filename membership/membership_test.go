package membership

import (
	"strings"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
)

var dit = ldapschema.DIT{Base: "dc=example,dc=test"}

func group(name string, members ...string) ldapschema.Group {
	return ldapschema.Group{DN: dit.Group(name), Name: name, Members: members}
}

func TestMemberOf(t *testing.T) {
	alice := dit.User("alice")
	g := New([]ldapschema.Group{
		group("Sales", alice),
		group("EMEA", dit.Group("Sales")),
		group("All", dit.Group("EMEA"), dit.Group("Cycle")),
		group("Cycle", dit.Group("All")), // All and Cycle contain each other
		group("Also", alice),
		group("Zed", dit.Group("Also"), dit.Group("Sales")),
		group("Empty"),
	})
	tests := []struct {
		name    string
		members []string
		direct  bool
		chain   string // group names joined by " > "; "-" for not a member
	}{
		{"direct user member", []string{alice}, true, ""},
		{"immediate group", []string{dit.Group("Sales")}, false, "Sales"},
		{"nested two levels", []string{dit.Group("All")}, false, "Sales > EMEA > All"},
		{"through a cycle", []string{dit.Group("Cycle")}, false, "Sales > EMEA > All > Cycle"},
		{"shortest chain, ties by name", []string{dit.Group("Zed")}, false, "Also > Zed"},
		{"DNs compare without regard to case", []string{strings.ToUpper(dit.Group("emea"))}, false, "Sales > EMEA"},
		{"empty group", []string{dit.Group("Empty")}, false, "-"},
		{"no members", nil, false, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			via, ok := g.MemberOf(alice, tt.members)
			if tt.chain == "-" {
				if ok {
					t.Fatalf("member via %+v, want not a member", via)
				}
				return
			}
			if !ok || via.Direct != tt.direct || strings.Join(Names(via.Chain), " > ") != tt.chain {
				t.Fatalf("got %v %+v (chain %q), want direct=%v chain %q", ok, via.Direct, Names(via.Chain), tt.direct, tt.chain)
			}
		})
	}
}

func TestAncestorsVisitEachGroupOnce(t *testing.T) {
	g := New([]ldapschema.Group{group("A", dit.Group("B"), dit.User("u")), group("B", dit.Group("A"))})
	got := g.Ancestors(dit.User("u"))
	if len(got) != 2 || got[0].Group.Name != "A" || got[1].Group.Name != "B" {
		t.Fatalf("ancestors %+v", got)
	}
}
