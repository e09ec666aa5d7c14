// Package ldapschema is the one definition of cpactl's LDAP schema: every
// attribute type and object class cpactl owns, the directory information tree
// (DIT) names and DN builders, and the mapping between directory entries and
// Go records.
//
// Nothing else in cpactl spells an attribute name: use the constants of this
// package. The slapd.conf ".schema" file, the cn=schema,cn=config LDIF and
// docs/schema.md are all rendered from the Attributes and Classes tables.
//
// OIDs live under the arc Arc: Arc+".1.N" for attribute types and Arc+".2.N"
// for object classes. An OID, once released, never changes meaning: add new
// elements with new numbers, never renumber.
package ldapschema

import (
	"fmt"
	"strings"
)

// Arc is the UUID-derived OID arc that cpactl owns (docs/schema.md).
const Arc = "2.25.208482485135363301622500990417733107353"

// SchemaName is the name of the schema file and of its cn=config entry
// (stored by OpenLDAP as cn={N}cpactl).
const SchemaName = "cpactl"

// Syntax is an LDAP attribute syntax.
type Syntax int

// The syntaxes cpactl uses (docs/schema.md): integers use INTEGER, booleans
// BOOLEAN, references DN and enumerations and names case-ignore strings.
const (
	DirectoryString Syntax = iota
	Integer
	Boolean
	DN
)

// OID returns the syntax's RFC 4517 OID.
func (s Syntax) OID() string {
	switch s {
	case Integer:
		return "1.3.6.1.4.1.1466.115.121.1.27"
	case Boolean:
		return "1.3.6.1.4.1.1466.115.121.1.7"
	case DN:
		return "1.3.6.1.4.1.1466.115.121.1.12"
	default:
		return "1.3.6.1.4.1.1466.115.121.1.15"
	}
}

// String names the syntax as docs/schema.md shows it.
func (s Syntax) String() string {
	switch s {
	case Integer:
		return "INTEGER"
	case Boolean:
		return "BOOLEAN"
	case DN:
		return "DN"
	default:
		return "Directory String"
	}
}

// matching returns the EQUALITY, ORDERING and SUBSTR rules of a syntax
// ("" when it has none).
func (s Syntax) matching() (equality, ordering, substr string) {
	switch s {
	case Integer:
		return "integerMatch", "integerOrderingMatch", ""
	case Boolean:
		return "booleanMatch", "", ""
	case DN:
		return "distinguishedNameMatch", "", ""
	default:
		return "caseIgnoreMatch", "", "caseIgnoreSubstringsMatch"
	}
}

// AttributeType is one attribute type of the schema.
type AttributeType struct {
	Number int    // OID suffix: the OID is Arc.1.Number
	Name   string // the attribute's name, e.g. "pae-LoadThresholdForSite"
	Desc   string // one line, shown in the schema (DESC) and in docs/schema.md
	Syntax Syntax
	Single bool // SINGLE-VALUE
	// Values documents the accepted values or range for docs/schema.md.
	Values string
}

// OID returns the attribute type's OID.
func (a AttributeType) OID() string { return fmt.Sprintf("%s.1.%d", Arc, a.Number) }

// Definition returns the RFC 4512 AttributeTypeDescription, as slapd expects
// it after "attributetype" or in an olcAttributeTypes value.
func (a AttributeType) Definition() string {
	var b strings.Builder
	fmt.Fprintf(&b, "( %s NAME '%s' DESC '%s'", a.OID(), a.Name, schemaQuote(a.Desc))
	eq, ord, sub := a.Syntax.matching()
	if eq != "" {
		fmt.Fprintf(&b, " EQUALITY %s", eq)
	}
	if ord != "" {
		fmt.Fprintf(&b, " ORDERING %s", ord)
	}
	if sub != "" {
		fmt.Fprintf(&b, " SUBSTR %s", sub)
	}
	fmt.Fprintf(&b, " SYNTAX %s", a.Syntax.OID())
	if a.Single {
		b.WriteString(" SINGLE-VALUE")
	}
	b.WriteString(" )")
	return b.String()
}

// ClassKind is an object class's kind.
type ClassKind string

// ClassKind values.
const (
	Structural ClassKind = "STRUCTURAL"
	Auxiliary  ClassKind = "AUXILIARY"
)

// ObjectClass is one object class of the schema.
type ObjectClass struct {
	Number int // OID suffix: the OID is Arc.2.Number
	Name   string
	Desc   string
	Kind   ClassKind
	Must   []string // attribute names, standard ones included
	May    []string
}

// OID returns the object class's OID.
func (c ObjectClass) OID() string { return fmt.Sprintf("%s.2.%d", Arc, c.Number) }

// Definition returns the RFC 4512 ObjectClassDescription.
func (c ObjectClass) Definition() string {
	var b strings.Builder
	fmt.Fprintf(&b, "( %s NAME '%s' DESC '%s' SUP top %s", c.OID(), c.Name, schemaQuote(c.Desc), c.Kind)
	if len(c.Must) > 0 {
		fmt.Fprintf(&b, " MUST %s", oidList(c.Must))
	}
	if len(c.May) > 0 {
		fmt.Fprintf(&b, " MAY %s", oidList(c.May))
	}
	b.WriteString(" )")
	return b.String()
}

func oidList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return "( " + strings.Join(names, " $ ") + " )"
}

// schemaQuote escapes a DESC value (RFC 4512 qdstring: \27 for a quote, \5C
// for a backslash).
func schemaQuote(s string) string {
	return strings.NewReplacer(`\`, `\5C`, `'`, `\27`).Replace(s)
}

// Attribute returns the attribute type named name (case-insensitive).
func Attribute(name string) (AttributeType, bool) {
	for _, a := range Attributes {
		if strings.EqualFold(a.Name, name) {
			return a, true
		}
	}
	return AttributeType{}, false
}
