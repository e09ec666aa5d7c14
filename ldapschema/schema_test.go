package ldapschema

import (
	"os"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"
)

func TestOIDsAreUniqueAndUnderTheArc(t *testing.T) {
	seen := map[string]string{}
	for _, el := range Elements() {
		if !strings.HasPrefix(el.OID, Arc+".") {
			t.Errorf("%s %s: OID %s is not under the arc", el.Kind, el.Name, el.OID)
		}
		if prev, dup := seen[el.OID]; dup {
			t.Errorf("OID %s used by %s and %s", el.OID, prev, el.Name)
		}
		seen[el.OID] = el.Name
		lower := strings.ToLower(el.Name)
		if prev, dup := seen[lower]; dup {
			t.Errorf("name %s used twice (%s)", el.Name, prev)
		}
		seen[lower] = el.OID
	}
}

func TestAttributeNumbersAreAppendOnly(t *testing.T) {
	// Numbers only grow; a gap is a number another change has taken
	// (47, on a parallel branch), never to be reused.
	prev := 0
	for i, a := range Attributes {
		if a.Number <= prev {
			t.Errorf("attribute %s has number %d at position %d: numbers increase in order, append only", a.Name, a.Number, i)
		}
		prev = a.Number
	}
	for i, c := range Classes {
		if c.Number != i+1 {
			t.Errorf("class %s has number %d at position %d", c.Name, c.Number, i)
		}
	}
}

func TestHorizonSettingNamesAreExact(t *testing.T) {
	want := []string{"pae-LoadThresholdForSite", "pae-RDSLoadIndexThreshold", "pae-RDSConnectingSessionThreshold",
		"pae-MinRDSServersInLBQueue", "pae-EnableSiteRedirection"}
	for i, s := range Settings {
		if s.Attr != want[i] {
			t.Errorf("setting %d is %q, want Horizon's %q", i, s.Attr, want[i])
		}
		if _, ok := Attribute(s.Attr); !ok {
			t.Errorf("setting %s has no attribute type", s.Attr)
		}
	}
}

func TestClassesUseDefinedAttributes(t *testing.T) {
	standard := map[string]bool{AttrCN: true, AttrDescription: true, AttrMember: true}
	for _, c := range Classes {
		for _, n := range append(append([]string(nil), c.Must...), c.May...) {
			if _, ok := Attribute(n); !ok && !standard[n] {
				t.Errorf("class %s uses %s, which is neither cpactl's nor a standard attribute", c.Name, n)
			}
		}
	}
}

func TestSyntaxAndMatchingRules(t *testing.T) {
	tests := []struct {
		attr string
		want []string
	}{
		{AttrLoadThresholdForSite, []string{"EQUALITY integerMatch", "ORDERING integerOrderingMatch", "SYNTAX 1.3.6.1.4.1.1466.115.121.1.27", "SINGLE-VALUE"}},
		{AttrEnabled, []string{"EQUALITY booleanMatch", "SYNTAX 1.3.6.1.4.1.1466.115.121.1.7"}},
		{AttrSiteDN, []string{"EQUALITY distinguishedNameMatch", "SYNTAX 1.3.6.1.4.1.1466.115.121.1.12"}},
		{AttrScope, []string{"EQUALITY caseIgnoreMatch", "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15"}},
	}
	for _, tt := range tests {
		a, _ := Attribute(tt.attr)
		def := a.Definition()
		for _, w := range tt.want {
			if !strings.Contains(def, w) {
				t.Errorf("%s: %q lacks %q", tt.attr, def, w)
			}
		}
	}
	if a, _ := Attribute(AttrPreferredSite); a.Single {
		t.Error("pae-PreferredSite must be multi-valued")
	}
}

func TestRenderedFormsCarryEveryElement(t *testing.T) {
	schema, ldif := SchemaFile(), ConfigLDIF()
	for _, el := range Elements() {
		if !strings.Contains(schema, el.Definition) {
			t.Errorf("schema file lacks %s", el.Name)
		}
		if !strings.Contains(ldif, el.Definition) {
			t.Errorf("LDIF lacks %s", el.Name)
		}
	}
	if !strings.HasPrefix(strings.SplitN(ldif, "\n", 2)[1], "dn: cn=cpactl,cn=schema,cn=config\n") {
		t.Errorf("LDIF does not start with the cn=config DN:\n%s", ldif[:200])
	}
}

func TestDocsSchemaIsUpToDate(t *testing.T) {
	got, err := os.ReadFile("../docs/schema.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != Markdown() {
		t.Error("docs/schema.md is stale: run `go run ./cmd/cpactl schema print --format markdown -O docs/schema.md`")
	}
	for _, a := range Attributes {
		if !strings.Contains(string(got), "`"+a.Name+"`") {
			t.Errorf("docs/schema.md does not document %s", a.Name)
		}
	}
}

func TestParseDescriptionAsSlapdReturnsIt(t *testing.T) {
	d, err := ParseDescription("{3}( 2.25.1.1.6 NAME 'pae-PreferredSite' DESC 'a ranked \\27site\\27' EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )")
	if err != nil {
		t.Fatal(err)
	}
	if d.OID != "2.25.1.1.6" || d.Fields["NAME"][0] != "pae-PreferredSite" || d.Fields["SYNTAX"][0] != "1.3.6.1.4.1.1466.115.121.1.15" {
		t.Errorf("parsed %+v", d)
	}
	cn, err := ParseDescription("( 2.5.4.3 NAME ( 'cn' 'commonName' ) DESC 'RFC4519: common name(s)' SUP name )")
	if err != nil {
		t.Fatal(err)
	}
	if got := cn.Fields["SUP"]; len(got) != 1 || got[0] != "name" {
		t.Errorf("SUP of cn parsed as %q, want [name]", got)
	}
	if got := cn.Fields["NAME"]; len(got) != 2 || got[1] != "commonName" {
		t.Errorf("NAME of cn parsed as %q", got)
	}
	c, err := ParseDescription("( 2.25.1.2.1 NAME 'x' SUP top STRUCTURAL MUST ( cn $ pae-SiteDN ) MAY description )")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Fields["STRUCTURAL"]; !ok || len(c.Fields["MUST"]) != 2 || c.Fields["MAY"][0] != "description" {
		t.Errorf("parsed %+v", c)
	}
}

func TestCompare(t *testing.T) {
	var defs []string
	for _, el := range Elements() {
		defs = append(defs, el.Definition)
	}
	// slapd drops "SUP top" and may change case of rule names.
	site, _ := Attribute(AttrSiteURL)
	for i, d := range defs {
		defs[i] = strings.Replace(d, " SUP top", "", 1)
		if strings.Contains(d, "'"+site.Name+"'") {
			defs[i] = strings.Replace(d, "caseIgnoreMatch", "CASEIGNOREMATCH", 1)
		}
	}
	for _, f := range Compare(defs) {
		if f.Status != "ok" {
			t.Errorf("%s: %s %v", f.Name, f.Status, f.Differences)
		}
	}
	// Drop one attribute and make one single-valued attribute multi-valued.
	var changed []string
	for _, d := range defs {
		switch {
		case strings.Contains(d, "'"+AttrMachine+"'"):
			continue
		case strings.Contains(d, "'"+AttrCapacity+"'"):
			d = strings.Replace(d, " SINGLE-VALUE", "", 1)
		}
		changed = append(changed, d)
	}
	status := map[string]Finding{}
	for _, f := range Compare(changed) {
		status[f.Name] = f
	}
	if status[AttrMachine].Status != "missing" {
		t.Errorf("%s: %+v, want missing", AttrMachine, status[AttrMachine])
	}
	if f := status[AttrCapacity]; f.Status != "different" || !strings.Contains(strings.Join(f.Differences, ";"), "SINGLE-VALUE") {
		t.Errorf("%s: %+v, want different on SINGLE-VALUE", AttrCapacity, f)
	}
}

func TestDNBuildersEscapeNames(t *testing.T) {
	dit := DIT{Base: DefaultBase}
	names := []string{`R&D, "West" <1>+;=*()\ Zürich`, " leading", "trailing ", "#hash", "plain", `*)(uid=*`}
	for _, name := range names {
		for _, dn := range []string{dit.Site(name), dit.Pod(name), dit.User(name), dit.Host("p,1", "f+2", name)} {
			parsed, err := ldap.ParseDN(dn)
			if err != nil {
				t.Fatalf("DN %q for %q does not parse: %v", dn, name, err)
			}
			if got := parsed.RDNs[0].Attributes[0].Value; got != name {
				t.Errorf("DN %q names %q, want %q", dn, got, name)
			}
			if NameOf(dn) != name {
				t.Errorf("NameOf(%q) = %q", dn, NameOf(dn))
			}
		}
	}
	host := dit.Host("p,1", "f+2", "h")
	if NameOf(ParentOf(host)) != "f+2" || NameOf(ParentOf(ParentOf(host))) != "p,1" {
		t.Errorf("parents of %q are wrong", host)
	}
}

func TestEqualDN(t *testing.T) {
	a := "cn=R\\26D\\2C \\22West\\22,ou=Sites," + DefaultBase
	b := `CN=r&d\, \"west\",OU=sites,dc=VDIGLOBAL,dc=vmware,dc=int`
	if !EqualDN(a, b) {
		t.Errorf("%q and %q should be equal", a, b)
	}
	if EqualDN(a, "cn=other,ou=Sites,"+DefaultBase) {
		t.Error("different DNs compared equal")
	}
	if RowID(a, "") != RowID(b, "") {
		t.Error("RowID depends on DN spelling")
	}
}

func TestPreferredSitesCodec(t *testing.T) {
	tests := []struct {
		name     string
		values   []string
		want     []string
		wantGaps bool
		wantErr  bool
	}{
		{"ranked in order", []string{"{0}UK", "{1}US"}, []string{"UK", "US"}, false, false},
		{"values in any order", []string{"{1}US", "{0}UK"}, []string{"UK", "US"}, false, false},
		{"ten or more keeps numeric order", []string{"{10}K", "{2}C", "{0}A", "{1}B", "{3}D", "{4}E", "{5}F", "{6}G", "{7}H", "{8}I", "{9}J"},
			[]string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"}, false, false},
		{"a gap is reported", []string{"{0}UK", "{2}US"}, []string{"UK", "US"}, true, false},
		{"a repeated rank is reported", []string{"{0}UK", "{0}US"}, []string{"UK", "US"}, true, false},
		{"braces in a name survive", []string{"{0}{odd} name"}, []string{"{odd} name"}, false, false},
		{"no rank is an error", []string{"UK"}, nil, false, true},
		{"a bad rank is an error", []string{"{x}UK"}, nil, false, true},
		{"a leading zero is an error", []string{"{01}UK"}, nil, false, true},
		{"an empty name is an error", []string{"{0}"}, nil, false, true},
		{"empty list", nil, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := DecodePreferredSites(tt.values)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if strings.Join(l.Names(), "|") != strings.Join(tt.want, "|") {
				t.Errorf("names %q, want %q", l.Names(), tt.want)
			}
			if l.Gaps != tt.wantGaps {
				t.Errorf("gaps %v, want %v", l.Gaps, tt.wantGaps)
			}
		})
	}
	enc := EncodePreferredSites([]string{"UK", "US", `R&D, "West"`})
	if strings.Join(enc, "|") != `{0}UK|{1}US|{2}R&D, "West"` {
		t.Errorf("encoded %q", enc)
	}
}

func FuzzPreferredSites(f *testing.F) {
	f.Add("UK", "US", "{x}")
	f.Add("{odd}", "", "Zürich")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		names := []string{a, b, c}
		var kept []string
		for _, n := range names {
			if n != "" {
				kept = append(kept, n)
			}
		}
		l, err := DecodePreferredSites(EncodePreferredSites(kept))
		if err != nil {
			t.Fatalf("encoded list does not decode: %v", err)
		}
		if l.Gaps || strings.Join(l.Names(), "\x00") != strings.Join(kept, "\x00") {
			t.Fatalf("round trip of %q gave %q (gaps %v)", kept, l.Names(), l.Gaps)
		}
		// Arbitrary values never panic.
		_, _ = DecodePreferredSites([]string{a, b, c})
	})
}

func TestSettingCheck(t *testing.T) {
	s, ok := LookupSetting("load-threshold-for-site")
	if !ok || s.Attr != AttrLoadThresholdForSite {
		t.Fatal("alias lookup failed")
	}
	if _, ok := LookupSetting("PAE-LOADTHRESHOLDFORSITE"); !ok {
		t.Error("attribute names are case-insensitive")
	}
	for _, tt := range []struct {
		v  int
		ok bool
	}{{-1, false}, {0, true}, {100, true}, {101, false}} {
		if err := s.Check(tt.v); (err == nil) != tt.ok {
			t.Errorf("Check(%d) = %v", tt.v, err)
		}
	}
	if err := s.Check(101); !strings.Contains(err.Error(), "0..100") || !strings.Contains(err.Error(), s.Attr) {
		t.Errorf("message %q must name the attribute and the range", err)
	}
}

// TestCompareOutdatedClass: a class the server defines with fewer MAY
// attributes, and otherwise the same, is "outdated" (schema install
// upgrades it); any other difference of a class stays "different".
func TestCompareOutdatedClass(t *testing.T) {
	var pod ObjectClass
	for _, c := range Classes {
		if c.Name == ClassPod {
			pod = c
		}
	}
	tests := []struct {
		name   string
		edit   func(c *ObjectClass)
		status string
	}{
		{"fewer MAY attributes: outdated", func(c *ObjectClass) { c.May = c.May[:2] }, "outdated"},
		{"no MAY at all: outdated", func(c *ObjectClass) { c.May = nil }, "outdated"},
		{"a MAY attribute cpactl does not define: different", func(c *ObjectClass) { c.May = append(c.May[:2:2], AttrTag) }, "different"},
		{"fewer MAY and another MUST: different", func(c *ObjectClass) { c.May, c.Must = c.May[:2], []string{AttrCN} }, "different"},
		{"fewer MAY and auxiliary: different", func(c *ObjectClass) { c.May, c.Kind = c.May[:2], Auxiliary }, "different"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := pod
			old.May = append([]string(nil), pod.May...)
			old.Must = append([]string(nil), pod.Must...)
			tt.edit(&old)
			for _, f := range Compare([]string{old.Definition()}) {
				if f.Name == ClassPod && f.Status != tt.status {
					t.Errorf("status %s %v, want %s", f.Status, f.Differences, tt.status)
				}
			}
		})
	}
}
