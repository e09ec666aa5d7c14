package commands

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/slapdtest"
)

// scriptedPrompter answers Select and Confirm from a script and records
// what it was asked.
type scriptedPrompter struct {
	answers []string // Select: an option, or "" for the default; Confirm: "y" or "n"
	asked   []string
}

func (p *scriptedPrompter) next(q string) (string, error) {
	p.asked = append(p.asked, q)
	if len(p.answers) == 0 {
		return "", errors.New("unexpected question " + q)
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	return a, nil
}

func (p *scriptedPrompter) Confirm(message string, def bool) (bool, error) {
	a, err := p.next(message)
	return a == "y" || a == "" && def, err
}

func (p *scriptedPrompter) Select(message string, options []string, def string) (string, error) {
	a, err := p.next(message + " [" + strings.Join(options, "|") + "] default " + def)
	if err != nil {
		return "", err
	}
	if a == "" {
		return def, nil
	}
	if !slices.Contains(options, a) {
		return "", fmt.Errorf("%q is not an option of %q", a, options)
	}
	return a, nil
}

func (p *scriptedPrompter) Password(string) (string, error) { return "", errors.New("no password") }

// TestAskPreferredOrder covers the interactive ordering, one row per rule.
func TestAskPreferredOrder(t *testing.T) {
	others := []string{"Germany", "UK", "US"}
	tests := []struct {
		name     string
		current  []string
		answers  []string
		want     []string
		keep     bool
		wantAsks int
	}{
		{name: "enter throughout keeps the current order, then done",
			current: []string{"UK", "US"}, answers: []string{"", "", ""}, want: []string{"UK", "US"}, wantAsks: 3},
		{name: "pick the next site until none is left",
			current: []string{"UK"}, answers: []string{"US", "Germany", "UK"}, want: []string{"US", "Germany", "UK"}, wantAsks: 3},
		{name: "done after one site",
			current: []string{"UK", "US"}, answers: []string{"US", "(done)"}, want: []string{"US"}, wantAsks: 2},
		{name: "done at once clears the list",
			current: []string{"UK"}, answers: []string{"(done)"}, want: nil, wantAsks: 1},
		{name: "keep the current order",
			current: []string{"US", "UK"}, answers: []string{"(keep current order)"}, want: []string{"US", "UK"}, keep: true, wantAsks: 1},
		{name: "an empty list starts with done as the default",
			current: nil, answers: []string{""}, want: nil, wantAsks: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &scriptedPrompter{answers: tc.answers}
			var errOut bytes.Buffer
			got, keep, err := askPreferredOrder(p, &errOut, "India", tc.current, others)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) || keep != tc.keep {
				t.Errorf("got %q keep=%v, want %q keep=%v", got, keep, tc.want, tc.keep)
			}
			if len(p.asked) != tc.wantAsks {
				t.Errorf("asked %d questions, want %d: %q", len(p.asked), tc.wantAsks, p.asked)
			}
		})
	}
}

// TestAskPreferredOrderOptions: the current order comes first, the other
// sites by name; keep is offered only at rank 1; a site named like a label
// does not hide it.
func TestAskPreferredOrderOptions(t *testing.T) {
	p := &scriptedPrompter{answers: []string{"UK", "((done))"}}
	var errOut bytes.Buffer
	if _, _, err := askPreferredOrder(p, &errOut, "India", []string{"US"}, []string{"(done)", "UK", "US"}); err != nil {
		t.Fatal(err)
	}
	want := "Preferred site 1 of India: [US|(done)|UK|((done))|(keep current order)] default US"
	if p.asked[0] != want {
		t.Errorf("first question\n got %s\nwant %s", p.asked[0], want)
	}
	if !strings.Contains(errOut.String(), "Current preferred sites of India: 1. US") {
		t.Errorf("current order not shown: %q", errOut.String())
	}
	if strings.Contains(p.asked[1], "keep current order") {
		t.Errorf("keep offered after rank 1: %s", p.asked[1])
	}
	if _, _, err := askPreferredOrder(p, &errOut, "India", nil, nil); err == nil {
		t.Error("a federation of one site has nothing to rank")
	}
}

// TestSitePreferredValidate covers the flag rules checked before any I/O.
func TestSitePreferredValidate(t *testing.T) {
	tests := []struct {
		name string
		o    sitePreferredOptions
		want string // "" for valid
	}{
		{"set", sitePreferredOptions{Name: "India", Set: []string{"UK", "US"}, setGiven: true}, ""},
		{"set names the site itself", sitePreferredOptions{Name: "India", Set: []string{"UK", "india"}, setGiven: true}, "cannot be its own preferred site"},
		{"set repeats a site", sitePreferredOptions{Name: "India", Set: []string{"UK", "uk"}, setGiven: true}, "given twice"},
		{"set names nothing", sitePreferredOptions{Name: "India", Set: []string{" "}, setGiven: true}, "--set names no site"},
		{"set and clear", sitePreferredOptions{Name: "India", Set: []string{"UK"}, setGiven: true, Clear: true}, "exclude each other"},
		{"output without show", sitePreferredOptions{Name: "India", outputGiven: true}, "apply to --show only"},
		{"from without show", sitePreferredOptions{Name: "India", readFlags: readFlags{From: "x.ldif"}}, "apply to --show only"},
		{"show with dry-run", sitePreferredOptions{Name: "India", Show: true, writeFlags: writeFlags{DryRun: true}}, "--dry-run applies to"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// gatedClient holds every Modify until the gate opens, so that two
// writers can be made to read the same state before either writes.
type gatedClient struct {
	ldapclient.Client
	arrived *sync.WaitGroup
	gate    chan struct{}
}

func (c gatedClient) Modify(req *ldap.ModifyRequest) error {
	c.arrived.Done()
	<-c.gate
	return c.Client.Modify(req)
}

// Transaction holds a write that goes in a transaction (one that adds a
// reference goes with the touches that guard it) as Modify does.
func (c gatedClient) Transaction(fn func(ldapclient.Writer) error) error {
	c.arrived.Done()
	<-c.gate
	return c.Client.Transaction(fn)
}

// TestPreferredConcurrentWriters: two `site preferred --set` runs from the
// same starting state: exactly one wins, the other exits 5 with a hint to
// re-read, and the stored list is one of the two whole lists.
func TestPreferredConcurrentWriters(t *testing.T) {
	seed, err := os.ReadFile("../fixtures/seed-000.ldif")
	if err != nil {
		t.Fatal(err)
	}
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: string(seed)})
	candidates := [][]string{{"US", "UK"}, {"UK"}, {"US"}, {"UK", "US"}}
	stored := []string{"UK", "US"} // the fixture's list
	for round := 0; round < 6; round++ {
		// Two different lists, both different from the stored one (an
		// unchanged list is not written).
		var lists [][]string
		for k := range candidates {
			c := candidates[(round+k)%len(candidates)]
			if !slices.Equal(c, stored) && len(lists) < 2 {
				lists = append(lists, c)
			}
		}
		var arrived sync.WaitGroup
		arrived.Add(len(lists))
		gate := make(chan struct{})
		errs := make([]error, len(lists))
		outs := make([]*bytes.Buffer, len(lists))
		var done sync.WaitGroup
		for i, list := range lists {
			outs[i] = &bytes.Buffer{}
			g := &Globals{IO: IOStreams{Out: outs[i], Err: outs[i]}, Interactive: func() bool { return false }}
			o := &sitePreferredOptions{g: g, Name: "India", Set: list, setGiven: true}
			o.open = func() (*directory.Store, func(), error) {
				c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.AdminDN(),
					Password: slapdtest.AdminPassword, Timeout: 10 * time.Second})
				if err != nil {
					return nil, nil, err
				}
				return directory.NewStore(gatedClient{Client: c, arrived: &arrived, gate: gate}, srv.Base),
					func() { c.Close() }, nil
			}
			done.Add(1)
			go func(i int) {
				defer done.Done()
				errs[i] = o.run()
			}(i)
		}
		arrived.Wait() // both have read the list and are about to write
		close(gate)
		done.Wait()

		var won []int
		for i, err := range errs {
			if err == nil {
				won = append(won, i)
				continue
			}
			if code := ExitCode(err); code != ExitConflict {
				t.Fatalf("round %d: loser exit code %d (%v), want %d", round, code, err, ExitConflict)
			}
			if !strings.Contains(err.Error(), "changed by someone else") || !strings.Contains(hintOf(err), "re-read") {
				t.Errorf("round %d: loser says %q, hint %q", round, err, hintOf(err))
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d writers won (%v), want exactly one", round, len(won), errs)
		}
		st := directory.NewStore(mustDial(t, srv), srv.Base)
		site, err := st.Site("India")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(site.PreferredSites, lists[won[0]]) {
			t.Fatalf("round %d: stored %q (raw %q), want the winner's whole list %q", round, site.PreferredSites,
				site.PreferredRaw, lists[won[0]])
		}
		stored = site.PreferredSites
	}
}

func mustDial(t *testing.T, srv *slapdtest.Server) *ldapconn.Conn {
	t.Helper()
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestQuestionsBeforeAWriteDefaultToNo: Enter alone (the default answer)
// at any confirmation cancels, exit 1, saying nothing was written.
func TestQuestionsBeforeAWriteDefaultToNo(t *testing.T) {
	g := &Globals{IO: IOStreams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, Interactive: func() bool { return true },
		Prompter: &scriptedPrompter{answers: []string{"", "y"}}}
	err := confirm(g, false, `deleting site UK`, "Delete site UK?")
	if err == nil || ExitCode(err) != ExitError || err.Error() != `deleting site UK: cancelled: nothing written` {
		t.Fatalf("Enter: %v (exit %d), want a cancel, exit 1", err, ExitCode(err))
	}
	if err := confirm(g, false, `deleting site UK`, "Delete site UK?"); err != nil {
		t.Fatalf("y: %v", err)
	}
}
