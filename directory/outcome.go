package directory

import (
	"fmt"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/ldapschema"
)

// NotWrittenError says a write whose answer never came was found, by
// reading it again, not to have been applied (exit code 1): nothing was
// written.
type NotWrittenError struct {
	What string
	Err  error
}

func (e *NotWrittenError) Error() string {
	return fmt.Sprintf("%s was not written: %s, and reading it again for %s shows the server did not apply it", e.What, ldapclient.Describe(e.Err), ldapconn.SettleWait)
}

func (e *NotWrittenError) Unwrap() error { return e.Err }

// reconnecter is a client that can replace its connection with a fresh
// one to the same server.
type reconnecter interface {
	Reconnect() error
}

// settle turns an unanswered write into what a re-read on a fresh
// connection finds: nil when every write is in place (written), a
// *NotWrittenError when none is, an *OutcomeUnknownError (exit 7) when the
// re-read fails or finds some in place and others not. Any other err is
// returned as is.
func (s *Store) settle(err error, what string, writes []Write) error {
	if err == nil || !ldapconn.Unanswered(err) {
		return err
	}
	unknown := &ldapconn.OutcomeUnknownError{What: what, Err: err}
	r, ok := s.Client.(reconnecter)
	if !ok {
		return unknown
	}
	if rerr := r.Reconnect(); rerr != nil {
		unknown.Err = fmt.Errorf("%v; reading it again failed too: %v", ldapclient.Describe(err), ldapclient.Describe(rerr))
		return unknown
	}
	// A request that reached the server just before the connection broke
	// may still be running there: a write not in place yet is read again
	// until SettleWait has passed before it is called not written.
	deadline := time.Now().Add(ldapconn.SettleWait)
	for {
		applied, missing := 0, 0
		for _, w := range lastWrites(writes) {
			in, cerr := w.inPlace(s.Client)
			if cerr != nil {
				unknown.Err = fmt.Errorf("%v; reading it again failed too: %v", ldapclient.Describe(err), ldapclient.Describe(cerr))
				return unknown
			}
			if in {
				applied++
			} else {
				missing++
			}
		}
		if missing == 0 {
			if s.Note != nil {
				s.Note(fmt.Sprintf("%s got no answer (%s); a re-read on a fresh connection shows it was written", what, ldapclient.Describe(err)))
			}
			return nil
		}
		if time.Now().After(deadline) {
			if applied == 0 {
				return &NotWrittenError{What: what, Err: err}
			}
			return unknown
		}
		time.Sleep(settlePoll)
	}
}

const settlePoll = 50 * time.Millisecond

// lastWrites keeps, of the writes to each entry, the last one: a later
// write of the same DN (or a rename or delete of it) decides what a re-read
// must find there.
func lastWrites(writes []Write) []Write {
	last := make(map[string]int, len(writes))
	for i, w := range writes {
		last[ldapschema.NormalizeDN(w.DN)] = i
	}
	var kept []Write
	for i, w := range writes {
		if last[ldapschema.NormalizeDN(w.DN)] == i {
			kept = append(kept, w)
		}
	}
	return kept
}

// inPlace reports whether the directory holds what the write makes: the
// entry added, the entry deleted, the values a modify sets, the entry
// renamed. It reads one or two entries.
func (w Write) inPlace(c ldapclient.Client) (bool, error) {
	exists := func(dn string) (*ldap.Entry, error) {
		res, err := c.Search(ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false,
			ldapclient.AnyEntry, []string{"*"}, nil))
		if ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if len(res.Entries) == 0 {
			return nil, nil
		}
		return res.Entries[0], nil
	}
	switch {
	case w.req.Add != nil:
		e, err := exists(w.DN)
		return e != nil, err
	case w.req.Del != nil:
		e, err := exists(w.DN)
		return e == nil, err
	case w.req.Rename != nil:
		e, err := exists(w.DN)
		if err != nil || e != nil {
			return false, err
		}
		parent := w.req.Rename.NewSuperior
		if parent == "" {
			parent = ldapschema.ParentOf(w.DN)
		}
		moved, err := exists(w.req.Rename.NewRDN + "," + parent)
		return moved != nil, err
	case w.req.Modify != nil:
		e, err := exists(w.DN)
		if err != nil || e == nil {
			return false, err
		}
		for _, ch := range w.req.Modify.Changes {
			name := ch.Modification.Type
			have := ldapschema.ValueKeys(name, e.GetEqualFoldAttributeValues(name))
			want := ldapschema.ValueKeys(name, ch.Modification.Vals)
			switch ch.Operation {
			case ldap.ReplaceAttribute:
				if len(have) != len(want) {
					return false, nil
				}
				for k := range want {
					if !have[k] {
						return false, nil
					}
				}
			case ldap.AddAttribute:
				for k := range want {
					if !have[k] {
						return false, nil
					}
				}
			case ldap.DeleteAttribute:
				if len(want) == 0 && len(have) > 0 {
					return false, nil
				}
				for k := range want {
					if have[k] {
						return false, nil
					}
				}
			}
		}
		return true, nil
	}
	return true, nil
}
