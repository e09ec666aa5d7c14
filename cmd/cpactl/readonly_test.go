package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/commands"
	"github.com/cpactl/cpactl/internal/slapdtest"
)

// cpactlMain runs cpactl in this process with env set for the call. No
// config file is read unless env names one: a developer's own contexts
// must not change what a test connects to.
func cpactlMain(args []string, env map[string]string) (int, string, string) {
	if _, ok := env["CPACTL_CONFIG"]; !ok {
		env = maps.Clone(env)
		if env == nil {
			env = map[string]string{}
		}
		env["CPACTL_CONFIG"] = noConfig
	}
	for k, v := range env {
		os.Setenv(k, v)
	}
	defer func() {
		for k := range env {
			os.Unsetenv(k)
		}
	}()
	var out, errOut bytes.Buffer
	code := commands.Main(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestReadOnlyAccount: bound as an account that may read but not write
// (the help desk role),
// every read command exits 0, and every write command exits 4 with the
// server's "insufficient access" and leaves the directory as it was.
func TestReadOnlyAccount(t *testing.T) {
	demo, err := os.ReadFile("../../fixtures/demo.ldif")
	if err != nil {
		t.Fatal(err)
	}
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: string(demo)})
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	helpdesk := srv.Account(slapdtest.Helpdesk)
	if err := os.WriteFile(pw, []byte(helpdesk.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	desired := filepath.Join(dir, "desired.ldif")
	root := map[string]string{"CPACTL_URL": srv.URL, "CPACTL_BIND_DN": srv.AdminDN(), "CPACTL_BIND_PASSWORD": slapdtest.AdminPassword}
	if code, _, errOut := cpactlMain([]string{"export", "-O", desired}, root); code != 0 {
		t.Fatalf("export as root: %d %s", code, errOut)
	}
	edited, _ := os.ReadFile(desired)
	edited = append(edited, []byte("\ndn: cn=Mars,ou=Sites,dc=vdiglobal,dc=vmware,dc=int\nobjectClass: top\nobjectClass: pae-Site\ncn: Mars\n")...)
	if err := os.WriteFile(desired, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	before := exportAll(t, root)
	reader := map[string]string{"CPACTL_URL": srv.URL, "CPACTL_BIND_DN": helpdesk.DN}
	as := func(args ...string) []string { return append(args, "-y", pw) }

	for _, args := range [][]string{
		{"site", "list"}, {"site", "show", "UK"}, {"pod", "list"}, {"pool", "list"}, {"entitlement", "list"},
		{"user", "list"}, {"group", "list"}, {"session", "list"}, {"settings", "show"}, {"export"},
		{"resolve", "--user", "alice", "--entitlement", "Desktops", "--connection-server", "cs-blr-1"},
		{"diff", desired},
	} {
		code, _, errOut := cpactlMain(as(args...), reader)
		if want := map[bool]int{true: 2, false: 0}[args[0] == "diff"]; code != want && !(args[0] == "resolve" && code == 6) {
			t.Errorf("%s: exit %d, want %d: %s", strings.Join(args, " "), code, want, errOut)
		}
	}
	for _, args := range [][]string{
		{"site", "create", "Mars"},
		{"site", "update", "UK", "--description", "changed"},
		{"site", "preferred", "India", "--set", "US"},
		{"pod", "create", "mars-1", "--site", "UK"},
		{"pod", "update", "London-1", "--status", "offline"},
		{"pod", "update", "London-1", "--rename", "London-9"},
		{"pool", "delete", "lon-kiosk", "--yes", "--force"},
		{"cs", "create", "cs-x", "--pod", "London-1"},
		{"pool", "create", "px", "--pod", "London-1", "--kind", "desktop", "--floating", "--capacity", "5"},
		{"pool", "update", "lon-desktops", "--capacity", "77"},
		{"farm", "create", "fx", "--pod", "London-1"},
		{"host", "create", "hx", "--farm", "lon-farm"},
		{"host", "set-load", "rds-lon-01", "--load-index", "42"},
		{"entitlement", "create", "GEx", "--type", "desktop", "--floating"},
		{"entitlement", "update", "Desktops", "--description", "changed"},
		{"entitlement", "add-member", "Kiosk Desktop", "--user", "bob"},
		{"homesite", "set", "--user", "bob", "--site", "UK"},
		{"user", "create", "zed"},
		{"group", "create", "G2"},
		{"group", "add-member", "Empty", "user:bob"},
		{"computer", "create", "PC-9"},
		{"settings", "set", "pae-LoadThresholdForSite=42"},
		{"apply", desired},
	} {
		code, out, errOut := cpactlMain(as(args...), reader)
		if code != 4 || !strings.Contains(errOut, "insufficient access") {
			t.Errorf("%s: exit %d, want 4 with insufficient access:\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	if after := exportAll(t, root); after != before {
		t.Error("the directory changed under a read-only account")
	}
}

func exportAll(t *testing.T, env map[string]string) string {
	t.Helper()
	code, out, errOut := cpactlMain([]string{"export"}, env)
	if code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	return out
}

// noConfig is a config file that does not exist, for the tests that run
// cpactl with this process's environment.
const noConfig = "/nonexistent/cpactl-test/config.yaml"
