package directory

import (
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestOverlayAddsNoSearchToAResolve: with changes laid over it, a resolve
// makes through the overlay exactly the searches it makes without one
// (same bases, scopes and filters, the same number of entries each, on a
// federation and on one ten times larger); laying a change costs one base
// read of the entry changed. The change moves the session: uk-desk full,
// so the farm pool of US takes it.
func TestOverlayAddsNoSearchToAResolve(t *testing.T) {
	for _, scale := range []int{1, 10} {
		text, _, _ := scaledFederation(scale)
		snap, err := ParseSnapshot(text)
		if err != nil {
			t.Fatal(err)
		}
		plain := &countingClient{Client: snap}
		resolveOn(t, NewStore(plain, dit.Base))
		under := &countingClient{Client: snap}
		o := snapshot.NewOverlay(under)
		if err := o.Replace(objkind.Pool, "uk-desk", "cn=uk-desk,cn=uk-pod1,"+dit.Pods(), ldapschema.AttrSessions, []string{"10"}); err != nil {
			t.Fatal(err)
		}
		if len(under.searches) != 1 || under.searches[0].scope != ldap.ScopeBaseObject {
			t.Fatalf("scale %d: laying the change made %v, want one base read", scale, under.searches)
		}
		d := resolveOn(t, NewStore(o, dit.Base))
		if d.Placement == nil || d.Placement.Pool == "uk-desk" {
			t.Fatalf("scale %d: the change did not move the session: %s %+v", scale, d.Outcome, d.Placement)
		}
		if got, want := lines(under.searches[1:]), lines(plain.searches); got != want {
			t.Errorf("scale %d: through the overlay:\n%s\nwithout:\n%s", scale, got, want)
		}
	}
}
