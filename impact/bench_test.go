package impact

import (
	"bytes"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/generate"
	"github.com/cpactl/cpactl/ldapschema"
)

var cpaMax = sync.OnceValues(func() (*broker.Federation, error) {
	cfg, err := generate.Preset("cpa-max")
	if err != nil {
		return nil, err
	}
	cfg.Seed = 1
	var buf bytes.Buffer
	if _, err := generate.Write(&buf, cfg); err != nil {
		return nil, err
	}
	snap, err := snapshot.ReadSnapshot(&buf)
	if err != nil {
		return nil, err
	}
	whole, err := directory.NewStore(snap, ldapschema.DefaultBase).Federation()
	if err != nil {
		return nil, err
	}
	return whole.Federation, nil
})

// BenchmarkImpactPreferredCPAMax: a full impact of one preferred-site
// change (the first site's ranked list reversed) on the generated CPA
// maximum (15 sites, 50 pods, 1,000 entitlements, 50,000 users in 5,000
// groups, 250,000 sessions), from every online pod.
func BenchmarkImpactPreferredCPAMax(b *testing.B) {
	before, err := cpaMax()
	if err != nil {
		b.Fatal(err)
	}
	after := *before
	after.Sites = append([]broker.Site(nil), before.Sites...)
	site := &after.Sites[0]
	pref := append([]string(nil), site.PreferredSites...)
	for i, j := 0, len(pref)-1; i < j; i, j = i+1, j-1 {
		pref[i], pref[j] = pref[j], pref[i]
	}
	site.PreferredSites = pref
	points, err := DefaultPoints(before, &after, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	var rep *Report
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	for b.Loop() {
		rep, err = Run(before, &after, Options{Points: points})
		if err != nil {
			b.Fatal(err)
		}
	}
	// The machines this runs on are shared: the process's CPU time says
	// more than the wall clock.
	b.ReportMetric((cpu()-start).Seconds()/float64(b.N), "cpu-s/op")
	s := rep.Summary
	b.ReportMetric(float64(s.Requests), "requests")
	b.ReportMetric(float64(s.Resolved), "resolved")
	b.ReportMetric(float64(s.ChangedOutcome+s.ChangedSite+s.ChangedPodOrPool), "moved")
	b.Logf("site %s: %s -> %s; %d points; summary %+v", site.Name, before.Sites[0].PreferredSites, pref, len(points), s)
}

// BenchmarkImpactOfflinePodCPAMax: a full impact of one what-if offline
// pod (the first online pod by name) on the generated CPA maximum, from
// every pod online before and after.
func BenchmarkImpactOfflinePodCPAMax(b *testing.B) {
	before, err := cpaMax()
	if err != nil {
		b.Fatal(err)
	}
	var offline []string
	for _, p := range before.Pods {
		if p.Online && (offline == nil || nameLess(p.Name, offline[0])) {
			offline = []string{p.Name}
		}
	}
	points, err := DefaultPoints(before, before, offline, "")
	if err != nil {
		b.Fatal(err)
	}
	var rep *Report
	for b.Loop() {
		rep, err = Run(before, before, Options{Points: points, Offline: offline})
		if err != nil {
			b.Fatal(err)
		}
	}
	s := rep.Summary
	b.ReportMetric(float64(s.Requests), "requests")
	b.ReportMetric(float64(s.Resolved), "resolved")
	b.ReportMetric(float64(s.ChangedOutcome+s.ChangedSite+s.ChangedPodOrPool), "moved")
	b.Logf("offline %s; %d points; summary %+v", offline[0], len(points), s)
}
