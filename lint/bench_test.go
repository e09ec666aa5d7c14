package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/generate"
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

// BenchmarkLintGenerated lints `cpactl generate --preset cpa-max` as
// `cpactl lint --from` reads it (a lint-clean federation: no rule reports,
// so no walk of the groups).
func BenchmarkLintGenerated(b *testing.B) {
	cfg, err := generate.Preset(generate.PresetCPAMax)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Base = ldapschema.DefaultBase
	var ldif strings.Builder
	n, err := generate.Write(&ldif, cfg)
	if err != nil {
		b.Fatal(err)
	}
	snap, err := snapshot.ReadSnapshot(strings.NewReader(ldif.String()))
	if err != nil {
		b.Fatal(err)
	}
	inv, err := directory.NewStore(snap, cfg.Base).Inventory()
	if err != nil {
		b.Fatal(err)
	}
	var findings int
	cpu := benchfed.CPUTime()
	for b.Loop() {
		findings = len(Run(*inv))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
	b.ReportMetric(float64((benchfed.CPUTime()-cpu).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/entry")
	b.ReportMetric(float64(findings), "findings")
}
