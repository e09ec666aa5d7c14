package directory

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/history"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestAsOf: the state at a moment is the current one with the later
// changes taken back; before the log's oldest record it is refused.
func TestAsOf(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{WithBase: true, AccessLog: true})
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword,
		Run: history.Run{ID: history.NewRunID(), Command: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := NewStore(c, s.Base)
	describe := func(text string) {
		req := ldap.NewModifyRequest(s.Base, nil)
		req.Replace(ldapschema.AttrDescription, []string{text})
		if err := c.Modify(req); err != nil {
			t.Fatal(err)
		}
	}
	describe("one")
	t1 := time.Now()
	describe("two")
	past, err := st.AsOf(t1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := past.Entry(s.Base)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.GetAttributeValue(ldapschema.AttrDescription); got != "one" {
		t.Errorf("description at t1: %q, want one", got)
	}
	// A search on the value taken back finds the entry (the server, which
	// holds "two", does not), and one on the current value does not.
	for filter, want := range map[string]int{"(description=one)": 1, "(description=two)": 0, "(objectClass=domain)": 1} {
		found, err := past.Find(s.Base, ldap.ScopeWholeSubtree, filter, ldapschema.AttrDescription)
		if err != nil || len(found) != want {
			t.Errorf("at t1, %s: %d entries, %v; want %d", filter, len(found), err, want)
		}
		for _, f := range found {
			if got := f.GetAttributeValue(ldapschema.AttrDescription); got != "one" {
				t.Errorf("at t1, %s: description %q", filter, got)
			}
		}
	}
	var tooOld *TooOldError
	if _, err := st.AsOf(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)); !asTooOld(err, &tooOld) || tooOld.Oldest.IsZero() {
		t.Errorf("at 2000: %v, want the oldest moment", err)
	}
}

// TestAsOfNotesUnloggedChanges: a change made with slapadd (slapd
// stopped) is outside the log's view: --at says so.
func TestAsOfNotesUnloggedChanges(t *testing.T) {
	s := slapdtest.Start(t, slapdtest.Config{WithBase: true, AccessLog: true})
	dial := func() (*Store, *[]string) {
		c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		notes := &[]string{}
		st := NewStore(c, s.Base)
		st.Note = func(msg string) { *notes = append(*notes, msg) }
		return st, notes
	}
	st, notes := dial()
	t1 := time.Now()
	if _, err := st.AsOf(t1); err != nil || len(*notes) != 0 {
		t.Fatalf("nothing since: %v, notes %q", err, *notes)
	}
	s.Halt()
	ldif := filepath.Join(t.TempDir(), "x.ldif")
	if err := os.WriteFile(ldif, []byte("dn: ou=Unlogged,"+s.Base+"\nobjectClass: organizationalUnit\nou: Unlogged\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("/usr/sbin/slapadd", "-w", "-f", filepath.Join(s.Dir, "slapd.conf"), "-b", s.Base, "-l", ldif).CombinedOutput(); err != nil {
		t.Fatalf("slapadd: %v %s", err, out)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	st, notes = dial()
	if _, err := st.AsOf(t1); err != nil || len(*notes) != 1 || !strings.Contains((*notes)[0], "outside the history's view") {
		t.Errorf("after a slapadd: %v, notes %q", err, *notes)
	}
}

func asTooOld(err error, target **TooOldError) bool {
	e, ok := err.(*TooOldError)
	*target = e
	return ok
}
