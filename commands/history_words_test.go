package commands

import "testing"

func TestHistoryListWords(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   string
	}{
		{nil, "(none)"},
		{[]string{""}, "(none)"}, // a role group's placeholder member
		{[]string{"", "lab-admin"}, "lab-admin"},
		{[]string{"UK", "US"}, "UK,US"},
	} {
		if got := listWords(tc.values); got != tc.want {
			t.Errorf("listWords(%q) = %q, want %q", tc.values, got, tc.want)
		}
	}
}
