package commands

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/quote"
)

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func intOrDash(v *int) string {
	if v == nil {
		return "-"
	}
	return strconv.Itoa(*v)
}

func strOrDash(v *string) string {
	if v == nil {
		return "-"
	}
	return orDash(*v)
}

// kindWord renders a pool kind as --kind spells it.
func kindWord(kind string) string {
	return strings.ReplaceAll(strings.ToLower(kind), "_", "-")
}

// offOr renders a threshold where 0 means off.
func offOr(v int, zero string) string {
	if v == 0 {
		return zero
	}
	return strconv.Itoa(v)
}

// assignmentWord renders a desktop entitlement's or pool's user assignment.
func assignmentWord(dedicated *bool) string {
	switch {
	case dedicated == nil:
		return "-"
	case *dedicated:
		return "dedicated"
	}
	return "floating"
}

// attrWordTable names each attribute whose flag is not its kebab-case name,
// as the flag that sets it does (--site-url, --status, --tags, --features,
// --connecting, --state; a name is set by NAME or --rename, a group's
// members by --members): the one word every message, --dry-run line and
// history line uses for it.
var attrWordTable = map[string]string{
	ldapschema.AttrCN:                 "name",
	ldapschema.AttrSN:                 "name",
	ldapschema.AttrSiteURL:            "site-url",
	ldapschema.AttrPodStatus:          "status",
	ldapschema.AttrTag:                "tags",
	ldapschema.AttrMember:             "members",
	ldapschema.AttrHostFeature:        "features",
	ldapschema.AttrConnectingSessions: "connecting",
	ldapschema.AttrSessionState:       "state",
}

// attrWord names an attribute the way its flag does: attrWordTable, else the
// attribute's kebab-case name without cpactl's prefix and a DN suffix
// (pae-UseHomeSite is use-home-site, pae-BrokeringPodDN is brokering-pod,
// pae-SiteDN is site).
func attrWord(attr string) string {
	if w, ok := attrWordTable[attr]; ok {
		return w
	}
	// cpactl's attributes are "prefix-CamelCase": drop the prefix and a
	// DN suffix, then spell the words in kebab case.
	_, name, found := strings.Cut(attr, "-")
	if !found {
		name = attr
	}
	name = strings.TrimSuffix(name, "DN")
	var b strings.Builder
	runes := []rune(name)
	for i, r := range runes {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(runes[i-1]) ||
			(i+1 < len(runes) && unicode.IsLower(runes[i+1]))) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func firstFold(list []string, name string) string {
	for _, v := range list {
		if strings.EqualFold(v, name) {
			return v
		}
	}
	return ""
}

func sortedTags(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	out := slices.Clone(tags)
	slices.Sort(out)
	return out
}

// cliNoun is the command noun of a kind.
func cliNoun(kind string) string {
	if kind == objkind.ConnectionServer {
		return "cs"
	}
	return kind
}

// attrWords lists attributes as the flags name them, each word once (cn
// and sn are both "name"): "capacity, description".
func attrWords(attrs []string) string {
	return differentWords(attrs, nil)
}

// differentWords lists attributes as attrWords does; with existing (the
// record of a repeated create) each single value the object holds follows
// its word (storedWord): "description, site (UK), capacity (50)".
func differentWords(attrs []string, existing ldapschema.Attrs) string {
	seen := make([]string, 0, len(attrs))
	words := make([]string, 0, len(attrs))
	for _, a := range attrs {
		w := attrWord(a)
		if slices.Contains(seen, w) { // cn and sn are both "name": the first says it
			continue
		}
		seen = append(seen, w)
		if existing != nil {
			if v, ok := storedWord(a, existing[a]); ok {
				w += " (" + v + ")"
			}
		}
		words = append(words, w)
	}
	return strings.Join(words, ", ")
}

// storedWord is how a repeated create's refusal shows the value an object
// holds: a single value (none when it has none), a reference by name, a
// boolean as its flag takes it, at most 40 characters; not a description
// nor a list (tags, members: the refusal names them only).
func storedWord(attr string, values []string) (string, bool) {
	at, known := ldapschema.Attribute(attr)
	switch {
	case strings.EqualFold(attr, ldapschema.AttrDescription), listValued(attr), len(values) > 1:
		return "", false
	case len(values) == 0:
		return "none", true
	case known && at.Syntax == ldapschema.DN:
		return ldapschema.NameOf(values[0]), true
	case known && at.Syntax == ldapschema.Boolean:
		return strings.ToLower(values[0]), true
	}
	v := quote.Visible(values[0])
	if r := []rune(v); len(r) > 40 {
		v = string(r[:39]) + "…"
	}
	return v, true
}

// listValued reports whether attr holds a list (tags, features, a group's
// members): multi-valued in cpactl's schema, or member.
func listValued(attr string) bool {
	at, known := ldapschema.Attribute(attr)
	return known && !at.Single || strings.EqualFold(attr, ldapschema.AttrMember)
}

// aDifferent is "a different WORDS" for attrs as differentWords words
// them, or "different WORDS" when the first names a list ("exists with
// different tags", not "a different tags").
func aDifferent(attrs []string, words string) string {
	if len(attrs) > 0 && listValued(attrs[0]) {
		return "different " + words
	}
	return "a different " + words
}
