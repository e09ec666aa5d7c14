package horizonimport_test

import (
	"os"
	"os/exec"
	"testing"
)

func TestKeepPull(t *testing.T) {
	to := os.Getenv("KEEP_PULL")
	if to == "" {
		t.Skip()
	}
	dir, _ := pullSeed000(t)
	if out, err := exec.Command("cp", "-r", dir, to).CombinedOutput(); err != nil {
		t.Fatal(string(out))
	}
}
