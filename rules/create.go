package rules

import (
	"fmt"
	"slices"
	"strings"

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

// The Repeated* functions compare the object a create would write (want)
// with the one that exists, field by field: they return what differs, in
// the words of the create's refusal ("description", "site (UK)"); none
// means the create is "unchanged". O(fields).

// RepeatedSite compares a site's description and URL.
func RepeatedSite(want, existing ldapschema.Site) []string {
	var diffs []string
	if existing.Description != want.Description {
		diffs = append(diffs, "description")
	}
	if existing.URL != want.URL {
		diffs = append(diffs, "url")
	}
	return diffs
}

// RepeatedPod compares a pod's site (by DN), description and, when the
// create was given one (statusGiven), its status.
func RepeatedPod(want, existing ldapschema.Pod, statusGiven bool) []string {
	var diffs []string
	if !ldapschema.EqualDN(existing.SiteDN, want.SiteDN) {
		diffs = append(diffs, fmt.Sprintf("site (%s)", existing.Site))
	}
	if existing.Description != want.Description {
		diffs = append(diffs, "description")
	}
	if statusGiven && existing.Online != want.Online {
		status := ldapschema.PodOffline
		if existing.Online {
			status = ldapschema.PodOnline
		}
		diffs = append(diffs, fmt.Sprintf("status (%s)", status))
	}
	return diffs
}

// RepeatedUser compares a user's domain (without regard to case) and full
// name.
func RepeatedUser(want, existing ldapschema.User) []string {
	var diffs []string
	if !strings.EqualFold(existing.Domain, want.Domain) {
		domain := existing.Domain
		if domain == "" {
			domain = "-"
		}
		diffs = append(diffs, fmt.Sprintf("domain (%s)", domain))
	}
	if existing.FullName != want.FullName {
		diffs = append(diffs, fmt.Sprintf("full name (%s)", existing.FullName))
	}
	return diffs
}

// RepeatedConnectionServer compares a Connection Server's tags (in the
// order stored) and description.
func RepeatedConnectionServer(want, existing ldapschema.ConnectionServer) []string {
	var diffs []string
	if !slices.Equal(existing.Tags, want.Tags) {
		diffs = append(diffs, "tags")
	}
	if existing.Description != want.Description {
		diffs = append(diffs, "description")
	}
	return diffs
}

// RepeatedComputer compares a computer's description.
func RepeatedComputer(want, existing ldapschema.Computer) []string {
	if existing.Description != want.Description {
		return []string{"description"}
	}
	return nil
}
