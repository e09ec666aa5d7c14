package directory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/glob"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestSelectIsTheFullListNarrowed: a selection (name pattern, LDAP
// filter, a subtree, a DN test, a limit) returns, live and from a
// snapshot, exactly the full sorted list filtered the obvious way and
// cut, and counts what the limit cut.
func TestSelectIsTheFullListNarrowed(t *testing.T) {
	text, _ := syntheticOf(600).Text()
	// Names whose order folded differs from their byte order.
	text += mixedCaseComputers
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: text})
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.RootDN, Password: slapdtest.RootPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	snap, err := ParseSnapshot(text)
	if err != nil {
		t.Fatal(err)
	}
	pattern := func(s string) *glob.Pattern {
		p, err := glob.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pod1 := dit.Pod("pod-001")
	for name, st := range map[string]*Store{"live": NewStore(c, dit.Base), "snapshot": NewStore(snap, dit.Base)} {
		t.Run(name, func(t *testing.T) {
			sessions, err := st.Sessions("")
			if err != nil {
				t.Fatal(err)
			}
			sessionIDs := func(ss []ldapschema.Session) []string {
				out := []string{}
				for _, s := range ss {
					out = append(out, s.ID)
				}
				return out
			}
			for _, c := range []struct {
				name string
				sel  Selection
				keep func(ldapschema.Session) bool
			}{
				{"all", Selection{}, nil},
				{"limit", Selection{Limit: 7}, nil},
				{"limit above the count", Selection{Limit: 100000}, nil},
				{"pattern", Selection{Name: pattern("s-00001??")}, func(s ldapschema.Session) bool { return strings.HasPrefix(s.ID, "s-00001") }},
				{"pattern in any case, limited", Selection{Name: pattern("S-*5"), Limit: 4}, func(s ldapschema.Session) bool { return strings.HasSuffix(s.ID, "5") }},
				{"a set", Selection{Name: pattern("*[13]0")}, func(s ldapschema.Session) bool {
					return strings.HasSuffix(s.ID, "10") || strings.HasSuffix(s.ID, "30")
				}},
				{"no wildcard", Selection{Name: pattern("S-0000042")}, func(s ldapschema.Session) bool { return s.ID == "s-0000042" }},
				{"filter", Selection{Filter: ldapclient.Filter(ldapschema.AttrPodDN, pod1), Limit: 3}, func(s ldapschema.Session) bool { return ldapschema.EqualDN(s.PodDN, pod1) }},
				{"keep", Selection{Keep: func(dn string) bool { return strings.HasSuffix(dn, "1,"+ldapschema.NormalizeDN(dit.Sessions())) }, Limit: 5},
					func(s ldapschema.Session) bool { return strings.HasSuffix(s.ID, "1") }},
				{"nothing", Selection{Name: pattern("nothing*")}, func(ldapschema.Session) bool { return false }},
			} {
				var want []ldapschema.Session
				for _, s := range sessions {
					if c.keep == nil || c.keep(s) {
						want = append(want, s)
					}
				}
				total := len(want)
				if c.sel.Limit > 0 && len(want) > c.sel.Limit {
					want = want[:c.sel.Limit]
				}
				got, err := st.SelectSessions(c.sel)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if g, w := strings.Join(sessionIDs(got.Items), " "), strings.Join(sessionIDs(want), " "); g != w {
					t.Errorf("%s: got\n%s\nwant\n%s", c.name, g, w)
				}
				if got.Total != total || got.Cut() != (total > len(want)) {
					t.Errorf("%s: total %d (cut %v), want %d", c.name, got.Total, got.Cut(), total)
				}
			}
			// Under: a pod's hosts, the first three.
			hosts, err := st.SelectHosts(Selection{Under: pod1, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			all, err := st.Hosts("")
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, h := range all {
				if h.Pod == "pod-001" {
					want = append(want, h.Name)
				}
			}
			var got []string
			for _, h := range hosts.Items {
				got = append(got, h.Name)
			}
			if hosts.Total != len(want) || strings.Join(got, " ") != strings.Join(want[:3], " ") {
				t.Errorf("hosts under pod-001: %q of %d, want %q of %d", got, hosts.Total, want[:3], len(want))
			}
			// Names sorted as the full list sorts them, with a limit too.
			computers, err := st.Computers()
			if err != nil {
				t.Fatal(err)
			}
			var mixed []string
			for _, c := range computers {
				if strings.HasPrefix(strings.ToLower(c.Name), "mixed") {
					mixed = append(mixed, c.Name)
				}
			}
			for _, limit := range []int{0, 1, 2, 3, 4} {
				sel, err := st.SelectComputers(Selection{Name: pattern("MIXED*"), Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, c := range sel.Items {
					names = append(names, c.Name)
				}
				w := mixed
				if limit > 0 {
					w = mixed[:min(limit, len(mixed))]
				}
				if strings.Join(names, " ") != strings.Join(w, " ") || sel.Total != len(mixed) {
					t.Errorf("limit %d: %q of %d, want %q of %d", limit, names, sel.Total, w, len(mixed))
				}
			}
		})
	}
}

// mixedCaseComputers are computers whose names sort by case only after
// folding: the order of the full list is the order of a cut one.
var mixedCaseComputers = func() string {
	var b strings.Builder
	for _, n := range []string{"mixed-b", "Mixed-a", "MIXED-c", "mixed-A2"} {
		fmt.Fprintf(&b, "dn: %s\nobjectClass: top\nobjectClass: device\ncn: %s\n\n", dit.Computer(n), n)
	}
	return b.String()
}()

// BenchmarkSelectSessions: `session list --from` reads every session
// record sorted; with --limit it holds only the first records (bytes/op
// and the records mapped fall), with a name pattern it maps only the
// matches. Compare the sub-benchmarks of one size.
func BenchmarkSelectSessions(b *testing.B) {
	for _, n := range benchSizes {
		text, _ := benchText(b, n)
		snap, err := ParseSnapshot(text)
		if err != nil {
			b.Fatal(err)
		}
		st := NewStore(snap, dit.Base)
		p, _ := glob.Parse("s-00001*")
		for _, c := range []struct {
			name string
			sel  Selection
		}{{"all", Selection{}}, {"limit=50", Selection{Limit: 50}}, {"name", Selection{Name: p}}} {
			b.Run(fmt.Sprintf("sessions=%d/%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := st.SelectSessions(c.sel); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("sessions=%d/Sessions", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.Sessions(""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
