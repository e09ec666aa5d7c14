package osfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRead: one row per rule of what a Source reads.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	small := Source{Max: 8}
	piped := Source{Max: 8, Pipes: true}
	tests := []struct {
		name string
		src  Source
		path string
		want string // the bytes, or the error's message
	}{
		{"a regular file", small, file("ok", "12345678"), "12345678"},
		{"an empty file", small, file("empty", ""), ""},
		{"one byte over the bound", small, file("over", "123456789"), filepath.Join(dir, "over") + " is larger than 8 bytes"},
		{"a directory", small, dir, dir + " is a directory, not a regular file"},
		{"a directory, pipes accepted", piped, dir, dir + " is a directory, not a regular file or a pipe"},
		{"a device", piped, "/dev/zero", "/dev/zero is a character device, not a regular file or a pipe"},
		{"a fifo where a regular file is expected (never opened)", small, fifo, fifo + " is a pipe, not a regular file"},
		{"a missing file", small, filepath.Join(dir, "none"), "stat " + filepath.Join(dir, "none") + ": no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, fi, err := tt.src.Read(tt.path)
			got := string(b)
			if err != nil {
				got = err.Error()
			} else if fi == nil {
				t.Error("no FileInfo with the bytes")
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("a fifo, pipes accepted, within and over the bound", func(t *testing.T) {
		for _, body := range []string{"secret\n", "123456789"} {
			go func() {
				f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err == nil {
					f.WriteString(body)
					f.Close()
				}
			}()
			b, _, err := piped.Read(fifo)
			var large *TooLargeError
			if len(body) <= 8 && (err != nil || string(b) != body) {
				t.Errorf("%q: got %q, %v", body, b, err)
			}
			if len(body) > 8 && !errors.As(err, &large) {
				t.Errorf("%q: got %q, %v; want too large", body, b, err)
			}
		}
	})
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{8: "8 bytes", 4 * KiB: "4 KiB", 1536: "1536 bytes", MiB: "1 MiB", 4 * MiB: "4 MiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestThroughProc: a path that leads to a file through /proc names an
// open descriptor; any other path, links or not, does not.
func TestThroughProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd/0"); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := func(name, dest string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(dest, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f, err := os.Open(regular)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"a regular file", regular, false},
		{"a link to it", link("l1", "regular"), false},
		{"a link to a link to it", link("l2", "l1"), false},
		{"a missing file", filepath.Join(dir, "none"), false},
		{"a descriptor in /proc", fd, true},
		{"a link to a descriptor, as /dev/stdout", link("stdout", fd), true},
		{"a descriptor through a linked directory, as /dev/fd/N", filepath.Join(link("fd", "/proc/self/fd"), fmt.Sprint(f.Fd())), true},
		{"a link loop", link("loop", "loop"), false},
	}
	for _, tt := range tests {
		if got := throughProc(tt.path); got != tt.want {
			t.Errorf("%s: throughProc(%s) = %v, want %v", tt.name, tt.path, got, tt.want)
		}
	}
}

// TestCreateRefuses: what Create refuses, each a *WriteError naming the
// path as given, and the path left as it was.
func TestCreateRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("gone/x", dangling); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		opts Options
		want string
	}{
		{"a directory", dir, Options{Perm: 0o600}, "cannot write " + dir + ": it is a directory"},
		{"a dangling link", dangling, Options{Perm: 0o600}, "cannot write " + dangling + ": it is a symbolic link to gone/x, which does not exist"},
		{"a missing directory", filepath.Join(dir, "no", "x"), Options{Perm: 0o600}, "cannot write " + filepath.Join(dir, "no", "x") + ": no such file or directory"},
		{"a fifo where only a regular file will do", fifo, Options{Perm: 0o600, RegularOnly: true}, "cannot write " + fifo + ": it is a pipe, not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Create(tt.path, tt.opts)
			var we *WriteError
			if !errors.As(err, &we) || err.Error() != tt.want {
				if out != nil {
					out.Discard()
				}
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "dangling fifo" {
		t.Errorf("the directory holds %v, want the dangling link and the fifo", names)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the fifo is now %v %v", fi.Mode(), err)
	}
}

// TestCommitKeepsTheOldFileOnDiscard: a replace that is discarded leaves
// the old file whole and no temporary file; one that is committed leaves
// the new content with the mode asked for.
func TestCommitKeepsTheOldFileOnDiscard(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := Create(path, Options{Perm: 0o600, Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.Write([]byte("half")); err != nil {
		t.Fatal(err)
	}
	out.Discard()
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("after Discard the file holds %q", b)
	}
	out, err = Create(path, Options{Perm: 0o600, Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := out.Commit(); err != nil {
		t.Fatal(err)
	}
	out.Discard() // nothing after Commit
	fi, err := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "new" || err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("after Commit the file holds %q, mode %v (%v)", b, fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left, want 1", len(entries))
	}
}
