package impact

// What a decision comes to, and how two decisions differ.

import (
	"sort"
	"strings"

	"github.com/cpactl/cpactl/broker"
)

// result reads the outcome and placement of a decision.
func result(d *broker.Decision) Result {
	r := Result{Outcome: d.Outcome, Reason: d.Reason}
	if p := d.Placement; p != nil {
		r.Site, r.Pod, r.Pool, r.Farm, r.Host, r.Machine, r.Session = p.Site, p.Pod, p.Pool, p.Farm, p.Host, p.Machine, p.Session
	}
	return r
}

// named replaces the placeholder by the user's name.
func named(r Result, rep *strings.Replacer) Result {
	if rep != nil {
		r.Reason, r.Session = rep.Replace(r.Reason), rep.Replace(r.Session)
	}
	return r
}

// firstDifference finds the first trace step where two decisions differ,
// the request's echo aside.
func firstDifference(dec [2]*broker.Decision) Difference {
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

func namedDiff(d Difference, rep [2]*strings.Replacer) Difference {
	var out Difference
	if d.Before != nil {
		l := *d.Before
		if rep[0] != nil {
			l.Message = rep[0].Replace(l.Message)
		}
		out.Before = &l
	}
	if d.After != nil {
		l := *d.After
		if rep[1] != nil {
			l.Message = rep[1].Replace(l.Message)
		}
		out.After = &l
	}
	return out
}

// counts lists a tally in name order of from, then to.
func counts(m map[[2]string]int) []Count {
	out := []Count{}
	for k, n := range m {
		out = append(out, Count{From: k[0], To: k[1], Requests: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return nameLess(out[i].From, out[j].From)
		}
		return nameLess(out[i].To, out[j].To)
	})
	return out
}
