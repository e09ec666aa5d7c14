package commands

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// racePair runs two writers of the same object from the same read: both
// hold their write until both have read. It returns their errors.
func racePair(t *testing.T, srv *slapdtest.Server, args [2][]string) [2]error {
	t.Helper()
	var arrived sync.WaitGroup
	arrived.Add(2)
	gate := make(chan struct{})
	var errs [2]error
	var done sync.WaitGroup
	for i := range args {
		g := &Globals{IO: IOStreams{In: bytes.NewReader(nil), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}},
			Interactive: func() bool { return false }, Getenv: func(string) string { return "" }}
		g.OpenStore = func() (*directory.Store, func(), error) {
			c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.AdminDN(),
				Password: slapdtest.AdminPassword, Timeout: 10 * time.Second})
			if err != nil {
				return nil, nil, err
			}
			return directory.NewStore(gatedClient{Client: c, arrived: &arrived, gate: gate}, srv.Base),
				func() { c.Close() }, nil
		}
		root := NewRootCommand(g)
		root.SetArgs(args[i])
		done.Add(1)
		go func(i int) {
			defer done.Done()
			errs[i] = root.Execute()
		}(i)
	}
	arrived.Wait() // both have read and are about to write
	close(gate)
	done.Wait()
	return errs
}

// checkOneWins: exactly one writer succeeded and the other exits 5.
func checkOneWins(t *testing.T, what string, errs [2]error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatalf("%s: both writers succeeded from the same read", what)
			}
			winner = i
			continue
		}
		if code := ExitCode(err); code != ExitConflict {
			t.Fatalf("%s: loser exit %d (%v), want %d", what, code, err, ExitConflict)
		}
	}
	if winner < 0 {
		t.Fatalf("%s: no writer succeeded: %v", what, errs)
	}
	return winner
}

// TestConcurrentReadModifyWrite: two `settings set` of one key, and two
// `entitlement update` of one GE, from the same read: one wins, the other
// exits 5, and the stored value is the winner's; 20 pairs each.
func TestConcurrentReadModifyWrite(t *testing.T) {
	demo, err := os.ReadFile("../fixtures/demo.ldif")
	if err != nil {
		t.Fatal(err)
	}
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: string(demo)})
	for round := 0; round < 20; round++ {
		values := [2]int{10 + 2*round, 11 + 2*round}
		errs := racePair(t, srv, [2][]string{
			{"settings", "set", fmt.Sprintf("pae-LoadThresholdForSite=%d", values[0])},
			{"settings", "set", fmt.Sprintf("pae-LoadThresholdForSite=%d", values[1])},
		})
		w := checkOneWins(t, fmt.Sprintf("settings round %d", round), errs)
		rec, err := directory.NewStore(mustDial(t, srv), srv.Base).Settings()
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := rec.Value(ldapschema.Settings[0]); got != values[w] {
			t.Fatalf("settings round %d: stored %d, want the winner's %d", round, got, values[w])
		}

		descs := [2]string{fmt.Sprintf("first %d", round), fmt.Sprintf("second %d", round)}
		errs = racePair(t, srv, [2][]string{
			{"entitlement", "update", "Desktops", "--description", descs[0]},
			{"entitlement", "update", "Desktops", "--description", descs[1]},
		})
		w = checkOneWins(t, fmt.Sprintf("entitlement round %d", round), errs)
		ge, err := directory.NewStore(mustDial(t, srv), srv.Base).Entitlement("Desktops")
		if err != nil {
			t.Fatal(err)
		}
		if ge.Description != descs[w] {
			t.Fatalf("entitlement round %d: stored %q, want the winner's %q", round, ge.Description, descs[w])
		}
	}
}
