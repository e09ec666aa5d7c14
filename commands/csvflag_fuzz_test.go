package commands

import (
	"slices"
	"strings"
	"testing"
)

// formatCSVList is what a csvList flag's value writes back, as a user
// would type it again: String without pflag's brackets.
func formatCSVList(list []string) string {
	c := &csvList{name: "set", values: &list}
	return strings.TrimSuffix(strings.TrimPrefix(c.String(), "["), "]")
}

func parseCSVList(s string) ([]string, error) {
	var got []string
	err := (&csvList{name: "set", values: &got}).Set(s)
	return got, err
}

// FuzzCSVList: parse(format(list)) == list for a list of any names (the
// names are the fuzzer's string cut at NUL: commas, quotes, blanks,
// newlines); parsing any value does not panic, a refusal is one line
// naming the flag, and what is accepted formats and parses to the same.
func FuzzCSVList(f *testing.F) {
	for _, s := range []string{
		"UK\x00US",
		"Paris, FR\x00London",
		" UK\x00\"Paris, FR\"",
		`say "hi"` + "\x00UK",
		"",
		"\x00",
		"a\nb\x00 c ",
		`\.`,
	} {
		f.Add(s)
	}
	for _, s := range []string{`"Paris, FR",London`, `UK, "Paris, FR"`, `"say ""hi""",UK`, `"Paris, FR,London`, `Pa"ris`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		list := strings.Split(s, "\x00")
		// One empty name writes as "", the empty list: nothing to tell
		// them apart by on a command line.
		if !slices.Equal(list, []string{""}) && !strings.Contains(s, "\r") {
			text := formatCSVList(list)
			back, err := parseCSVList(text)
			if err != nil || !slices.Equal(back, list) {
				t.Fatalf("%q formats as %q, which parses as %q, %v", list, text, back, err)
			}
		}
		got, err := parseCSVList(s)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "--set ") {
				t.Fatalf("Set(%q): error %q, want one line naming --set", s, msg)
			}
			return
		}
		if len(got) == 0 {
			return
		}
		text := formatCSVList(got)
		back, err := parseCSVList(text)
		if err != nil || !slices.Equal(back, got) {
			t.Fatalf("%q parses as %q, which formats as %q and parses as %q, %v", s, got, text, back, err)
		}
	})
}
