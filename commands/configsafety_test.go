package commands

import (
	"os"
	"strings"
	"testing"
)

// TestUnsafeConfigFile: a configuration file other users can write, or
// that another user owns, names the server that receives the bind
// password: cpactl warns and goes on, and refuses it (exit 1, nothing
// printed on stdout) with --strict or when CI is set, unless --strict=false
// says otherwise (issue 22, item 10).
func TestUnsafeConfigFile(t *testing.T) {
	type file struct {
		name   string
		mode   os.FileMode
		owner  int // -1: the user running the test
		reason string
	}
	files := []file{
		{"writable by all", 0o666, -1, "other users can write it (mode 0666)"},
		{"writable by the group", 0o620, -1, "other users can write it (mode 0620)"},
	}
	if os.Getuid() == 0 {
		files = append(files, file{"owned by another user", 0o644, 65534, "it is owned by uid 65534, not by you (uid 0) or root"})
	}
	commands := [][]string{{"config", "get-contexts"}, {"site", "list", "--from", "../fixtures/demo.ldif"}}
	for _, f := range files {
		path := contextFile(t, fullContext)
		if f.owner >= 0 {
			if err := os.Chown(path, f.owner, -1); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(path, f.mode); err != nil { // past the umask
			t.Fatal(err)
		}
		for _, args := range commands {
			name := f.name + "/" + strings.Join(args[:2], " ")
			t.Run(name+"/warns", func(t *testing.T) {
				t.Setenv("CPACTL_CONFIG", path)
				t.Setenv("CI", "")
				code, out, errOut := run(t, args...)
				if code != 0 || out == "" {
					t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
				}
				want := "warning: config file " + path + ": " + f.reason
				if !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
					t.Errorf("stderr %q, want one line starting %q", errOut, want)
				}
			})
			for _, refused := range []struct {
				name string
				ci   string
				args []string
			}{
				{"--strict", "", []string{"--strict"}},
				{"CI=true", "true", nil},
				{"CI=1", "1", nil},
			} {
				t.Run(name+"/refused with "+refused.name, func(t *testing.T) {
					t.Setenv("CPACTL_CONFIG", path)
					t.Setenv("CI", refused.ci)
					code, out, errOut := run(t, append(append([]string{}, refused.args...), args...)...)
					if code != ExitError {
						t.Fatalf("exit %d, want %d; stderr %q", code, ExitError, errOut)
					}
					assertOneLineError(t, errOut, "config file "+path+": "+f.reason)
					if !strings.Contains(errOut, "\nhint: ") {
						t.Errorf("no hint: %q", errOut)
					}
					if out != "" {
						t.Errorf("stdout %q, want nothing", out)
					}
				})
			}
			t.Run(name+"/--strict=false in CI warns", func(t *testing.T) {
				t.Setenv("CPACTL_CONFIG", path)
				t.Setenv("CI", "true")
				code, _, errOut := run(t, append([]string{"--strict=false"}, args...)...)
				if code != 0 || !strings.HasPrefix(errOut, "warning: config file "+path+": "+f.reason) {
					t.Errorf("exit %d, stderr %q", code, errOut)
				}
			})
		}
	}
	t.Run("a file of one's own, not writable by others, in CI", func(t *testing.T) {
		path := contextFile(t, fullContext)
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("CPACTL_CONFIG", path)
		t.Setenv("CI", "true")
		for _, args := range commands {
			if code, out, errOut := run(t, args...); code != 0 || out == "" || errOut != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
			}
		}
	})
	t.Run("CI=false is not CI", func(t *testing.T) {
		path := contextFile(t, fullContext)
		if err := os.Chmod(path, 0o666); err != nil {
			t.Fatal(err)
		}
		t.Setenv("CPACTL_CONFIG", path)
		t.Setenv("CI", "false")
		if code, _, errOut := run(t, "config", "get-contexts"); code != 0 || !strings.HasPrefix(errOut, "warning: ") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
}
