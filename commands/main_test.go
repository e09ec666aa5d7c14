package commands

import (
	"bytes"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// run calls Main as the binary would and returns the exit code and output.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func passwordFile(t *testing.T, pw string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(path, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// rootArgs are the connection flags for the harness admin account.
func rootArgs(t *testing.T, s *slapdtest.Server, url string) []string {
	return []string{"-H", url, "-D", s.AdminDN(), "-y", passwordFile(t, slapdtest.AdminPassword)}
}

func TestSchemaCheckNamesAMissingAttribute(t *testing.T) {
	// A schema without pae-Machine (and without it in pae-PodAssignment).
	var b strings.Builder
	for _, line := range strings.Split(ldapschema.SchemaFile(), "\n") {
		if strings.Contains(line, "NAME '"+ldapschema.AttrMachine+"'") {
			continue
		}
		b.WriteString(strings.Replace(line, " MAY "+ldapschema.AttrMachine, "", 1) + "\n")
	}
	schema := b.String()
	if strings.Contains(schema, ldapschema.AttrMachine) {
		t.Fatalf("test schema still mentions %s", ldapschema.AttrMachine)
	}
	s := slapdtest.Start(t, slapdtest.Config{Schema: &schema})
	code, out, errOut := run(t, append([]string{"schema", "check"}, rootArgs(t, s, s.URL)...)...)
	if code != ExitDiff {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitDiff, errOut)
	}
	if !strings.Contains(out, ldapschema.AttrMachine) || !strings.Contains(out, "missing") {
		t.Errorf("output does not name the missing attribute:\n%s", out)
	}
	if !strings.Contains(out, ldapschema.ClassPodAssignment) || !strings.Contains(out, "different") {
		t.Errorf("output does not name the class that differs:\n%s", out)
	}
}

func TestWrongPasswordExits4(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{})
	code, _, errOut := run(t, "settings", "show", "-H", s.URL, "-D", s.AdminDN(), "-y", passwordFile(t, "wrong"))
	if code != ExitAuth {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitAuth, errOut)
	}
	assertOneLineError(t, errOut, "invalid credentials (49)")
}

func TestUnreachableURIExits1NamingIt(t *testing.T) {
	url := "ldap://127.0.0.1:1"
	code, _, errOut := run(t, "settings", "show", "-H", url)
	if code != ExitError {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitError, errOut)
	}
	assertOneLineError(t, errOut, "cannot reach "+url)
}

func assertOneLineError(t *testing.T, stderr, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "cpactl: ") || !strings.Contains(lines[0], want) {
		t.Errorf("first stderr line %q does not say %q", lines[0], want)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "hint: ") {
			t.Errorf("stderr has more than the error and a hint: %q", stderr)
		}
	}
	if strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
		t.Errorf("stack trace in stderr: %q", stderr)
	}
}

func TestTLS(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{TLS: true, WithBase: true})
	pw := passwordFile(t, slapdtest.AdminPassword)
	// settings show reads cn=Common: the layout must be there.
	if code, _, errOut := run(t, "init", "-H", s.URL, "-D", s.AdminDN(), "-y", pw); code != 0 {
		t.Fatalf("init: exit %d: %s", code, errOut)
	}
	show := func(extra ...string) (int, string) {
		args := append([]string{"settings", "show", "-D", s.AdminDN(), "-y", pw}, extra...)
		code, _, errOut := run(t, args...)
		return code, errOut
	}
	t.Run("ldaps with the CA", func(t *testing.T) {
		if code, errOut := show("-H", s.LDAPSURL, "--ca-file", s.CAFile); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	})
	t.Run("starttls with the CA", func(t *testing.T) {
		if code, errOut := show("-H", s.URL, "-Z", "--ca-file", s.CAFile); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	})
	t.Run("ldaps with another CA", func(t *testing.T) {
		code, errOut := show("-H", s.LDAPSURL, "--ca-file", s.OtherCAFile)
		if code != ExitError {
			t.Fatalf("exit %d, want 1: %s", code, errOut)
		}
		assertOneLineError(t, errOut, "certificate")
	})
	t.Run("starttls with another CA never falls back", func(t *testing.T) {
		code, errOut := show("-H", s.URL, "-Z", "--ca-file", s.OtherCAFile)
		if code != ExitError {
			t.Fatalf("exit %d, want 1: %s", code, errOut)
		}
		assertOneLineError(t, errOut, "certificate")
		if !strings.Contains(errOut, "refusing to continue in clear text") {
			t.Errorf("message does not say it refused clear text: %s", errOut)
		}
	})
	t.Run("insecure skip verify warns", func(t *testing.T) {
		code, errOut := show("-H", s.LDAPSURL, "--insecure-skip-tls-verify")
		if code != 0 || !strings.Contains(errOut, "warning: --insecure-skip-tls-verify") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}

// TestStartTLSRefusedIsAnError: a server that does not offer StartTLS (no
// TLS configured) makes -Z fail instead of continuing in clear text.
func TestStartTLSRefusedIsAnError(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{WithBase: true})
	code, _, errOut := run(t, "settings", "show", "-H", s.URL, "-Z", "-D", s.AdminDN(), "-y",
		passwordFile(t, slapdtest.AdminPassword))
	if code != ExitError {
		t.Fatalf("exit %d, want 1; stderr %q", code, errOut)
	}
	assertOneLineError(t, errOut, "starttls failed, refusing to continue in clear text")
}

// TestNoPasswordFlag: no flag of any command takes a password value (it
// would land in argv and in the process list).
func TestNoPasswordFlag(t *testing.T) {
	root := NewRootCommand(&Globals{Getenv: func(string) string { return "" }})
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			checked++
			name := strings.ToLower(f.Name)
			if (strings.Contains(name, "pass") || strings.Contains(name, "secret") || name == "pw") &&
				f.Value.Type() != "bool" && name != "password-file" && name != "ldap-password-file" {
				t.Errorf("%s --%s takes a secret on the command line", c.CommandPath(), f.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if checked == 0 {
		t.Fatal("no flags visited")
	}
}

// TestFrozenServerExits1 (SIGSTOP on slapd): the connection is taken but
// nothing answers; bind and search each fail within --timeout plus a small
// margin, exit 1 (never 4) and name the URI and the limit.
func TestFrozenServerExits1(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{WithBase: true})
	args := append(rootArgs(t, s, s.URL), "--timeout", "1s", "site", "list")
	if err := s.Freeze(); err != nil {
		t.Fatal(err)
	}
	defer s.Thaw()
	start := time.Now()
	code, _, stderr := run(t, args...)
	elapsed := time.Since(start)
	if code != 1 {
		t.Errorf("exit %d, want 1: %s", code, stderr)
	}
	assertOneLineError(t, stderr, s.URL+" did not answer within 1s (bind)")
	if elapsed > 10*time.Second {
		t.Errorf("took %s with --timeout 1s", elapsed)
	}
}
