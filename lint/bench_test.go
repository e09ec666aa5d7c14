package lint

import (
	"fmt"
	"testing"

	"github.com/cpactl/cpactl/internal/benchfed"
	"github.com/cpactl/cpactl/ldapschema"
)

// BenchmarkLint lints synthetic federations with the proportions of the CPA
// maximum; ns/entry should not grow faster than log n. cpu-ns/entry
// counts the CPU time of every thread, the garbage collector's included.
func BenchmarkLint(b *testing.B) {
	dit := ldapschema.DIT{Base: ldapschema.DefaultBase}
	for _, n := range benchfed.Sizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			d := benchfed.Federation(dit, n)
			size := benchfed.Size(dit, d)
			var findings int
			cpu := benchfed.CPUTime()
			for b.Loop() {
				findings = len(Run(d))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size), "ns/entry")
			b.ReportMetric(float64((benchfed.CPUTime()-cpu).Nanoseconds())/float64(b.N)/float64(size), "cpu-ns/entry")
			b.ReportMetric(float64(findings), "findings")
		})
	}
}
