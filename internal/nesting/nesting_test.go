package nesting

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// groupsOf is a nesting for the tests: each node, the groups that list it
// (in the order walked). "u" is the principal.
type groupsOf map[string][]string

func (g groupsOf) next(n string) []string { return g[n] }

func (g groupsOf) level(level []string) ([]string, bool, error) {
	var up []string
	for _, n := range level {
		up = append(up, g[n]...)
	}
	return up, false, nil
}

func key(n string) string { return strings.ToLower(n) }

func TestUp(t *testing.T) {
	tests := []struct {
		name   string
		groups groupsOf
		target string // "" walks everything
		steps  []string
		chain  []string // to the last step
	}{
		{name: "direct member: a group of the first level is reached by itself",
			groups: groupsOf{"u": {"a"}}, target: "a", steps: []string{"a"}, chain: []string{"a"}},
		{name: "nested: a group of a group, chain from the immediate group",
			groups: groupsOf{"u": {"a"}, "a": {"b"}, "b": {"c"}}, target: "c",
			steps: []string{"a", "b", "c"}, chain: []string{"a", "b", "c"}},
		{name: "breadth first: the shortest chain wins over an earlier, longer one",
			groups: groupsOf{"u": {"a", "b"}, "a": {"x"}, "x": {"t"}, "b": {"t"}}, target: "t",
			steps: []string{"a", "b", "x", "t"}, chain: []string{"b", "t"}},
		{name: "ties go to the order next gives",
			groups: groupsOf{"u": {"a", "b"}, "a": {"t"}, "b": {"t"}}, target: "t",
			steps: []string{"a", "b", "t"}, chain: []string{"a", "t"}},
		{name: "cycle: each group walked once (the principal too), the walk ends",
			groups: groupsOf{"u": {"a"}, "a": {"b"}, "b": {"a", "u", "c"}},
			steps:  []string{"a", "b", "c"}, chain: []string{"a", "b", "c"}},
		{name: "once by key: a group spelled twice is walked once",
			groups: groupsOf{"u": {"a", "A"}, "a": {"b"}, "A": {"c"}},
			steps:  []string{"a", "b"}, chain: []string{"a", "b"}},
		{name: "missing group: a name without groups ends its branch",
			groups: groupsOf{"u": {"gone", "a"}, "a": {"b"}}, target: "b",
			steps: []string{"gone", "a", "b"}, chain: []string{"a", "b"}},
		{name: "not found: every group walked, nothing stops",
			groups: groupsOf{"u": {"a"}, "a": {"b"}}, target: "z",
			steps: []string{"a", "b"}, chain: []string{"a", "b"}},
		{name: "depth: the chain is as long as the nesting is deep",
			groups: groupsOf{"u": {"1"}, "1": {"2"}, "2": {"3"}, "3": {"4"}, "4": {"5"}}, target: "5",
			steps: []string{"1", "2", "3", "4", "5"}, chain: []string{"1", "2", "3", "4", "5"}},
		{name: "no groups: no steps",
			groups: groupsOf{}, target: "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stop func(string) bool
			if tt.target != "" {
				stop = func(n string) bool { return n == tt.target }
			}
			once := Once(key)
			once("u") // the principal, as callers mark it
			steps := Up(tt.groups["u"], tt.groups.next, once, stop)
			var got []string
			for _, s := range steps {
				got = append(got, s.Node)
			}
			if !slices.Equal(got, tt.steps) {
				t.Errorf("steps %q, want %q", got, tt.steps)
			}
			if len(steps) == 0 {
				return
			}
			if chain := Chain(steps, len(steps)-1); !slices.Equal(chain, tt.chain) {
				t.Errorf("chain %q, want %q", chain, tt.chain)
			}
		})
	}
}

func TestLevels(t *testing.T) {
	tests := []struct {
		name   string
		groups groupsOf
		levels [][]string
	}{
		{name: "direct member: the principal, then its groups",
			groups: groupsOf{"u": {"a", "b"}}, levels: [][]string{{"u"}, {"a", "b"}}},
		{name: "nested: one level per depth",
			groups: groupsOf{"u": {"a"}, "a": {"b"}, "b": {"c"}}, levels: [][]string{{"u"}, {"a"}, {"b"}, {"c"}}},
		{name: "cycle: a group reached again is not walked again, the principal included",
			groups: groupsOf{"u": {"a"}, "a": {"b"}, "b": {"a", "u", "c"}}, levels: [][]string{{"u"}, {"a"}, {"b"}, {"c"}}},
		{name: "once per level: two members listing one group walk it once",
			groups: groupsOf{"u": {"a", "b"}, "a": {"c"}, "b": {"C"}}, levels: [][]string{{"u"}, {"a", "b"}, {"c"}}},
		{name: "missing group: a name without groups ends its branch",
			groups: groupsOf{"u": {"gone", "a"}, "a": {"b"}}, levels: [][]string{{"u"}, {"gone", "a"}, {"b"}}},
		{name: "depth: as many levels as the nesting is deep, plus the principal",
			groups: groupsOf{"u": {"1"}, "1": {"2"}, "2": {"3"}, "3": {"4"}},
			levels: [][]string{{"u"}, {"1"}, {"2"}, {"3"}, {"4"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]string
			err := Levels([]string{"u"}, func(level []string) ([]string, bool, error) {
				got = append(got, slices.Clone(level))
				return tt.groups.level(level)
			}, Once(key))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, tt.levels, slices.Equal[[]string]) {
				t.Errorf("levels %q, want %q", got, tt.levels)
			}
		})
	}
}

func TestLevelsStopsAndFails(t *testing.T) {
	g := groupsOf{"u": {"a"}, "a": {"b"}, "b": {"c"}}
	t.Run("stop ends the walk at that level", func(t *testing.T) {
		var walked []string
		err := Levels([]string{"u"}, func(level []string) ([]string, bool, error) {
			walked = append(walked, level...)
			if slices.Contains(level, "a") {
				return nil, true, nil
			}
			return g.level(level)
		}, Once(key))
		if err != nil || !slices.Equal(walked, []string{"u", "a"}) {
			t.Errorf("walked %q (%v), want [u a]", walked, err)
		}
	})
	t.Run("an error ends the walk and is returned", func(t *testing.T) {
		boom := errors.New("boom")
		calls := 0
		err := Levels([]string{"u"}, func(level []string) ([]string, bool, error) {
			calls++
			return []string{"x"}, false, boom
		}, Once(key))
		if !errors.Is(err, boom) || calls != 1 {
			t.Errorf("err %v after %d calls, want boom after 1", err, calls)
		}
	})
}
