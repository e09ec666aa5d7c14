package commands

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// Races between a write that adds a reference and a rename or delete of
// what it refers to (issue 22, item 5): both commands read before either
// writes (each holds its first write until both have read), then they
// write in a given order. Every write that adds a reference touches the
// entry it refers to in its transaction, and every rename or delete
// asserts the entryCSN it read (directory/guard.go), so one of the two
// exits 5 and no reference dangles.

// gateOnce holds a command's first write until its gate opens, and says
// when the command has read (arrived: at its first write, or at its end
// when it writes nothing).
type gateOnce struct {
	arrive sync.Once
	wg     *sync.WaitGroup
	gate   chan struct{}
}

func (g *gateOnce) arrived() { g.arrive.Do(g.wg.Done) }

func (g *gateOnce) hold() {
	g.arrived()
	<-g.gate
}

// heldClient is a directory client whose first write of any kind waits
// at its gate.
type heldClient struct {
	ldapclient.Client
	g *gateOnce
}

func (c heldClient) Add(req *ldap.AddRequest) error { c.g.hold(); return c.Client.Add(req) }
func (c heldClient) Modify(req *ldap.ModifyRequest) error {
	c.g.hold()
	return c.Client.Modify(req)
}
func (c heldClient) ModifyDN(req *ldap.ModifyDNRequest) error {
	c.g.hold()
	return c.Client.ModifyDN(req)
}
func (c heldClient) Del(req *ldap.DelRequest) error { c.g.hold(); return c.Client.Del(req) }
func (c heldClient) Transaction(fn func(ldapclient.Writer) error) error {
	c.g.hold()
	return c.Client.Transaction(fn)
}

// cpactlOn runs one command against srv, its client wrapped by wrap (nil:
// none), and returns its error and what it printed.
func cpactlOn(srv *slapdtest.Server, wrap func(ldapclient.Client) ldapclient.Client, dir string, args ...string) (string, error) {
	var out bytes.Buffer
	g := &Globals{IO: IOStreams{In: bytes.NewReader(nil), Out: &out, Err: &out},
		Interactive: func() bool { return false }, Getenv: func(string) string { return "" }}
	g.OpenStore = func() (*directory.Store, func(), error) {
		c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.AdminDN(),
			Password: slapdtest.AdminPassword, Timeout: 10 * time.Second})
		if err != nil {
			return nil, nil, err
		}
		var client ldapclient.Client = c
		if wrap != nil {
			client = wrap(c)
		}
		return directory.NewStore(client, srv.Base), func() { c.Close() }, nil
	}
	root := NewRootCommand(g)
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "$DIR", dir)
	}
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// Orders of a pair's writes once both have read.
const (
	breakerFirst = "rename/delete first"
	adderFirst   = "reference first"
	together     = "together"
)

// racePairOrdered runs the two commands from the same read; order says
// which writes first (its command runs to its end before the other
// writes), or together (both released at once).
func racePairOrdered(srv *slapdtest.Server, dir, order string, breaker, adder []string) (errs [2]error, outs [2]string) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	gates := [2]*gateOnce{{wg: &arrived, gate: make(chan struct{})}, {wg: &arrived, gate: make(chan struct{})}}
	done := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	for i, args := range [2][]string{breaker, adder} {
		go func() {
			defer close(done[i])
			outs[i], errs[i] = cpactlOn(srv, func(c ldapclient.Client) ldapclient.Client { return heldClient{c, gates[i]} },
				dir, append([]string(nil), args...)...)
			gates[i].arrived() // a command that wrote nothing
		}()
	}
	arrived.Wait()
	switch order {
	case breakerFirst:
		close(gates[0].gate)
		<-done[0]
		close(gates[1].gate)
	case adderFirst:
		close(gates[1].gate)
		<-done[1]
		close(gates[0].gate)
	default:
		close(gates[0].gate)
		close(gates[1].gate)
	}
	<-done[0]
	<-done[1]
	return errs, outs
}

// danglingIn lists the DN values and preferred sites under srv's base that
// name no entry, and cpactl's transient entries left over.
func danglingIn(t *testing.T, srv *slapdtest.Server) []string {
	t.Helper()
	st := directory.NewStore(mustDial(t, srv), srv.Base)
	entries, err := st.Find(srv.Base, ldap.ScopeWholeSubtree, ldapclient.AnyEntry)
	if err != nil {
		t.Fatal(err)
	}
	exists, sites := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		exists[ldapschema.NormalizeDN(e.DN)] = true
		if ldapschema.HasClass(e, ldapschema.ClassSite) {
			sites[strings.ToLower(ldapschema.NameOf(e.DN))] = true
		}
	}
	var out []string
	for _, e := range entries {
		for _, a := range directory.DNAttributes() {
			for _, v := range e.GetEqualFoldAttributeValues(a) {
				if v != ldapschema.NoMember && !exists[ldapschema.NormalizeDN(v)] { // the role groups' placeholder
					out = append(out, e.DN+" "+a+": "+v)
				}
			}
		}
		for _, v := range e.GetEqualFoldAttributeValues(ldapschema.AttrPreferredSite) {
			if r, err := ldapschema.ParsePreferredSite(v); err != nil || !sites[strings.ToLower(r.Name)] {
				out = append(out, e.DN+" preferred: "+v)
			}
		}
		if directory.IsTransient(st.DIT, e.DN) {
			out = append(out, "left over: "+e.DN)
		}
	}
	return out
}

// refRace is one kind of race: setup runs first (each argument list
// with %[1]s replaced by the round's suffix), then breaker (a rename or
// delete) against adder (a write that adds a reference to what breaker
// renames or deletes). Exclusive races have exactly one winner; the
// others (an entry added below the one renamed) may have two, as the new
// entry moves with its parent.
type refRace struct {
	name           string
	setup          [][]string
	breaker, adder []string
	bothMayWin     bool
	file           string // written to $DIR/ref-%[1]s.ldif before the race, when set
	// without, when set, names an entry (DN, %[1]s replaced) that the
	// export written to $DIR/ref-%[1]s.ldif before the race leaves out:
	// a whole federation that apply --prune makes the directory match.
	without string
}

func refRaces() []refRace {
	site := []string{"site", "create", "S%[1]s"}
	pod := []string{"pod", "create", "P%[1]s", "--site", "S%[1]s"}
	farm := []string{"farm", "create", "F%[1]s", "--pod", "P%[1]s"}
	pool := []string{"pool", "create", "pl%[1]s", "--pod", "P%[1]s", "--kind", "desktop", "--floating", "--capacity", "5"}
	user := []string{"user", "create", "u%[1]s", "--domain", "CORP"}
	group := []string{"group", "create", "G%[1]s"}
	ge := []string{"entitlement", "create", "E%[1]s", "--type", "desktop", "--floating"}
	renameSite := []string{"site", "update", "S%[1]s", "--rename", "S%[1]s-x"}
	renamePod := []string{"pod", "update", "P%[1]s", "--rename", "P%[1]s-x"}
	del := func(noun, name string) []string { return []string{noun, "delete", name, "--yes"} }
	return []refRace{
		{name: "pod create --site / site rename", setup: [][]string{site},
			breaker: renameSite, adder: []string{"pod", "create", "Q%[1]s", "--site", "S%[1]s"}},
		{name: "pod create --site / site delete", setup: [][]string{site},
			breaker: del("site", "S%[1]s"), adder: []string{"pod", "create", "Q%[1]s", "--site", "S%[1]s"}},
		{name: "pod update --site / site rename", setup: [][]string{{"site", "create", "T%[1]s"}, site,
			{"pod", "create", "P%[1]s", "--site", "T%[1]s"}},
			breaker: renameSite, adder: []string{"pod", "update", "P%[1]s", "--site", "S%[1]s"}},
		{name: "site preferred / site rename", setup: [][]string{site, {"site", "create", "T%[1]s"}},
			breaker: renameSite, adder: []string{"site", "preferred", "T%[1]s", "--set", "S%[1]s"}},
		{name: "site preferred / site delete", setup: [][]string{site, {"site", "create", "T%[1]s"}},
			breaker: del("site", "S%[1]s"), adder: []string{"site", "preferred", "T%[1]s", "--set", "S%[1]s"}},
		{name: "homesite set / site rename", setup: [][]string{site, user},
			breaker: renameSite, adder: []string{"homesite", "set", "--user", "u%[1]s", "--site", "S%[1]s"}},
		{name: "homesite set / user delete", setup: [][]string{site, user},
			breaker: del("user", "u%[1]s"), adder: []string{"homesite", "set", "--user", "u%[1]s", "--site", "S%[1]s"}},
		{name: "pool create --farm / pod rename", setup: [][]string{site, pod, farm},
			breaker: renamePod, adder: []string{"pool", "create", "ap%[1]s", "--pod", "P%[1]s", "--kind", "application", "--farm", "F%[1]s"}},
		{name: "pool create --farm / farm delete", setup: [][]string{site, pod, farm},
			breaker: del("farm", "F%[1]s"), adder: []string{"pool", "create", "ap%[1]s", "--pod", "P%[1]s", "--kind", "application", "--farm", "F%[1]s"}},
		{name: "pool update --farm / pod rename", setup: [][]string{site, pod, farm, {"farm", "create", "F2%[1]s", "--pod", "P%[1]s"},
			{"pool", "create", "ap%[1]s", "--pod", "P%[1]s", "--kind", "application", "--farm", "F2%[1]s"}},
			breaker: renamePod, adder: []string{"pool", "update", "ap%[1]s", "--farm", "F%[1]s"}},
		{name: "cs create --pod / pod rename", setup: [][]string{site, pod}, bothMayWin: true,
			breaker: renamePod, adder: []string{"cs", "create", "cs%[1]s", "--pod", "P%[1]s"}},
		{name: "cs create --pod / pod delete", setup: [][]string{site, pod},
			breaker: del("pod", "P%[1]s"), adder: []string{"cs", "create", "cs%[1]s", "--pod", "P%[1]s"}},
		{name: "pool create --pod / pod rename", setup: [][]string{site, pod}, bothMayWin: true,
			breaker: renamePod, adder: pool},
		{name: "farm create --pod / pod rename", setup: [][]string{site, pod}, bothMayWin: true,
			breaker: renamePod, adder: farm},
		{name: "host create --farm / pod rename", setup: [][]string{site, pod, farm}, bothMayWin: true,
			breaker: renamePod, adder: []string{"host", "create", "h%[1]s", "--farm", "F%[1]s"}},
		{name: "host create --farm / farm delete", setup: [][]string{site, pod, farm},
			breaker: del("farm", "F%[1]s"), adder: []string{"host", "create", "h%[1]s", "--farm", "F%[1]s"}},
		{name: "entitlement add-pool / pod rename", setup: [][]string{site, pod, pool, ge},
			breaker: renamePod, adder: []string{"entitlement", "add-pool", "E%[1]s", "pl%[1]s"}},
		{name: "entitlement add-pool / pool delete", setup: [][]string{site, pod, pool, ge},
			breaker: del("pool", "pl%[1]s"), adder: []string{"entitlement", "add-pool", "E%[1]s", "pl%[1]s"}},
		{name: "entitlement add-member / user delete", setup: [][]string{user, ge},
			breaker: del("user", "u%[1]s"), adder: []string{"entitlement", "add-member", "E%[1]s", "--user", "u%[1]s"}},
		{name: "entitlement add-member / group delete", setup: [][]string{group, ge},
			breaker: del("group", "G%[1]s"), adder: []string{"entitlement", "add-member", "E%[1]s", "--group", "G%[1]s"}},
		{name: "entitlement update --backup / entitlement delete", setup: [][]string{ge, {"entitlement", "create", "B%[1]s", "--type", "desktop", "--floating"}},
			breaker: del("entitlement", "B%[1]s"), adder: []string{"entitlement", "update", "E%[1]s", "--backup", "B%[1]s"}},
		{name: "group create --members / user delete", setup: [][]string{user},
			breaker: del("user", "u%[1]s"), adder: []string{"group", "create", "G%[1]s", "--members", "u%[1]s"}},
		{name: "group add-member / user delete", setup: [][]string{user, group},
			breaker: del("user", "u%[1]s"), adder: []string{"group", "add-member", "G%[1]s", "u%[1]s"}},
		{name: "group add-member group: / group delete", setup: [][]string{group, {"group", "create", "H%[1]s"}},
			breaker: del("group", "H%[1]s"), adder: []string{"group", "add-member", "G%[1]s", "group:H%[1]s"}},
		{name: "group add-member computer: / computer delete", setup: [][]string{group, {"computer", "create", "c%[1]s"}},
			breaker: del("computer", "c%[1]s"), adder: []string{"group", "add-member", "G%[1]s", "computer:c%[1]s"}},
		{name: "session record / pod rename", setup: [][]string{site, pod, pool, user, ge, {"entitlement", "add-pool", "E%[1]s", "pl%[1]s"}},
			breaker: renamePod, adder: []string{"session", "record", "--user", "u%[1]s", "--entitlement", "E%[1]s", "--pod", "P%[1]s", "--pool", "pl%[1]s"}},
		{name: "session record / user delete", setup: [][]string{site, pod, pool, user, ge, {"entitlement", "add-pool", "E%[1]s", "pl%[1]s"}},
			breaker: del("user", "u%[1]s"), adder: []string{"session", "record", "--user", "u%[1]s", "--entitlement", "E%[1]s", "--pod", "P%[1]s", "--pool", "pl%[1]s"}},
		{name: "assignment set / pod rename", setup: [][]string{site, pod, user, {"entitlement", "create", "E%[1]s", "--type", "desktop", "--dedicated"}},
			breaker: renamePod, adder: []string{"assignment", "set", "--user", "u%[1]s", "--entitlement", "E%[1]s", "--pod", "P%[1]s"}},
		{name: "apply / site rename", setup: [][]string{site}, file: applyPod,
			breaker: renameSite, adder: []string{"apply", "$DIR/ref-%[1]s.ldif"}},
		{name: "entitlement add-member / apply --prune", setup: [][]string{user, ge},
			without: "uid=u%[1]s,ou=People,dc=vdiglobal,dc=vmware,dc=int",
			breaker: []string{"apply", "$DIR/ref-%[1]s.ldif", "--prune", "--yes", "--force"}, adder: []string{"entitlement", "add-member", "E%[1]s", "--user", "u%[1]s"}},
	}
}

// applyPod is a file that adds pod Q%[1]s in site S%[1]s.
const applyPod = `dn: cn=S%[1]s,ou=Sites,dc=vdiglobal,dc=vmware,dc=int
objectClass: top
objectClass: pae-Site
cn: S%[1]s

dn: cn=Q%[1]s,ou=Pods,dc=vdiglobal,dc=vmware,dc=int
objectClass: top
objectClass: pae-Pod
cn: Q%[1]s
pae-SiteDN: cn=S%[1]s,ou=Sites,dc=vdiglobal,dc=vmware,dc=int
`

func format(args []string, suffix string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "%[1]s", suffix)
	}
	return out
}

// TestReferenceRaces races every kind of write that adds a reference
// against a rename or delete of what it refers to, from the same read, in
// three orders, rounds times each (CPACTL_REF_RACE_ROUNDS, default 5):
// the first to write wins and the second exits 5 (an entry added below
// the one renamed may win too, moved with it), and no reference dangles.
// The counts are in docs/topology.md.
func TestReferenceRaces(t *testing.T) {
	rounds := 5
	if v := os.Getenv("CPACTL_REF_RACE_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("CPACTL_REF_RACE_ROUNDS=%q: %v", v, err)
		}
		rounds = n
	}
	srv := slapdtest.Start(t, slapdtest.Config{Threads: 2})
	dir := t.TempDir()
	if out, err := cpactlOn(srv, nil, dir, "init"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	type tally struct{ pairs, breakerWon, adderWon, bothWon int }
	totals := map[string]*tally{}
	dangling := map[string]bool{} // reported already
	for n, rc := range refRaces() {
		for r := range rounds {
			for o, order := range []string{breakerFirst, adderFirst, together} {
				suffix := fmt.Sprintf("-%d-%d-%d", n, r, o)
				for _, args := range rc.setup {
					if out, err := cpactlOn(srv, nil, dir, format(args, suffix)...); err != nil {
						t.Fatalf("%s: setup %q: %v\n%s", rc.name, format(args, suffix), err, out)
					}
				}
				if rc.without != "" {
					path := filepath.Join(dir, "ref-"+suffix+".ldif")
					if out, err := cpactlOn(srv, nil, dir, "export", "-O", path); err != nil {
						t.Fatalf("%s: export: %v\n%s", rc.name, err, out)
					}
					exported, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					blocks := strings.Split(string(exported), "\n\n")
					var kept []string
					for _, block := range blocks {
						if !strings.HasPrefix(block, "dn: "+strings.ReplaceAll(rc.without, "%[1]s", suffix)+"\n") {
							kept = append(kept, block)
						}
					}
					if len(kept) == len(blocks) {
						t.Fatalf("%s: the export holds no %s", rc.name, rc.without)
					}
					if err := os.WriteFile(path, []byte(strings.Join(kept, "\n\n")), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if rc.file != "" {
					path := filepath.Join(dir, "ref-"+suffix+".ldif")
					if err := os.WriteFile(path, []byte(strings.ReplaceAll(rc.file, "%[1]s", suffix)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				what := fmt.Sprintf("%s, round %d, %s", rc.name, r, order)
				errs, outs := racePairOrdered(srv, dir, order, format(rc.breaker, suffix), format(rc.adder, suffix))
				won := [2]bool{}
				for i, err := range errs {
					if err == nil {
						won[i] = true
						continue
					}
					if code := ExitCode(err); code != ExitConflict {
						t.Errorf("%s: %s exit %d (%v), want 0 or %d\n%s", what, []string{"breaker", "adder"}[i], code, err, ExitConflict, outs[i])
					}
				}
				first := map[string]int{breakerFirst: 0, adderFirst: 1}
				switch {
				case !won[0] && !won[1]:
					t.Errorf("%s: neither won: %v; %v", what, errs[0], errs[1])
				case won[0] && won[1] && !rc.bothMayWin:
					t.Errorf("%s: both won from the same read\n%s\n%s", what, outs[0], outs[1])
				case order != together && !won[first[order]]:
					t.Errorf("%s: the first to write lost: %v", what, errs[first[order]])
				}
				var fresh []string
				for _, b := range danglingIn(t, srv) {
					if !dangling[b] {
						dangling[b] = true
						fresh = append(fresh, b)
					}
				}
				if len(fresh) > 0 {
					t.Errorf("%s: dangling after the race (breaker %v, adder %v):\n%s", what, errs[0], errs[1], strings.Join(fresh, "\n"))
				}
				tl := totals[order]
				if tl == nil {
					tl = &tally{}
					totals[order] = tl
				}
				tl.pairs++
				switch {
				case won[0] && won[1]:
					tl.bothWon++
				case won[0]:
					tl.breakerWon++
				default:
					tl.adderWon++
				}
			}
		}
	}
	for _, order := range []string{breakerFirst, adderFirst, together} {
		tl := totals[order]
		t.Logf("%s: %d pairs: rename/delete won %d, reference won %d, both %d (the loser exited 5 each time; nothing dangles)",
			order, tl.pairs, tl.breakerWon, tl.adderWon, tl.bothWon)
	}
}
