package commands

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
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

// attrWord names an attribute the way the flags do.
func attrWord(attr string) string {
	switch attr {
	case ldapschema.AttrDescription:
		return "description"
	case ldapschema.AttrSiteURL:
		return "url"
	case ldapschema.AttrSiteDN:
		return "site"
	case ldapschema.AttrPodStatus:
		return "status"
	case ldapschema.AttrTag:
		return "tags"
	case ldapschema.AttrDomain:
		return "domain"
	case ldapschema.AttrCN, ldapschema.AttrSN:
		return "name"
	case ldapschema.AttrMember:
		return "members"
	}
	return attr
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
	if kind == directory.KindConnectionServer {
		return "cs"
	}
	return kind
}
