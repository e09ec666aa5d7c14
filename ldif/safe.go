package ldif

// SafeString reports whether an LDIF value may be written as is: printable
// ASCII (no control character: RFC 2849 would allow most, but a value
// written as is would act on the terminal the LDIF is printed to, so they
// are base64-encoded, which keeps the value exact), not starting with
// space, colon or '<', and not ending with a space.
func SafeString(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[0] == ':' || s[0] == '<' || s[len(s)-1] == ' ' {
		return false
	}
	// Printable ASCII only: no byte of a multi-byte (or invalid) UTF-8
	// sequence passes, so there is no UTF-8 to check. Eight bytes at a
	// time: none at 0x80 or above, none below 0x20 (a borrow into its own
	// high bit), none equal to 0x7f (zero once xored with it).
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		del := w ^ ones*0x7f
		if w&highs != 0 || (w-ones*0x20)&^w&highs != 0 || (del-ones)&^del&highs != 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 126 {
			return false
		}
	}
	return true
}
