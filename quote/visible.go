package quote

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Visible returns s with every character that would act on a terminal, or
// hide or reorder the text around it, written out as a Go escape instead:
// what every table cell and plain line cpactl prints goes through, since
// values written by other tools (a description holding ESC ]0;…BEL, which
// retitles a terminal) reach them raw. It escapes
//
//   - the C0 controls and DEL: \a \b \t \n \v \f \r by name, the others
//     as \x1b;
//   - the C1 controls (U+0080-U+009F) as \u009b;
//   - the format characters (Unicode Cf: the bidi overrides and isolates
//     that reorder a line, U+202E; zero-width spaces; the byte order mark)
//     and the line and paragraph separators, as \u202e or \U000e0001,
//     except the zero-width non-joiner and joiner (U+200C, U+200D), which
//     Persian and Indic words and emoji sequences need;
//   - each byte that is not UTF-8, as \xff.
//
// Everything else is left as it is, the backslash too: the result is for
// reading, not for parsing back (JSON, YAML and LDIF are the exact forms),
// and a name such as CORP\alice stays as written. Text that needs no
// escape is returned as is, without allocating; escaped text is never
// escaped again (an escape is printable ASCII).
func Visible(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			break // a C0 control or DEL
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if hidden(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			b = append(b, c)
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if hidden(r, size) {
			b = appendEscape(b, r, s[i])
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// ansiC returns s as a shell word in ANSI-C quotes: $'…', with what
// Visible escapes written as the same escapes, and the backslash and the
// single quote escaped by a backslash.
func ansiC(s string) string {
	b := append(make([]byte, 0, len(s)+8), "$'"...)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case hidden(r, size):
			b = appendEscape(b, r, s[i])
		case r == '\\', r == '\'':
			b = append(b, '\\', byte(r))
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(append(b, '\''))
}

// hidden reports whether Visible escapes the rune r, decoded from size
// bytes (an invalid byte decodes as utf8.RuneError of size 1).
func hidden(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == '\u200c', r == '\u200d':
		return false
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// appendEscape appends the escape of r (or of the invalid byte c) in Go's
// notation, as strconv.Quote writes it.
func appendEscape(b []byte, r rune, c byte) []byte {
	const hex = "0123456789abcdef"
	switch {
	case r == utf8.RuneError:
		return append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
	case r < utf8.RuneSelf:
		if named := `abtnvfr`; r >= '\a' && r <= '\r' {
			return append(b, '\\', named[r-'\a'])
		}
		return append(b, '\\', 'x', hex[r>>4], hex[r&0xf])
	case r <= 0xffff:
		b = append(b, '\\', 'u')
		return appendHex(b, r, 4)
	}
	b = append(b, '\\', 'U')
	return appendHex(b, r, 8)
}

// appendHex appends r as digits lower-case hex digits, zero-padded.
func appendHex(b []byte, r rune, digits int) []byte {
	s := strconv.FormatInt(int64(r), 16)
	for n := len(s); n < digits; n++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
