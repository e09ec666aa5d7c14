package broker

import (
	"fmt"
	"math/rand"
	"testing"
)

// benchFarm draws a farm of n hosts like a big production farm: load
// indexes spread over 0..100 with a few -1, some hosts lacking a default
// feature, a few disabled, some sessions already running. Sessions are
// unlimited so every request of the benchmark is placed and the figure is a
// true per-placement cost.
func benchFarm(n int) (Farm, []Host) {
	r := rand.New(rand.NewSource(int64(n)))
	farm := Farm{Name: "F", LoadIndexThreshold: 95}
	hosts := make([]Host, n)
	for i := range hosts {
		h := Host{
			Name:       fmt.Sprintf("rdsh-%05d", r.Intn(10*n)),
			Farm:       "F",
			LoadIndex:  r.Intn(101),
			Sessions:   r.Intn(50),
			Connecting: r.Intn(5),
			Features:   AllFeatures(),
			Enabled:    r.Intn(50) != 0,
		}
		if r.Intn(50) == 0 {
			h.LoadIndex = -1
		}
		if r.Intn(10) == 0 {
			h.Features.Unauthenticated = false
		}
		hosts[i] = h
	}
	return farm, hosts
}

// benchStorm runs SimulateStorm b.N times and reports placements per
// second and nanoseconds per placement (setup and the naive comparison
// included).
func benchStorm(b *testing.B, hosts, requests int) {
	farm, hs := benchFarm(hosts)
	req := HostRequest{Protocol: ProtocolBlast}
	b.ReportAllocs()
	placed := 0
	for b.Loop() {
		rep := SimulateStorm(farm, hs, req, defaultThresholds, requests)
		placed += rep.Placed
	}
	if placed == 0 {
		b.Fatal("nothing placed")
	}
	b.ReportMetric(float64(placed)/b.Elapsed().Seconds(), "placements/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(placed), "ns/placement")
}

// BenchmarkSimulateStorm is the figure of issue 6: 100,000 requests on a
// farm of 1,000 hosts, then the same burst on 100 and 10,000 hosts to show
// that the per-placement cost grows with log(hosts), not hosts.
func BenchmarkSimulateStorm(b *testing.B) {
	for _, n := range []int{1000, 100, 10000} {
		b.Run(fmt.Sprintf("requests=100000/hosts=%d", n), func(b *testing.B) { benchStorm(b, n, 100000) })
	}
}

// BenchmarkSimulateStormPerHost keeps 100 requests per host, so every farm
// size sees the same mix of bucket-1 rotation and bucket-3 heap placements.
func BenchmarkSimulateStormPerHost(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) { benchStorm(b, n, 100*n) })
	}
}

// BenchmarkReferenceStorm is the per-request full re-classification the fast
// simulator replaces, for comparison (fewer requests: it is linear in hosts
// per placement).
func BenchmarkReferenceStorm(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("requests=1000/hosts=%d", n), func(b *testing.B) {
			farm, hs := benchFarm(n)
			req := HostRequest{Protocol: ProtocolBlast}
			placed := 0
			for b.Loop() {
				rep, _ := referenceStorm(farm, hs, req, defaultThresholds, 1000)
				placed += rep.Placed
			}
			b.ReportMetric(float64(placed)/b.Elapsed().Seconds(), "placements/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(placed), "ns/placement")
		})
	}
}

// BenchmarkSelectHost is one resolve's host selection on a big farm.
func BenchmarkSelectHost(b *testing.B) {
	farm, hs := benchFarm(1000)
	req := HostRequest{Protocol: ProtocolBlast}
	b.ReportAllocs()
	for b.Loop() {
		SelectHost(farm, hs, req, defaultThresholds)
	}
}
