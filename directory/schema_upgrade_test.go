package directory_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// previousSchema renders cpactl's schema as it was before
// pae-BackupEntitlementDN: without the attribute type, and without it in
// the MAY list of pae-GlobalEntitlement.
func previousSchema() string {
	var b strings.Builder
	for _, a := range ldapschema.Attributes {
		if a.Name != ldapschema.AttrBackupEntitlementDN {
			fmt.Fprintf(&b, "attributetype %s\n\n", a.Definition())
		}
	}
	for _, c := range ldapschema.Classes {
		var may []string
		for _, m := range c.May {
			if m != ldapschema.AttrBackupEntitlementDN {
				may = append(may, m)
			}
		}
		c.May = may
		fmt.Fprintf(&b, "objectclass %s\n\n", c.Definition())
	}
	return b.String()
}

// TestSchemaInstallUpgradesAClassWithNewOptionalAttributes: a server with
// the previous schema gets the new attribute type and the extended class in
// place, and then stores a backup reference.
func TestSchemaInstallUpgradesAClassWithNewOptionalAttributes(t *testing.T) {
	if err := slapdtest.Available(); err != nil {
		t.Skip(err)
	}
	old := previousSchema()
	srv := slapdtest.Start(t, slapdtest.Config{Schema: &old, NoIndexes: true})
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.LDAPIURL}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dry, err := directory.InstallSchema(c, true)
	if err != nil {
		t.Fatal(err)
	}
	if dry.Added != 1 || len(dry.Upgraded) != 1 || dry.Upgraded[0].Name != ldapschema.ClassGlobalEntitlement || len(dry.Different) != 0 {
		t.Fatalf("dry run: added %d, upgraded %+v, different %+v", dry.Added, dry.Upgraded, dry.Different)
	}
	if _, err := directory.InstallSchema(c, false); err != nil {
		t.Fatalf("install: %v", err)
	}
	again, err := directory.InstallSchema(c, true)
	if err != nil {
		t.Fatal(err)
	}
	if again.Added != 0 || len(again.Upgraded) != 0 || len(again.Different) != 0 {
		t.Fatalf("after install: %+v", again)
	}
	findings, err := directory.CheckSchema(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.Status != "ok" {
			t.Fatalf("check after upgrade: %+v", f)
		}
	}
}
