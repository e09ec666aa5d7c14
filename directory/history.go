package directory

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/history"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// The federation's history: the write records of slapd's accesslog
// overlay (ldapschema/accesslog.go), read from the log database and handed
// to package history as plain values (docs/history.md).

// LogQuery selects write records of the log: those under the store's
// base, within a time window.
type LogQuery struct {
	Since, Until time.Time // zero: no bound
	// AuthzID keeps the records of one bound DN ("": everyone's).
	AuthzID string
}

// logAttrs are the attributes of a record history reads.
var logAttrs = []string{ldapschema.AttrReqStart, ldapschema.AttrReqType, ldapschema.AttrReqDN, ldapschema.AttrReqAuthzID,
	ldapschema.AttrReqResult, ldapschema.AttrReqMessage, ldapschema.AttrReqMod, ldapschema.AttrReqOld,
	ldapschema.AttrReqNewRDN, ldapschema.AttrReqDeleteOldRDN, ldapschema.AttrReqNewSuperior,
	ldapschema.AttrReqEntryUUID, ldapschema.AttrReqSession, ldapschema.AttrReqControls, ldapschema.AttrEntryCSN}

// logFilter is the search filter of q under base.
func logFilter(base string, q LogQuery) string {
	f := "(&(objectClass=" + ldapschema.ClassAuditWriteObject + ")(" + ldapschema.AttrReqDN + ":dnSubtreeMatch:=" + ldap.EscapeFilter(base) + ")"
	// reqStart is exact to the second only (its fraction counts the
	// records of a second): the server narrows to whole seconds, then
	// EachLogRecord compares each record's time (history.Record.Time).
	if !q.Since.IsZero() {
		f += "(" + ldapschema.AttrReqStart + ">=" + history.GeneralizedTime(q.Since.Truncate(time.Second)) + ")"
	}
	if !q.Until.IsZero() {
		f += "(" + ldapschema.AttrReqStart + "<=" + history.GeneralizedTime(q.Until.Truncate(time.Second).Add(time.Second-time.Microsecond)) + ")"
	}
	if q.AuthzID != "" {
		f += "(" + ldapschema.AttrReqAuthzID + "=" + ldap.EscapeFilter(q.AuthzID) + ")"
	}
	return f + ")"
}

// EachLogRecord streams the write records q selects, in the order slapd
// logged them (oldest first: the log database holds them in that order).
// A server without the log is a *NoHistoryError; a bind that may not read
// it, a *RefusedError.
func (s *Store) EachLogRecord(q LogQuery, each func(history.Record) error) error {
	err := s.eachLogRecord(q, each)
	var none *NoHistoryError
	if c, ok := s.Client.(*ldapconn.Conn); ok && errors.As(err, &none) && !c.OnProvider() {
		// A read-only replica has no log: the provider has. The
		// connection moves there (as a write would), and the federation
		// read next is the provider's too, as the log describes it.
		if moved, merr := c.ToProvider(); merr != nil {
			return &NoHistoryError{Server: none.Server, Replica: true, Err: merr}
		} else if moved {
			return s.eachLogRecord(q, each)
		}
	}
	return err
}

func (s *Store) eachLogRecord(q LogQuery, each func(history.Record) error) error {
	var stopped error
	err := s.Client.SearchEach(ldap.NewSearchRequest(ldapschema.AccessLogBase, ldap.ScopeSingleLevel, ldap.NeverDerefAliases, 0, 0, false,
		logFilter(s.DIT.Base, q), logAttrs, nil), func(e *ldap.Entry) error {
		s.Progress.Add(1)
		r := recordOf(e)
		if t, err := r.Time(); err == nil && ((!q.Since.IsZero() && t.Before(q.Since)) || (!q.Until.IsZero() && t.After(q.Until))) {
			return nil
		}
		if err := each(r); err != nil {
			stopped = err
			return err
		}
		return nil
	})
	switch {
	case stopped != nil:
		return stopped
	case err == nil:
		return nil
	case ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) && !s.identity().Anonymous:
		return &NoHistoryError{Server: s.server()}
	}
	if refused, ok := s.Refused(err, "read", "the history ("+ldapschema.AccessLogBase+")", ldapschema.RoleHelpdesk); ok {
		if re, isRefusal := refused.(*RefusedError); isRefusal {
			re.Except = ldapschema.HistoryExcept
		}
		return refused
	}
	return ldapclient.OpErrorf(err, "reading the history")
}

// server names the server a store reads, for messages.
func (s *Store) server() string {
	if c, ok := s.Client.(*ldapconn.Conn); ok {
		return c.Server()
	}
	return "the snapshot"
}

// recordOf converts a log entry.
func recordOf(e *ldap.Entry) history.Record {
	get := e.GetEqualFoldAttributeValue
	result, _ := strconv.Atoi(get(ldapschema.AttrReqResult))
	return history.Record{
		Start:        get(ldapschema.AttrReqStart),
		Type:         get(ldapschema.AttrReqType),
		DN:           get(ldapschema.AttrReqDN),
		AuthzID:      get(ldapschema.AttrReqAuthzID),
		Result:       result,
		Message:      get(ldapschema.AttrReqMessage),
		Mod:          e.GetEqualFoldAttributeValues(ldapschema.AttrReqMod),
		Old:          e.GetEqualFoldAttributeValues(ldapschema.AttrReqOld),
		NewRDN:       get(ldapschema.AttrReqNewRDN),
		DeleteOldRDN: strings.EqualFold(get(ldapschema.AttrReqDeleteOldRDN), "TRUE"),
		NewSuperior:  get(ldapschema.AttrReqNewSuperior),
		EntryUUID:    get(ldapschema.AttrReqEntryUUID),
		Session:      get(ldapschema.AttrReqSession),
		Controls:     e.GetEqualFoldAttributeValues(ldapschema.AttrReqControls),
		CSN:          get(ldapschema.AttrEntryCSN),
	}
}

// NoHistoryError: the server holds no log database (cn=accesslog): the
// accesslog overlay is not set up there, or it is a consumer, whose copy
// of the federation has no history (the log lives on the provider) and
// whose provider could not be reached (Err).
type NoHistoryError struct {
	Server  string
	Replica bool
	Err     error
}

func (e *NoHistoryError) Error() string {
	if e.Replica {
		return fmt.Sprintf("%s is a read-only replica, which keeps no history: the history is on its provider, which cannot be reached from here (%s)",
			e.Server, ldapclient.Describe(e.Err))
	}
	return fmt.Sprintf("%s keeps no history: it has no log database %s", e.Server, ldapschema.AccessLogBase)
}

// Hint says how to get one.
func (e *NoHistoryError) Hint() string {
	if e.Replica {
		return "pass the provider's URL with -H (or --write-url), where the log is (docs/history.md)"
	}
	return "the history is read on the provider (a consumer's copy has none: pass the provider's URL with -H); " +
		"to set the log up there, see `cpactl schema print --format accesslog` and docs/history.md"
}

// ObjectKinds are the kinds `history --object KIND/NAME` takes, as
// written there (the table's kind names, "rds host" as host, "connection
// server" as cs).
var ObjectKinds = map[string]string{
	"site": objkind.Site, "pod": objkind.Pod, "cs": objkind.ConnectionServer, "pool": objkind.Pool, "farm": objkind.Farm,
	"host": objkind.Host, "entitlement": objkind.Entitlement, "user": objkind.User, "group": objkind.Group,
	"computer": objkind.Computer, "session": objkind.Session,
}

// ObjectIdentity returns the DN and entryUUID of the object kind/name as
// it is now, for following it through the log. An object that no longer
// exists is named by the DN it would have (uuid ""), when its kind lives
// in one container; one below the pods must exist (*NotFoundError).
func (s *Store) ObjectIdentity(kind, name string) (dn, uuid string, err error) {
	ns, ok := nameSearches[kind]
	if !ok {
		return "", "", fmt.Errorf("unknown kind %q", kind)
	}
	e, err := s.FindOne(kind, name, ns.base(s.DIT), ns.scope, ldapclient.And(ns.filter, ldapclient.Filter(ns.attr, name)))
	if err != nil {
		return "", "", err
	}
	if e != nil {
		got, err := s.Entry(e.DN, "entryUUID")
		if err != nil {
			return "", "", err
		}
		return e.DN, got.GetEqualFoldAttributeValue("entryUUID"), nil
	}
	if ns.scope != ldap.ScopeSingleLevel {
		return "", "", s.notFound(kind, name)
	}
	return ldapschema.RDN(ns.attr, name) + "," + ns.base(s.DIT), "", nil
}

// UndoPlan turns the steps that take back logged changes
// (history.Inverse) into a plan of writes, each asserting that its entry
// still holds what the change left (a modify: the values it wrote; a
// delete: the entry is there; an add: the name is free), so that a change
// made since fails with a conflict instead of being overwritten. words
// describes each step for people (verb and object). A move to another
// parent is refused: slapd 2.5 cannot take one in a transaction.
func UndoPlan(steps []history.Step, words func(history.Step) (verb, object string)) (*Plan, error) {
	p := &Plan{Conflict: "an object the run changed"}
	for _, st := range steps {
		verb, object := words(st)
		var w Write
		switch st.Op {
		case "modify":
			var changes []ldap.Change
			var expect []string
			for _, a := range st.Attrs {
				changes = append(changes, ldap.Change{Operation: ldap.ReplaceAttribute,
					Modification: ldap.PartialAttribute{Type: a.Attr, Vals: a.Old}})
				if info, ok := ldapschema.LookupAttribute(a.Attr); ok && info.Equality == ldapschema.EqualityNone {
					continue // no equality rule: not assertable
				}
				if len(a.New) == 0 {
					expect = append(expect, ldapclient.Not("("+a.Attr+"=*)"))
				}
				for _, v := range a.New {
					expect = append(expect, ldapclient.Filter(a.Attr, v))
				}
			}
			w = ModifyWrite(verb, object, st.DN, changes)
			if len(expect) > 0 {
				var err error
				if w, err = w.Asserting(ldapclient.And(expect...)); err != nil {
					return nil, err
				}
			}
		case "delete":
			w = DeleteWrite(verb, object, st.DN)
		case "add":
			a := ldapschema.Attrs{}
			for _, v := range st.Attrs {
				a.Set(v.Attr, v.Old...)
			}
			w = AddWrite(verb, object, st.DN, a)
		case "rename":
			if st.NewSuperior != "" {
				return nil, fmt.Errorf("%s was moved to another parent: %w", object, ldapconn.ErrMoveInTransaction)
			}
			w = RenameWrite(verb, object, st.DN, st.NewRDN)
		default:
			return nil, fmt.Errorf("unknown step %q", st.Op)
		}
		p.Add(w)
	}
	return p, nil
}
