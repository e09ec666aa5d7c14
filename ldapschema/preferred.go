package ldapschema

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// RankedSite is one decoded pae-PreferredSite value.
type RankedSite struct {
	Rank int
	Name string
}

// PreferredList is a decoded preferred-site list in rank order, with the
// problems found while decoding (for lint); a list with problems still
// decodes as far as it can.
type PreferredList struct {
	Sites []RankedSite
	// Gaps reports ranks that are not 0..n-1 (a gap or a repeated rank).
	Gaps bool
}

// Names returns the site names in rank order.
func (l PreferredList) Names() []string {
	if len(l.Sites) == 0 {
		return nil
	}
	names := make([]string, len(l.Sites))
	for i, s := range l.Sites {
		names[i] = s.Name
	}
	return names
}

// EncodePreferredSites renders names as ranked values: {0}first, {1}second.
func EncodePreferredSites(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "{" + strconv.Itoa(i) + "}" + n
	}
	return out
}

// ParsePreferredSite decodes one "{rank}name" value.
func ParsePreferredSite(v string) (RankedSite, error) {
	if !strings.HasPrefix(v, "{") {
		return RankedSite{}, fmt.Errorf("preferred site %q has no {rank} prefix", v)
	}
	end := strings.IndexByte(v, '}')
	if end < 0 {
		return RankedSite{}, fmt.Errorf("preferred site %q has no closing brace after its rank", v)
	}
	digits := v[1:end]
	rank, err := strconv.Atoi(digits)
	if err != nil || rank < 0 || digits == "" || (len(digits) > 1 && digits[0] == '0') || len(digits) > 9 {
		return RankedSite{}, fmt.Errorf("preferred site %q has rank %q, not a number 0 or more", v, digits)
	}
	name := v[end+1:]
	if name == "" {
		return RankedSite{}, fmt.Errorf("preferred site %q names no site", v)
	}
	return RankedSite{Rank: rank, Name: name}, nil
}

// DecodePreferredSites decodes stored values into rank order (ties by name,
// so the result does not depend on the server's value order). It returns the
// first malformed value's error, after decoding the others.
func DecodePreferredSites(values []string) (PreferredList, error) {
	var l PreferredList
	var first error
	for _, v := range values {
		rs, err := ParsePreferredSite(v)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		l.Sites = append(l.Sites, rs)
	}
	sort.SliceStable(l.Sites, func(i, j int) bool {
		if l.Sites[i].Rank != l.Sites[j].Rank {
			return l.Sites[i].Rank < l.Sites[j].Rank
		}
		return l.Sites[i].Name < l.Sites[j].Name
	})
	for i, s := range l.Sites {
		if s.Rank != i {
			l.Gaps = true
		}
	}
	return l, first
}
