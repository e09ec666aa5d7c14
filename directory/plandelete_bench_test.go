package directory

import (
	"fmt"
	"testing"

	"github.com/cpactl/cpactl/internal/objkind"
)

// BenchmarkPlanDelete: planning the delete of a site of the synthetic
// federation on a snapshot: its pods and their subtrees, the sessions,
// assignments and home-site rows that go with them, the references
// removed and the preferred lists rewritten (the whole cascade, planned
// and not applied). Each DN is normalised once, as it is read; the
// allocations count the rest.
func BenchmarkPlanDelete(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			text, _ := benchText(b, n)
			snap, err := ParseSnapshot(text)
			if err != nil {
				b.Fatal(err)
			}
			st := NewStore(snap, dit.Base)
			site := "Site 00"
			dp, err := st.PlanDelete(objkind.Site, site, dit.Site(site))
			if err != nil {
				b.Fatal(err)
			}
			if len(dp.Writes) < 10 || !dp.Blocked() {
				b.Fatalf("a site's delete planned %d writes", len(dp.Writes))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.PlanDelete(objkind.Site, site, dit.Site(site)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(dp.Writes)), "writes")
		})
	}
}
