package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestURLWithUserinfoRefused: an LDAP URI has no userinfo, so one with a
// user name or a password before "@" is refused wherever a URI enters
// (-H, CPACTL_URL, LDAPURI, --write-url, a context of the configuration
// file, set-context), exit 1, naming where it came from, and never
// echoing the secret (issue 22, item 9).
func TestURLWithUserinfoRefused(t *testing.T) {
	const secret = "s3cret"
	withURL := func(url string) string {
		return contextFile(t, "current-context: ctx\ncontexts:\n- name: ctx\n  url:\n  - ldap://127.0.0.1:1\n  - "+url+"\n")
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"-H", nil, []string{"site", "list", "-H", "ldap://admin:" + secret + "@127.0.0.1:1"},
			`the URI "ldap://***@127.0.0.1:1" (-H) holds a user name or password`},
		{"-H, the second of two", nil, []string{"site", "list", "-H", "ldap://127.0.0.1:1,ldaps://cn=admin:" + secret + "@host:636/"},
			`the URI "ldaps://***@host:636/" (-H) holds a user name or password`},
		{"-H, a user name alone", nil, []string{"site", "list", "-H", "ldap://admin@127.0.0.1:1"},
			`the URI "ldap://***@127.0.0.1:1" (-H) holds a user name or password`},
		{"-H, ldapi", nil, []string{"site", "list", "-H", "ldapi://root:" + secret + "@%2Frun%2Fldapi"},
			`the URI "ldapi://***@%2Frun%2Fldapi" (-H) holds a user name or password`},
		{"-H, a URI that does not parse", nil, []string{"site", "list", "-H", "ldap://admin:" + secret + "%zz@host"},
			`the URI "ldap://***@host" (-H) holds a user name or password`},
		{"-H, no scheme", nil, []string{"site", "list", "-H", "admin:" + secret + "@host"},
			`the URI "***@host" (-H) holds a user name or password`},
		{"status -H", nil, []string{"status", "-H", "ldap://admin:" + secret + "@127.0.0.1:1"},
			`the URI "ldap://***@127.0.0.1:1" (-H) holds a user name or password`},
		{"CPACTL_URL", map[string]string{"CPACTL_URL": "ldap://admin:" + secret + "@127.0.0.1:1"}, []string{"site", "list"},
			`the URI "ldap://***@127.0.0.1:1" (CPACTL_URL) holds a user name or password`},
		{"LDAPURI", map[string]string{"LDAPURI": "ldap://admin:" + secret + "@127.0.0.1:1"}, []string{"site", "list"},
			`the URI "ldap://***@127.0.0.1:1" (LDAPURI) holds a user name or password`},
		{"--write-url", nil, []string{"site", "list", "-H", "ldap://127.0.0.1:1", "--write-url", "ldap://admin:" + secret + "@127.0.0.1:2"},
			`the URI "ldap://***@127.0.0.1:2" (--write-url) holds a user name or password`},
		{"a context", map[string]string{"CPACTL_CONFIG": withURL("ldap://admin:" + secret + "@host")}, []string{"site", "list"},
			`line 6: the URI "ldap://***@host" (context "ctx") holds a user name or password`},
		{"config get-contexts", map[string]string{"CPACTL_CONFIG": withURL("ldap://admin:" + secret + "@host")}, []string{"config", "get-contexts"},
			`line 6: the URI "ldap://***@host" (context "ctx") holds a user name or password`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"CPACTL_CONFIG": filepath.Join(t.TempDir(), "none.yaml")}
			for k, v := range tt.env {
				env[k] = v
			}
			code, out, errOut := runEnvMain(t, env, tt.args...)
			if code != ExitError {
				t.Fatalf("exit %d, want %d; stderr %q", code, ExitError, errOut)
			}
			assertOneLineError(t, errOut, tt.want)
			if !strings.Contains(errOut, "\nhint: ") || !strings.Contains(errOut, "-D") {
				t.Errorf("no hint naming -D: %q", errOut)
			}
			if strings.Contains(errOut+out, secret) || strings.Contains(errOut+out, "admin") {
				t.Errorf("the userinfo is echoed: stdout %q, stderr %q", out, errOut)
			}
		})
	}
	t.Run("config set-context", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		env := map[string]string{"CPACTL_CONFIG": path}
		code, out, errOut := runEnvMain(t, env, "config", "set-context", "lab", "-H", "ldap://127.0.0.1:1,ldap://admin:"+secret+"@host")
		if code != ExitError {
			t.Fatalf("exit %d, want %d; stderr %q", code, ExitError, errOut)
		}
		assertOneLineError(t, errOut, `the URI "ldap://***@host" (-H) holds a user name or password`)
		if strings.Contains(errOut+out, secret) {
			t.Errorf("the password is echoed: stdout %q, stderr %q", out, errOut)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("the config file was written: %v", err)
		}
	})
}

// runEnvMain runs Main's way (error and hint lines on stderr) with a fake
// environment.
func runEnvMain(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	for _, k := range []string{"CPACTL_URL", "LDAPURI", "CPACTL_CONTEXT", "CPACTL_BIND_DN", "LDAPBINDDN"} {
		t.Setenv(k, "")
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	return run(t, args...)
}
