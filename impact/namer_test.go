package impact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestNamerReplacesAsAReplacer: a namer puts a member's name and session
// IDs in a text exactly as a strings.Replacer of the same pairs does, on
// random texts of placeholders, broken placeholders and plain text.
func TestNamerReplacesAsAReplacer(t *testing.T) {
	pieces := []string{placeholder, "\x00", "\x00user", "\x00session", "\x00session12345\x00", "\x00session0000001\x00",
		"\x00session00000a\x00", "plain", " ", "é", sessionPlaceholder(0), sessionPlaceholder(1), sessionPlaceholder(7), sessionPlaceholder(12)}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 3000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := b.String()
		var ids []string
		for i := range r.IntN(10) {
			ids = append(ids, "id-"+string(rune('a'+i)))
		}
		pairs := []string{placeholder, "alice"}
		for i, id := range ids {
			pairs = append(pairs, sessionPlaceholder(i), id)
		}
		want := strings.NewReplacer(pairs...).Replace(text)
		if got := (&namer{name: "alice", ids: ids}).Replace(text); got != want {
			t.Fatalf("case %d: %q with %d ids: namer %q, replacer %q", n, text, len(ids), got, want)
		}
	}
}
