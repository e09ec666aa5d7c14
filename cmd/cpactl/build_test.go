package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDocumentedBuildStampsTheCommit builds cpactl as the README says for
// a tree without VCS information (-buildvcs=false, with the -ldflags
// stamp) and asks it its version: the stamped commit, not "unknown".
func TestDocumentedBuildStampsTheCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cpactl")
	}
	bin := filepath.Join(t.TempDir(), "cpactl")
	const stamp = "0123456789abcdef0123456789abcdef01234567"
	build := exec.Command("go", "build", "-buildvcs=false",
		"-ldflags", "-X github.com/cpactl/cpactl/commands.commit="+stamp, "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("cpactl version: %v", err)
	}
	var v struct{ Commit string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if v.Commit != stamp {
		t.Errorf("commit %q, want the stamp %q", v.Commit, stamp)
	}
}
