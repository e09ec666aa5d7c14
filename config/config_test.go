package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPath(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"CPACTL_CONFIG first", map[string]string{"CPACTL_CONFIG": "/etc/c.yaml", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/etc/c.yaml"},
		{"then XDG_CONFIG_HOME", map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/cpactl/config.yaml"},
		{"a relative XDG_CONFIG_HOME is ignored, as the spec says", map[string]string{"XDG_CONFIG_HOME": "x", "HOME": "/h"}, "/h/.config/cpactl/config.yaml"},
		{"then ~/.config", map[string]string{"HOME": "/h"}, "/h/.config/cpactl/config.yaml"},
		{"none", map[string]string{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Path(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("Path = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseAcceptsAContextFile(t *testing.T) {
	f, err := parse("c.yaml", []byte(`current-context: prod
contexts:
- name: prod
  url: [ldap://a:389, ldap://b:389]
  base: dc=example,dc=com
  bind-dn: cn=admin,dc=example,dc=com
  starttls: true
  ca-file: /etc/ca.pem
  timeout: 5s
- name: lab
  url: ldap://lab:389
`))
	if err != nil {
		t.Fatal(err)
	}
	prod, ok := f.Lookup("prod")
	if !ok || len(prod.URL) != 2 || prod.Base != "dc=example,dc=com" || !prod.StartTLS || prod.TimeoutDuration().Seconds() != 5 {
		t.Errorf("prod = %+v", prod)
	}
	if lab, _ := f.Lookup("lab"); len(lab.URL) != 1 || lab.URL[0] != "ldap://lab:389" {
		t.Errorf("lab = %+v (one URL as a string)", lab)
	}
}

// Each way a file is refused: one line naming the file, and the line.
func TestParseRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, file string
		line       int
		want       string
	}{
		{"password", "contexts:\n- name: a\n  password: x\n", 3, `"password": cpactl keeps no password in its config file; remove it and use -y FILE, -W or CPACTL_BIND_PASSWORD`},
		{"bind_password", "contexts:\n- name: a\n  bind_password: x\n", 3, "-y FILE, -W or CPACTL_BIND_PASSWORD"},
		{"bindPassword", "contexts:\n- name: a\n  url: ldap://x\n  bindPassword: x\n", 4, "bindPassword"},
		{"a password at the top", "password: x\n", 1, "keeps no password"},
		{"an unknown key", "contexts:\n- name: a\n  bse: dc=x\n", 3, `unknown key "bse" (a context's keys: name, url, base, bind-dn, starttls, ca-file, timeout)`},
		{"an unknown top key", "current: a\n", 1, `unknown key "current"`},
		{"no name", "contexts:\n- url: ldap://x\n", 1, "a context has no name"},
		{"a name twice", "contexts:\n- name: a\n- name: b\n- name: a\n", 4, `context "a" is given twice`},
		{"a timeout without unit", "contexts:\n- name: a\n  timeout: 5\n", 3, "timeout must be a duration such as 5s"},
		{"a bad timeout", "contexts:\n- name: a\n  timeout: 5s\n- name: b\n  timeout: soon\n", 5, `context "b": timeout "soon" is not a duration`},
		{"a bad type", "contexts:\n- name: a\n  starttls: maybe\n", 3, "starttls must be a bool"},
		{"not YAML", "contexts:\n- name: a\n  url: [x\n", 0, "did not find expected"},
		{"a key twice", "contexts:\n- name: a\n  base: x\n  base: y\n", 4, "base"},
		{"cut at the end (the parser says line 4 of 3)", "contexts:\n- name: a\n  nam>>>>> ", 3, "could not find expected ':'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("/home/me/.config/cpactl/config.yaml", []byte(tt.file))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "config file /home/me/.config/cpactl/config.yaml") || !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("err = %q, want the file named and %q, on one line", msg, tt.want)
			}
			if tt.line != 0 && ce.Line != tt.line {
				t.Errorf("line %d, want %d (%s)", ce.Line, tt.line, msg)
			}
		})
	}
}

func TestPasswordKeys(t *testing.T) {
	for _, k := range []string{"password", "Password", "bind_password", "bindPassword", "bind-password", "BIND_PASSWORD", "passwd", "bindpw", "pw", "secret"} {
		if !IsPasswordKey(k) {
			t.Errorf("%q is not taken for a password", k)
		}
	}
	for _, k := range []string{"bind-dn", "url", "base", "ca-file", "timeout", "name", "starttls"} {
		if IsPasswordKey(k) {
			t.Errorf("%q is taken for a password", k)
		}
	}
}

func TestSaveIsAtomicAndPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cpactl")
	path := filepath.Join(dir, "config.yaml")
	f := &File{CurrentContext: "lab", Contexts: []Context{{Name: "lab", URL: URIs{"ldap://lab:389"}, Timeout: "3s"}}}
	if err := Save(path, f); err != nil {
		t.Fatal(err)
	}
	f.Set(Context{Name: "lab", URL: URIs{"ldap://lab2:389"}})
	f.Set(Context{Name: "prod", Base: "dc=x"})
	if err := Save(path, f); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
	if d, err := os.Stat(dir); err != nil || d.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, %v; want 0700", d.Mode().Perm(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the config file alone (no temporary left)", len(entries))
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if lab, _ := back.Lookup("lab"); back.CurrentContext != "lab" || len(back.Contexts) != 2 || lab.URL[0] != "ldap://lab2:389" || lab.Timeout != "" {
		t.Errorf("read back %+v", back)
	}
}

func TestLoadMissingFileIsEmpty(t *testing.T) {
	f, err := Load(filepath.Join(t.TempDir(), "none.yaml"))
	if err != nil || len(f.Contexts) != 0 {
		t.Errorf("Load = %+v, %v", f, err)
	}
}
