package directory

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/history"
	"github.com/cpactl/cpactl/ldapschema"
)

// `--at TIME` (docs/history.md): the federation as it was at a moment,
// rebuilt from the current state by taking back, newest first and in
// memory (an Overlay), every change the log holds after it.

// TooOldError: the log does not reach back to the moment asked (its
// retention purged older records, or it was set up later).
type TooOldError struct {
	At     time.Time
	Oldest time.Time // zero: the log holds no record
}

func (e *TooOldError) Error() string {
	if e.Oldest.IsZero() {
		return fmt.Sprintf("the history holds no change: the federation at %s cannot be rebuilt", e.At.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("the history reaches back to %s only: the federation at %s cannot be rebuilt",
		e.Oldest.UTC().Format(time.RFC3339Nano), e.At.UTC().Format(time.RFC3339))
}

// Hint says what can be asked.
func (e *TooOldError) Hint() string {
	if e.Oldest.IsZero() {
		return "the log records changes from when it is set up (docs/history.md)"
	}
	return "pass --at " + e.Oldest.UTC().Add(time.Second).Truncate(time.Second).Format(time.RFC3339) +
		" or later: the log keeps records for its retention (docs/history.md)"
}

// oldestRecord returns the log's oldest write record (the log holds them
// in the order written), searched with a size limit of one so that the
// server stops there: a log of a million records is not read to find one.
func (s *Store) oldestRecord() (history.Record, bool, error) {
	search := func() (*ldap.SearchResult, error) {
		res, err := s.Client.Search(ldap.NewSearchRequest(ldapschema.AccessLogBase, ldap.ScopeSingleLevel, ldap.NeverDerefAliases,
			1, 0, false, "(objectClass="+ldapschema.ClassAuditWriteObject+")", logAttrs, nil))
		if ldapclient.IsCode(err, ldap.LDAPResultSizeLimitExceeded) {
			err = nil
		}
		return res, err
	}
	res, err := search()
	if err != nil {
		// No log here, or refused: EachLogRecord explains it, or moves
		// a replica's connection to its provider, where it is read again.
		if lerr := s.EachLogRecord(LogQuery{}, func(history.Record) error { return errFound }); lerr != nil && !errors.Is(lerr, errFound) {
			return history.Record{}, false, lerr
		}
		if res, err = search(); err != nil {
			return history.Record{}, false, ldapclient.OpErrorf(err, "reading the history")
		}
	}
	if res == nil || len(res.Entries) == 0 {
		return history.Record{}, false, nil
	}
	return recordOf(res.Entries[0]), true, nil
}

// errFound stops a search at its first entry.
var errFound = errors.New("found")

// reachesBack says whether the log's oldest record is at or before t:
// then the log holds every record after t, as a purge deletes the oldest
// first. It returns the oldest record's time (zero when the log holds
// none).
func (s *Store) reachesBack(t time.Time) (bool, time.Time, error) {
	r, found, err := s.oldestRecord()
	if err != nil || !found {
		return false, time.Time{}, err
	}
	oldest, err := r.Time()
	if err != nil {
		return false, time.Time{}, err
	}
	return !oldest.After(t), oldest, nil
}

// AsOf returns a store that reads the federation as it was at t: this
// store's state with every change written after t taken back in memory,
// newest first (changes the log holds as accepted in a transaction that
// was not committed are not taken back). It never writes. A log that does
// not reach back to t is a *TooOldError naming the oldest moment it does.
func (s *Store) AsOf(t time.Time) (*Store, error) {
	ok, oldest, err := s.reachesBack(t)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &TooOldError{At: t, Oldest: oldest}
	}
	col := history.NewCollector()
	newest := "" // the newest entryCSN a logged write gave its entry
	if err := s.EachLogRecord(LogQuery{Since: t.Add(time.Microsecond)}, func(r history.Record) error {
		if r.Result == 0 {
			newest = max(newest, r.EntryCSN())
		}
		return col.Add(r)
	}); err != nil {
		return nil, err
	}
	if err := s.noteUnlogged(t, newest); err != nil {
		return nil, err
	}
	ov := snapshot.NewOverlay(s.Client)
	for _, e := range col.Entries() { // newest first
		changes := e.WrittenChanges()
		for i := len(changes) - 1; i >= 0; i-- {
			if err := takeBack(ov, changes[i]); err != nil {
				return nil, err
			}
		}
	}
	at := NewStore(ov, s.DIT.Base)
	at.Note = s.Note
	at.Progress = s.Progress
	return at, nil
}

// noteUnlogged says, through Note, when the federation changed after t
// outside the log's view: its database's contextCSN (the newest change of
// any entry, slapadd's and a restore's included) is newer than t and than
// every change the log holds (newest).
func (s *Store) noteUnlogged(t time.Time, newest string) error {
	e, err := s.Entry(s.DIT.Base, "contextCSN")
	if err != nil || e == nil {
		return err
	}
	context := ""
	for _, v := range e.GetEqualFoldAttributeValues("contextCSN") {
		context = max(context, v)
	}
	stamp, _, _ := strings.Cut(context, "#")
	when, perr := history.ParseGeneralizedTime(stamp)
	newestStamp, _, _ := strings.Cut(newest, "#")
	if perr != nil || !when.After(t) || stamp <= newestStamp {
		return nil
	}
	if s.Note != nil {
		s.Note(fmt.Sprintf("the federation changed at %s outside the history's view (slapadd, a restored backup, "+
			"another provider): that change cannot be taken back, and the state shown holds it", when.UTC().Format(time.RFC3339Nano)))
	}
	return nil
}

// takeBack lays the state before c over ov.
func takeBack(ov *snapshot.Overlay, c history.Change) error {
	switch c.Op {
	case "add":
		ov.Delete(c.DN)
	case "delete":
		e := &ldap.Entry{DN: c.DN}
		for _, a := range c.Attrs {
			if !a.Hidden {
				e.Attributes = append(e.Attributes, &ldap.EntryAttribute{Name: a.Attr, Values: a.Old})
			}
		}
		ov.PutEntry(e)
	case "modify":
		// Laid over the entry when it is read: a feed's thousand writes
		// cost nothing until a command reads those entries.
		for _, a := range c.Attrs {
			if !a.Hidden {
				ov.Patch(c.DN, a.Attr, a.Old)
			}
		}
	case "modrdn":
		return moveBack(ov, c)
	}
	return nil
}

// moveBack takes a rename back: the entry at its new DN, and every entry
// below it, goes back under the old DN, with the old naming value.
func moveBack(ov *snapshot.Overlay, c history.Change) error {
	newKey := ldapschema.NormalizeDN(c.NewDN)
	var moved []*ldap.Entry
	err := ov.SearchEach(ldap.NewSearchRequest(c.NewDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		ldapclient.AnyEntry, []string{"*"}, nil), func(e *ldap.Entry) error {
		moved = append(moved, snapshot.CopyEntry(e))
		return nil
	})
	if ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range moved {
		ov.Delete(e.DN)
		key := ldapschema.NormalizeDN(e.DN)
		old := e.DN
		if key == newKey {
			old = c.DN
			for _, a := range c.Attrs { // the naming value
				snapshot.SetValues(e, a.Attr, a.Old)
			}
		} else if i := len(e.DN) - len(c.NewDN); i > 0 && strings.EqualFold(ldapschema.NormalizeDN(e.DN[i:]), newKey) {
			old = e.DN[:i] + c.DN
		}
		e.DN = old
		ov.Set(e.DN, e)
	}
	return nil
}
