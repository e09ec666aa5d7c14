package directory

import (
	"path/filepath"
	"testing"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory/snapshot"
)

// TestFederationResolvesAsResolveFederation: over the whole federation
// that Federation reads, every request of every fixture (each user, each
// entitlement, each Connection Server and each pod) resolves exactly as
// over what ResolveFederation reads for that one request, byte for byte
// in JSON.
func TestFederationResolvesAsResolveFederation(t *testing.T) {
	for _, name := range []string{"demo.ldif", "broker-complete.ldif", "resolve-seed-000.ldif", "lint-broken.ldif"} {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.LoadSnapshot(filepath.Join("..", "fixtures", name))
			if err != nil {
				t.Fatal(err)
			}
			st := NewStore(snap, dit.Base)
			whole, err := st.Federation()
			if err != nil {
				t.Fatal(err)
			}
			f := whole.Federation
			if len(f.Users) == 0 || len(f.Entitlements) == 0 {
				t.Fatalf("%s: no users or entitlements read", name)
			}
			n := 0
			for _, u := range f.Users {
				for _, ge := range f.Entitlements {
					var via []broker.Request
					for _, cs := range f.ConnectionServers {
						via = append(via, broker.Request{User: u.Name, Entitlement: ge.Name, ConnectionServer: cs.Name})
					}
					for _, p := range f.Pods {
						via = append(via, broker.Request{User: u.Name, Entitlement: ge.Name, Pod: p.Name})
					}
					for _, r := range via {
						data, err := st.ResolveFederation(ResolveQuery{User: r.User, Entitlement: r.Entitlement, ConnectionServer: r.ConnectionServer})
						if err != nil {
							t.Fatal(err)
						}
						want, wantErr := broker.Resolve(data.Federation, r)
						got, gotErr := broker.Resolve(f, r)
						if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
							t.Fatalf("%+v: error %v over the whole federation, %v over the request's", r, gotErr, wantErr)
						}
						if wantErr != nil {
							continue
						}
						if g, w := decisionJSON(t, got), decisionJSON(t, want); g != w {
							t.Fatalf("%+v: over the whole federation\n%s\nover the request's\n%s", r, g, w)
						}
						n++
					}
				}
			}
			t.Logf("%s: %d requests agree", name, n)
		})
	}
}
