package rules

import (
	"fmt"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/ldapschema"
)

// Finding classes of the backup global entitlement rules
// (docs/resolve.md "Backup global entitlements"), which the broker owns
// (broker.BackupRule). A write refuses each one (exit 1, naming the rule),
// lint reports data that breaks one, and resolve ignores such a backup
// with a warning.
const (
	CheckBackupPrimaryKind = broker.CheckBackupPrimaryKind
	CheckBackupKind        = broker.CheckBackupKind
	CheckBackupMembers     = broker.CheckBackupMembers
	CheckBackupProtocol    = broker.CheckBackupProtocol
	CheckBackupSelf        = broker.CheckBackupSelf
	CheckBackupChain       = broker.CheckBackupChain
)

// Backup checks that backup may serve as primary's backup global
// entitlement, by the broker's rule (broker.BackupRule), each violation
// with the hint a command line gives: backupOf names the entitlements
// that name primary as their backup. O(len(backupOf)).
func Backup(primary, backup ldapschema.Entitlement, backupOf []string) []Violation {
	p, b := backupSide(primary), backupSide(backup)
	p.BackedUpBy = backupOf
	var out []Violation
	for _, v := range broker.BackupRule(p, b) {
		out = append(out, Violation{Check: v.Check, Hint: backupHint(v, backup.Name), Message: v.Message})
	}
	return out
}

// backupSide is what the backup rule reads of an entitlement.
func backupSide(ge ldapschema.Entitlement) broker.BackupSide {
	return broker.BackupSide{Name: ge.Name, Type: broker.EntitlementType(ge.Type), Dedicated: ge.Dedicated,
		DefaultProtocol: broker.Protocol(ge.DefaultProtocol), Members: len(ge.Members),
		BackupNamed: ldapschema.NameOf(ge.BackupDN)}
}

// backupHint is how a command line mends a violation of the backup rule.
func backupHint(v broker.BackupViolation, backup string) string {
	switch v.Check {
	case CheckBackupSelf:
		return "name another floating desktop entitlement with --backup"
	case CheckBackupPrimaryKind:
		return "only floating desktop entitlements have a backup; pass --no-backup"
	case CheckBackupKind:
		return "name a floating desktop entitlement with --backup"
	case CheckBackupMembers:
		return fmt.Sprintf("remove its members with `cpactl entitlement remove-member %s ...`: users reach a backup only through its primary", backup)
	case CheckBackupProtocol:
		return "give both the same --default-protocol"
	case CheckBackupChain:
		if v.OfBackup {
			return fmt.Sprintf("pass --no-backup to %s first: backups do not chain", backup)
		}
		return "backups do not chain: give the backup to the primaries directly"
	}
	return ""
}
