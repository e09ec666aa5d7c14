package directory

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cpactl/cpactl/directory/internal/dirtest"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestReadFailsOver: a replica that dies (halted) or stops answering
// (frozen) in the middle of a command makes the next read go once more,
// to the next URI, with a note; entry reads and streamed reads alike.
func TestReadFailsOver(t *testing.T) {
	r := slapdtest.StartReplicated(t, slapdtest.Config{LDIF: dirtest.Sample()}, slapdtest.ReplicaOptions{Consumers: 2})
	p, dead, frozen := r.Provider, r.Consumers[0], r.Consumers[1]
	for _, tc := range []struct {
		name    string
		replica *slapdtest.Server
		fail    func() error
		read    func(st *Store) error
	}{
		{"halted, entry", dead, func() error { dead.Halt(); return nil },
			func(st *Store) error { _, err := st.Entry(dit.Site("UK")); return err }},
		{"frozen, streamed", frozen, frozen.Freeze,
			func(st *Store) error { _, err := st.Sites(); return err }},
	} {
		var mu sync.Mutex
		var notes []string
		c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{tc.replica.URL, p.URL}, BindDN: p.AdminDN(), Password: slapdtest.AdminPassword,
			Timeout: 500 * time.Millisecond, Note: func(s string) { mu.Lock(); notes = append(notes, s); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		st := NewStore(c, dit.Base)
		if _, err := st.Sites(); err != nil {
			t.Fatal(err)
		}
		if c.URL != tc.replica.URL {
			t.Fatalf("%s: reads from %s, want the first URI %s", tc.name, c.URL, tc.replica.URL)
		}
		if err := tc.fail(); err != nil {
			t.Fatal(err)
		}
		if err := tc.read(st); err != nil {
			t.Errorf("%s: the read did not fail over: %v", tc.name, err)
		}
		if c.URL != p.URL {
			t.Errorf("%s: reads from %s after the failover, want %s", tc.name, c.URL, p.URL)
		}
		mu.Lock()
		if len(notes) != 1 || !strings.HasPrefix(notes[0], tc.replica.URL+" stopped answering") || !strings.HasSuffix(notes[0], "reading from "+p.URL) {
			t.Errorf("%s: notes %q", tc.name, notes)
		}
		mu.Unlock()
	}
	_ = frozen.Thaw()
}

func TestParseCSN(t *testing.T) {
	c, ok := ParseCSN("20261202042100.123456Z#000000#00a#000000")
	if !ok || c.ServerID != 10 || c.Time != time.Date(2026, 12, 2, 4, 21, 0, 123456000, time.UTC) {
		t.Errorf("ParseCSN: %+v %v", c, ok)
	}
	for _, bad := range []string{"", "20261202042100Z", "x#0#1#0", "20261202042100.123456Z#000000#zz#000000"} {
		if _, ok := ParseCSN(bad); ok {
			t.Errorf("ParseCSN(%q) accepted", bad)
		}
	}
}

// TestLags: one row per rule of the lag status reports.
func TestLags(t *testing.T) {
	at := func(sec int, sid int) CSN {
		return CSN{ServerID: sid, Time: time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC)}
	}
	provider := func(csns ...CSN) ServerStatus {
		return ServerStatus{Bound: true, Reachable: true, Role: RoleProvider, ContextCSN: csns}
	}
	consumer := func(csns ...CSN) ServerStatus {
		return ServerStatus{Bound: true, Reachable: true, Role: RoleConsumer, ContextCSN: csns}
	}
	for _, tc := range []struct {
		name     string
		servers  []ServerStatus
		lag      time.Duration
		known    bool
		caughtUp bool
	}{
		{"caught up", []ServerStatus{provider(at(10, 1)), consumer(at(10, 1))}, 0, true, true},
		{"behind by the time between the newest changes", []ServerStatus{provider(at(50, 1)), consumer(at(10, 1))}, 40 * time.Second, true, false},
		{"the worst server ID counts", []ServerStatus{provider(at(50, 1), at(30, 2)), consumer(at(45, 1), at(10, 2))}, 20 * time.Second, true, false},
		{"a server ID it lacks: from its own newest change", []ServerStatus{provider(at(50, 1), at(30, 2)), consumer(at(50, 1))}, 0, true, false},
		{"no change at all", []ServerStatus{provider(at(50, 1)), consumer()}, 0, false, false},
		{"no provider", []ServerStatus{{Role: RoleProvider}, consumer(at(10, 1))}, 0, false, false},
	} {
		lags(tc.servers)
		got := tc.servers[len(tc.servers)-1]
		if got.Lag != tc.lag || got.LagKnown != tc.known || got.CaughtUp != tc.caughtUp {
			t.Errorf("%s: lag %s known %v caught up %v, want %s %v %v", tc.name, got.Lag, got.LagKnown, got.CaughtUp, tc.lag, tc.known, tc.caughtUp)
		}
	}
}

// TestReadYourWrites: a write through a consumer moves the connection to
// the provider once, however many writes hit the consumer at the same
// time, and the reads after them go to the provider: they see the writes
// whether or not the consumer has them yet.
func TestReadYourWrites(t *testing.T) {
	r := slapdtest.StartReplicated(t, slapdtest.Config{LDIF: dirtest.Sample()}, slapdtest.ReplicaOptions{})
	p, cons := r.Provider, r.Consumers[0]
	var notes []string
	var mu sync.Mutex
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{cons.URL, p.URL}, BindDN: p.AdminDN(), Password: slapdtest.AdminPassword,
		Note: func(s string) { mu.Lock(); notes = append(notes, s); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := NewStore(c, dit.Base)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("RYW%d", i)
			errs[i] = c.Add(ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassSite},
				ldapschema.AttrCN: {name}}.AddRequest(dit.Site(name)))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d through the consumer: %v", i, err)
		}
	}
	if c.URL != p.URL || len(notes) != 1 {
		t.Fatalf("after the writes: on %s, notes %q", c.URL, notes)
	}
	for i := range errs {
		e, err := st.Entry(dit.Site(fmt.Sprintf("RYW%d", i)))
		if err != nil || e == nil {
			t.Errorf("reading write %d back: %v %v", i, e, err)
		}
	}
}
