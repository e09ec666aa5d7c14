package broker

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/internal/fold"
)

// The backup rules (docs/resolve.md "Backup global entitlements"): the
// broker decides whether a backup may serve its primary; a write refuses
// a pair that breaks one and lint reports it (package rules, with the
// hints of the command line, calls BackupRule).

// Finding classes of the backup rules.
const (
	CheckBackupPrimaryKind = "backup-primary-not-floating-desktop"
	CheckBackupKind        = "backup-not-floating-desktop"
	CheckBackupMembers     = "backup-has-members"
	CheckBackupProtocol    = "backup-protocol-mismatch"
	CheckBackupSelf        = "backup-self"
	CheckBackupChain       = "backup-chain"
)

// BackupViolation is one backup rule a pair breaks.
type BackupViolation struct {
	Check   string
	Message string
	// OfBackup: the backup breaks it (a chain: it names a backup of its
	// own), not the primary (a chain: the primary is a backup itself).
	OfBackup bool
}

// BackupSide is what the backup rule reads of an entitlement: its kind,
// how many members it has, its default protocol, the backup its entry
// names and the entitlements that name it as theirs.
type BackupSide struct {
	Name            string
	Type            EntitlementType
	Dedicated       bool
	DefaultProtocol Protocol
	Members         int
	BackupNamed     string
	BackedUpBy      []string
}

// BackupSide is what the backup rule reads of ge.
func (ge *Entitlement) BackupSide() BackupSide {
	return BackupSide{Name: ge.Name, Type: ge.Type, Dedicated: ge.Dedicated, DefaultProtocol: ge.DefaultProtocol,
		Members: len(ge.Members), BackupNamed: ge.BackupNamed, BackedUpBy: ge.BackedUpBy}
}

// BackupRule checks that backup may serve as primary's backup global
// entitlement: both are floating desktop entitlements, the backup has no
// members (users reach it only through its primary), the same default
// protocol, not the primary itself, and no chain: the backup names no
// backup of its own (BackupNamed) and the primary is nobody's backup
// (primary.BackedUpBy). O(len(primary.BackedUpBy)).
func BackupRule(primary, backup BackupSide) []BackupViolation {
	var out []BackupViolation
	add := func(check, format string, args ...any) {
		out = append(out, BackupViolation{Check: check, Message: fmt.Sprintf(format, args...)})
	}
	ofBackup := func(check, format string, args ...any) {
		add(check, format, args...)
		out[len(out)-1].OfBackup = true
	}
	if fold.Key(primary.Name) == fold.Key(backup.Name) {
		add(CheckBackupSelf, "entitlement %s cannot be its own backup", primary.Name)
		return out
	}
	if !floatingDesktop(primary) {
		add(CheckBackupPrimaryKind, "entitlement %s is %s: only a floating desktop entitlement has a backup", primary.Name, kindWords(primary))
	}
	if !floatingDesktop(backup) {
		ofBackup(CheckBackupKind, "backup %s is %s: a backup must be a floating desktop entitlement", backup.Name, kindWords(backup))
	}
	if backup.Members > 0 {
		ofBackup(CheckBackupMembers, "backup %s has %d member(s): a backup is reached only through its primary", backup.Name, backup.Members)
	}
	if p, b := protocolOf(primary), protocolOf(backup); p != b {
		add(CheckBackupProtocol, "backup %s has default protocol %s, but %s has %s", backup.Name, b, primary.Name, p)
	}
	if backup.BackupNamed != "" {
		ofBackup(CheckBackupChain, "backup %s has a backup of its own (%s): backups do not chain", backup.Name, backup.BackupNamed)
	}
	if len(primary.BackedUpBy) > 0 {
		add(CheckBackupChain, "entitlement %s is itself the backup of %s: backups do not chain", primary.Name, strings.Join(primary.BackedUpBy, ", "))
	}
	return out
}

func floatingDesktop(ge BackupSide) bool {
	return strings.EqualFold(string(ge.Type), string(TypeDesktop)) && !ge.Dedicated
}

// protocolOf is the entitlement's default protocol in force.
func protocolOf(ge BackupSide) string {
	if ge.DefaultProtocol == "" {
		return string(ProtocolBlast)
	}
	return strings.ToUpper(string(ge.DefaultProtocol))
}

// kindWords describes an entitlement's kind.
func kindWords(ge BackupSide) string {
	switch {
	case !strings.EqualFold(string(ge.Type), string(TypeDesktop)):
		return "an application entitlement"
	case ge.Dedicated:
		return "a dedicated desktop entitlement"
	}
	return "a floating desktop entitlement"
}
