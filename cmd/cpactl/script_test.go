package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cpactl/cpactl/internal/horizontest"
	"github.com/cpactl/cpactl/internal/slapdtest"
)

func TestMain(m *testing.M) {
	// cpactl is main itself, signal handling included.
	testscript.Main(m, map[string]func(){"cpactl": main})
}

// TestScripts runs testdata/script/*.txtar. Each script gets its own slapd
// (project schema, the generated ACLs, the base entry and the harness's
// role groups and accounts, no federation) and these variables:
//
//	CPACTL_URL, CPACTL_BASE, CPACTL_BIND_DN, CPACTL_BIND_PASSWORD  the admin account's connection
//	LDAPI                                                        the ldapi:// URL
//	ADMINDN, ADMINPW                                             the admin account, for ldapsearch/ldapadd
//	OPERATORDN, OPERATORPW, HELPDESKDN, HELPDESKPW               the operator and help desk accounts
//	NOROLEDN, NOROLEPW                                           an account with no role
//	ROOTDN, ROOTPW                                               the root DN, only for what only it can do
//	FIXTURES                                                     the repository's fixtures/
//
// A script whose name contains "bare" gets an empty database (no base, no
// accounts: slapdtest.Config.Bare), where only the root DN can write: its
// CPACTL_BIND_DN is the root DN's.
// A script whose name contains "horizon" also gets the test Horizon
// federation of seed-000 (internal/horizontest), with HORIZON_URL (the
// Connection Server of india-pod-1), HORIZON_URL_<pod> for each pod (dashes
// as underscores: HORIZON_URL_uk_pod_1), HORIZON_CA_FILE and
// HORIZON_PASSWORD, and the commands horizonfault and nosecret.
// A script whose name contains "history" gets the history's log (the
// accesslog overlay: slapdtest.Config.AccessLog).
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
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"stripwhatif":   stripWhatIf,
			"horizonfault":  horizonFault,
			"horizonwrites": horizonWrites,
			"nosecret":      noSecret,
			"loadldif":      loadLDIF,
			"wipe":          wipe,
		},
		Setup: func(env *testscript.Env) error {
			name := filepath.Base(env.WorkDir)
			cfg := slapdtest.Config{}
			if strings.Contains(name, "noschema") {
				empty := ""
				cfg.Schema = &empty
			}
			cfg.TLS = strings.Contains(name, "tls")
			cfg.Bare = strings.Contains(name, "bare")
			cfg.AccessLog = strings.Contains(name, "history")
			s, err := slapdtest.New(cfg)
			if err != nil {
				return err
			}
			env.Defer(func() { _ = s.Stop() })
			env.Values["slapd"] = s
			envs := s.Env()
			if cfg.Bare {
				envs = s.RootEnv() // no account exists: only the root DN can write
			}
			for _, kv := range envs {
				k, v, _ := strings.Cut(kv, "=")
				env.Setenv(k, v)
			}
			env.Setenv("LDAPI", s.LDAPIURL)
			for _, w := range []slapdtest.Who{slapdtest.Admin, slapdtest.Operator, slapdtest.Helpdesk, slapdtest.NoRole} {
				up := strings.ToUpper(string(w))
				env.Setenv(up+"DN", s.Account(w).DN)
				env.Setenv(up+"PW", s.Account(w).Password)
			}
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
			if strings.Contains(name, "horizon") {
				return startHorizon(env)
			}
			return nil
		},
	})
}

// loadLDIF adds the entries of LDIF files as the admin account, as
// ldapadd would, leaving out the base entry the server has already:
//
//	loadldif FILE...
func loadLDIF(ts *testscript.TestScript, neg bool, args []string) {
	s, ok := ts.Value("slapd").(*slapdtest.Server)
	if neg || !ok || len(args) == 0 {
		ts.Fatalf("usage: loadldif FILE...")
	}
	for _, name := range args {
		ts.Check(s.LoadAs(s.Account(slapdtest.Admin), ts.ReadFile(name)))
	}
}

// wipe empties the federation as the admin account: every entry under the
// base but the base and ou=Roles (slapdtest.Server.Wipe).
func wipe(ts *testscript.TestScript, neg bool, args []string) {
	s, ok := ts.Value("slapd").(*slapdtest.Server)
	if neg || !ok || len(args) != 0 {
		ts.Fatalf("usage: wipe")
	}
	ts.Check(s.Wipe(s.Account(slapdtest.Admin)))
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

// startHorizon starts the test Horizon federation for a script.
func startHorizon(env *testscript.Env) error {
	f, err := horizontest.New("seed-000", env.WorkDir)
	if err != nil {
		return err
	}
	env.Defer(f.Close)
	env.Values["horizon"] = f
	env.Values["horizon-writes-seen"] = new(int)
	env.Setenv("HORIZON_URL", f.URL("india-pod-1"))
	for _, p := range f.Pods() {
		env.Setenv("HORIZON_URL_"+strings.ReplaceAll(p, "-", "_"), f.URL(p))
	}
	env.Setenv("HORIZON_CA_FILE", f.CAFile)
	env.Setenv("HORIZON_PASSWORD", horizontest.Password)
	return nil
}

// horizonFault injects a fault into the script's test Horizon:
//
//	horizonfault stop POD          the pod's server stops answering
//	horizonfault older             no /federation/v3/sites (a server before 2512)
//	horizonfault throttle N        the next N requests answer 429 (retry after 0 s)
//	horizonfault expire N          access tokens expire after N reads
//	horizonfault refuse-login      logins answer 401
//	horizonfault sessions POD N    N more sessions in POD
//	horizonfault drop applied|not-applied [down]
//	                               the next write's answer is lost, after the
//	                               server applied it or before (then, with
//	                               down, every request is dropped)
//	horizonfault change PATH FIELD=JSON
//	                               the object at PATH changes on its second
//	                               read (between push's plan and its write)
//	horizonfault throttle-writes N the next N writes answer 429
//	horizonfault lag N             after a write, N reads still answer as before
//	horizonfault none              no fault
func horizonFault(ts *testscript.TestScript, neg bool, args []string) {
	f, ok := ts.Value("horizon").(*horizontest.Federation)
	if neg || !ok || len(args) == 0 {
		ts.Fatalf("usage: horizonfault stop POD|older|throttle N|expire N|refuse-login|sessions POD N|none (in a horizon script)")
	}
	num := func(s string) int {
		n, err := strconv.Atoi(s)
		ts.Check(err)
		return n
	}
	switch {
	case args[0] == "stop" && len(args) == 2:
		f.Stop(args[1])
	case args[0] == "older":
		f.SetFaults(horizontest.Faults{NoV3Sites: true})
	case args[0] == "throttle" && len(args) == 2:
		f.SetFaults(horizontest.Faults{Throttle: num(args[1]), RetryAfter: "0"})
	case args[0] == "expire" && len(args) == 2:
		f.SetFaults(horizontest.Faults{ExpireAfter: num(args[1])})
	case args[0] == "refuse-login":
		f.SetFaults(horizontest.Faults{LoginRefused: true})
	case args[0] == "sessions" && len(args) == 3:
		f.AddSessions(args[1], num(args[2]))
	case args[0] == "drop" && (len(args) == 2 || len(args) == 3 && args[2] == "down"):
		f.SetFaults(horizontest.Faults{DropWrite: args[1], DropThenDown: len(args) == 3})
	case args[0] == "change" && len(args) == 3:
		field, value, ok := strings.Cut(args[2], "=")
		var v any
		if !ok || json.Unmarshal([]byte(value), &v) != nil {
			ts.Fatalf("horizonfault change PATH FIELD=JSON")
		}
		f.SetFaults(horizontest.Faults{ChangeOn: &horizontest.ChangeOn{Path: args[1], After: 1, Set: map[string]any{field: v}}})
	case args[0] == "throttle-writes" && len(args) == 2:
		f.SetFaults(horizontest.Faults{ThrottleWrites: num(args[1])})
	case args[0] == "lag" && len(args) == 2:
		f.SetFaults(horizontest.Faults{ReadLag: num(args[1])})
	case args[0] == "none":
		f.SetFaults(horizontest.Faults{})
	default:
		ts.Fatalf("horizonfault: unknown fault %q", args)
	}
}

// horizonWrites prints the writes the script's test Horizon received since
// the last horizonwrites, one a line: METHOD PATH STATUS BODY (the body
// as sent); it fails when a body failed the swagger's schema check.
func horizonWrites(ts *testscript.TestScript, neg bool, args []string) {
	f, ok := ts.Value("horizon").(*horizontest.Federation)
	if neg || !ok || len(args) != 0 {
		ts.Fatalf("usage: horizonwrites (in a horizon script)")
	}
	if inv := f.Invalid(); len(inv) > 0 {
		ts.Fatalf("bodies that fail the swagger: %q", inv)
	}
	seen, _ := ts.Value("horizon-writes-seen").(*int)
	all := f.Writes()
	out := ts.Stdout() // also when there is nothing to print: stdout is then empty
	for _, w := range all[*seen:] {
		fmt.Fprintf(out, "%s %s %d %s\n", w.Method, w.Path, w.Status, w.Body)
	}
	*seen = len(all)
}

// noSecret fails when the test Horizon's password, or a token, is in any
// file under the directories named (or in the files named).
func noSecret(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: nosecret PATH...")
	}
	secrets := [][]byte{[]byte(horizontest.Password), []byte("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9")}
	files := 0
	for _, a := range args {
		err := filepath.WalkDir(ts.MkAbs(a), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			for _, s := range secrets {
				if bytes.Contains(b, s) {
					ts.Fatalf("%s holds a secret", path)
				}
			}
			return nil
		})
		ts.Check(err)
	}
	if files == 0 {
		ts.Fatalf("nosecret: no file under %v", args)
	}
}
