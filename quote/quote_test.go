package quote

import (
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	long := strings.Repeat("é", 1000)
	for _, tc := range []struct{ in, want string }{
		{"UK", `"UK"`},
		{`R&D, "West"`, `"R&D, \"West\""`},
		{strings.Repeat("a", 80), `"` + strings.Repeat("a", 80) + `"`},
		{strings.Repeat("a", 81), `"` + strings.Repeat("a", 80) + `"… (81 characters)`},
		{long, `"` + strings.Repeat("é", 80) + `"… (1000 characters)`},
	} {
		if got := Name(tc.in); got != tc.want {
			t.Errorf("Name(%.20q...) = %.100s, want %.100s", tc.in, got, tc.want)
		}
	}
}
