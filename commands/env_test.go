package commands

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// runEnv runs a command with a fake environment.
func runEnv(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	g := &Globals{IO: IOStreams{In: strings.NewReader(""), Out: &out, Err: &errOut},
		Getenv: func(k string) string { return env[k] }, Interactive: func() bool { return false }}
	root := NewRootCommand(g)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.Execute()
	if err != nil {
		errOut.WriteString(oneLine(err))
	}
	return ExitCode(err), out.String(), errOut.String()
}

func TestEnvironmentFallbacks(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{})
	other := "dc=other,dc=example"
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"LDAP* variables are the fallback",
			map[string]string{"LDAPURI": s.URL, "LDAPBINDDN": s.AdminDN(), "CPACTL_BIND_PASSWORD": slapdtest.AdminPassword},
			[]string{"init"}, 0, ""},
		{"CPACTL_URL wins over LDAPURI",
			map[string]string{"CPACTL_URL": s.URL, "LDAPURI": "ldap://127.0.0.1:1", "CPACTL_BIND_DN": s.AdminDN(), "CPACTL_BIND_PASSWORD": slapdtest.AdminPassword},
			[]string{"init"}, 0, ""},
		{"the -H flag wins over CPACTL_URL",
			map[string]string{"CPACTL_URL": "ldap://127.0.0.1:1", "CPACTL_BIND_DN": s.AdminDN(), "CPACTL_BIND_PASSWORD": slapdtest.AdminPassword},
			[]string{"init", "-H", s.URL}, 0, ""},
		{"CPACTL_BIND_DN wins over LDAPBINDDN",
			map[string]string{"CPACTL_URL": s.URL, "CPACTL_BIND_DN": s.AdminDN(), "LDAPBINDDN": "cn=nobody," + ldapschema.DefaultBase, "CPACTL_BIND_PASSWORD": slapdtest.AdminPassword},
			[]string{"init"}, 0, ""},
		{"CPACTL_BASE wins over LDAPBASE",
			map[string]string{"CPACTL_URL": s.URL, "CPACTL_BIND_DN": s.AdminDN(), "CPACTL_BIND_PASSWORD": slapdtest.AdminPassword, "CPACTL_BASE": other, "LDAPBASE": ldapschema.DefaultBase},
			[]string{"init"}, ExitNotFound, "the base " + other + " is outside every naming context"},
		{"a bind DN without a password names the ways to give one",
			map[string]string{"CPACTL_URL": s.URL, "CPACTL_BIND_DN": s.AdminDN()},
			[]string{"init"}, 1, "use -W, -y FILE or CPACTL_BIND_PASSWORD"},
		{"no server at all",
			map[string]string{},
			[]string{"init"}, 1, "no server given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runEnv(t, tt.env, tt.args...)
			if code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tt.wantCode, tt.wantErr)
			}
		})
	}
}
