package broker

import (
	"fmt"
	"testing"
)

// bigFederation has sites×pods pods with two desktop pools each, all full
// but the last pool of the last site, so a search visits everything.
func bigFederation(sites, pods int, policy Policy) *Federation {
	f := &Federation{
		Settings:     DefaultSettings(),
		Users:        []User{{Name: "u"}},
		Entitlements: []Entitlement{{Name: "G", Type: TypeDesktop, Scope: ScopeAny, Policy: policy, Enabled: true, Members: []Member{{Kind: MemberUser, Name: "u"}}}},
	}
	for s := 0; s < sites; s++ {
		site := fmt.Sprintf("site-%03d", s)
		f.Sites = append(f.Sites, Site{Name: site})
		for p := 0; p < pods; p++ {
			pod := fmt.Sprintf("%s-pod-%02d", site, p)
			f.Pods = append(f.Pods, Pod{Name: pod, Site: site, Online: true})
			for q := 0; q < 2; q++ {
				pool := fmt.Sprintf("%s-pool-%d", pod, q)
				f.Pools = append(f.Pools, Pool{Name: pool, Pod: pod, Kind: KindDesktop, Capacity: 10 + q, Sessions: 10 + q, Enabled: true})
				f.Entitlements[0].Pools = append(f.Entitlements[0].Pools, pool)
			}
		}
	}
	f.Pools[len(f.Pools)-1].Sessions = 0
	return f
}

func BenchmarkResolve(b *testing.B) {
	for _, size := range []struct{ sites, pods int }{{5, 2}, {50, 10}} {
		for _, policy := range []Policy{PolicyNone, PolicyLoad, PolicySession} {
			b.Run(fmt.Sprintf("%dx%d/%s", size.sites, size.pods, policy), func(b *testing.B) {
				f := bigFederation(size.sites, size.pods, policy)
				req := Request{User: "u", Entitlement: "G", Pod: f.Pods[0].Name}
				for b.Loop() {
					d, err := Resolve(f, req)
					if err != nil || d.Outcome != OutcomePlaced {
						b.Fatal(err, d.Outcome)
					}
				}
			})
		}
	}
}
