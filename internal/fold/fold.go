// Package fold gives names a key under which they compare as
// strings.EqualFold compares them, so that case-insensitive look-ups can be
// map look-ups. The broker and lint both match names this way.
package fold

import (
	"strings"
	"unicode"
)

// Key maps a name to a key shared by exactly the names strings.EqualFold
// accepts as equal: every rune is replaced by the smallest rune of its
// simple case-folding orbit (bytes that are not UTF-8 become U+FFFD, as
// EqualFold reads them).
func Key(s string) string {
	// Fast path: the orbit of an ASCII letter has its upper case as its
	// smallest rune (k, K and the Kelvin sign fold to K), and other ASCII
	// runes fold to themselves.
	ascii, lower := true, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			ascii = false
			break
		}
		if 'a' <= c && c <= 'z' {
			lower = true
		}
	}
	if ascii {
		if !lower {
			return s
		}
		return strings.ToUpper(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < m {
				m = f
			}
		}
		b.WriteRune(m)
	}
	return b.String()
}

// Contains reports whether list holds name, compared as strings.EqualFold
// compares names.
func Contains(list []string, name string) bool {
	for _, s := range list {
		if strings.EqualFold(s, name) {
			return true
		}
	}
	return false
}

// Lookup is m[Key(s)] without building the key of an ASCII s of up to 64
// bytes (nearly every name): it is folded in a buffer on the stack, as Key
// folds it, and the map read with the bytes.
func Lookup[V any](m map[string]V, s string) V {
	if len(s) > 64 {
		return m[Key(s)]
	}
	var buf [64]byte
	b := buf[:len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return m[Key(s)]
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b[i] = c
	}
	return m[string(b)] // no allocation: the compiler reads the bytes
}
