package broker

import (
	"strings"
	"testing"
)

// withBackup fills every pool of Sales Desktop and gives it the backup
// Sales Overflow (floating, no members), whose one pool ov-uk in uk-pod1 has
// room.
func withBackup(f *Federation) {
	for i := range f.Pools {
		f.Pools[i].Sessions = f.Pools[i].Capacity
	}
	ge(f).Backup = "Sales Overflow"
	f.Entitlements = append(f.Entitlements, Entitlement{
		Name: "Sales Overflow", Type: TypeDesktop, Scope: ScopeAny, Policy: PolicyNone, Enabled: true,
		DefaultProtocol: ProtocolBlast, Pools: []string{"ov-uk"},
	})
	f.Pools = append(f.Pools, Pool{Name: "ov-uk", Pod: "uk-pod1", Kind: KindDesktop, Capacity: 5, Enabled: true})
}

// backupGE returns the backup of withBackup.
func backupGE(f *Federation) *Entitlement { return &f.Entitlements[1] }

// wantBackupPlaced checks a PLACED from the backup in pool.
func wantBackupPlaced(t *testing.T, d *Decision, pool string) {
	t.Helper()
	wantOutcome(t, d, OutcomePlaced)
	if d.Backup == nil || d.Backup.Entitlement != "Sales Overflow" || d.Backup.Outcome != OutcomePlaced {
		t.Fatalf("backup %+v", d.Backup)
	}
	if d.Placement == nil || d.Placement.Pool != pool {
		t.Fatalf("placement %+v, want pool %s", d.Placement, pool)
	}
}

func TestResolveBackupEntitlement(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			name:   "primary full: the backup places",
			mutate: withBackup,
			check: func(t *testing.T, d *Decision) {
				wantBackupPlaced(t, d, "ov-uk")
				if !strings.Contains(d.Backup.Reason, "Sales Desktop: nothing in scope can take the session") {
					t.Fatalf("backup reason %q", d.Backup.Reason)
				}
				wantTrace(t, d, "its backup entitlement Sales Overflow is tried from the same connecting pod in-pod1")
			},
		},
		{
			name: "primary's pods all offline: the backup places",
			mutate: func(f *Federation) {
				withBackup(f)
				ge(f).Pools = []string{"uk-desk", "us-desk"}
				poolNamed(f, "uk-desk").Sessions, poolNamed(f, "us-desk").Sessions = 0, 0
				podNamed(f, "uk-pod1").Online, podNamed(f, "us-pod1").Online = false, false
				f.Pools = append(f.Pools, Pool{Name: "ov-in", Pod: "in-pod2", Kind: KindDesktop, Capacity: 5, Enabled: true})
				backupGE(f).Pools = []string{"ov-uk", "ov-in"}
			},
			check: func(t *testing.T, d *Decision) { wantBackupPlaced(t, d, "ov-in") },
		},
		{
			name: "backup full too: NO_CAPACITY listing both searches",
			mutate: func(f *Federation) {
				withBackup(f)
				poolNamed(f, "ov-uk").Sessions = 5
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				for _, want := range []string{"pool in-desk1 full", "backup Sales Overflow: nothing in scope", "pool ov-uk full"} {
					if !strings.Contains(d.Reason, want) {
						t.Fatalf("reason %q lacks %q", d.Reason, want)
					}
				}
				if d.Backup == nil || d.Backup.Outcome != OutcomeNoCapacity || len(d.Backup.SiteOrder) == 0 || len(d.SiteOrder) == 0 {
					t.Fatalf("backup %+v", d.Backup)
				}
			},
		},
		{
			name: "backup breaking a rule (members, protocol, chain) is ignored with a warning",
			mutate: func(f *Federation) {
				withBackup(f)
				for i := range f.Entitlements {
					if f.Entitlements[i].Name == "Sales Overflow" {
						f.Entitlements[i].Members = []Member{{Kind: MemberUser, Name: "alice"}}
					}
				}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				if d.Backup != nil || !strings.Contains(strings.Join(d.Warnings, "\n"), "backup Sales Overflow of Sales Desktop is ignored: backup Sales Overflow has 1 member(s)") {
					t.Fatalf("backup %+v warnings %q", d.Backup, d.Warnings)
				}
			},
		},
		{
			name: "a primary that is itself a backup (the reader's BackedUpBy) breaks the chain rule",
			mutate: func(f *Federation) {
				withBackup(f)
				ge(f).BackedUpBy = []string{"Other Desktops"}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				if d.Backup != nil || !strings.Contains(strings.Join(d.Warnings, "\n"), `backup Sales Overflow of Sales Desktop is ignored: entitlement Sales Desktop is itself the backup of Other Desktops: backups do not chain`) {
					t.Fatalf("backup %+v warnings %q", d.Backup, d.Warnings)
				}
			},
		},
		{
			name: "a backup naming a backup of its own (BackupNamed, found or not) breaks the chain rule",
			mutate: func(f *Federation) {
				withBackup(f)
				for i := range f.Entitlements {
					if f.Entitlements[i].Name == "Sales Overflow" {
						f.Entitlements[i].BackupNamed = "Gone"
					}
				}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				if d.Backup != nil || !strings.Contains(strings.Join(d.Warnings, "\n"), `backup Sales Overflow has a backup of its own (Gone): backups do not chain`) {
					t.Fatalf("backup %+v warnings %q", d.Backup, d.Warnings)
				}
			},
		},
		{
			name: "dedicated entitlements have no backup: ignored with a warning",
			mutate: func(f *Federation) {
				withBackup(f)
				dedicate(f)
				for i := range f.Pools {
					f.Pools[i].Assigned = f.Pools[i].Capacity
				}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				if d.Backup != nil || !strings.Contains(strings.Join(d.Warnings, "\n"), "only floating desktop entitlements have a backup") {
					t.Fatalf("backup %+v warnings %q", d.Backup, d.Warnings)
				}
			},
		},
		{
			name: "the backup's own scope is used (LOCAL backup: not the UK pool)",
			mutate: func(f *Federation) {
				withBackup(f)
				backupGE(f).Scope = ScopeLocal
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				if d.Backup == nil || len(d.Backup.SiteOrder) != 1 || d.Backup.SiteOrder[0].Site != "India" {
					t.Fatalf("backup %+v", d.Backup)
				}
			},
		},
		{
			name: "the backup's own scope is used (LOCAL primary, ANY backup reaches the UK)",
			mutate: func(f *Federation) {
				withBackup(f)
				ge(f).Scope = ScopeLocal
			},
			check: func(t *testing.T, d *Decision) { wantBackupPlaced(t, d, "ov-uk") },
		},
		{
			name: "the backup's own preferred sites and policy are used",
			mutate: func(f *Federation) {
				withBackup(f)
				ge(f).UsePreferredSites = false
				b := backupGE(f)
				b.UsePreferredSites, b.Policy = true, PolicyLoad
				f.Pools = append(f.Pools, Pool{Name: "ov-us", Pod: "us-pod1", Kind: KindDesktop, Capacity: 10, Enabled: true})
				poolNamed(f, "ov-uk").Sessions = 4 // more loaded than ov-us, but UK is India's first preferred site
				b.Pools = []string{"ov-uk", "ov-us"}
			},
			check: func(t *testing.T, d *Decision) { wantBackupPlaced(t, d, "ov-uk") },
		},
		{
			name: "without preferred sites the backup goes least loaded first",
			mutate: func(f *Federation) {
				withBackup(f)
				b := backupGE(f)
				b.Policy = PolicyLoad
				f.Pools = append(f.Pools, Pool{Name: "ov-us", Pod: "us-pod1", Kind: KindDesktop, Capacity: 10, Enabled: true})
				poolNamed(f, "ov-uk").Sessions = 4
				b.Pools = []string{"ov-uk", "ov-us"}
			},
			check: func(t *testing.T, d *Decision) { wantBackupPlaced(t, d, "ov-us") },
		},
		{
			name:   "the backup's connection server tags apply (untagged server)",
			mutate: func(f *Federation) { withBackup(f); backupGE(f).Tags = []string{"internal"} },
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				if d.Backup == nil || len(d.Backup.Checks) != 2 || d.Backup.Checks[1].Passed {
					t.Fatalf("backup %+v", d.Backup)
				}
				if !strings.Contains(d.Reason, "backup Sales Overflow cannot serve") {
					t.Fatalf("reason %q", d.Reason)
				}
			},
		},
		{
			name:   "the backup's connection server tags apply (tagged server)",
			mutate: func(f *Federation) { withBackup(f); backupGE(f).Tags = []string{"internal"} },
			req:    Request{ConnectionServer: "in-cs-internal"},
			check:  func(t *testing.T, d *Decision) { wantBackupPlaced(t, d, "ov-uk") },
		},
		{
			name:   "a disabled backup does not serve",
			mutate: func(f *Federation) { withBackup(f); backupGE(f).Enabled = false },
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				if d.Backup == nil || d.Backup.Checks[0].Passed {
					t.Fatalf("backup %+v", d.Backup)
				}
			},
		},
		{
			name: "an existing session of the backup is a RECONNECT",
			mutate: func(f *Federation) {
				withBackup(f)
				f.Sessions = append(f.Sessions, Session{ID: "s-ov", User: "alice", Entitlement: "Sales Overflow", Pod: "uk-pod1", Pool: "ov-uk", State: StateDisconnected})
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeReconnect)
				if d.Backup == nil || d.Placement == nil || d.Placement.Session != "s-ov" {
					t.Fatalf("backup %+v placement %+v", d.Backup, d.Placement)
				}
			},
		},
		{
			name:   "the user is still checked against the primary: not a member, denied",
			mutate: withBackup,
			req:    Request{User: "bob"},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeDenied)
				if d.Backup != nil {
					t.Fatalf("backup %+v", d.Backup)
				}
			},
		},
	})
}
