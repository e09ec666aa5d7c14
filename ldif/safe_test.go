package ldif

import "testing"

// FuzzSafeString: SafeString, eight bytes at a time, is its rule byte by
// byte: printable ASCII, not starting with space, colon or '<', not
// ending with a space.
func FuzzSafeString(f *testing.F) {
	for _, seed := range []string{"", " a", "a ", ":a", "<a", "abcdefgh", "abcdefgh\x7f", "abcdefg\x7f", "Zürich", "abcdefghij\x1fkl", "~~~~~~~~~~~~~~~~", "tab\there"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := s == "" || s[0] != ' ' && s[0] != ':' && s[0] != '<' && s[len(s)-1] != ' '
		for i := 0; i < len(s); i++ {
			want = want && s[i] >= 0x20 && s[i] <= 126
		}
		if got := SafeString(s); got != want {
			t.Fatalf("SafeString(%q) = %v, want %v", s, got, want)
		}
	})
}
