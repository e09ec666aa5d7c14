package nearest

import "testing"

func TestOf(t *testing.T) {
	sites := []string{"India", "Japan", "UK", "US"}
	settings := []string{"pae-LoadThresholdForSite", "pae-RDSLoadIndexThreshold", "pae-RDSConnectingSessionThreshold", "pae-MinRDSServersInLBQueue", "pae-MaxSessionsPerPod"}
	for _, tc := range []struct {
		rule, given string
		names       []string
		want        string
	}{
		{"two neighbours swapped", "Indai", sites, "India"},
		{"a letter missing", "Sales Desktop", []string{"Sales Desktops", "Sales Apps"}, "Sales Desktops"},
		{"a letter missing in an attribute", "pae-PreferedSite", []string{"pae-PreferredSite", "pae-SiteName"}, "pae-PreferredSite"},
		{"case does not count", "indai", sites, "India"},
		{"a prefix left out", "LoadThresholdForSite", settings, "pae-LoadThresholdForSite"},
		{"too far: no suggestion", "Germany", sites, ""},
		{"a short name allows one edit", "UR", []string{"UK"}, "UK"},
		{"a short name allows one edit only", "XY", []string{"UK"}, ""},
		{"the same name is not a suggestion", "india", []string{"India"}, ""},
		{"ties go to the first in order", "Ux", []string{"US", "UK"}, "UK"},
		{"the nearest wins", "Indiaa", []string{"Indian", "India"}, "India"},
		{"no names", "India", nil, ""},
		{"an empty name", "", sites, ""},
		{"non-ASCII letters", "Zürih", []string{"Zürich", "Zug"}, "Zürich"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := Of(tc.given, tc.names); got != tc.want {
				t.Errorf("Of(%q) = %q, want %q", tc.given, got, tc.want)
			}
		})
	}
}

func TestHint(t *testing.T) {
	if got, want := Hint("India"), `did you mean "India"?`; got != want {
		t.Errorf("Hint = %q, want %q", got, want)
	}
	if got := Hint(""); got != "" {
		t.Errorf("Hint(\"\") = %q, want nothing", got)
	}
}

// The finder reuses its rows: a long candidate after a short one, and the
// other way round, must not read stale cells.
func TestFinderReuse(t *testing.T) {
	f := New("abcdef")
	for _, c := range []string{"x", "abcdefgh", "ab", "abcdeg"} {
		f.Add(c)
	}
	if got, _ := f.Best(); got != "abcdeg" {
		t.Errorf("Best = %q, want abcdeg", got)
	}
}
