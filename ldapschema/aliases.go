package ldapschema

import "strings"

// The words Horizon uses for the values cpactl stores under its own
// (docs/conventions.md "Horizon's words"): Horizon Console's labels ("All
// Sites", "Load Index", "VMware Blast") and the REST API's enumerations
// (ALL_SITES, WITHIN_POD). Flags accept them as aliases of cpactl's words;
// whatever reads Horizon's words (a pull, an import) maps them here too,
// so that there is one table.
var (
	// ScopeAliases maps a global entitlement's scope.
	ScopeAliases = map[string]string{
		"ANY": ScopeAny, "ALL_SITES": ScopeAny,
		"SITE": ScopeSite, "WITHIN_SITE": ScopeSite,
		"LOCAL": ScopeLocal, "WITHIN_POD": ScopeLocal,
	}
	// PolicyAliases maps a global entitlement's session load distribution
	// policy (the REST API's session_distribution_policy: NONE, LOAD,
	// SESSION; the Console's Load Index and Session Count).
	PolicyAliases = map[string]string{
		"NONE": PolicyNone, "DISABLED": PolicyNone,
		"LOAD": PolicyLoad, "LOAD_INDEX": PolicyLoad,
		"SESSION": PolicySession, "SESSION_COUNT": PolicySession,
	}
	// ProtocolAliases maps a display protocol as the Console writes it
	// (VMware Blast, Blast Extreme, PCoIP, Microsoft RDP).
	ProtocolAliases = map[string]string{
		"BLAST": ProtocolBlast, "VMWARE_BLAST": ProtocolBlast, "BLAST_EXTREME": ProtocolBlast,
		"PCOIP": ProtocolPCoIP,
		"RDP":   ProtocolRDP, "MICROSOFT_RDP": ProtocolRDP,
	}
)

// Canonical returns cpactl's word for value in one of the alias tables:
// compared without regard to case, with spaces and hyphens read as
// underscores ("All Sites", "all-sites" and ALL_SITES are one word).
func Canonical(aliases map[string]string, value string) (string, bool) {
	key := strings.Join(strings.FieldsFunc(strings.ToUpper(value), func(r rune) bool {
		return r == ' ' || r == '-' || r == '_'
	}), "_")
	v, ok := aliases[key]
	return v, ok
}
