package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cpactl/cpactl/internal/slapdtest"
)

// TestLabScript runs scripts/lab as the README says (its exports
// evaluated by a shell), uses the lab slapd with the cpactl it built, and
// stops it with --stop: the slapd it started is gone afterwards, by its
// PID, whatever happens in between (a cleanup stops it too).
func TestLabScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cpactl and starts a slapd")
	}
	if err := slapdtest.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and slapd is missing: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("scripts/lab needs python3")
	}
	lab, err := filepath.Abs("../../scripts/lab")
	if err != nil {
		t.Fatal(err)
	}
	start := exec.Command(lab)
	start.Dir = t.TempDir() // the script finds the repository from its own path
	exports, err := start.Output()
	if err != nil {
		t.Fatalf("scripts/lab: %v: %s", err, errText(err))
	}
	dir := ""
	for line := range strings.Lines(string(exports)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "export PATH="); ok {
			dir, _, _ = strings.Cut(p, ":")
		}
	}
	if dir == "" || !strings.HasPrefix(filepath.Base(dir), "cpactl-lab.") {
		t.Fatalf("no lab directory in the exports:\n%s", exports)
	}
	pid := readPID(t, filepath.Join(dir, "slapd.pid"))
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		if out, err := exec.Command(lab, "--stop", dir).CombinedOutput(); err != nil {
			t.Errorf("scripts/lab --stop: %v\n%s", err, out)
		}
	}
	t.Cleanup(stop)

	// What the README does with the exports: a shell evaluates them and
	// runs the cpactl on the PATH they set.
	script := string(exports) + `
set -e
cpactl init --roles >/dev/null
cpactl whoami | head -2
cpactl site create Lab >/dev/null
cpactl site list
cpactl version
cpactl history -o json | grep -c '"cpactl site create Lab"' || true
echo "anonymous sees $(ldapsearch -x -LLL -H "$CPACTL_URL" -b "$CPACTL_BASE" dn | grep -c '^dn:' || true) entries"
`
	out, err := exec.Command("bash", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("using the lab: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "\nLab") && !strings.HasPrefix(string(out), "NAME") {
		t.Errorf("site list on the lab:\n%s", out)
	}
	// The lab works as its admin account (not the root DN), and keeps the
	// history log, which that admin reads.
	if !strings.Contains(string(out), "roles:     admin") || !strings.Contains(string(out), "identity:  uid=lab-admin,") {
		t.Errorf("the lab does not bind as its admin account:\n%s", out)
	}
	if !strings.Contains(string(out), "\n1\n") {
		t.Errorf("the lab's history does not show the site created:\n%s", out)
	}
	// The lab enforces cpactl's role ACLs: anonymous reads nothing.
	if !strings.Contains(string(out), "anonymous sees 0 entries") {
		t.Errorf("the lab lets anonymous read:\n%s", out)
	}
	if strings.Contains(string(out), "commit:   unknown") {
		t.Errorf("the lab's cpactl does not name its commit:\n%s", out)
	}

	stop()
	for i := 0; running(pid); i++ {
		if i == 50 {
			t.Fatalf("slapd %d still runs after scripts/lab --stop", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", dir, err)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Scan()
	pid, err := strconv.Atoi(strings.TrimSpace(s.Text()))
	if err != nil || pid <= 1 {
		t.Fatalf("%s: %q", path, s.Text())
	}
	return pid
}

// running reports whether the process pid exists (signal 0).
func running(pid int) bool { return syscall.Kill(pid, 0) == nil }

func errText(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
