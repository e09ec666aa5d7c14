package fold

import (
	"strings"
	"testing"
)

func FuzzKeyIsEqualFold(f *testing.F) {
	for _, pair := range [][2]string{{"pod-1", "POD-1"}, {"k", "\u212a"}, {"ſ", "S"}, {"σ", "ς"}, {"Zürich", "ZÜRICH"},
		{"\xff", "\xfe"}, {"\xff", "\ufffd"}, {"a", "b"}, {"", ""}, {"ǅ", "ǆ"}} {
		f.Add(pair[0], pair[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := Key(a) == Key(b), strings.EqualFold(a, b); got != want {
			t.Fatalf("Key(%q) == Key(%q) is %v, EqualFold says %v", a, b, got, want)
		}
	})
}

func TestContains(t *testing.T) {
	tests := []struct {
		name string
		list []string
		s    string
		want bool
	}{
		{"same spelling", []string{"a", "Pod-1"}, "Pod-1", true},
		{"other case", []string{"pod-1"}, "POD-1", true},
		{"unicode folding", []string{"\u212a"}, "k", true},
		{"absent", []string{"pod-1"}, "pod-2", false},
		{"empty list", nil, "pod-1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Contains(tt.list, tt.s); got != tt.want {
				t.Errorf("Contains(%q, %q) = %v, want %v", tt.list, tt.s, got, tt.want)
			}
		})
	}
}
