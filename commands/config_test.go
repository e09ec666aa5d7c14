package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cpactl/cpactl/ldapschema"
)

// TestMain keeps the machine's configuration file (~/.config/cpactl) out
// of the tests that run Main with the real environment.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cpactl-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("CPACTL_CONFIG", filepath.Join(dir, "none.yaml"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// contextFile writes a configuration file whose current context "ctx"
// gives every setting, and returns its path.
func contextFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const fullContext = `current-context: ctx
contexts:
- name: ctx
  url: ldap://context:389
  base: dc=context
  bind-dn: cn=context
  starttls: true
  ca-file: /context/ca.pem
  timeout: 7s
- name: other
  url: ldap://other:389
`

// resolved parses args on `site list` and resolves the settings as a
// command's PersistentPreRunE does.
func resolved(t *testing.T, env map[string]string, args ...string) (*Globals, error) {
	t.Helper()
	g := &Globals{Getenv: func(k string) string { return env[k] }}
	root := NewRootCommand(g)
	cmd, _, err := root.Find([]string{"site", "list"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return g, g.resolveSettings(cmd)
}

// TestPrecedence: for each setting, flags, then CPACTL_*, then the
// context, then LDAP*, then the default (docs/config.md).
func TestPrecedence(t *testing.T) {
	cfg := contextFile(t, fullContext)
	type row struct {
		name string
		env  map[string]string
		args []string
		want string
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"CPACTL_CONFIG": cfg}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	noContext := map[string]string{}
	settings := []struct {
		setting string
		get     func(*Globals) string
		rows    []row
	}{
		{"url", func(g *Globals) string { return strings.Join(g.URLs, " ") }, []row{
			{"the flag wins", with("CPACTL_URL", "ldap://env", "LDAPURI", "ldap://ldapuri"), []string{"-H", "ldap://flag"}, "ldap://flag"},
			{"CPACTL_URL beats the context", with("CPACTL_URL", "ldap://env", "LDAPURI", "ldap://ldapuri"), nil, "ldap://env"},
			{"the context beats LDAPURI", with("LDAPURI", "ldap://ldapuri"), nil, "ldap://context:389"},
			{"LDAPURI without a context", map[string]string{"LDAPURI": "ldap://ldapuri"}, nil, "ldap://ldapuri"},
			{"--context picks another", with("LDAPURI", "ldap://ldapuri"), []string{"--context", "other"}, "ldap://other:389"},
			{"CPACTL_CONTEXT picks another", with("CPACTL_CONTEXT", "other"), nil, "ldap://other:389"},
			{"no default", noContext, nil, ""},
		}},
		{"base", func(g *Globals) string { return g.Base }, []row{
			{"the flag wins", with("CPACTL_BASE", "dc=env", "LDAPBASE", "dc=ldapbase"), []string{"-b", "dc=flag"}, "dc=flag"},
			{"CPACTL_BASE beats the context", with("CPACTL_BASE", "dc=env", "LDAPBASE", "dc=ldapbase"), nil, "dc=env"},
			{"the context beats LDAPBASE", with("LDAPBASE", "dc=ldapbase"), nil, "dc=context"},
			{"LDAPBASE without a context", map[string]string{"LDAPBASE": "dc=ldapbase"}, nil, "dc=ldapbase"},
			{"a context without base leaves LDAPBASE", with("LDAPBASE", "dc=ldapbase"), []string{"--context", "other"}, "dc=ldapbase"},
			{"the default", noContext, nil, ldapschema.DefaultBase},
		}},
		{"bind-dn", func(g *Globals) string { return g.BindDN }, []row{
			{"the flag wins", with("CPACTL_BIND_DN", "cn=env", "LDAPBINDDN", "cn=ldap"), []string{"-D", "cn=flag"}, "cn=flag"},
			{"CPACTL_BIND_DN beats the context", with("CPACTL_BIND_DN", "cn=env", "LDAPBINDDN", "cn=ldap"), nil, "cn=env"},
			{"the context beats LDAPBINDDN", with("LDAPBINDDN", "cn=ldap"), nil, "cn=context"},
			{"LDAPBINDDN without a context", map[string]string{"LDAPBINDDN": "cn=ldap"}, nil, "cn=ldap"},
			{"the default: anonymous", noContext, nil, ""},
		}},
		{"starttls", func(g *Globals) string { return yesNo(g.StartTLS) }, []row{
			{"the flag wins", with(), []string{"--starttls=false"}, "no"},
			{"the context", with(), nil, "yes"},
			{"the default", noContext, nil, "no"},
		}},
		{"ca-file", func(g *Globals) string { return g.CAFile }, []row{
			{"the flag wins", with(), []string{"--ca-file", "/flag.pem"}, "/flag.pem"},
			{"the context", with(), nil, "/context/ca.pem"},
			{"the default", noContext, nil, ""},
		}},
		{"timeout", func(g *Globals) string { return g.Timeout.String() }, []row{
			{"the flag wins", with(), []string{"--timeout", "3s"}, "3s"},
			{"the flag wins even at the default's value", with(), []string{"--timeout", "10s"}, "10s"},
			{"the context", with(), nil, "7s"},
			{"the default", noContext, nil, (10 * time.Second).String()},
		}},
	}
	for _, s := range settings {
		for _, r := range s.rows {
			t.Run(s.setting+"/"+r.name, func(t *testing.T) {
				g, err := resolved(t, r.env, r.args...)
				if err != nil {
					t.Fatal(err)
				}
				if got := s.get(g); got != r.want {
					t.Errorf("%s = %q, want %q", s.setting, got, r.want)
				}
			})
		}
	}
}

func TestContextErrors(t *testing.T) {
	for _, tt := range []struct {
		name, file string
		env        map[string]string
		args       []string
		want       string
	}{
		{"--context names no context", fullContext, nil, []string{"--context", "nope"}, `context "nope" (--context) is not in `},
		{"CPACTL_CONTEXT names no context", fullContext, map[string]string{"CPACTL_CONTEXT": "nope"}, nil, `context "nope" (CPACTL_CONTEXT) is not in `},
		{"the current context is gone", "current-context: gone\ncontexts: []\n", nil, nil, `context "gone" (current-context) is not in `},
		{"a password key", "contexts:\n- name: a\n  bindPassword: s3cret\n", nil, nil, `line 3: "bindPassword": cpactl keeps no password in its config file; remove it and use -y FILE, -W or CPACTL_BIND_PASSWORD`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := contextFile(t, tt.file)
			env := map[string]string{"CPACTL_CONFIG": path}
			for k, v := range tt.env {
				env[k] = v
			}
			_, err := resolved(t, env, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want %q naming %s", err, tt.want, path)
			}
			if code := ExitCode(err); code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
		})
	}
}

// set-context then use-context, read back by get-contexts and
// current-context; the file stays 0600 in a 0700 directory.
func TestSetAndUseContextRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "xdg")
	env := map[string]string{"XDG_CONFIG_HOME": dir}
	must := func(wantCode int, args ...string) string {
		t.Helper()
		code, out, errOut := runEnv(t, env, args...)
		if code != wantCode {
			t.Fatalf("%v: exit %d, want %d; stderr %q", args, code, wantCode, errOut)
		}
		return out
	}
	if out := must(0, "config", "set-context", "lab", "-H", "ldap://a:389,ldap://b:389", "-b", "dc=lab", "-D", "cn=admin,dc=lab", "-Z", "--timeout", "4s"); !strings.HasPrefix(out, `created context "lab" in `+filepath.Join(dir, "cpactl", "config.yaml")) {
		t.Errorf("set-context said %q", out)
	}
	if out := must(0, "config", "set-context", "lab", "-b", "dc=lab2", "--starttls=false"); out != "updated context \"lab\" (base, starttls)\n" {
		t.Errorf("set-context said %q", out)
	}
	if out := must(0, "config", "set-context", "lab", "-b", "dc=lab2"); out != "context \"lab\": unchanged\n" {
		t.Errorf("set-context said %q", out)
	}
	must(0, "config", "set-context", "prod", "-H", "ldaps://prod")
	must(1, "config", "current-context")
	must(3, "config", "use-context", "nope")
	if out := must(0, "config", "use-context", "lab"); out != "switched to context \"lab\"\n" {
		t.Errorf("use-context said %q", out)
	}
	if out := must(0, "config", "current-context"); out != "lab\n" {
		t.Errorf("current-context = %q", out)
	}
	want := "CURRENT  NAME  URL                         BASE     BIND DN\n" +
		"*        lab   ldap://a:389, ldap://b:389  dc=lab2  cn=admin,dc=lab\n" +
		"         prod  ldaps://prod                -        -\n"
	if out := must(0, "config", "get-contexts"); out != want {
		t.Errorf("get-contexts:\n%s\nwant\n%s", out, want)
	}
	if out := must(0, "config", "get-contexts", "-o", "json"); !strings.Contains(out, `"current": true`) || !strings.Contains(out, `"bind_dn": "cn=admin,dc=lab"`) || !strings.Contains(out, `"timeout": "4s"`) {
		t.Errorf("get-contexts -o json:\n%s", out)
	}
	// What a command then uses.
	g, err := resolved(t, env)
	if err != nil || strings.Join(g.URLs, " ") != "ldap://a:389 ldap://b:389" || g.Base != "dc=lab2" || g.StartTLS || g.Timeout != 4*time.Second {
		t.Errorf("resolved %+v, %v", g, err)
	}
	st, err := os.Stat(filepath.Join(dir, "cpactl", "config.yaml"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", st.Mode().Perm(), err)
	}
	// No password is stored, whatever the flags.
	must(1, "config", "set-context", "lab", "-y", "/dev/null")
	must(1, "config", "set-context", "lab", "-W")
}

// A context describes a server: --from FILE finds the snapshot's own base
// even when the current context names another (CPACTL_BASE and -b still
// apply to snapshots, as before).
func TestContextBaseDoesNotApplyToSnapshots(t *testing.T) {
	env := map[string]string{"CPACTL_CONFIG": contextFile(t, fullContext)}
	code, out, errOut := runEnv(t, env, "site", "list", "--from", "../fixtures/demo.ldif")
	if code != 0 || !strings.Contains(out, "UK") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	env["CPACTL_BASE"] = "dc=elsewhere"
	if code, _, _ := runEnv(t, env, "site", "list", "--from", "../fixtures/demo.ldif"); code != ExitNotFound {
		t.Errorf("CPACTL_BASE on a snapshot: exit %d, want %d", code, ExitNotFound)
	}
}

// set-context writes through a symbolic link to the configuration file (a
// dotfiles repository): the file it leads to is replaced atomically, the
// link stays (docs/config.md).
func TestSetContextKeepsALinkedConfig(t *testing.T) {
	dir := t.TempDir()
	target := contextFile(t, fullContext)
	link := filepath.Join(dir, "config.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CPACTL_CONFIG": link}
	if code, out, errOut := runEnv(t, env, "config", "use-context", "other"); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	b, err := os.ReadFile(target)
	if err != nil || !strings.Contains(string(b), "current-context: other") {
		t.Errorf("the linked file holds %q (%v)", b, err)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the linked file's mode is %v (%v)", fi.Mode(), err)
	}
}
