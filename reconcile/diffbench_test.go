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

// BenchmarkDiff classifies, compares and plans (with pruning) two synthetic
// federations with the proportions of the CPA maximum; ns/entry should not
// grow faster than log n. state-MB is the memory both states hold.
func BenchmarkDiff(b *testing.B) {
	for _, n := range benchfed.Sizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			desired, current := diffPair(n)
			mb := stateMB(desired, current)
			for b.Loop() {
				d, c := NewState(dit, desired), NewState(dit, current)
				r := Compare(d, c)
				p, problems := PlanApply(d, c, r, true)
				if len(problems) > 0 || p.Adds == 0 || p.Updates == 0 || p.Deletes == 0 {
					b.Fatalf("%d adds, %d updates, %d deletes, problems %v", p.Adds, p.Updates, p.Deletes, problems)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(desired)), "ns/entry")
			b.ReportMetric(mb, "state-MB")
		})
	}
}

// stateMB measures the live heap both states hold once built (not the
// entries they are built from).
func stateMB(desired, current []*ldap.Entry) float64 {
	live := func() uint64 {
		runtime.GC()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	before := live()
	d, c := NewState(dit, desired), NewState(dit, current)
	after := live()
	runtime.KeepAlive(d)
	runtime.KeepAlive(c)
	return float64(int64(after)-int64(before)) / (1 << 20)
}
