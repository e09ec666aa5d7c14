package impact

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/cpactl/cpactl/broker"
)

// firstDifferenceAllLines is firstDifference as first written: every
// step but the request's echo listed, then the lists compared.
func firstDifferenceAllLines(dec [2]*broker.Decision) Difference {
	var lines [2][]TraceLine
	for i, d := range dec {
		if d == nil {
			continue
		}
		for n, t := range d.Trace {
			if t.Step != "request" {
				lines[i] = append(lines[i], TraceLine{Number: n + 1, Step: t.Step, Message: t.Message})
			}
		}
	}
	i := 0
	for i < len(lines[0]) && i < len(lines[1]) && lines[0][i].Step == lines[1][i].Step && lines[0][i].Message == lines[1][i].Message {
		i++
	}
	var diff Difference
	if i < len(lines[0]) {
		diff.Before = &lines[0][i]
	}
	if i < len(lines[1]) {
		diff.After = &lines[1][i]
	}
	return diff
}

// TestFirstDifferenceAsListingEveryLine: on random traces (request
// echoes anywhere, steps and messages alike or not, a decision absent),
// firstDifference finds the lines the listing of every line finds.
func TestFirstDifferenceAsListingEveryLine(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 27))
	steps := []string{"request", "request", "sessions", "tiers", "site", "outcome"}
	msgs := []string{"a", "b", "c"}
	trace := func() []broker.TraceStep {
		var l []broker.TraceStep
		for range r.IntN(8) {
			l = append(l, broker.TraceStep{Step: pickOf(r, steps), Message: pickOf(r, msgs)})
		}
		return l
	}
	for n := range 20000 {
		var dec [2]*broker.Decision
		common := trace()
		for i := range dec {
			if r.IntN(10) == 0 {
				continue
			}
			dec[i] = &broker.Decision{Trace: append(append([]broker.TraceStep(nil), common...), trace()...)}
		}
		got, want := firstDifference(dec), firstDifferenceAllLines(dec)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: %+v and %+v: got %s, want %s", n, dec[0], dec[1], diffText(got), diffText(want))
		}
	}
}
