package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/horizontest"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// seedCombinations lists every user, entitlement and connecting pod and
// Connection Server of fixtures/resolve-seed-000.ldif, as resolve's flags.
func seedCombinations(t *testing.T, fixture string) [][]string {
	t.Helper()
	snap, err := snapshot.LoadSnapshot(fixture)
	if err != nil {
		t.Fatal(err)
	}
	st := directory.NewStore(snap, ldapschema.DefaultBase)
	users, err := st.Users()
	if err != nil {
		t.Fatal(err)
	}
	ges, err := st.Entitlements()
	if err != nil {
		t.Fatal(err)
	}
	pods, err := st.Pods()
	if err != nil {
		t.Fatal(err)
	}
	css, err := st.ConnectionServers()
	if err != nil {
		t.Fatal(err)
	}
	var where [][]string
	for _, p := range pods {
		where = append(where, []string{"--pod", p.Name})
	}
	for _, c := range css {
		where = append(where, []string{"--connection-server", c.Name})
	}
	var out [][]string
	for _, u := range users {
		for _, name := range []string{u.UID, u.Domain + `\` + u.UID} {
			for _, g := range ges {
				for _, w := range where {
					out = append(out, append([]string{"resolve", "--user", name, "--entitlement", g.Name, "-o", "json"}, w...))
				}
			}
		}
	}
	if len(out) < 2*2*10 {
		t.Fatalf("only %d combinations: the fixture changed?", len(out))
	}
	return out
}

// startSeedHorizon starts the test Horizon on a copy of the seed-000
// fixtures, which the test may change; it returns the copy's directory.
func startSeedHorizon(t *testing.T) (*horizontest.Federation, string) {
	t.Helper()
	fixtures := filepath.Join(t.TempDir(), "seed-000")
	if out, err := exec.Command("cp", "-r", horizontest.Dir("seed-000"), fixtures).CombinedOutput(); err != nil {
		t.Fatalf("copying the fixtures: %v %s", err, out)
	}
	f, err := horizontest.NewDir(fixtures, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f, fixtures
}

// horizonArgs are the Horizon connection flags of a pull or sync from the
// test federation: india-pod-1's server, the other pods by --pod-url.
func horizonArgs(f *horizontest.Federation) []string {
	args := []string{"--url", f.URL("india-pod-1"), "--ca-file", f.CAFile, "--domain", horizontest.Domain, "--user", horizontest.User}
	for _, p := range f.Pods()[1:] {
		args = append(args, "--pod-url", p+"="+f.URL(p))
	}
	return args
}

// TestHorizonEndToEnd: the seed-000 federation as REST fixtures -> pull
// (from the test Horizon) -> import -> apply into a real slapd -> resolve
// gives the same JSON decision as fixtures/resolve-seed-000.ldif for every
// user (uid and DOMAIN\uid), entitlement and connecting pod or Connection
// Server; --from the pull directory gives the same again. Then sync: 0
// right after, 2 once Horizon changed, and --apply makes it 0 again while
// keeping a pae-* threshold that only the directory holds.
func TestHorizonEndToEnd(t *testing.T) {
	if err := slapdtest.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	fixture, err := filepath.Abs("../../fixtures/resolve-seed-000.ldif")
	if err != nil {
		t.Fatal(err)
	}
	srv := slapdtest.Start(t, slapdtest.Config{})
	f, fixtures := startSeedHorizon(t)
	work := t.TempDir()
	pull, imported := filepath.Join(work, "pull"), filepath.Join(work, "federation.ldif")
	root := map[string]string{"CPACTL_URL": srv.URL, "CPACTL_BIND_DN": srv.RootDN, "CPACTL_BIND_PASSWORD": slapdtest.RootPassword,
		"CPACTL_HORIZON_PASSWORD": horizontest.Password}
	run := func(env map[string]string, args ...string) (int, string, string) {
		t.Helper()
		return cpactlMain(args, env)
	}
	must := func(env map[string]string, args ...string) string {
		t.Helper()
		code, out, errOut := run(env, args...)
		if code != 0 {
			t.Fatalf("cpactl %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	must(root, append([]string{"horizon", "pull", "-o", pull}, horizonArgs(f)...)...)
	must(root, "horizon", "import", pull, "-O", imported)
	must(root, "apply", imported)

	for _, args := range seedCombinations(t, fixture) {
		wantCode, want, _ := run(nil, append(args, "--from", fixture)...)
		if !strings.Contains(want, `"outcome"`) {
			t.Fatalf("%v on the fixture: exit %d, no decision:\n%s", args, wantCode, want)
		}
		for _, env := range []map[string]string{root, nil} {
			call := args
			if env == nil {
				call = append(append([]string(nil), args...), "--from", pull)
			}
			code, got, errOut := run(env, call...)
			if code != wantCode || got != want {
				t.Errorf("%v: exit %d, want %d; the decision differs from the fixture's:\n%s\nwant:\n%s\n%s", call, code, wantCode, got, want, errOut)
			}
		}
	}

	sync := append([]string{"horizon", "sync"}, horizonArgs(f)...)
	if code, out, errOut := run(root, sync...); code != 0 {
		t.Fatalf("sync right after the apply: exit %d, want 0\n%s%s", code, out, errOut)
	}
	// A threshold only the directory holds (the API has none).
	must(root, "settings", "set", "pae-LoadThresholdForSite=90")
	if code, out, errOut := run(root, sync...); code != 0 {
		t.Fatalf("sync after a change Horizon does not carry: exit %d, want 0\n%s%s", code, out, errOut)
	}
	// Horizon changes: uk-desktops fills up.
	metrics := filepath.Join(fixtures, "pods", "uk-pod-1", "desktop-pool-metrics.json")
	b, err := os.ReadFile(metrics)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(b), `"occupancy_count": 40`, `"occupancy_count": 97`, 1)
	if changed == string(b) {
		t.Fatal("the uk-pod-1 metrics fixture changed: update the test")
	}
	if err := os.WriteFile(metrics, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(root, sync...)
	if code != 2 || !strings.Contains(out, "pae-Sessions") || !strings.Contains(out, "97") {
		t.Fatalf("sync after Horizon changed: exit %d, want 2 and the change\n%s%s", code, out, errOut)
	}
	must(root, append(sync, "--apply")...)
	if code, out, errOut := run(root, sync...); code != 0 {
		t.Fatalf("sync after --apply: exit %d, want 0\n%s%s", code, out, errOut)
	}
	if out := must(root, "settings", "show", "-o", "json"); !strings.Contains(out, `"value": 90`) {
		t.Errorf("sync --apply did not keep pae-LoadThresholdForSite 90:\n%s", out)
	}
	if out := must(root, "pool", "show", "uk-desktops", "-o", "json"); !strings.Contains(out, `"sessions": 97`) {
		t.Errorf("sync --apply did not write Horizon's change:\n%s", out)
	}
}
