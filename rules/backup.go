package rules

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/ldapschema"
)

// Finding classes of the backup global entitlement rules
// (docs/resolve.md "Backup global entitlements"). A write refuses each one
// (exit 1, naming the rule), lint reports data that breaks one, and resolve
// ignores such a backup with a warning.
const (
	CheckBackupPrimaryKind = "backup-primary-not-floating-desktop"
	CheckBackupKind        = "backup-not-floating-desktop"
	CheckBackupMembers     = "backup-has-members"
	CheckBackupProtocol    = "backup-protocol-mismatch"
	CheckBackupSelf        = "backup-self"
	CheckBackupChain       = "backup-chain"
)

// protocolOf is the entitlement's default protocol in force.
func protocolOf(ge ldapschema.Entitlement) string {
	if ge.DefaultProtocol == "" {
		return ldapschema.ProtocolBlast
	}
	return strings.ToUpper(ge.DefaultProtocol)
}

// Backup checks that backup may serve as primary's backup global
// entitlement: both are floating desktop entitlements, the backup has no
// members (users reach it only through its primary), the same default
// protocol, not the primary itself, and no chain: the backup has no backup of
// its own and the primary is nobody's backup (backupOf names the
// entitlements that name primary as their backup). O(len(backupOf)).
func Backup(primary, backup ldapschema.Entitlement, backupOf []string) []Violation {
	var out []Violation
	add := func(check, hint, format string, args ...any) {
		out = append(out, Violation{Check: check, Hint: hint, Message: fmt.Sprintf(format, args...)})
	}
	if fold.Key(primary.Name) == fold.Key(backup.Name) {
		add(CheckBackupSelf, "name another floating desktop entitlement with --backup",
			"entitlement %q cannot be its own backup", primary.Name)
		return out
	}
	if !isFloatingDesktop(primary) {
		add(CheckBackupPrimaryKind, "only floating desktop entitlements have a backup; pass --no-backup",
			"entitlement %q is %s: only a floating desktop entitlement has a backup", primary.Name, geKindWords(primary))
	}
	if !isFloatingDesktop(backup) {
		add(CheckBackupKind, "name a floating desktop entitlement with --backup",
			"backup %q is %s: a backup must be a floating desktop entitlement", backup.Name, geKindWords(backup))
	}
	if len(backup.Members) > 0 {
		add(CheckBackupMembers, fmt.Sprintf("remove its members with `cpactl entitlement remove-member %s ...`: users reach a backup only through its primary", backup.Name),
			"backup %q has %d member(s): a backup is reached only through its primary", backup.Name, len(backup.Members))
	}
	if protocolOf(primary) != protocolOf(backup) {
		add(CheckBackupProtocol, "give both the same --default-protocol",
			"backup %q has default protocol %s, but %q has %s", backup.Name, protocolOf(backup), primary.Name, protocolOf(primary))
	}
	if backup.BackupDN != "" {
		add(CheckBackupChain, fmt.Sprintf("pass --no-backup to %s first: backups do not chain", backup.Name),
			"backup %q has a backup of its own (%s): backups do not chain", backup.Name, ldapschema.NameOf(backup.BackupDN))
	}
	if len(backupOf) > 0 {
		add(CheckBackupChain, "backups do not chain: give the backup to the primaries directly",
			"entitlement %q is itself the backup of %s: backups do not chain", primary.Name, strings.Join(backupOf, ", "))
	}
	return out
}

// geKindWords describes an entitlement's kind.
func geKindWords(ge ldapschema.Entitlement) string {
	switch {
	case ge.Type != ldapschema.TypeDesktop:
		return "an application entitlement"
	case ge.Dedicated:
		return "a dedicated desktop entitlement"
	}
	return "a floating desktop entitlement"
}
