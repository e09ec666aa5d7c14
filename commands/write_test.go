package commands

import (
	"strings"
	"testing"
)

// TestRepeatedCreates: every create compares a repeated object in one
// check on its entry (repeated, rules.RepeatedCreate), one row per rule
// the nouns' comparisons kept: an identical object is "unchanged", a
// different one is refused naming what differs in its flags' words (a
// reference with the name it holds). The demo snapshot is read only, so
// "unchanged" also proves that nothing was written.
func TestRepeatedCreates(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(g *Globals) error
		want string // the stdout line, or the refusal
	}{
		{"a pod's site compares as a DN, without regard to case",
			func(g *Globals) error {
				return (&podCreateOptions{g: g, Name: "London-1", Site: "uk", Status: "online"}).run()
			}, "pod London-1: unchanged"},
		{"a pod's site that differs is named",
			func(g *Globals) error {
				return (&podCreateOptions{g: g, Name: "London-1", Site: "US", Status: "online"}).run()
			}, "pod London-1 exists with a different site (UK)"},
		{"a pod's status counts only when --status was given",
			func(g *Globals) error {
				return (&podCreateOptions{g: g, Name: "London-1", Site: "UK", Status: "offline"}).run()
			}, "pod London-1: unchanged"},
		{"a pod's status given is compared",
			func(g *Globals) error {
				return (&podCreateOptions{g: g, Name: "London-1", Site: "UK", Status: "offline", statusGiven: true}).run()
			}, "pod London-1 exists with a different status (ONLINE)"},
		{"a user's domain compares without regard to case",
			func(g *Globals) error {
				return (&userCreateOptions{g: g, Arg: "alice", Domain: "corp", FullName: "Alice Martin"}).run()
			}, "user alice: unchanged"},
		{"a user's full name is --name, once for cn and sn",
			func(g *Globals) error {
				return (&userCreateOptions{g: g, Arg: "alice", Domain: "CORP", FullName: "Alice Other"}).run()
			}, "user alice exists with a different name (Alice Martin)"},
		{"a Connection Server's tags compare as a set",
			func(g *Globals) error {
				return (&csCreateOptions{g: g, Name: "cs-lon-1", Pod: "London-1", Tags: []string{"external", "contractors"}}).run()
			}, "connection server cs-lon-1: unchanged"},
		{"a Connection Server's tags that differ are named as a list, without their values",
			func(g *Globals) error {
				return (&csCreateOptions{g: g, Name: "cs-lon-1", Pod: "London-1", Tags: []string{"external"}}).run()
			}, "connection server cs-lon-1 exists with different tags"},
		{"a group of one member is still a list: named, its member not shown",
			func(g *Globals) error {
				return (&groupCreateOptions{g: g, Name: "Contractors", Members: []string{"alice"}}).run()
			}, "group Contractors exists with different members"},
		{"a user's domain that differs shows the one stored",
			func(g *Globals) error {
				return (&userCreateOptions{g: g, Arg: "alice", Domain: "OTHER", FullName: "Alice Martin"}).run()
			}, "user alice exists with a different domain (CORP)"},
		{"a site's URL is --site-url",
			func(g *Globals) error {
				return (&siteCreateOptions{g: g, Name: "UK", Description: "London and Manchester", URL: "https://x.example.com"}).run()
			}, "site UK exists with a different site-url (https://vdi.uk.example.com)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, out, _ := snapshotGlobals(t)
			err := tc.run(g)
			if strings.Contains(tc.want, "exists with") {
				wantExit(t, err, ExitError, tc.want)
				if !strings.HasSuffix(err.Error(), tc.want) {
					t.Errorf("error %q, want it to end in %q", err, tc.want)
				}
				if out.Len() != 0 {
					t.Errorf("stdout %q", out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(out.String()); got != tc.want {
				t.Errorf("stdout %q, want %q", got, tc.want)
			}
		})
	}
}
