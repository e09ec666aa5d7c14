package ldapschema_test

import (
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestStandardTablesMatchSlapd checks StandardClasses and
// StandardAttributes against the subschema of a stock slapd with core,
// cosine, nis and inetorgperson (what cpactl's schema loads after).
func TestStandardTablesMatchSlapd(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{})
	c, err := ldap.DialURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Search(ldap.NewSearchRequest("cn=Subschema", ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", []string{"attributeTypes", "objectClasses"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	byName := func(attr string) map[string]ldapschema.Description {
		out := map[string]ldapschema.Description{}
		for _, def := range res.Entries[0].GetEqualFoldAttributeValues(attr) {
			d, err := ldapschema.ParseDescription(def)
			if err != nil {
				t.Fatal(err)
			}
			// Quoted values in a list keep their leading quote.
			for k, v := range d.Fields {
				for i := range v {
					v[i] = strings.TrimPrefix(v[i], "'")
				}
				d.Fields[k] = v
			}
			for _, n := range d.Fields["NAME"] {
				out[strings.ToLower(n)] = d
			}
		}
		return out
	}
	types, classes := byName("attributeTypes"), byName("objectClasses")
	primary := func(name string) string {
		if d, ok := types[strings.ToLower(name)]; ok {
			return d.Fields["NAME"][0]
		}
		return name
	}
	equality := func(d ldapschema.Description) string {
		for {
			if eq := d.Fields["EQUALITY"]; len(eq) > 0 {
				return eq[0]
			}
			sup := d.Fields["SUP"]
			if len(sup) == 0 {
				return ""
			}
			d = types[strings.ToLower(sup[0])]
		}
	}
	rules := map[ldapschema.Equality][]string{
		ldapschema.EqualityCaseIgnore:       {"caseIgnoreMatch", "caseIgnoreIA5Match", "caseIgnoreListMatch"},
		ldapschema.EqualityDN:               {"distinguishedNameMatch"},
		ldapschema.EqualityTelephone:        {"telephoneNumberMatch"},
		ldapschema.EqualityNumericString:    {"numericStringMatch"},
		ldapschema.EqualityObjectIdentifier: {"objectIdentifierMatch"},
		ldapschema.EqualityExact:            {"caseExactMatch", "octetStringMatch", "certificateExactMatch", "bitStringMatch"},
		ldapschema.EqualityNone:             {""},
	}
	for _, a := range ldapschema.StandardAttributes {
		d, ok := types[strings.ToLower(a.Name)]
		if !ok {
			t.Errorf("attribute %s: not in slapd's subschema", a.Name)
			continue
		}
		if got, want := strings.Join(d.Fields["NAME"], " "), strings.Join(append([]string{a.Name}, a.Aliases...), " "); got != want {
			t.Errorf("attribute %s: names %q, slapd has %q", a.Name, want, got)
		}
		if _, single := d.Fields["SINGLE-VALUE"]; single != a.Single {
			t.Errorf("attribute %s: single-valued %v, slapd says %v", a.Name, a.Single, single)
		}
		found := false
		for _, r := range rules[a.Equality] {
			found = found || strings.EqualFold(r, equality(d))
		}
		if !found {
			t.Errorf("attribute %s: equality %d, slapd has %q", a.Name, a.Equality, equality(d))
		}
	}
	known := map[string]bool{}
	for _, a := range ldapschema.StandardAttributes {
		known[strings.ToLower(a.Name)] = true
	}
	list := func(v []string) string {
		out := make([]string, len(v))
		for i, n := range v {
			out[i] = strings.ToLower(primary(n))
		}
		return strings.Join(dedupe(out), " ")
	}
	for _, c := range ldapschema.StandardClasses {
		d, ok := classes[strings.ToLower(c.Name)]
		if !ok {
			t.Errorf("class %s: not in slapd's subschema", c.Name)
			continue
		}
		if _, ok := d.Fields[string(c.Kind)]; !ok {
			t.Errorf("class %s: kind %s, slapd has %v", c.Name, c.Kind, d.Fields)
		}
		if got := strings.Join(d.Fields["SUP"], " "); !strings.EqualFold(got, c.Sup) {
			t.Errorf("class %s: superclass %q, slapd has %q", c.Name, c.Sup, got)
		}
		if got, want := list(d.Fields["MUST"]), list(c.Must); got != want {
			t.Errorf("class %s: MUST %q, slapd has %q", c.Name, want, got)
		}
		if got, want := list(d.Fields["MAY"]), list(c.May); got != want {
			t.Errorf("class %s: MAY %q, slapd has %q", c.Name, want, got)
		}
		for _, a := range append(append([]string(nil), c.Must...), c.May...) {
			if !known[strings.ToLower(a)] {
				t.Errorf("class %s names %s, which StandardAttributes lacks", c.Name, a)
			}
		}
	}
	// Every attribute cpactl's classes name is cpactl's or standard.
	for _, c := range ldapschema.Classes {
		for _, a := range append(append([]string(nil), c.Must...), c.May...) {
			if _, ok := ldapschema.LookupAttribute(a); !ok {
				t.Errorf("class %s names %s, which neither table defines", c.Name, a)
			}
		}
	}
}

func dedupe(v []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range v {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
