package commands

import (
	"strings"
	"testing"
)

// TestCheckName covers the name rules, one row per rule.
func TestCheckName(t *testing.T) {
	tests := []struct {
		name, value string
		want        string // "" for valid
	}{
		{"every LDAP special and non-ASCII letters", `R&D, "West" <1>+;=*()\ Zürich`, ""},
		{"64 characters", strings.Repeat("é", 64), ""},
		{"65 characters", strings.Repeat("a", 65), "is 65 characters long: at most 64"},
		{"empty", "", "name is empty"},
		{"leading space", " UK", "starts or ends with a space"},
		{"trailing space", "UK ", "starts or ends with a space"},
		{"inner spaces", "New York", ""},
		{"control character", "U\tK", "non-printable character U+0009"},
		{"invalid UTF-8", "U\xffK", "not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkName("site", tc.value, maxName)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if err := checkDescription("site", "UK", strings.Repeat("x", maxDescription+1)); err == nil {
		t.Error("a description of 1025 characters passed")
	}
	if err := checkDescription("site", "UK", strings.Repeat("x", maxDescription)); err != nil {
		t.Errorf("a description of 1024 characters: %v", err)
	}
}
