package commands

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// outputCommands are the commands that take -O FILE, each with the
// arguments that make it write what it writes to stdout without -O.
func outputCommands(t *testing.T) map[string][]string {
	t.Helper()
	snap := filepath.Join(t.TempDir(), "demo.ldif")
	if code, _, errOut := run(t, "generate", "--seed", "1", "-O", snap); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, errOut)
	}
	return map[string][]string{
		"generate": {"generate", "--seed", "1"},
		"export":   {"export", "--from", snap},
		"schema":   {"schema", "print"},
	}
}

// mknod makes a character device node in a temporary directory, a copy
// of a /dev node (1,3 is /dev/null, 1,7 /dev/full), so that no test ever
// writes to the real ones with code that might replace them. It needs
// root: without it the test is skipped.
func mknod(t *testing.T, name string, minor int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|minor); err != nil {
		t.Skipf("cannot make a device node (needs root): %v", err)
	}
	return path
}

// TestOutputFileKeepsWhatThePathIs: -O replaces a regular file atomically
// and writes in place to anything else; a symbolic link is followed to the
// file it names (the link stays); nothing ever turns a device node, a fifo
// or a link into a regular file (issue 22, item 4).
func TestOutputFileKeepsWhatThePathIs(t *testing.T) {
	for name, args := range outputCommands(t) {
		t.Run(name, func(t *testing.T) {
			code, want, errOut := run(t, args...)
			if code != 0 || want == "" {
				t.Fatalf("%s without -O: exit %d: %s", name, code, errOut)
			}
			write := func(t *testing.T, path string) {
				t.Helper()
				code, _, errOut := run(t, append(args, "-O", path)...)
				if code != 0 {
					t.Fatalf("-O %s: exit %d: %s", path, code, errOut)
				}
			}
			t.Run("symlink to a regular file", func(t *testing.T) {
				dir := t.TempDir()
				target := filepath.Join(dir, "real.ldif")
				if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				link := filepath.Join(dir, "link.ldif")
				if err := os.Symlink("real.ldif", link); err != nil {
					t.Fatal(err)
				}
				write(t, link)
				if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
				}
				if got, _ := os.ReadFile(target); string(got) != want {
					t.Errorf("the link's target holds %d bytes, want the %d of stdout", len(got), len(want))
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 2 {
					t.Errorf("the directory holds %d files, want the link and its target", len(entries))
				}
			})
			t.Run("fifo", func(t *testing.T) {
				fifo := filepath.Join(t.TempDir(), "pipe")
				if err := syscall.Mkfifo(fifo, 0o600); err != nil {
					t.Fatal(err)
				}
				got := make(chan string, 1)
				go func() {
					f, err := os.Open(fifo) // until cpactl opens it to write
					if err != nil {
						got <- err.Error()
						return
					}
					defer f.Close()
					b, _ := io.ReadAll(f)
					got <- string(b)
				}()
				write(t, fifo)
				if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
					// The reader waits on the fifo that is gone: leave it.
					t.Fatalf("the fifo was replaced: %v %v", fi.Mode(), err)
				}
				if b := <-got; b != want {
					t.Errorf("the fifo's reader got %d bytes, want the %d of stdout", len(b), len(want))
				}
			})
			t.Run("link to an open descriptor, as /dev/stdout", func(t *testing.T) {
				// stdout is a link to /proc/self/fd/N, N a file this
				// process has open as a shell's "cmd >> out.ldif" would.
				dir := t.TempDir()
				file := filepath.Join(dir, "out.ldif")
				if err := os.WriteFile(file, []byte("before\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				fd, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer fd.Close()
				stdout := filepath.Join(dir, "stdout")
				if err := os.Symlink(fmt.Sprintf("/proc/self/fd/%d", fd.Fd()), stdout); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(stdout); err != nil {
					t.Skipf("no /proc/self/fd here: %v", err)
				}
				write(t, stdout)
				if fi, err := os.Lstat(stdout); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
				}
				if got, _ := os.ReadFile(file); string(got) != "before\n"+want {
					t.Errorf("the descriptor's file holds %d bytes, want the 7 it held and the %d of stdout", len(got), len(want))
				}
			})
			t.Run("device node", func(t *testing.T) {
				null := mknod(t, "null", 3)
				write(t, null)
				if fi, err := os.Lstat(null); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
					t.Fatalf("the device node was replaced: %v %v", fi.Mode(), err)
				}
			})
			t.Run("full device", func(t *testing.T) {
				full := mknod(t, "full", 7)
				code, out, errOut := run(t, append(args, "-O", full)...)
				if code != ExitError {
					t.Fatalf("-O a full device: exit %d, want %d; stderr %q", code, ExitError, errOut)
				}
				assertOneLineError(t, errOut, "cannot write "+full+": no space left on device")
				if !strings.Contains(errOut, "\nhint: ") {
					t.Errorf("no hint: %q", errOut)
				}
				if out != "" {
					t.Errorf("stdout %q, want nothing", out)
				}
				if fi, err := os.Lstat(full); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
					t.Fatalf("the device node was replaced: %v %v", fi.Mode(), err)
				}
			})
			t.Run("regular file replaced atomically", func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "out.ldif")
				if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				old, err := os.Open(path) // a reader of the old file keeps it whole
				if err != nil {
					t.Fatal(err)
				}
				defer old.Close()
				write(t, path)
				if got, _ := os.ReadFile(path); string(got) != want {
					t.Errorf("the file holds %d bytes, want the %d of stdout", len(got), len(want))
				}
				if b, _ := io.ReadAll(old); string(b) != "old\n" {
					t.Errorf("the old file was written in place: a reader of it sees %d bytes, not the 4 it held", len(b))
				}
				if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
					t.Errorf("a temporary file is left: %d files", len(entries))
				}
			})
		})
	}
}

// TestOutputFileRefused: -O of what cannot hold a file is one line, a
// hint, exit 1, and leaves the path as it was.
func TestOutputFileRefused(t *testing.T) {
	dir := t.TempDir()
	dangling := filepath.Join(dir, "dangling.ldif")
	if err := os.Symlink("missing/nowhere.ldif", dangling); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"a directory", dir, "cannot write " + dir + ": it is a directory"},
		{"a link to nothing", dangling, "cannot write " + dangling + ": it is a symbolic link to missing/nowhere.ldif, which does not exist"},
		{"a missing directory", filepath.Join(dir, "no", "x.ldif"), "cannot write " + filepath.Join(dir, "no", "x.ldif") + ": no such file or directory"},
	}
	for name, args := range outputCommands(t) {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				code, out, errOut := run(t, append(args, "-O", tt.path)...)
				if code != ExitError {
					t.Fatalf("exit %d, want %d; stderr %q", code, ExitError, errOut)
				}
				assertOneLineError(t, errOut, tt.want)
				if !strings.Contains(errOut, "\nhint: ") {
					t.Errorf("no hint: %q", errOut)
				}
				if out != "" {
					t.Errorf("stdout %q, want nothing", out)
				}
				if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("the dangling link was replaced: %v %v", fi.Mode(), err)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 1 {
					t.Errorf("%s holds %d files, want the link alone", dir, len(entries))
				}
			})
		}
	}
}
