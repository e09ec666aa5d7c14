package reconcile

import (
	"slices"

	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// What happened to an entry, from the current state to the desired one.
const (
	Added   = "added"   // only the desired state holds it
	Removed = "removed" // only the current state holds it
	Changed = "changed" // both hold it, with different values
)

// HiddenValue stands for the values of sensitive attributes (passwords)
// in reports.
const HiddenValue = "(hidden)"

// Report is the comparison of a desired state with the current one. Its
// JSON form is a stable contract (snake_case, pinned by a golden file).
type Report struct {
	// Identical is true when nothing differs.
	Identical bool    `json:"identical"`
	Summary   Summary `json:"summary"`
	// Entries lists the entries that differ, layout order (containers,
	// settings, sites, pods, ...), then by name.
	Entries []EntryChange `json:"entries"`
}

// Summary counts the entries by what happened to them.
type Summary struct {
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Changed int `json:"changed"`
	// Unchanged counts the objects (not the structure) both states hold
	// with the same values.
	Unchanged int `json:"unchanged"`
}

// EntryChange is one entry that differs.
type EntryChange struct {
	Change string `json:"change"` // Added, Removed or Changed
	Kind   string `json:"kind"`   // "site", "pod", ..., "container", "settings"
	Name   string `json:"name"`
	DN     string `json:"dn"`
	// Attributes lists the attributes that differ (for an added or removed
	// entry, all of them), by name, objectClass first.
	Attributes []AttributeChange `json:"attributes"`

	desired, current *Entry
}

// DesiredAttrs returns the desired entry's compared attributes, nil for an
// entry only the current state holds.
func (c EntryChange) DesiredAttrs() ldapschema.Attrs {
	if c.desired == nil {
		return nil
	}
	return c.desired.Attrs()
}

// Object names the entry for people: "site UK".
func (c EntryChange) Object() string { return c.Kind + " " + c.Name }

// AttributeChange is one attribute that differs.
type AttributeChange struct {
	Attribute string `json:"attribute"`
	// Current and Desired hold every value on each side: a preferred-site
	// list in rank order, other values sorted.
	Current []string `json:"current"`
	Desired []string `json:"desired"`
	// Removed and Added hold the values only one side has (compared by
	// the attribute's matching rule).
	Removed []string `json:"removed"`
	Added   []string `json:"added"`
}

// Compare compares the desired state with the current one. Entries that
// only the current state holds are reported removed, except the structure
// and the settings entry, which apply never deletes; the structure is
// never compared.
//
// Cost: O(n + v) for n entries and v values (an attribute whose values are
// written alike on both sides compares without computing keys), plus
// O(d log d) to sort the d entries that differ.
func Compare(desired, current *State) *Report {
	r := &Report{Entries: []EntryChange{}}
	for _, d := range desired.entries {
		c := current.entries[d.Key]
		_, same := current.same[d.Key]
		switch {
		case c == nil && !same:
			r.Entries = append(r.Entries, EntryChange{Change: Added, Kind: d.Kind, Name: d.Name, DN: d.DN,
				Attributes: attributeChanges(d, nil), desired: d})
			r.Summary.Added++
		case IsStructure(d.Kind):
		case same:
			r.Summary.Unchanged++
		default:
			changes := attributeChanges(d, c)
			if len(changes) == 0 {
				r.Summary.Unchanged++
				continue
			}
			r.Entries = append(r.Entries, EntryChange{Change: Changed, Kind: d.Kind, Name: d.Name, DN: d.DN,
				Attributes: changes, desired: d, current: c})
			r.Summary.Changed++
		}
	}
	for _, c := range current.entries {
		if desired.entries[c.Key] != nil || IsStructure(c.Kind) || c.Kind == objkind.Settings {
			continue
		}
		r.Entries = append(r.Entries, EntryChange{Change: Removed, Kind: c.Kind, Name: c.Name, DN: c.DN,
			Attributes: attributeChanges(nil, c), current: c})
		r.Summary.Removed++
	}
	// Each DN is in the report once, so report order (kind, name, DN) is
	// total: the maps' order does not show.
	sortEntries(r.Entries, EntryChange.entry, rank)
	r.Identical = len(r.Entries) == 0
	return r
}

func (c EntryChange) entry() *Entry {
	if c.desired != nil {
		return c.desired
	}
	return c.current
}

// attributeChanges compares two entries' attributes (either may be nil)
// under the schema's matching rules: both lists are in the same order, so
// one pass pairs them. An attribute export leaves out (leftOutByExport)
// that the current entry holds and the desired one lacks is no change:
// the file says nothing about it (a user's password in an export, edited
// and applied back, is kept).
func attributeChanges(desired, current *Entry) []AttributeChange {
	var d, c []attribute
	if desired != nil {
		d = desired.attrs
	}
	if current != nil {
		c = current.attrs
	}
	out := []AttributeChange{}
	for i, j := 0, 0; i < len(d) || j < len(c); {
		var name string
		var dv, cv []string
		switch {
		case j == len(c) || i < len(d) && attrLess(d[i].t, c[j].t):
			name, dv = d[i].t.name, desired.valuesOf(d[i])
			i++
		case i == len(d) || attrLess(c[j].t, d[i].t):
			if desired != nil && leftOutByExport(c[j].t) {
				// Export never writes it: its absence from the
				// desired entry says nothing, so it is left alone.
				j++
				continue
			}
			name, cv = c[j].t.name, current.valuesOf(c[j])
			j++
		default:
			name, dv, cv = d[i].t.name, desired.valuesOf(d[i]), current.valuesOf(c[j])
			i, j = i+1, j+1
		}
		if slices.Equal(dv, cv) || ldapschema.EqualValues(name, dv, cv) {
			continue
		}
		out = append(out, describeChange(name, dv, cv))
	}
	return out
}

func describeChange(name string, desired, current []string) AttributeChange {
	ch := AttributeChange{Attribute: name, Current: ldapschema.SortValues(name, current),
		Desired: ldapschema.SortValues(name, desired), Removed: []string{}, Added: []string{}}
	switch {
	case len(current) == 0:
		// An added entry or attribute: every value is added, and no key
		// needs computing (most of an apply into an empty directory).
		ch.Added = append(ch.Added, ch.Desired...)
	case len(desired) == 0:
		ch.Removed = append(ch.Removed, ch.Current...)
	default:
		dk, ck := ldapschema.ValueKeys(name, desired), ldapschema.ValueKeys(name, current)
		for _, v := range ch.Current {
			if k := ldapschema.ValueKey(name, v); !dk[k] && ck[k] {
				ch.Removed = append(ch.Removed, v)
			}
		}
		for _, v := range ch.Desired {
			if k := ldapschema.ValueKey(name, v); !ck[k] && dk[k] {
				ch.Added = append(ch.Added, v)
			}
		}
	}
	if ch.Current == nil {
		ch.Current = []string{}
	}
	if ch.Desired == nil {
		ch.Desired = []string{}
	}
	if info, _ := ldapschema.LookupAttribute(name); info.Sensitive {
		for _, list := range [][]string{ch.Current, ch.Desired, ch.Removed, ch.Added} {
			for i := range list {
				list[i] = HiddenValue
			}
		}
	}
	return ch
}
