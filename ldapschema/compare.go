package ldapschema

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Description is a parsed RFC 4512 attribute type or object class
// description: its OID and its keyword fields ("NAME", "SYNTAX", ...), each
// with its values (a flag such as SINGLE-VALUE has none).
type Description struct {
	OID    string
	Fields map[string][]string
}

var cnConfigPrefix = regexp.MustCompile(`^\{\d+\}`)

// ParseDescription parses a definition as slapd returns it in the subschema
// (attributeTypes, objectClasses) or in cn=config (with a "{N}" prefix).
func ParseDescription(def string) (Description, error) {
	toks, err := tokenize(cnConfigPrefix.ReplaceAllString(strings.TrimSpace(def), ""))
	if err != nil {
		return Description{}, err
	}
	if len(toks) < 3 || toks[0] != "(" || toks[len(toks)-1] != ")" {
		return Description{}, fmt.Errorf("definition %q is not enclosed in parentheses", def)
	}
	d := Description{OID: toks[1], Fields: map[string][]string{}}
	toks = toks[2 : len(toks)-1]
	for i := 0; i < len(toks); {
		key := strings.ToUpper(toks[i])
		i++
		var vals []string
		switch {
		case i < len(toks) && toks[i] == "(":
			i++
			for i < len(toks) && toks[i] != ")" {
				if toks[i] != "$" {
					vals = append(vals, strings.TrimPrefix(toks[i], "'"))
				}
				i++
			}
			i++
		case i < len(toks) && isValueToken(toks[i]):
			vals = []string{strings.TrimPrefix(toks[i], "'")}
			i++
		}
		d.Fields[key] = vals
	}
	return d, nil
}

// isValueToken tells a value from the next keyword: quoted strings, OIDs
// and names that are not upper-case keywords.
func isValueToken(t string) bool {
	if strings.HasPrefix(t, "'") {
		return true
	}
	// Keywords are upper case: "SUP name" names the attribute name.
	return t != "(" && t != ")" && !keywords[t]
}

var keywords = map[string]bool{"NAME": true, "DESC": true, "OBSOLETE": true, "SUP": true, "EQUALITY": true,
	"ORDERING": true, "SUBSTR": true, "SYNTAX": true, "SINGLE-VALUE": true, "COLLECTIVE": true,
	"NO-USER-MODIFICATION": true, "USAGE": true, "ABSTRACT": true, "STRUCTURAL": true, "AUXILIARY": true,
	"MUST": true, "MAY": true, "X-ORDERED": true, "X-ORIGIN": true}

// tokenize splits a description; quoted strings keep a leading quote so
// they are always values.
func tokenize(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == '$':
			toks = append(toks, string(c))
			i++
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote in %q", s)
			}
			toks = append(toks, "'"+s[i+1:i+1+end])
			i += end + 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r()$'", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

// Differences lists how got differs from want, field by field; nil when
// they mean the same. Names of attributes and rules compare case-insensitively.
func (want Description) Differences(got Description) []string {
	keys := map[string]bool{}
	for k := range want.Fields {
		keys[k] = true
	}
	for k := range got.Fields {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if strings.HasPrefix(k, "X-") {
			continue
		}
		w, gv := want.Fields[k], got.Fields[k]
		_, inW := want.Fields[k]
		_, inG := got.Fields[k]
		// SUP top is implied for object classes.
		if k == "SUP" && (isTop(w) && !inG || isTop(gv) && !inW) {
			continue
		}
		if inW != inG || !sameFold(w, gv, k == "DESC") {
			out = append(out, fmt.Sprintf("%s: want %s, server has %s", k, show(w, inW), show(gv, inG)))
		}
	}
	sort.Strings(out)
	return out
}

func isTop(v []string) bool { return len(v) == 1 && strings.EqualFold(v[0], "top") }

func show(v []string, present bool) string {
	if !present {
		return "(absent)"
	}
	if len(v) == 0 {
		return "(set)"
	}
	return strings.Join(v, " $ ")
}

func sameFold(a, b []string, exact bool) bool {
	if len(a) != len(b) {
		return false
	}
	norm := func(v []string) []string {
		out := make([]string, len(v))
		for i, s := range v {
			if exact {
				out[i] = s
			} else {
				out[i] = strings.ToLower(s)
			}
		}
		sort.Strings(out)
		return out
	}
	x, y := norm(a), norm(b)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// Element is one schema element cpactl defines, for comparisons.
type Element struct {
	Kind       string // "attribute type" or "object class"
	Name       string
	OID        string
	Definition string
}

// Elements returns every attribute type, then every object class.
func Elements() []Element {
	var out []Element
	for _, a := range Attributes {
		out = append(out, Element{Kind: "attribute type", Name: a.Name, OID: a.OID(), Definition: a.Definition()})
	}
	for _, c := range Classes {
		out = append(out, Element{Kind: "object class", Name: c.Name, OID: c.OID(), Definition: c.Definition()})
	}
	return out
}

// Finding is the result of comparing one element with a server.
type Finding struct {
	Kind        string   `json:"kind"`
	Name        string   `json:"name"`
	OID         string   `json:"oid"`
	Status      string   `json:"status"` // "ok", "missing" or "different"
	Differences []string `json:"differences,omitempty"`
}

// Compare compares cpactl's elements with the definitions a server holds
// (attribute types and object classes together), matching by OID.
func Compare(serverDefs []string) []Finding {
	byOID := map[string]Description{}
	for _, def := range serverDefs {
		d, err := ParseDescription(def)
		if err != nil {
			continue
		}
		byOID[d.OID] = d
	}
	var out []Finding
	for _, el := range Elements() {
		f := Finding{Kind: el.Kind, Name: el.Name, OID: el.OID, Status: "ok"}
		got, ok := byOID[el.OID]
		if !ok {
			f.Status = "missing"
		} else {
			want, _ := ParseDescription(el.Definition)
			if diffs := want.Differences(got); len(diffs) > 0 {
				f.Status, f.Differences = "different", diffs
			}
		}
		out = append(out, f)
	}
	return out
}

// ExtendsMay reports whether want is got with optional (MAY) attributes
// added and nothing else changed: the one change to a class that an
// upgrade may make in place, since every entry valid under got stays valid
// under want.
func (want Description) ExtendsMay(got Description) bool {
	diffs := want.Differences(got)
	if len(diffs) != 1 || !strings.HasPrefix(diffs[0], "MAY:") {
		return false
	}
	have := map[string]bool{}
	for _, a := range want.Fields["MAY"] {
		have[strings.ToLower(a)] = true
	}
	for _, a := range got.Fields["MAY"] {
		if !have[strings.ToLower(a)] {
			return false
		}
	}
	return true
}
