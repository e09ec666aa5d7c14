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
