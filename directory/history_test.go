package directory

import (
	"errors"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/history"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestRunControlOnEveryWrite: every write a connection with a run sends
// carries the run control, one at a time and in a transaction (after the
// transaction's control), and the log keeps it; a connection without a
// run sends none.
func TestRunControlOnEveryWrite(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{WithBase: true, AccessLog: true})
	run := history.Run{ID: history.NewRunID(), Command: "cpactl site create Mars", Version: "test"}
	dial := func(run history.Run) *Store {
		c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword, Run: run})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return NewStore(c, s.Base)
	}
	st := dial(run)
	describe := func(w ldapclient.Writer, text string) error {
		req := ldap.NewModifyRequest(s.Base, nil)
		req.Replace(ldapschema.AttrDescription, []string{text})
		return w.Modify(req)
	}
	if err := describe(st.Client, "one"); err != nil {
		t.Fatal(err)
	}
	conn := st.Client.(*ldapconn.Conn)
	if err := conn.Transaction(func(w ldapclient.Writer) error {
		if err := describe(w, "two"); err != nil {
			return err
		}
		return describe(w, "three")
	}); err != nil {
		t.Fatal(err)
	}
	if err := describe(dial(history.Run{}).Client, "four"); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := st.EachLogRecord(LogQuery{}, func(r history.Record) error {
		if r.DN != s.Base || r.Type != "modify" {
			return nil
		}
		got1, inTxn, err := r.RunOf()
		if err != nil {
			t.Errorf("%s: %v", r.Start, err)
		}
		line := r.Mod[0] + " run " + got1.ID
		want := run
		if inTxn {
			want.Txn = 1
		}
		if got1 != (history.Run{}) && got1 != want {
			t.Errorf("%s: run %+v, want %+v", r.Start, got1, run)
		}
		if inTxn {
			line += " in a transaction"
		}
		got = append(got, line)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"description:= one run " + run.ID,
		"description:= two run " + run.ID + " in a transaction",
		"description:= three run " + run.ID + " in a transaction",
		"description:= four run ",
	}
	if len(got) != len(want) {
		t.Fatalf("records %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// TestHistoryOnTheProvider: a consumer keeps no log; reading the history
// through one moves to its provider (its referral, when cpactl was given
// the provider's URL), and one that names no provider says it is a
// replica.
func TestHistoryOnTheProvider(t *testing.T) {
	for _, noRef := range []bool{false, true} {
		r := slapdtest.StartReplicated(t, slapdtest.Config{WithBase: true, AccessLog: true}, slapdtest.ReplicaOptions{NoUpdateRef: noRef})
		opts := ldapconn.Options{URLs: []string{r.Consumers[0].URL}, BindDN: r.Provider.AdminDN(), Password: slapdtest.AdminPassword}
		if !noRef {
			opts.WriteURL = r.Provider.URL
		}
		c, err := ldapconn.Dial(opts)
		if err != nil {
			t.Fatal(err)
		}
		st := NewStore(c, r.Provider.Base)
		n := 0
		err = st.EachLogRecord(LogQuery{}, func(history.Record) error { n++; return nil })
		var none *NoHistoryError
		switch {
		case noRef && (!errors.As(err, &none) || !none.Replica):
			t.Errorf("a consumer without updateref: %v, want a replica's NoHistoryError", err)
		case !noRef && (err != nil || n == 0):
			t.Errorf("through a consumer: %d records, %v; want the provider's", n, err)
		}
		c.Close()
	}
}
