package rules

import (
	"strings"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
)

// TestBackup: one row per backup rule (docs/resolve.md "Backup global
// entitlements").
func TestBackup(t *testing.T) {
	floating := func(name string) ldapschema.Entitlement {
		return ldapschema.Entitlement{Name: name, DN: "cn=" + name + ",ou=Entitlements,dc=x", Type: ldapschema.TypeDesktop,
			DefaultProtocol: ldapschema.ProtocolBlast, Enabled: true}
	}
	cases := []struct {
		name     string
		primary  func(*ldapschema.Entitlement)
		backup   func(*ldapschema.Entitlement)
		backupOf []string
		check    string // "" when allowed
		msg      string
	}{
		{name: "two floating desktop GEs", check: ""},
		{name: "primary an application GE", primary: func(g *ldapschema.Entitlement) { g.Type = ldapschema.TypeApplication },
			check: CheckBackupPrimaryKind, msg: "only a floating desktop entitlement has a backup"},
		{name: "primary dedicated", primary: func(g *ldapschema.Entitlement) { g.Dedicated = true },
			check: CheckBackupPrimaryKind, msg: "is a dedicated desktop entitlement"},
		{name: "backup an application GE", backup: func(g *ldapschema.Entitlement) { g.Type = ldapschema.TypeApplication },
			check: CheckBackupKind, msg: "a backup must be a floating desktop entitlement"},
		{name: "backup dedicated", backup: func(g *ldapschema.Entitlement) { g.Dedicated = true },
			check: CheckBackupKind},
		{name: "backup with members", backup: func(g *ldapschema.Entitlement) { g.Members = []string{"uid=alice,ou=People,dc=x"} },
			check: CheckBackupMembers, msg: "has 1 member(s)"},
		{name: "different default protocol", backup: func(g *ldapschema.Entitlement) { g.DefaultProtocol = ldapschema.ProtocolRDP },
			check: CheckBackupProtocol, msg: "default protocol RDP"},
		{name: "no stored protocol is BLAST", backup: func(g *ldapschema.Entitlement) { g.DefaultProtocol = "" }, check: ""},
		{name: "the GE itself", backup: func(g *ldapschema.Entitlement) { g.Name = "main" },
			check: CheckBackupSelf, msg: "cannot be its own backup"},
		{name: "backup with a backup of its own", backup: func(g *ldapschema.Entitlement) { g.BackupDN = "cn=Third,ou=Entitlements,dc=x" },
			check: CheckBackupChain, msg: "has a backup of its own (Third)"},
		{name: "primary is itself a backup", backupOf: []string{"Other"}, check: CheckBackupChain, msg: "is itself the backup of Other"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, b := floating("Main"), floating("Spare")
			if tc.primary != nil {
				tc.primary(&p)
			}
			if tc.backup != nil {
				tc.backup(&b)
			}
			vs := Backup(p, b, tc.backupOf)
			if tc.check == "" {
				if len(vs) != 0 {
					t.Fatalf("refused: %+v", vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].Check != tc.check || !strings.Contains(vs[0].Message, tc.msg) || vs[0].FixText() == "" {
				t.Fatalf("violations %+v, want one %s containing %q", vs, tc.check, tc.msg)
			}
			err := Refusal("entitlement", p.Name, vs)
			if e, ok := err.(*Error); !ok || e.Rule != tc.check {
				t.Fatalf("refusal %v", err)
			}
		})
	}
}
