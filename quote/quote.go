// Package quote renders the names administrators give inside cpactl's
// messages: in double quotes, and cut when they are long, so that a
// 10,000-character argument still makes a one-line error.
package quote

import (
	"fmt"
	"unicode/utf8"
)

// MaxShown is how many characters of a name a message shows.
const MaxShown = 80

// Name returns s in Go's double-quoted form; a name longer than MaxShown
// characters is cut there and followed by its length:
// "aaaa…" (1000 characters).
func Name(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= MaxShown {
		return fmt.Sprintf("%q", s)
	}
	cut, runes := s, 0
	for i := range s {
		if runes == MaxShown {
			cut = s[:i]
			break
		}
		runes++
	}
	return fmt.Sprintf("%q… (%d characters)", cut, n)
}
