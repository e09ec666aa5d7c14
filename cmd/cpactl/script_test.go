package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cpactl/cpactl/internal/slapdtest"
)

func TestMain(m *testing.M) {
	// cpactl is main itself, signal handling included.
	testscript.Main(m, map[string]func(){"cpactl": main})
}

// TestScripts runs testdata/script/*.txtar. Each script gets its own slapd
// (project schema, empty database) and these variables:
//
//	CPACTL_URL, CPACTL_BASE, CPACTL_BIND_DN, CPACTL_BIND_PASSWORD  the root DN's connection
//	LDAPI                                                        the ldapi:// URL
//	ROOTDN, ROOTPW                                               for ldapsearch/ldapadd
//	FIXTURES                                                     the repository's fixtures/
//
// A script whose name contains "noschema" gets a slapd without cpactl's
// schema; one whose name contains "tls" gets ldaps and StartTLS, with
// LDAPS_URL, CA_FILE and OTHER_CA_FILE.
func TestScripts(t *testing.T) {
	if err := slapdtest.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and slapd is missing: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	fixtures, err := filepath.Abs("../../fixtures")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: false,
		Cmds:                map[string]func(ts *testscript.TestScript, neg bool, args []string){"stripwhatif": stripWhatIf},
		Setup: func(env *testscript.Env) error {
			name := filepath.Base(env.WorkDir)
			cfg := slapdtest.Config{}
			if strings.Contains(name, "noschema") {
				empty := ""
				cfg.Schema = &empty
			}
			cfg.TLS = strings.Contains(name, "tls")
			s, err := slapdtest.New(cfg)
			if err != nil {
				return err
			}
			env.Defer(func() { _ = s.Stop() })
			for _, kv := range s.Env() {
				k, v, _ := strings.Cut(kv, "=")
				env.Setenv(k, v)
			}
			env.Setenv("LDAPI", s.LDAPIURL)
			env.Setenv("ROOTDN", s.RootDN)
			env.Setenv("ROOTPW", slapdtest.RootPassword)
			env.Setenv("FIXTURES", fixtures)
			if cfg.TLS {
				env.Setenv("LDAPS_URL", s.LDAPSURL)
				env.Setenv("CA_FILE", s.CAFile)
				env.Setenv("OTHER_CA_FILE", s.OtherCAFile)
			}
			// Keep ldap-utils from reading the machine's ldap.conf.
			env.Setenv("LDAPNOINIT", "1")
			return nil
		},
	})
}

// stripWhatIf rewrites each JSON file named (a resolve decision) without
// what names the what-ifs in force: the what_if list and the trace steps
// of step what_if. What remains is the answer, to compare with the answer
// of the same change made for real.
func stripWhatIf(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: stripwhatif FILE...")
	}
	for _, name := range args {
		var d map[string]any
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(name)), &d))
		delete(d, "what_if")
		if trace, ok := d["trace"].([]any); ok {
			kept := []any{}
			for _, step := range trace {
				if m, ok := step.(map[string]any); !ok || m["step"] != "what_if" {
					kept = append(kept, step)
				}
			}
			d["trace"] = kept
		}
		b, err := json.MarshalIndent(d, "", "  ")
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(name), append(b, '\n'), 0o644))
	}
}
