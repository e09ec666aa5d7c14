package commands

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// parsed runs argv through the whole command tree with runF set, and
// returns the options the command would run with: nothing is read or
// written (gh's runF idea, for every command at once).
func parsed(t *testing.T, argv ...string) any {
	t.Helper()
	var out, errOut bytes.Buffer
	g := &Globals{IO: IOStreams{In: strings.NewReader(""), Out: &out, Err: &errOut},
		Interactive: func() bool { return false }, Getenv: func(string) string { return "" }}
	var got any
	g.runF = func(o any) error { got = o; return nil }
	root := NewRootCommand(g)
	root.SetArgs(argv)
	root.SetOut(&out)
	root.SetErr(&errOut)
	if err := root.Execute(); err != nil {
		t.Fatalf("%q: %v (%s)", argv, err, errOut.String())
	}
	if got == nil {
		t.Fatalf("%q: the command did not reach its options", argv)
	}
	return got
}

// TestArgvToOptions: each noun's create and update fill their options
// from argv as the flags say, before anything is read.
func TestArgvToOptions(t *testing.T) {
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	for _, tc := range []struct {
		argv  []string
		check func(o any) bool
	}{
		{[]string{"site", "create", "India", "--description", "Bangalore", "--site-url", "https://in.example.com"}, func(o any) bool {
			s := o.(*siteCreateOptions)
			return s.Name == "India" && s.Description == "Bangalore" && s.URL == "https://in.example.com" && !s.DryRun
		}},
		{[]string{"site", "update", "UK", "--rename", "GB", "--dry-run"}, func(o any) bool {
			s := o.(*siteUpdateOptions)
			// Flags not given stay nil: an update changes only what is given.
			return s.Name == "UK" && s.Rename == "GB" && s.DryRun && s.Description == nil && s.URL == nil
		}},
		{[]string{"site", "update", "UK", "--description", ""}, func(o any) bool {
			s := o.(*siteUpdateOptions)
			return str(s.Description) == "" && s.Description != nil && s.URL == nil
		}},
		{[]string{"pod", "create", "lon-1", "--site", "UK", "--status", "offline"}, func(o any) bool {
			p := o.(*podCreateOptions)
			return p.Name == "lon-1" && p.Site == "UK" && p.Status == "offline"
		}},
		{[]string{"pool", "create", "lon-desk", "--pod", "lon-1", "--kind", "desktop", "--floating"}, func(o any) bool {
			p := o.(*poolCreateOptions)
			return p.Name == "lon-desk" && p.Pod == "lon-1" && p.Kind == "desktop" && p.Floating && !p.Dedicated
		}},
		{[]string{"user", "create", `CORP\alice`, "--name", "Alice Martin"}, func(o any) bool {
			u := o.(*userCreateOptions)
			return u.Arg == `CORP\alice` && u.FullName == "Alice Martin"
		}},
		{[]string{"entitlement", "update", "Sales Desktops", "--backup", "Sales Overflow", "--tags", "internal,dmz"}, func(o any) bool {
			e := o.(*entitlementUpdateOptions)
			return e.Name == "Sales Desktops" && e.Backup == "Sales Overflow" && !e.NoBackup && slices.Equal(e.Tags, []string{"internal", "dmz"})
		}},
		{[]string{"host", "update", "rds-1", "--policy-load-index-threshold", "30"}, func(o any) bool {
			h := o.(*hostUpdateOptions)
			return h.Name == "rds-1" && h.PolicyLoadIndexThreshold == 30 && !h.NoPolicyThresholds && !h.setLoad
		}},
		{[]string{"pod", "update", "lon-1", "--rename", "london-1", "--status", "online"}, func(o any) bool {
			p := o.(*podUpdateOptions)
			return p.Name == "lon-1" && p.Rename == "london-1" && p.Status == "online" && p.Description == nil && p.Site == ""
		}},
		{[]string{"cs", "create", "cs-1", "--pod", "lon-1", "--tags", "internal,dmz"}, func(o any) bool {
			c := o.(*csCreateOptions)
			return c.Name == "cs-1" && c.Pod == "lon-1" && slices.Equal(c.Tags, []string{"internal", "dmz"})
		}},
		{[]string{"cs", "update", "cs-1", "--no-tags"}, func(o any) bool {
			c := o.(*csUpdateOptions)
			return c.Name == "cs-1" && c.NoTags && !c.tagsGiven && c.Description == nil
		}},
		{[]string{"farm", "create", "f1", "--pod", "lon-1", "--max-sessions-per-host", "40", "--host-load-index-threshold", "90"}, func(o any) bool {
			f := o.(*farmCreateOptions)
			return f.Name == "f1" && f.Pod == "lon-1" && f.MaxSessions == 40 && f.LoadIndexThreshold == 90 && f.ConnectingThreshold == 0
		}},
		{[]string{"pool", "update", "lon-desk", "--sessions", "7"}, func(o any) bool {
			p := o.(*poolUpdateOptions)
			return p.Name == "lon-desk" && p.Sessions == 7 && p.changed("sessions") && !p.changed("capacity")
		}},
		{[]string{"host", "create", "rds-1", "--farm", "f1", "--load-index", "12", "--features", "rdp,blast"}, func(o any) bool {
			h := o.(*hostCreateOptions)
			return h.Name == "rds-1" && h.Farm == "f1" && h.LoadIndex == 12 && len(h.Features) == 2
		}},
		{[]string{"user", "update", "alice", "--name", "Alice M."}, func(o any) bool {
			u := o.(*userUpdateOptions)
			return u.Arg == "alice" && str(u.FullName) == "Alice M." && u.Domain == nil
		}},
		{[]string{"computer", "create", "PC-1", "--description", "kiosk"}, func(o any) bool {
			c := o.(*computerCreateOptions)
			return c.Name == "PC-1" && c.Description == "kiosk"
		}},
		{[]string{"entitlement", "create", "Apps", "--type", "application", "--scope", "Within Site"}, func(o any) bool {
			e := o.(*entitlementCreateOptions)
			// Horizon Console's words become cpactl's before the run.
			return e.Name == "Apps" && e.Type == "APPLICATION" && e.Scope == "SITE" && e.LoadDistribution == "NONE"
		}},
	} {
		if o := parsed(t, tc.argv...); !tc.check(o) {
			t.Errorf("%q: options %+v", tc.argv, o)
		}
	}
}
