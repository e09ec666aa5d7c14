package reconcile

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/internal/benchfed"
	"github.com/cpactl/cpactl/ldapschema"
)

// diffPair returns the entries of a desired and a current federation of
// about n entries that differ as after a week of changes: one pool in 20
// with another capacity, one session in 1,000 ended (only in the current
// state) and as many started (only in the desired one).
func diffPair(n int) (desired, current []*ldap.Entry) {
	d := benchfed.Federation(dit, n)
	desired = benchfed.Entries(dit, d)
	for i := range d.Pools {
		if i%20 == 0 && d.Pools[i].Kind == ldapschema.KindDesktop {
			d.Pools[i].Capacity++
		}
	}
	var sessions []ldapschema.Session
	for i, s := range d.Sessions {
		switch i % 1000 {
		case 1: // started since: only desired
		case 2: // ended since: only current
			sessions = append(sessions, s)
			s.DN, s.ID = dit.Session("ended-"+s.ID), "ended-"+s.ID
			sessions = append(sessions, s)
		default:
			sessions = append(sessions, s)
		}
	}
	d.Sessions = sessions
	current = benchfed.Entries(dit, d)
	return desired, current
}

// diffImpls are the ways of comparing two federations the benchmark
// measures: both states read whole (whole), and the current one streamed
// entry by entry, keeping only what differs (streamed, what cpactl diff
// and apply do). Each returns the states and the numbers of adds, updates
// and deletes planned.
var diffImpls = []struct {
	name string
	run  func(desired, current []*ldap.Entry) (states any, adds, updates, deletes int)
}{
	{"whole", func(desired, current []*ldap.Entry) (any, int, int, int) {
		d, c := NewState(dit, desired), NewState(dit, current)
		p, _ := PlanApply(d, c, Compare(d, c), true)
		return [2]any{d, c}, p.Adds, p.Updates, p.Deletes
	}},
	{"streamed", func(desired, current []*ldap.Entry) (any, int, int, int) {
		d := NewState(dit, desired)
		c := NewCurrentState(d)
		for _, e := range current {
			c.Add(e)
		}
		p, _ := PlanApply(d, c, Compare(d, c), true)
		return [2]any{d, c}, p.Adds, p.Updates, p.Deletes
	}},
}

// BenchmarkDiff classifies, compares and plans (with pruning) two synthetic
// federations with the proportions of the CPA maximum, each way of
// diffImpls; ns/entry should not grow faster than log n. states-MB is the
// live heap the two states hold (not the entries read); cpu-ns/entry
// counts the CPU time of every thread, the garbage collector's included.
func BenchmarkDiff(b *testing.B) {
	for _, n := range benchfed.Sizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			desired, current := diffPair(n)
			for _, impl := range diffImpls {
				b.Run(impl.name, func(b *testing.B) {
					mb := liveMB(func() any { s, _, _, _ := impl.run(desired, current); return s })
					cpu := benchfed.CPUTime()
					for b.Loop() {
						if _, adds, updates, deletes := impl.run(desired, current); adds == 0 || updates == 0 || deletes == 0 {
							b.Fatalf("%d adds, %d updates, %d deletes", adds, updates, deletes)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(desired)), "ns/entry")
					b.ReportMetric(float64((benchfed.CPUTime()-cpu).Nanoseconds())/float64(b.N)/float64(len(desired)), "cpu-ns/entry")
					b.ReportMetric(mb, "states-MB")
				})
			}
		})
	}
}

// liveMB measures the live heap what build returns holds.
func liveMB(build func() any) float64 {
	live := func() uint64 {
		runtime.GC()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	before := live()
	kept := build()
	after := live()
	runtime.KeepAlive(kept)
	return float64(int64(after)-int64(before)) / (1 << 20)
}
