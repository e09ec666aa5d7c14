package directory

// Refusals that say why: when slapd refuses a read or a write because of
// who the connection is (insufficient access, 50; or, on an anonymous
// connection, a base it shows nothing of), the error names the bound
// identity and its roles, the object, and the role that would allow it
// (ldapschema.DIT.RoleToWrite, the same rules the ACLs are generated
// from). cpactl decides nothing itself: it explains slapd's answer.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// RefusedError is an operation slapd refused because of who the
// connection is (exit code 4): "uid=hedy,... (helpdesk) may not update
// site India (pae-PreferredSite): that needs the admin role".
type RefusedError struct {
	Who Identity
	// Action and Object say what was refused: "read" and "the base
	// dc=...", "update" and "site India".
	Action string
	Object string
	Attrs  []string // the attributes a change writes, when known
	// Needs is the role that would allow it; Except, roles that allow
	// what Needs allows but not this (ldapschema.HistoryExcept).
	Needs  ldapschema.Role
	Except []ldapschema.Role
	// Transaction: a transaction was refused at its commit, so nothing
	// of it was written; Object is then its first write that needs a
	// role the identity lacks (slapd does not say which write failed).
	Transaction bool
	// Hidden: the server answered "no such object" to an anonymous
	// connection, which is how slapd hides what it may not see.
	Hidden bool
	Err    error // the server's answer
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString(e.Who.Name())
	if !e.Who.Anonymous {
		b.WriteString(" (" + e.Who.RolesText() + ")")
	}
	action := e.Action
	if action == "add" {
		action = "create"
	}
	fmt.Fprintf(&b, " may not %s %s", action, e.Object)
	if len(e.Attrs) > 0 && !strings.HasSuffix(e.Object, ")") {
		fmt.Fprintf(&b, " (%s)", strings.Join(e.Attrs, ", "))
	}
	fmt.Fprintf(&b, ": that needs the %s role", e.Needs)
	for _, r := range e.Except {
		fmt.Fprintf(&b, " (the %s role does not give it)", r)
	}
	if e.holds() {
		// The groups say it holds the role: slapd's ACLs are not cpactl's.
		b.WriteString(", which it holds: the server's ACLs differ from `cpactl schema print --format acl`")
	}
	if e.Transaction {
		b.WriteString("; the transaction was refused, nothing was written")
	}
	if e.Hidden {
		b.WriteString(" (the server shows an anonymous connection nothing there, not even whether it exists)")
	} else {
		b.WriteString(" (" + ldapclient.Describe(e.Err) + ")")
	}
	return b.String()
}

func (e *RefusedError) Unwrap() error { return e.Err }

// holds says whether the identity holds a role that allows what was
// refused.
func (e *RefusedError) holds() bool {
	for _, r := range e.Who.Roles {
		if r.Allows(e.Needs) && !slices.Contains(e.Except, r) {
			return true
		}
	}
	return false
}

// Hint says how to get the access.
func (e *RefusedError) Hint() string {
	if e.Who.Anonymous {
		return "bind with -D DN and -W (or -y FILE) as an account that holds the " + string(e.Needs) + " role"
	}
	return fmt.Sprintf("bind as an account that holds the %s role, or ask an admin: cpactl role add-member %s %s",
		e.Needs, e.Needs, shellWord(e.Who.Name()))
}

// shellWord quotes a DN for a suggested command line.
func shellWord(s string) string {
	if strings.ContainsAny(s, " '\"\\$`!*?;&|<>()") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// isRefusal reports whether err is slapd's refusal because of who the
// connection is, not yet explained: insufficient access (50), or an
// Anonymous connection's *AuthRequiredError (8, or 50).
func isRefusal(err error) bool {
	var already *RefusedError
	var auth *ldapclient.AuthRequiredError
	switch {
	case err == nil, errors.As(err, &already):
		return false
	case errors.As(err, &auth):
		return auth.Anonymous
	}
	return ldapclient.IsCode(err, ldap.LDAPResultInsufficientAccessRights)
}

// anonymousRefusal keeps the server's answer to an anonymous connection
// as an *AuthRequiredError inside the refusal ("authentication required").
func anonymousRefusal(err error) error {
	var auth *ldapclient.AuthRequiredError
	if errors.As(err, &auth) {
		return err
	}
	return &ldapclient.AuthRequiredError{Anonymous: true, Err: err}
}

// readRefused explains a refused read of dn: a *RefusedError (an
// *AuthRequiredError on an anonymous connection), and true; err and
// false when it is no refusal.
func (s *Store) readRefused(err error, dn string) (error, bool) {
	if !isRefusal(err) {
		return err, false
	}
	id := s.identity()
	if id.Anonymous {
		err = anonymousRefusal(err)
	}
	return &RefusedError{Who: id, Action: "read", Object: s.DIT.Describe(dn), Needs: ldapschema.RoleToRead, Err: err}, true
}

// writeRefused explains refused writes, made alone or as one transaction,
// as readRefused does: the write named is the first that needs the most
// allowed role the identity lacks (for one write, that write).
func (s *Store) writeRefused(err error, writes []Write, transaction bool) (error, bool) {
	if !isRefusal(err) {
		return err, false
	}
	var named *Write
	var needs ldapschema.Role
	var namedAttrs []string
	namedLacks := false
	id := s.identity()
	for i, w := range writes {
		if w.Verb == "touch" {
			continue // slapd lets any bound account touch (guard.go)
		}
		attrs := w.attrs()
		r := s.DIT.RoleToWrite(w.DN, attrs)
		lacks := !id.Holds(r)
		better := named == nil || (lacks && !namedLacks) ||
			(lacks == namedLacks && (!needs.Allows(r) || (r == needs && verbRank(w.Verb) > verbRank(named.Verb))))
		if better {
			named, needs, namedAttrs, namedLacks = &writes[i], r, attrs, lacks
		}
	}
	if named == nil {
		return err, false
	}
	if id.Anonymous {
		err = anonymousRefusal(err)
	}
	return &RefusedError{Who: id, Action: named.Verb, Object: named.Object, Attrs: namedAttrs, Needs: needs,
		Transaction: transaction, Err: err}, true
}

// verbRank orders writes for naming the one refused: a rename or a delete
// says more of a change than the updates of what refers to it.
func verbRank(verb string) int {
	switch verb {
	case "rename":
		return 3
	case "delete":
		return 2
	case "create", "add":
		return 1
	}
	return 0
}

// attrs returns the attributes a modify writes (none for other writes).
func (w Write) attrs() []string {
	if w.req.Modify == nil {
		return nil
	}
	var out []string
	for _, c := range w.req.Modify.Changes {
		if !containsFold(out, c.Modification.Type) {
			out = append(out, c.Modification.Type)
		}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, l := range list {
		if strings.EqualFold(l, s) {
			return true
		}
	}
	return false
}

// identity returns who the connection is, with its roles when they can
// be read; a client that cannot say is "this connection".
func (s *Store) identity() Identity {
	s.mu.Lock()
	cached := s.who
	s.mu.Unlock()
	if cached != nil {
		return *cached
	}
	id, err := s.WhoAmI()
	if err != nil {
		id = Identity{DN: "this connection", Unknown: err.Error()}
	}
	s.mu.Lock()
	s.who = &id
	s.mu.Unlock()
	return id
}

// Refused explains err as slapd's refusal of action on object, which
// needs the role needs: a *RefusedError naming who the connection is, and
// true. "No such object" counts as a refusal here: for an entry that
// always exists (cn=schema,cn=config) it is slapd hiding it from the
// bind. false, and err, when err is no refusal.
func (s *Store) Refused(err error, action, object string, needs ldapschema.Role) (error, bool) {
	hidden := ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject)
	if !isRefusal(err) && !hidden {
		return err, false
	}
	id := s.identity()
	if id.Anonymous && !hidden {
		err = anonymousRefusal(err)
	}
	return &RefusedError{Who: id, Action: action, Object: object, Needs: needs, Hidden: hidden && id.Anonymous, Err: err}, true
}
