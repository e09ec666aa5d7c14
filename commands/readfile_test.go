package commands

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cpactl/cpactl/internal/slapdtest"
)

// sparseFile makes a file of size bytes that takes no room on disk.
func sparseFile(t *testing.T, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return path
}

// fifoFeeding makes a fifo that a goroutine writes data to, once, when
// it is opened; with endless, it writes zeros until the reader closes it.
func fifoFeeding(t *testing.T, data string, endless bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		if !endless {
			f.WriteString(data)
			return
		}
		zeros := make([]byte, 64<<10)
		for {
			if _, err := f.Write(zeros); err != nil {
				return // the reader had enough
			}
		}
	}()
	return path
}

// TestFilesReadWholeAreBounded: the files cpactl reads whole (the
// password file, the CA bundle, the configuration file) are refused,
// before they are read past their bound, when they are larger than it or
// of a kind that is not expected: -y /dev/zero is one line and exit 1, not
// an out-of-memory crash (issue 22, item 11).
func TestFilesReadWholeAreBounded(t *testing.T) {
	dir := t.TempDir()
	offline := []string{"site", "list", "-H", "ldap://127.0.0.1:1"}
	tests := []struct {
		name     string
		env      string // CPACTL_CONFIG
		args     []string
		want     string
		wantHint string
	}{
		{"password file: a device", "", []string{"-D", "cn=x", "-y", "/dev/zero"},
			"password file /dev/zero is a character device, not a regular file or a pipe", "-W"},
		{"password file: too large", "", []string{"-D", "cn=x", "-y", sparseFile(t, 64<<20)},
			"is larger than 4 KiB", "-W"},
		{"password file: an endless pipe", "", []string{"-D", "cn=x", "-y", fifoFeeding(t, "", true)},
			"is larger than 4 KiB", "-W"},
		{"password file: a directory", "", []string{"-D", "cn=x", "-y", dir},
			"password file " + dir + " is a directory, not a regular file or a pipe", "-W"},
		{"CA file: a device", "", []string{"--ca-file", "/dev/zero"},
			"--ca-file /dev/zero is a character device, not a regular file or a pipe", "PEM"},
		{"CA file: too large", "", []string{"--ca-file", sparseFile(t, 64<<20)},
			"is larger than 4 MiB", "PEM"},
		{"config file: a device", "/dev/zero", nil,
			"config file /dev/zero is a character device, not a regular file", "CPACTL_CONFIG"},
		{"config file: too large", sparseFile(t, 64<<20), nil,
			"is larger than 1 MiB", "CPACTL_CONFIG"},
		{"config file: a pipe", fifoFeeding(t, "contexts: []\n", false), nil,
			"is a pipe, not a regular file", "CPACTL_CONFIG"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("CPACTL_CONFIG", tt.env)
			}
			code, out, errOut := run(t, append(offline, tt.args...)...)
			if code != ExitError {
				t.Fatalf("exit %d, want %d; stderr %q", code, ExitError, errOut)
			}
			assertOneLineError(t, errOut, tt.want)
			if !strings.Contains(errOut, "\nhint: ") || !strings.Contains(errOut, tt.wantHint) {
				t.Errorf("the hint does not name %s: %q", tt.wantHint, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}

// TestPasswordAndCAFromPipes: a password and a CA bundle given as pipes
// (-y <(pass show ldap), --ca-file <(vault read ...)) are read, within
// their bounds: init binds with them and writes the layout.
func TestPasswordAndCAFromPipes(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{TLS: true, WithBase: true})
	ca, err := os.ReadFile(s.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "init", "-H", s.LDAPSURL, "-D", s.AdminDN(),
		"-y", fifoFeeding(t, slapdtest.AdminPassword+"\n", false), "--ca-file", fifoFeeding(t, string(ca), false))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
