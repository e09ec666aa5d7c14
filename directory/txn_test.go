package directory

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestCommitOutlastsTheRequestTimeout: the commit gets its own deadline, so
// a commit whose answer takes longer than --timeout succeeds (a client that
// gave up there would close the connection while slapd 2.5 commits, which
// crashes it). slapd is frozen (SIGSTOP) from just before End Transaction
// until well after the request timeout; meanwhile CommitInFlight holds.
// slapd runs 2 threads: frozen, it cannot finish the thread of the last
// write during the pause before End, which with more threads would race
// End on thawing (and crash it: the race this package paces against).
func TestCommitOutlastsTheRequestTimeout(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{WithBase: true, Threads: 2})
	slapd, err := os.FindProcess(s.PID())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = slapd.Signal(syscall.SIGCONT) })
	const timeout, frozen = time.Second, 2500 * time.Millisecond
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := NewStore(c, s.Base)
	inFlight := make(chan bool, 1)
	began := time.Now()
	err = c.Transaction(func(w ldapclient.Writer) error {
		if err := st.Add(w, st.DIT.People(), ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop,
			ldapschema.ClassOrganizationalUnit}, ldapschema.AttrOU: {"People"}}); err != nil {
			return err
		}
		// Freeze waits until every thread of slapd is stopped: a signal
		// alone may land after End Transaction on a loaded machine.
		if err := s.Freeze(); err != nil {
			return err
		}
		time.AfterFunc(frozen/2, func() { inFlight <- ldapconn.CommitInFlight() })
		time.AfterFunc(frozen, func() { _ = slapd.Signal(syscall.SIGCONT) })
		return nil
	})
	if err != nil {
		t.Fatalf("a commit answered after %v, with a request timeout of %v: %v", time.Since(began), timeout, err)
	}
	if elapsed := time.Since(began); elapsed < frozen {
		t.Fatalf("the commit came back after %v, before slapd was thawed", elapsed)
	}
	if !<-inFlight {
		t.Error("CommitInFlight was false during the commit")
	}
	if ldapconn.CommitInFlight() {
		t.Error("CommitInFlight after the commit")
	}
	if e, err := st.Entry(st.DIT.People()); err != nil || e == nil {
		t.Fatalf("after the commit: %v, %v", e, err)
	}
	if exited, how := s.Exited(); exited {
		t.Fatalf("slapd exited: %v", how)
	}
}

func TestWaves(t *testing.T) {
	d := ldapschema.DIT{Base: ldapschema.DefaultBase}
	add := func(dn string) Write { return AddWrite("add", dn, dn, ldapschema.Attrs{}) }
	mod := func(dn string) Write { return ModifyWrite("update", dn, dn, nil) }
	del := func(dn string) Write { return DeleteWrite("delete", dn, dn) }
	ren := func(dn, rdn string) Write { return RenameWrite("rename", dn, dn, rdn) }
	tests := []struct {
		name   string
		writes []Write
		want   []int // wave sizes
	}{
		{"siblings travel together", []Write{add(d.Site("A")), add(d.Site("B")), add(d.User("u"))}, []int{3}},
		{"a child waits for its parent", []Write{add(d.Pod("P")), add(d.Pool("P", "q")), add(d.Pool("P", "r"))}, []int{1, 2}},
		{"a parent waits for its child", []Write{del(d.Pool("P", "q")), del(d.Pod("P"))}, []int{1, 1}},
		{"two writes of one entry keep their order", []Write{add(d.Site("A")), mod(d.Site("A"))}, []int{1, 1}},
		{"names compare without case", []Write{add(d.Site("A")), mod("CN=a,OU=Sites," + d.Base)}, []int{1, 1}},
		{"a rename touches its new name", []Write{ren(d.Site("A"), "cn=B"), add(d.Site("B"))}, []int{1, 1}},
		{"a rename of a pod waits for writes below it", []Write{mod(d.Pool("P", "q")), ren(d.Pod("P"), "cn=P2")}, []int{1, 1}},
		{"independent writes after a conflict start the next wave", []Write{add(d.Site("A")), mod(d.Site("A")), add(d.Site("B")), add(d.Site("C"))}, []int{1, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for _, w := range waves(tc.writes) {
				got = append(got, len(w))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("waves %v, want %v", got, tc.want)
			}
		})
	}
}

// lowerTxnBound makes a transaction take at most n writes for the test,
// and one asked for (OneTransaction) at most max.
func lowerTxnBound(t *testing.T, n, max int) {
	oldN, oldMax := txnWrites, maxTxnWrites
	txnWrites, maxTxnWrites = n, max
	t.Cleanup(func() { txnWrites, maxTxnWrites = oldN, oldMax })
}

func TestChunks(t *testing.T) {
	const n = 10
	lowerTxnBound(t, n, 25)
	st := NewStore(nil, ldapschema.DefaultBase)
	d := st.DIT
	users := func(from, n int) []Write {
		var out []Write
		for i := from; i < from+n; i++ {
			uid := "u" + strconv.Itoa(i)
			out = append(out, AddWrite("add", uid, d.User(uid), ldapschema.User{UID: uid}.Attrs()))
		}
		return out
	}
	sizes := func(cs [][]Write) []int {
		var out []int
		for _, c := range cs {
			out = append(out, len(c))
		}
		return out
	}
	t.Run("a plan that fits is one chunk", func(t *testing.T) {
		if got := sizes(st.chunks(users(0, n))); !slices.Equal(got, []int{n}) {
			t.Errorf("chunks %v", got)
		}
	})
	t.Run("a larger plan is cut at the bound", func(t *testing.T) {
		got := sizes(st.chunks(users(0, 2*n+5)))
		if !slices.Equal(got, []int{n, n, 5}) {
			t.Errorf("chunks %v", got)
		}
	})
	t.Run("no cut between a reference and the entry it names", func(t *testing.T) {
		// Two sites that prefer each other (a cycle the planner cuts: A is
		// added before B, naming it) straddle the bound.
		ws := users(0, n-1)
		ws = append(ws,
			AddWrite("add", "site A", d.Site("A"), ldapschema.Site{Name: "A", PreferredSites: []string{"B"}}.Attrs()),
			AddWrite("add", "site B", d.Site("B"), ldapschema.Site{Name: "B", PreferredSites: []string{"A"}}.Attrs()))
		ws = append(ws, users(n, 3)...)
		got := st.chunks(ws)
		if sizes := sizes(got); !slices.Equal(sizes, []int{n - 1, 5}) {
			t.Fatalf("chunks %v, want the cut before site A", sizes)
		}
		// A group naming users added after it, likewise.
		ws = users(0, n-1)
		ws = append(ws, AddWrite("add", "group", d.Group("g"), ldapschema.Group{Name: "g", Members: []string{d.User("late")}}.Attrs()))
		ws = append(ws, AddWrite("add", "late", d.User("late"), ldapschema.User{UID: "late"}.Attrs()))
		if sizes := sizes(st.chunks(ws)); !slices.Equal(sizes, []int{n - 1, 2}) {
			t.Fatalf("chunks %v, want the cut before the group", sizes)
		}
	})
	t.Run("Atomic says why a plan is cut", func(t *testing.T) {
		p := &Plan{Writes: users(0, n+1)}
		if atomic, why := st.Atomic(p); atomic || !strings.Contains(why, "2 transactions") {
			t.Errorf("atomic %v: %s", atomic, why)
		}
		if atomic, why := st.Atomic(&Plan{Writes: users(0, 3)}); !atomic || why != "" {
			t.Errorf("a small plan: atomic %v: %s", atomic, why)
		}
	})
	t.Run("one transaction asked for takes up to the largest", func(t *testing.T) {
		one := NewStore(nil, ldapschema.DefaultBase)
		one.OneTransaction = true
		if got := sizes(one.chunks(users(0, 25))); !slices.Equal(got, []int{25}) {
			t.Errorf("chunks %v, want one", got)
		}
		if atomic, why := one.Atomic(&Plan{Writes: users(0, 25)}); !atomic {
			t.Errorf("25 writes with OneTransaction: %s", why)
		}
		atomic, why := one.Atomic(&Plan{Writes: users(0, 26)})
		if atomic || !strings.Contains(why, "the plan holds 26 writes, more than the largest transaction cpactl sends (25)") {
			t.Errorf("26 writes with OneTransaction: atomic %v: %s", atomic, why)
		}
		var refused *NotAtomicError
		if err := one.ApplyPlan(&Plan{Writes: users(0, 26)}); !errors.As(err, &refused) {
			t.Errorf("ApplyPlan of 26 writes with OneTransaction: %v, want a NotAtomicError", err)
		}
	})
}

// TestTransactionsSurviveDefaultThreads runs a few rounds of the stress
// workload (renames, plans of adds, updates and deletes, subtrees moved to
// the trash, failed and aborted transactions) against slapd's default of 16
// threads: without the pause before End it crashes slapd 2.5.13 within a
// few dozen transactions. TestTransactionStress runs more.
func TestTransactionsSurviveDefaultThreads(t *testing.T) {
	runTxnWorkload(t, 12)
}

// TestTransactionStress runs CPACTL_TXN_STRESS rounds (about 5
// transactions each) of the workload:
//
//	CPACTL_TXN_STRESS=300 go test ./directory -run TestTransactionStress -v
func TestTransactionStress(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("CPACTL_TXN_STRESS"))
	if rounds <= 0 {
		t.Skip("set CPACTL_TXN_STRESS=ROUNDS to run")
	}
	runTxnWorkload(t, rounds)
}

func runTxnWorkload(t *testing.T, rounds int) {
	srv, st := topology(t)
	richTopology(t, st)
	d := st.DIT
	began := time.Now()
	transactions, failed := 0, 0
	alive := func(round int, what string) {
		t.Helper()
		time.Sleep(time.Millisecond) // let a crash be noticed
		if exited, how := srv.Exited(); exited {
			t.Fatalf("round %d, %s: slapd exited (%v) after %d transactions", round, what, how, transactions)
		}
	}
	apply := func(round int, what string, p *Plan) error {
		t.Helper()
		err := st.ApplyPlan(p)
		transactions += max(p.Transactions, 1)
		if err != nil {
			time.Sleep(100 * time.Millisecond) // a crash takes a moment to be seen
		}
		alive(round, what)
		return err
	}
	site := "US"
	for round := range rounds {
		// Adds and an update, pipelined: a pod with a Connection Server
		// and pools, users and a group naming them, a site's description.
		pod := fmt.Sprintf("stress-%d", round)
		p := &Plan{}
		p.Add(AddWrite("add", "pod", d.Pod(pod), ldapschema.Pod{Name: pod, SiteDN: d.Site("UK"), Online: true}.Attrs()),
			AddWrite("add", "cs", d.ConnectionServer(pod, "cs-"+pod), ldapschema.ConnectionServer{Name: "cs-" + pod}.Attrs()))
		var members []string
		for i := range 8 {
			pool := fmt.Sprintf("%s-pool-%d", pod, i)
			p.Add(AddWrite("add", "pool", d.Pool(pod, pool), ldapschema.Pool{Name: pool, Kind: ldapschema.KindDesktop, Capacity: 5, Enabled: true}.Attrs()))
			uid := fmt.Sprintf("%s-user-%d", pod, i)
			p.Add(AddWrite("add", "user", d.User(uid), ldapschema.User{UID: uid}.Attrs()))
			members = append(members, d.User(uid))
		}
		p.Add(AddWrite("add", "group", d.Group(pod), ldapschema.Group{Name: pod, Members: members}.Attrs()),
			ModifyWrite("update", "site UK", d.Site("UK"), []ldap.Change{{Operation: ldap.ReplaceAttribute,
				Modification: ldap.PartialAttribute{Type: ldapschema.AttrDescription, Vals: []string{"round " + strconv.Itoa(round)}}}}))
		if err := apply(round, "adds", p); err != nil {
			t.Fatalf("round %d: adds: %v", round, err)
		}
		// Deletes: the previous round's pod (a subtree, moved to the trash
		// as the last operation), its users and group (leaves).
		if round > 0 {
			prev := fmt.Sprintf("stress-%d", round-1)
			dp, err := st.PlanDelete(objkind.Pod, prev, d.Pod(prev))
			if err != nil {
				t.Fatal(err)
			}
			dp.Add(DeleteWrite("delete", "group", d.Group(prev)))
			for i := range 8 {
				dp.Add(DeleteWrite("delete", "user", d.User(fmt.Sprintf("%s-user-%d", prev, i))))
			}
			if err := apply(round, "deletes", &dp.Plan); err != nil {
				t.Fatalf("round %d: deletes: %v", round, err)
			}
		}
		// A rename that rewrites references (pods' site, preferred lists).
		next := "US"
		if site == "US" {
			next = "America"
		}
		rp, err := st.PlanRename(objkind.Site, site, d.Site(site), next)
		if err != nil {
			t.Fatal(err)
		}
		if err := apply(round, "rename", rp); err != nil {
			t.Fatalf("round %d: rename %s to %s: %v", round, site, next, err)
		}
		site = next
		// A transaction the server refuses at its end (a stale assertion).
		stale, _ := ldapconn.AssertionControl(ldapclient.Filter(ldapschema.AttrDescription, "not what it says"))
		bad := &Plan{Conflict: "site UK"}
		bad.Add(AddWrite("add", "site", d.Site(pod), ldapschema.Site{Name: pod}.Attrs()),
			ModifyWrite("update", "site UK", d.Site("UK"), []ldap.Change{{Operation: ldap.ReplaceAttribute,
				Modification: ldap.PartialAttribute{Type: ldapschema.AttrDescription, Vals: []string{"lost"}}}}, stale))
		var conflict *ldapclient.ConflictError
		if err := apply(round, "refused", bad); !errors.As(err, &conflict) {
			t.Fatalf("round %d: a stale assertion: %v, want a conflict", round, err)
		}
		failed++
		// A transaction the client aborts after queuing writes.
		sentinel := errors.New("changed my mind")
		err = st.Client.Transaction(func(w ldapclient.Writer) error {
			if err := st.Add(w, d.Site(pod), ldapschema.Site{Name: pod}.Attrs()); err != nil {
				return err
			}
			return sentinel
		})
		transactions++
		alive(round, "aborted")
		if !errors.Is(err, sentinel) {
			t.Fatalf("round %d: aborted transaction: %v", round, err)
		}
		failed++
	}
	if dangling := danglingReferences(t, st); len(dangling) > 0 {
		t.Fatalf("dangling references: %q", dangling)
	}
	if e, _ := st.Entry(d.Site(fmt.Sprintf("stress-%d", rounds-1))); e != nil {
		t.Error("a refused or aborted transaction wrote its site")
	}
	t.Logf("%d rounds: %d transactions (%d refused or aborted) in %v, slapd alive", rounds, transactions, failed,
		time.Since(began).Round(time.Millisecond))
}

// TestApplyPlanInChunks: a plan larger than one transaction takes goes in
// several, cut where nothing dangles, and says so; deletes likewise.
func TestApplyPlanInChunks(t *testing.T) {
	_, st := topology(t)
	lowerTxnBound(t, 7, 50)
	d := st.DIT
	p := &Plan{}
	for i := range 5 {
		uid := fmt.Sprintf("chunk-%d", i)
		p.Add(AddWrite("add", "user "+uid, d.User(uid), ldapschema.User{UID: uid}.Attrs()))
	}
	// Two sites that prefer each other, across the bound.
	p.Add(AddWrite("add", "site A", d.Site("A"), ldapschema.Site{Name: "A", PreferredSites: []string{"B"}}.Attrs()),
		AddWrite("add", "site B", d.Site("B"), ldapschema.Site{Name: "B", PreferredSites: []string{"A"}}.Attrs()))
	for i := range 3 {
		pod := fmt.Sprintf("chunk-pod-%d", i)
		p.Add(AddWrite("add", "pod "+pod, d.Pod(pod), ldapschema.Pod{Name: pod, SiteDN: d.Site("A"), Online: true}.Attrs()),
			AddWrite("add", "cs", d.ConnectionServer(pod, "cs-"+pod), ldapschema.ConnectionServer{Name: "cs-" + pod}.Attrs()))
	}
	if atomic, why := st.Atomic(p); atomic {
		t.Fatal("a plan over the bound is atomic")
	} else {
		t.Log(why)
	}
	if err := st.ApplyPlan(p); err != nil {
		t.Fatal(err)
	}
	if p.Transactions < 2 {
		t.Errorf("%d writes in %d transactions", len(p.Writes), p.Transactions)
	}
	if dangling := danglingReferences(t, st); len(dangling) > 0 {
		t.Fatalf("dangling references: %q", dangling)
	}
	for _, w := range p.Writes {
		if e, err := st.Entry(w.DN); err != nil || e == nil {
			t.Errorf("%s missing: %v", w.DN, err)
		}
	}
	// Deleting site A: three subtrees (stepwise) in a plan over the bound.
	dp, err := st.PlanDelete(objkind.Site, "A", d.Site("A"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyPlan(&dp.Plan); err != nil {
		t.Fatal(err)
	}
	if !dp.Stepwise {
		t.Error("three subtrees were not deleted stepwise")
	}
	if dangling := danglingReferences(t, st); len(dangling) > 0 {
		t.Fatalf("dangling references after the delete: %q", dangling)
	}
}

// TestApplyPlanOneTransaction: a store that asks for one transaction
// writes a plan over the usual bound in one, and refuses, writing
// nothing, a plan the server cannot take in one (a subtree delete).
func TestApplyPlanOneTransaction(t *testing.T) {
	_, st := topology(t)
	lowerTxnBound(t, 3, 50)
	st.OneTransaction = true
	d := st.DIT
	p := &Plan{}
	p.Add(AddWrite("add", "site A", d.Site("A"), ldapschema.Site{Name: "A"}.Attrs()))
	for i := range 3 {
		pod := fmt.Sprintf("one-pod-%d", i)
		p.Add(AddWrite("add", "pod "+pod, d.Pod(pod), ldapschema.Pod{Name: pod, SiteDN: d.Site("A"), Online: true}.Attrs()),
			AddWrite("add", "cs", d.ConnectionServer(pod, "cs-"+pod), ldapschema.ConnectionServer{Name: "cs-" + pod}.Attrs()))
	}
	if err := st.ApplyPlan(p); err != nil {
		t.Fatal(err)
	}
	if p.Transactions != 1 || p.Split {
		t.Errorf("%d writes in %d transactions (split %v), want one", len(p.Writes), p.Transactions, p.Split)
	}
	dp, err := st.PlanDelete(objkind.Site, "A", d.Site("A"))
	if err != nil {
		t.Fatal(err)
	}
	var refused *NotAtomicError
	if err := st.ApplyPlan(&dp.Plan); !errors.As(err, &refused) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("a subtree delete with OneTransaction: %v, want a NotAtomicError", err)
	}
	for _, w := range p.Writes {
		if e, err := st.Entry(w.DN); err != nil || e == nil {
			t.Errorf("%s gone after a refused delete: %v", w.DN, err)
		}
	}
}
