package ldapschema

import "testing"

func TestCanonical(t *testing.T) {
	for _, tc := range []struct {
		table       map[string]string
		value, want string
	}{
		{ScopeAliases, "any", ScopeAny},
		{ScopeAliases, "All Sites", ScopeAny},
		{ScopeAliases, "ALL_SITES", ScopeAny},
		{ScopeAliases, "all-sites", ScopeAny},
		{ScopeAliases, "Within Site", ScopeSite},
		{ScopeAliases, "WITHIN_SITE", ScopeSite},
		{ScopeAliases, "Within Pod", ScopeLocal},
		{ScopeAliases, "within_pod", ScopeLocal},
		{ScopeAliases, " local ", ScopeLocal},
		{PolicyAliases, "Load Index", PolicyLoad},
		{PolicyAliases, "Session Count", PolicySession},
		{PolicyAliases, "disabled", PolicyNone},
		{PolicyAliases, "NONE", PolicyNone},
		{ProtocolAliases, "VMware Blast", ProtocolBlast},
		{ProtocolAliases, "Blast Extreme", ProtocolBlast},
		{ProtocolAliases, "PCoIP", ProtocolPCoIP},
		{ProtocolAliases, "Microsoft RDP", ProtocolRDP},
	} {
		if got, ok := Canonical(tc.table, tc.value); !ok || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.value, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"", "All", "pod", "ULTRA", "All Sites Pod"} {
		if got, ok := Canonical(ScopeAliases, bad); ok {
			t.Errorf("Canonical(%q) = %q, want none", bad, got)
		}
	}
	if _, ok := Canonical(ProtocolAliases, "ULTRA"); ok {
		t.Error("ULTRA (PCoIP Ultra) is not a protocol a global entitlement takes")
	}
}
