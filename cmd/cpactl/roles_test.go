package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/commands"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// The role x command matrix (docs/access.md): every command of cpactl's
// tree, run in this process as each identity against the demo federation
// on slapd with the generated ACLs. The expected cell of each command is
// in ldapschema.CommandRoles, next to the role definitions; here is only
// how to run it.

// matrixRun is one invocation of the matrix: a row of
// ldapschema.CommandRoles (command and case) and its arguments. ok are
// the exit codes of a run that is allowed (default 0).
type matrixRun struct {
	command, caseName string
	args              []string
	ok                []int
	config            bool // runs with a config file of its own
}

// matrixRuns are run in this order, each identity on a server of its own
// (an allowed write changes what the next command sees): updates and
// deletes name objects of the demo federation or of matrixSetup, so that
// a refused identity meets slapd's refusal, not a missing object.
func matrixRuns(dir, base string) []matrixRun {
	r := func(command, caseName string, args ...string) matrixRun {
		return matrixRun{command: command, caseName: caseName, args: args}
	}
	codes := func(m matrixRun, ok ...int) matrixRun { m.ok = ok; return m }
	config := func(m matrixRun) matrixRun { m.config = true; return m }
	desired, pruned := filepath.Join(dir, "desired.ldif"), filepath.Join(dir, "pruned.ldif")
	// The run history undo takes back: the setup's description of
	// MX-undo (writeMatrixFiles), first, before anything changes it again.
	undoRun, _ := os.ReadFile(filepath.Join(dir, "undo-run"))
	return []matrixRun{
		r("history undo", "", "history", "undo", string(undoRun), "--yes"),
		r("init", "", "-b", "dc=matrix,"+base, "init"),
		r("init", "--roles", "-b", "dc=matrix2,"+base, "init", "--roles"),
		r("schema print", "", "schema", "print", "--format", "acl"),
		r("schema install", "", "schema", "install"),
		r("schema check", "", "schema", "check"),
		r("settings show", "", "settings", "show"),
		r("settings set", "", "settings", "set", "pae-LoadThresholdForSite=90"),
		r("settings reset", "", "settings", "reset", "pae-LoadThresholdForSite"),
		r("site list", "", "site", "list"),
		r("site show", "", "site", "show", "UK"),
		r("site create", "", "site", "create", "MX-new"),
		r("site update", "", "site", "update", "UK", "--description", "matrix"),
		r("site delete", "", "site", "delete", "MX-site", "--yes"),
		r("site preferred", "--set", "site", "preferred", "India", "--set", "US,UK"),
		r("site preferred", "--show", "site", "preferred", "India", "--show"),
		r("site graph", "", "site", "graph"),
		r("pod list", "", "pod", "list"),
		r("pod show", "", "pod", "show", "London-1"),
		r("pod create", "", "pod", "create", "MX-pod2", "--site", "UK"),
		r("pod update", "", "pod", "update", "London-1", "--description", "matrix"),
		r("pod delete", "", "pod", "delete", "MX-pod", "--yes"),
		r("cs list", "", "cs", "list"),
		r("cs show", "", "cs", "show", "cs-lon-1"),
		r("cs create", "", "cs", "create", "MX-cs2", "--pod", "London-1"),
		r("cs update", "", "cs", "update", "cs-lon-1", "--description", "matrix"),
		r("cs delete", "", "cs", "delete", "MX-cs", "--yes"),
		r("pool list", "", "pool", "list"),
		r("pool show", "", "pool", "show", "lon-desktops"),
		r("pool create", "", "pool", "create", "MX-pool2", "--pod", "London-1", "--kind", "desktop", "--floating", "--capacity", "5"),
		r("pool update", "--sessions/--assigned", "pool", "update", "lon-desktops", "--sessions", "3"),
		r("pool update", "--capacity", "pool", "update", "lon-desktops", "--capacity", "77"),
		r("pool delete", "", "pool", "delete", "MX-pool", "--yes"),
		r("farm list", "", "farm", "list"),
		r("farm show", "", "farm", "show", "lon-farm"),
		r("farm create", "", "farm", "create", "MX-farm2", "--pod", "London-1"),
		r("farm update", "", "farm", "update", "lon-farm", "--description", "matrix"),
		r("farm delete", "", "farm", "delete", "MX-farm", "--yes"),
		r("host list", "", "host", "list"),
		r("host show", "", "host", "show", "rds-lon-01"),
		r("host create", "", "host", "create", "MX-host2", "--farm", "lon-farm"),
		r("host update", "", "host", "update", "rds-lon-01", "--description", "matrix"),
		r("host set-load", "", "host", "set-load", "rds-lon-01", "--load-index", "40", "--sessions", "4"),
		r("host delete", "", "host", "delete", "MX-host", "--yes"),
		r("entitlement list", "", "entitlement", "list"),
		r("entitlement show", "", "entitlement", "show", "Desktops"),
		r("entitlement create", "", "entitlement", "create", "MX-ent2", "--type", "desktop", "--floating"),
		r("entitlement update", "", "entitlement", "update", "Desktops", "--description", "matrix"),
		r("entitlement members", "", "entitlement", "members", "Desktops"),
		r("entitlement add-member", "", "entitlement", "add-member", "Kiosk Desktop", "--user", "bob"),
		r("entitlement remove-member", "", "entitlement", "remove-member", "MX-ent", "--user", "mxuser"),
		r("entitlement add-pool", "", "entitlement", "add-pool", "MX-ent", "MX-pool3"),
		r("entitlement remove-pool", "", "entitlement", "remove-pool", "MX-ent", "MX-pool4"),
		r("entitlement delete", "", "entitlement", "delete", "MX-del", "--yes"),
		r("homesite set", "", "homesite", "set", "--user", "bob", "--site", "UK"),
		r("homesite unset", "", "homesite", "unset", "--user", "alice"),
		r("homesite list", "", "homesite", "list"),
		r("homesite resolve", "", "homesite", "resolve", "--user", "bob"),
		r("user list", "", "user", "list"),
		r("user show", "", "user", "show", "alice"),
		r("user create", "", "user", "create", "mxuser2"),
		r("user update", "", "user", "update", "alice", "--name", "Alice Matrix"),
		r("user delete", "", "user", "delete", "mxdel", "--yes"),
		r("user entitlements", "", "user", "entitlements", "alice"),
		r("group list", "", "group", "list"),
		r("group show", "", "group", "show", "Engineering"),
		r("group create", "", "group", "create", "MX-group2"),
		r("group add-member", "", "group", "add-member", "Empty", "user:bob"),
		r("group remove-member", "", "group", "remove-member", "Engineering", "group:Contractors"),
		r("group delete", "", "group", "delete", "MX-group", "--yes"),
		r("computer list", "", "computer", "list"),
		r("computer show", "", "computer", "show", "KIOSK-01"),
		r("computer create", "", "computer", "create", "MX-PC2"),
		r("computer delete", "", "computer", "delete", "MX-PC", "--yes"),
		r("session list", "", "session", "list"),
		r("session show", "", "session", "show", "demo-carol-kiosk"),
		r("session record", "", "session", "record", "--user", "bob", "--entitlement", "Desktops", "--pod", "London-1",
			"--pool", "lon-desktops", "--brokering-pod", "London-1", "--id", "mx-recorded"),
		r("session end", "", "session", "end", "mx-session"),
		r("assignment list", "", "assignment", "list"),
		r("assignment set", "", "assignment", "set", "--user", "carol", "--entitlement", "Engineering Workstations",
			"--pod", "London-1", "--machine", "ENG-LON-017"),
		r("assignment delete", "", "assignment", "delete", "--user", "bob", "--entitlement", "Engineering Workstations", "--yes"),
		codes(r("resolve", "", "resolve", "--user", "alice", "--entitlement", "Desktops", "--connection-server", "cs-blr-1"), 0, 6),
		r("loads", "", "loads", "--entitlement", "Desktops"),
		codes(r("impact", "", "impact", "--offline-pod", "London-1"), 0, 2),
		codes(r("simulate storm", "", "simulate", "storm", "--farm", "lon-farm", "--requests", "10"), 0, 2),
		codes(r("lint", "", "lint"), 0, 2),
		r("history", "", "history", "--since", "1h"),
		r("export", "", "export"),
		codes(r("diff", "", "diff", desired), 0, 2),
		r("apply", "(a session's state)", "apply", desired),
		r("apply", "--prune", "apply", pruned, "--prune", "--yes"),
		r("generate", "", "generate", "--seed", "1", "-O", filepath.Join(dir, "generated.ldif")),
		codes(r("horizon pull", "", "horizon", "pull"), 1),
		r("horizon import", "", "horizon", "import", filepath.Join(dir, "pull"), "-O", filepath.Join(dir, "imported.ldif")),
		codes(r("horizon sync", "", append([]string{"horizon", "sync"}, unreachableHorizon(dir)...)...), 1),
		codes(r("horizon push", "", append([]string{"horizon", "push"}, unreachableHorizon(dir)...)...), 1),
		config(r("config set-context", "", "config", "set-context", "mx", "-H", "ldap://127.0.0.1:1")),
		config(r("config use-context", "", "config", "use-context", "mx")),
		config(r("config current-context", "", "config", "current-context")),
		config(r("config get-contexts", "", "config", "get-contexts")),
		r("docs man", "", "docs", "man", filepath.Join(dir, "man")),
		r("docs markdown", "", "docs", "markdown", filepath.Join(dir, "md")),
		r("completion bash", "", "completion", "bash"),
		r("completion fish", "", "completion", "fish"),
		r("completion powershell", "", "completion", "powershell"),
		r("completion zsh", "", "completion", "zsh"),
		r("version", "", "version"),
		r("status", "", "status"),
		r("whoami", "", "whoami"),
		r("role list", "", "role", "list"),
		r("role show", "", "role", "show", "admin"),
		r("role add-member", "", "role", "add-member", "operator", slapdtest.NoRole.DN(base)),
		r("role remove-member", "", "role", "remove-member", "helpdesk", slapdtest.Helpdesk.DN(base)),
	}
}

// matrixSetup adds, as the admin, the objects the matrix deletes and
// changes besides the demo federation's.
var matrixSetup = [][]string{
	{"settings", "set", "pae-LoadThresholdForSite=95"},
	{"site", "create", "MX-undo"},
	{"site", "update", "MX-undo", "--description", "undo-me"},
	{"site", "create", "MX-site"},
	{"site", "create", "MX-prune"},
	{"pod", "create", "MX-pod", "--site", "UK"},
	{"cs", "create", "MX-cs", "--pod", "London-1"},
	{"pool", "create", "MX-pool", "--pod", "London-1", "--kind", "desktop", "--floating", "--capacity", "5"},
	{"pool", "create", "MX-pool3", "--pod", "London-1", "--kind", "desktop", "--floating", "--capacity", "5"},
	{"pool", "create", "MX-pool4", "--pod", "London-1", "--kind", "desktop", "--floating", "--capacity", "5"},
	{"farm", "create", "MX-farm", "--pod", "London-1"},
	{"host", "create", "MX-host", "--farm", "lon-farm"},
	{"user", "create", "mxuser"},
	{"user", "create", "mxdel"},
	{"entitlement", "create", "MX-ent", "--type", "desktop", "--floating"},
	{"entitlement", "add-pool", "MX-ent", "MX-pool4"},
	{"entitlement", "add-member", "MX-ent", "--user", "mxuser"},
	{"entitlement", "create", "MX-del", "--type", "desktop", "--floating"},
	{"group", "create", "MX-group"},
	{"computer", "create", "MX-PC"},
	{"session", "record", "--user", "bob", "--entitlement", "Desktops", "--pod", "London-1", "--pool", "lon-desktops",
		"--brokering-pod", "London-1", "--id", "mx-session"},
}

// identity is one column of the matrix.
type identity struct {
	name string
	who  slapdtest.Who // "" for anonymous
	role ldapschema.Role
}

var matrixIdentities = []identity{
	{"admin", slapdtest.Admin, ldapschema.RoleAdmin},
	{"operator", slapdtest.Operator, ldapschema.RoleOperator},
	{"helpdesk", slapdtest.Helpdesk, ldapschema.RoleHelpdesk},
	{"no role", slapdtest.NoRole, ""},
	{"anonymous", "", ""},
}

// leafCommands walks the cobra tree: every command a user can run (not a
// noun that only holds verbs, not a help topic, not a hidden one).
func leafCommands() []string {
	var out []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		// A group of verbs (site) is no command of its own; one that runs
		// with flags of its own and has verbs too (history) is.
		group := c.HasSubCommands() && !c.LocalNonPersistentFlags().HasAvailableFlags()
		if c.Hidden || !c.Runnable() || group || c.Name() == "help" {
			return
		}
		out = append(out, strings.TrimPrefix(c.CommandPath(), "cpactl "))
	}
	root := commands.NewRootCommand(&commands.Globals{})
	root.InitDefaultCompletionCmd() // what Execute adds: cpactl completion SHELL
	walk(root)
	sort.Strings(out)
	return out
}

// TestRoleTableCoversTheTree: every command of the tree has a cell in
// ldapschema.CommandRoles and a run in the matrix, and every cell names a
// command of the tree: a new command cannot be missed.
func TestRoleTableCoversTheTree(t *testing.T) {
	tree := leafCommands()
	inTable := map[string]bool{}
	for _, c := range ldapschema.CommandRoles {
		inTable[c.Command] = true
		if !slices.Contains(tree, c.Command) {
			t.Errorf("ldapschema.CommandRoles names %q, which is not a command of the tree", c.Command)
		}
	}
	for _, c := range tree {
		if !inTable[c] {
			t.Errorf("command %q has no cell in ldapschema.CommandRoles: add what it needs (and its run in matrixRuns)", c)
		}
	}
	runs := map[string]bool{}
	for _, r := range matrixRuns(t.TempDir(), ldapschema.DefaultBase) {
		runs[r.command+"|"+r.caseName] = true
		if _, ok := cell(r); !ok {
			t.Errorf("the matrix runs %q (%s), which has no cell in ldapschema.CommandRoles", r.command, r.caseName)
		}
	}
	for _, c := range ldapschema.CommandRoles {
		if !runs[c.Command+"|"+c.Case] {
			t.Errorf("the cell %q (%s) has no run in matrixRuns", c.Command, c.Case)
		}
	}
}

func cell(r matrixRun) (ldapschema.CommandAccess, bool) {
	for _, c := range ldapschema.CommandRoles {
		if c.Command == r.command && c.Case == r.caseName {
			return c, true
		}
	}
	return ldapschema.CommandAccess{}, false
}

// allowed reports whether id may run what cell needs.
func allowed(id identity, c ldapschema.CommandAccess) bool {
	switch c.Needs {
	case ldapschema.Anyone:
		return true
	case ldapschema.AnyAccount:
		return id.who != ""
	}
	return c.Allowed(id.role)
}

// TestRoleMatrix: every command as admin, operator, helpdesk, a bound
// account with no role and anonymous, each against a server of its own
// with the demo federation. An allowed command succeeds; a refused one
// exits 4 with one line naming the identity and the role it needs, and
// the directory (every entry, value and entryCSN) is as it was. Commands
// every identity may run exit the same for all.
func TestRoleMatrix(t *testing.T) {
	demo, err := os.ReadFile("../../fixtures/demo.ldif")
	if err != nil {
		t.Fatal(err)
	}
	runs := matrixRuns("", ldapschema.DefaultBase)
	anyone := make([][]int, len(runs)) // exit codes of the Anyone cells, by identity
	for _, id := range matrixIdentities {
		t.Run(id.name, func(t *testing.T) {
			srv := slapdtest.Start(t, slapdtest.Config{LDIF: string(demo), Threads: 2, AccessLog: true})
			admin := map[string]string{"CPACTL_URL": srv.URL, "CPACTL_BASE": srv.Base,
				"CPACTL_BIND_DN": srv.AdminDN(), "CPACTL_BIND_PASSWORD": slapdtest.AdminPassword}
			for _, args := range matrixSetup {
				if code, _, errOut := cpactlMain(args, admin); code != 0 {
					t.Fatalf("setup %v: exit %d: %s", args, code, errOut)
				}
			}
			dir := t.TempDir()
			writeMatrixFiles(t, srv, admin, dir)
			env := map[string]string{"CPACTL_URL": srv.URL, "CPACTL_BASE": srv.Base}
			if id.who != "" {
				env["CPACTL_BIND_DN"] = srv.Account(id.who).DN
				env["CPACTL_BIND_PASSWORD"] = srv.Account(id.who).Password
			}
			refusedCells := 0
			defer func() {
				// The matrix tests something: the admin is refused
				// nothing, everyone else something.
				if (id.role == ldapschema.RoleAdmin) != (refusedCells == 0) {
					t.Errorf("%s was refused %d commands", id.name, refusedCells)
				}
				t.Logf("%s: %d commands refused", id.name, refusedCells)
			}()
			for i, r := range matrixRuns(dir, srv.Base) {
				c, _ := cell(r)
				runEnv := env
				if r.config {
					runEnv = map[string]string{"CPACTL_CONFIG": filepath.Join(dir, "config.yaml")}
					for k, v := range env {
						runEnv[k] = v
					}
				}
				name := strings.TrimSpace(r.command + " " + r.caseName)
				ok := allowed(id, c)
				var before string
				if !ok {
					before = dump(t, srv)
				}
				code, _, errOut := cpactlMain(r.args, runEnv)
				switch {
				case c.Needs == ldapschema.Anyone:
					anyone[i] = append(anyone[i], code)
					if code == commands.ExitAuth {
						t.Errorf("%s (anyone may): exit 4: %s", name, errOut)
					}
				case ok:
					want := r.ok
					if want == nil {
						want = []int{0}
					}
					if !slices.Contains(want, code) {
						t.Errorf("%s (needs %s): exit %d, want %v: %s", name, c.Needs, code, want, errOut)
					}
				default:
					refusedCells++
					line, _, _ := strings.Cut(errOut, "\n")
					who := "anonymous"
					if id.who != "" {
						who = srv.Account(id.who).DN
					}
					wantRole := c.Needs
					if wantRole == ldapschema.AnyAccount {
						wantRole = ldapschema.RoleToRead // what an anonymous read lacks
					}
					if code != commands.ExitAuth || !strings.Contains(line, " "+who+" ") ||
						!strings.Contains(line, " may not ") || !strings.Contains(line, "that needs the ") {
						t.Errorf("%s (needs %s): exit %d, want 4 with one line naming %s and the role: %s", name, c.Needs, code, who, errOut)
					}
					if c.Needs != ldapschema.AnyAccount && !strings.Contains(line, "that needs the "+string(wantRole)+" role") &&
						!strings.Contains(line, "that needs the "+string(ldapschema.RoleToRead)+" role") {
						t.Errorf("%s (needs %s): the refusal names another role: %s", name, c.Needs, line)
					}
					if after := dump(t, srv); after != before {
						t.Errorf("%s (needs %s): refused, but the directory changed", name, c.Needs)
					}
				}
			}
		})
	}
	for i, r := range runs {
		if c, _ := cell(r); c.Needs == ldapschema.Anyone && len(anyone[i]) == len(matrixIdentities) {
			for _, code := range anyone[i][1:] {
				if code != anyone[i][0] {
					t.Errorf("%s (anyone may): exit codes by identity %v, want the same for all", r.command, anyone[i])
					break
				}
			}
		}
	}
}

// writeMatrixFiles writes the files diff and apply read: the federation
// as the admin exports it with one session's state changed (what an
// operator may apply), and the same without the site MX-prune (pruning
// it needs the admin role).
// unreachableHorizon are the flags of a Horizon that does not answer:
// sync and push read the directory first (refused there, exit 4), then
// fail to reach it (exit 1).
func unreachableHorizon(dir string) []string {
	return []string{"--url", "https://127.0.0.1:1", "--domain", "CORP", "--user", "hzadmin", "-y", filepath.Join(dir, "horizon-password")}
}

func writeMatrixFiles(t *testing.T, srv *slapdtest.Server, admin map[string]string, dir string) {
	t.Helper()
	// A pull directory for horizon import, and the REST account's password
	// for sync and push.
	if code, _, errOut := cpactlMain([]string{"generate", "--seed", "1", "--format", "horizon", "-O", filepath.Join(dir, "pull")}, admin); code != 0 {
		t.Fatalf("generate --format horizon: %d %s", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "horizon-password"), []byte("hz-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The run ID of the setup's description of MX-undo, for history undo.
	code, out, errOut := cpactlMain([]string{"history", "--object", "site/MX-undo", "-o", "json"}, admin)
	var runs []struct{ Run, Command string }
	if err := json.Unmarshal([]byte(out), &runs); code != 0 || err != nil || len(runs) == 0 || !strings.Contains(runs[0].Command, "undo-me") {
		t.Fatalf("history of MX-undo: %d %v %s %s", code, err, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "undo-run"), []byte(runs[0].Run), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cpactlMain([]string{"export"}, admin)
	if code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	records := strings.Split(out, "\n\n")
	var desired, pruned []string
	changed := false
	for _, rec := range records {
		if strings.HasPrefix(rec, "dn: cn=demo-carol-kiosk,") {
			// One session's state: a write the operator role may make.
			next := strings.Replace(rec, "pae-SessionState: CONNECTED", "pae-SessionState: DISCONNECTED", 1)
			if next == rec {
				next = strings.Replace(rec, "pae-SessionState: DISCONNECTED", "pae-SessionState: CONNECTED", 1)
			}
			changed = next != rec
			rec = next
		}
		desired = append(desired, rec)
		if !strings.HasPrefix(rec, "dn: cn=MX-prune,") {
			pruned = append(pruned, rec)
		}
	}
	if !changed {
		t.Fatal("the demo session demo-carol-kiosk has no pae-SessionState to change")
	}
	for name, recs := range map[string][]string{"desired.ldif": desired, "pruned.ldif": pruned} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(recs, "\n\n")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// dump reads every entry under the base as the root DN (which reads
// everything, passwords included), with its entryCSN: one line per value,
// sorted.
func dump(t *testing.T, srv *slapdtest.Server) string {
	t.Helper()
	c, err := srv.DialRoot()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.SearchWithPaging(ldap.NewSearchRequest(srv.Base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", []string{"*", "entryCSN"}, nil), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range res.Entries {
		for _, a := range e.Attributes {
			for _, v := range a.Values {
				lines = append(lines, fmt.Sprintf("%s|%s|%s", strings.ToLower(e.DN), strings.ToLower(a.Name), v))
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestAnonymousReadsNothing: an anonymous search of the whole base (what
// `ldapsearch -x -b BASE` sends) returns no entry; the root DSE and the
// subschema stay readable.
func TestAnonymousReadsNothing(t *testing.T) {
	demo, err := os.ReadFile("../../fixtures/demo.ldif")
	if err != nil {
		t.Fatal(err)
	}
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: string(demo)})
	c, err := ldap.DialURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Search(ldap.NewSearchRequest(srv.Base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", nil, nil))
	if n := entries(res); n != 0 || !ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		t.Errorf("anonymous search of the base: %d entries, %v; want none and no such object", n, err)
	}
	for _, dn := range []string{"", "cn=Subschema"} {
		res, err := c.Search(ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false,
			"(objectClass=*)", []string{"+"}, nil))
		if err != nil || entries(res) != 1 {
			t.Errorf("anonymous read of %q: %v", dn, err)
		}
	}
}

func entries(res *ldap.SearchResult) int {
	if res == nil {
		return 0
	}
	return len(res.Entries)
}

// TestConsumerEnforcesRoles: a replica enforces the same ACLs as its
// provider (the harness gives both the generated ones; syncrepl binds as
// the replication account): the help desk reads through the consumer, an
// account with no role and anonymous read nothing, no role reads a
// password there, and a write sent to the consumer goes to the provider
// as whoever sent it (the operator may record a session, the help desk
// may not).
func TestConsumerEnforcesRoles(t *testing.T) {
	demo, err := os.ReadFile("../../fixtures/demo.ldif")
	if err != nil {
		t.Fatal(err)
	}
	r := slapdtest.StartReplicated(t, slapdtest.Config{LDIF: string(demo)}, slapdtest.ReplicaOptions{})
	p, c := r.Provider, r.Consumers[0]
	as := func(w slapdtest.Who) map[string]string {
		env := map[string]string{"CPACTL_URL": c.URL, "CPACTL_BASE": c.Base}
		if w != "" {
			env["CPACTL_BIND_DN"], env["CPACTL_BIND_PASSWORD"] = c.Account(w).DN, c.Account(w).Password
		}
		return env
	}
	if code, out, errOut := cpactlMain([]string{"site", "list"}, as(slapdtest.Helpdesk)); code != 0 || !strings.Contains(out, "India") {
		t.Errorf("the help desk through the consumer: exit %d %s%s", code, out, errOut)
	}
	for _, w := range []slapdtest.Who{slapdtest.NoRole, ""} {
		if code, _, errOut := cpactlMain([]string{"site", "list"}, as(w)); code != commands.ExitAuth || !strings.Contains(errOut, "that needs the helpdesk role") {
			t.Errorf("%q through the consumer: exit %d, want 4: %s", w, code, errOut)
		}
	}
	anon, err := ldap.DialURL(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	res, err := anon.Search(ldap.NewSearchRequest(c.Base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", nil, nil))
	if n := entries(res); n != 0 || err == nil {
		t.Errorf("anonymous search of the consumer's base: %d entries, %v", n, err)
	}
	helpdesk, err := c.DialAs(c.Account(slapdtest.Helpdesk))
	if err != nil {
		t.Fatal(err)
	}
	defer helpdesk.Close()
	res, err = helpdesk.Search(ldap.NewSearchRequest(c.Base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(userPassword=*)", []string{"userPassword"}, nil))
	if err != nil || entries(res) != 0 {
		t.Errorf("the help desk finds %d passwords on the consumer (%v), want none", entries(res), err)
	}
	record := []string{"--write-url", p.URL, "session", "record", "--user", "bob", "--entitlement", "Desktops", "--pod", "London-1",
		"--pool", "lon-desktops", "--brokering-pod", "London-1", "--id", "via-consumer"}
	if code, _, errOut := cpactlMain(record, as(slapdtest.Operator)); code != 0 {
		t.Errorf("the operator records a session through the consumer: exit %d: %s", code, errOut)
	}
	// (After the operator's: the touches of the help desk's refused
	// transaction reach the consumer, slapd 2.5's syncprov sending what
	// the commit executed before the refused add; docs/access.md.)
	// The consumer first catches up with the operator's write: read from
	// a replica that lags, the help desk's write would be refused as a
	// conflict (exit 5) before slapd checks its rights
	// (TestConflictFromALaggingReplica).
	if err := r.WaitReplicated(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	record[len(record)-1] = "via-consumer-2"
	if code, _, errOut := cpactlMain(record, as(slapdtest.Helpdesk)); code != commands.ExitAuth {
		t.Errorf("the help desk records a session through the consumer: exit %d, want 4: %s", code, errOut)
	}
}

// TestAccessDocHoldsTheTable: docs/access.md shows the role x command
// table as ldapschema.CommandRoles renders it.
func TestAccessDocHoldsTheTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/access.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), ldapschema.CommandRolesMarkdown()) {
		t.Error("docs/access.md lacks the table of ldapschema.CommandRolesMarkdown(): paste it under \"Who may run what\"")
	}
}
