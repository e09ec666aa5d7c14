package directory

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/internal/dirtest"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestSearchEachPages: a streamed search returns every entry of a
// container larger than a page, in pages, and an error from the callback
// stops it and leaves the connection usable.
func TestSearchEachPages(t *testing.T) {
	n := 2*ldapconn.PageSize + 345
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: dirtest.ManyUsers(n)})
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := NewStore(c, dit.Base)
	seen := map[string]bool{}
	err = st.Each(dit.People(), ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassInetOrgPerson), []string{ldapschema.AttrUID},
		func(e *ldap.Entry) error {
			uid := e.GetAttributeValue(ldapschema.AttrUID)
			if seen[uid] {
				return fmt.Errorf("%s twice", uid)
			}
			seen[uid] = true
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if want := n + 4; len(seen) != want { // alice, bob, "*)(uid=*", reader
		t.Fatalf("streamed %d users, want %d", len(seen), want)
	}

	stop := errors.New("enough")
	got := 0
	err = st.Each(dit.People(), ldap.ScopeSingleLevel, "(objectClass=*)", nil, func(*ldap.Entry) error {
		got++
		if got == ldapconn.PageSize+10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || got != ldapconn.PageSize+10 {
		t.Fatalf("stopping: err %v after %d entries", err, got)
	}
	users, err := st.Users()
	if err != nil || len(users) != n+4 {
		t.Fatalf("after a stopped search: %d users, %v", len(users), err)
	}
}

// TestSearchEachSizeLimit: slapd's default limit of 500 entries holds for
// paged searches of a non-admin bind too; the error says how to lift it,
// and with size.prtotal lifted the same bind reads everything.
func TestSearchEachSizeLimit(t *testing.T) {
	n := 700
	for _, tc := range []struct {
		limits string
		ok     bool
	}{
		{"sizelimit 500", false},
		{"sizelimit 500\nlimits users size.soft=500 size.hard=500 size.prtotal=unlimited", true},
	} {
		srv := slapdtest.Start(t, slapdtest.Config{LDIF: dirtest.ManyUsers(n), Limits: tc.limits})
		// The help desk: a bind that reads everything, not the root DN.
		reader := srv.Account(slapdtest.Helpdesk)
		c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: reader.DN, Password: reader.Password})
		if err != nil {
			t.Fatal(err)
		}
		users, err := NewStore(c, dit.Base).Users()
		c.Close()
		if tc.ok {
			if err != nil || len(users) != n+4 {
				t.Errorf("%q: %d users, %v", tc.limits, len(users), err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "size limit exceeded (4)") || !strings.Contains(err.Error(), "size.prtotal=unlimited") {
			t.Errorf("%q: want a size-limit error with the limits hint, got %d users, %v", tc.limits, len(users), err)
		}
	}
}

// TestFrozenServerSearch: a search (plain or paged) on a connection whose
// server stops answering fails within the timeout with a NoAnswerError
// naming the URI.
func TestFrozenServerSearch(t *testing.T) {
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: dirtest.Sample()})
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := NewStore(c, dit.Base)
	if _, err := st.Sites(); err != nil { // opens the connection of paged searches
		t.Fatal(err)
	}
	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	defer srv.Thaw()
	for name, read := range map[string]func() error{
		"entry": func() error { _, err := st.Entry(dit.Site("UK")); return err },
		"paged": func() error { _, err := st.Sites(); return err },
	} {
		start := time.Now()
		err := read()
		var na *ldapconn.NoAnswerError
		if !errors.As(err, &na) || na.URL != srv.URL || !strings.Contains(err.Error(), "did not answer within 500ms (search)") {
			t.Errorf("%s: %v, want a NoAnswerError for %s", name, err, srv.URL)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: took %s with a 500ms timeout", name, d)
		}
	}
}
