package reconcile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/directory/snapshot"
)

// BenchmarkCompareAndPlan classifies, compares and plans two states of
// 5,000 users in 50 groups that differ by one member per group.
func BenchmarkCompareAndPlan(b *testing.B) {
	federation := func(skip int) string {
		var s strings.Builder
		s.WriteString(layout)
		for i := 0; i < 5000; i++ {
			fmt.Fprintf(&s, "\ndn: uid=u%d,ou=People,%s\nobjectClass: inetOrgPerson\nuid: u%d\ncn: User %d\nsn: %d\n", i, base, i, i, i)
		}
		for g := 0; g < 50; g++ {
			fmt.Fprintf(&s, "\ndn: cn=g%d,ou=Groups,%s\nobjectClass: pae-Group\ncn: g%d\n", g, base, g)
			for i := g; i < 5000; i += 50 {
				if i != skip+g {
					fmt.Fprintf(&s, "member: uid=u%d,ou=People,%s\n", i, base)
				}
			}
		}
		return s.String()
	}
	desired, err := snapshot.ReadSnapshot(strings.NewReader(federation(0)))
	if err != nil {
		b.Fatal(err)
	}
	current, err := snapshot.ReadSnapshot(strings.NewReader(federation(50)))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, c := NewState(dit, desired.Entries()), NewState(dit, current.Entries())
		r := Compare(d, c)
		p, problems := PlanApply(d, c, r, true)
		if len(problems) > 0 || p.Updates != 50 {
			b.Fatalf("%d updates, %v", p.Updates, problems)
		}
	}
}
