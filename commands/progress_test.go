package commands

import (
	"regexp"
	"testing"
)

// TestFromLoadProgress: reading a large --from file, or the FILE of diff,
// is a stage of its own, in bytes against the file's size; a small one is
// not (largeFile is lowered to call the demo fixture large).
func TestFromLoadProgress(t *testing.T) {
	t.Setenv(progressIntervalEnv, "1ms")
	_, _, stderr := run(t, "lint", "--from", "../fixtures/demo.ldif", "--progress=plain")
	if regexp.MustCompile(`reading \.\./fixtures`).MatchString(stderr) {
		t.Errorf("a small file's read is shown:\n%s", stderr)
	}
	defer func(was int64) { largeFile = was }(largeFile)
	largeFile = 1
	code, stdout, stderr := run(t, "lint", "--from", "../fixtures/demo.ldif", "--progress=plain")
	if code != 0 || stdout != "lint: no findings\n" {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	load := regexp.MustCompile(`(?m)^lint: reading \.\./fixtures/demo\.ldif: 0\.0/0\.0 MB, 0 s \(done\)$`)
	entries := regexp.MustCompile(`(?m)^lint: reading: [0-9]+ entries, 0 s \(done\)$`)
	if !load.MatchString(stderr) || !entries.MatchString(stderr) {
		t.Errorf("stderr:\n%s", stderr)
	}
	_, _, stderr = run(t, "diff", "../fixtures/demo.ldif", "--from", "../fixtures/demo.ldif", "--progress=plain")
	if n := len(regexp.MustCompile(`(?m)^diff: reading \.\./fixtures/demo\.ldif: .* \(done\)$`).FindAllString(stderr, -1)); n != 2 {
		t.Errorf("diff FILE --from FILE: %d file stages, want 2:\n%s", n, stderr)
	}
}
