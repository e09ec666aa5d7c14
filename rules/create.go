package rules

import (
	"slices"

	"github.com/cpactl/cpactl/ldapschema"
)

// Repeat is what a create finds when its object exists already.
type Repeat struct {
	// Different lists the configuration attributes whose values differ,
	// in the order compared: the create is refused (the update command
	// changes them).
	Different []string
	// CountersDiffer reports live counters (which a feed moves) that
	// differ: they are left as they are, and the create is "unchanged".
	CountersDiffer bool
}

// Unchanged reports whether the repeated create has nothing to do.
func (r Repeat) Unchanged() bool { return len(r.Different) == 0 }

// RepeatedCreate compares the object a create would write (want) with the
// one that exists: the configuration decides (the compared attributes
// that are not counters), the live counters never do. O(attributes).
func RepeatedCreate(want, existing ldapschema.Attrs, compared, counters []string) Repeat {
	var r Repeat
	for _, a := range compared {
		if !slices.Contains(counters, a) && len(want.Changes(existing, a)) > 0 {
			r.Different = append(r.Different, a)
		}
	}
	r.CountersDiffer = len(want.Changes(existing, counters...)) > 0
	return r
}
