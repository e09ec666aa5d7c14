// Package quote renders the names administrators give inside cpactl's
// messages: in double quotes, and cut when they are long, so that a
// 10,000-character argument still makes a one-line error (Name); and as one
// shell word inside the commands cpactl suggests (Shell).
package quote

import (
	"fmt"
	"strings"
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

// Shell returns s as one shell word: unchanged when it is plain, in single
// quotes otherwise; a single quote inside ends the quoted part, follows
// escaped by a backslash, and a new quoted part begins. A word holding a
// character Visible escapes (a control, a bidi override) is written in
// ANSI-C quotes instead, $'a\x1bb' (bash, zsh, ksh), so that the
// command shown is safe on a terminal and still names the object.
func Shell(s string) string {
	if Visible(s) != s {
		return ansiC(s)
	}
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,/:@", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
