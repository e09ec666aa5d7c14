package directory

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/progress"
)

// Store reads and writes cpactl's objects through a Client, under one base
// DN. Its methods build every DN with ldapschema.DIT and every filter with
// ldap.EscapeFilter.
type Store struct {
	Client ldapclient.Client
	DIT    ldapschema.DIT
	// Note, when set, receives what the user should know but that is not
	// the command's output: a write whose answer was lost and that a
	// re-read found in place.
	Note func(msg string)
	// Progress, when set, counts the entries Each delivers and the writes
	// ApplyPlan sends, for a progress display; nil counts nothing.
	Progress *progress.Counter
	// OneTransaction makes ApplyPlan write a plan in one transaction
	// whatever its size (up to MaxTxnWrites) or refuse it, instead of
	// cutting it into transactions of TxnWrites (apply --atomic).
	OneTransaction bool

	mu   sync.Mutex
	read map[string]string // normalized DN -> the entryCSN read (see Update)
	who  *Identity         // who the connection is, once asked (refused.go)
}

// NewStore returns a store for the directory under base.
func NewStore(c ldapclient.Client, base string) *Store {
	if conn, ok := c.(*ldapconn.Conn); ok {
		conn.SetProbeDN(base)
	}
	return &Store{Client: c, DIT: ldapschema.DIT{Base: base}}
}

// objectAttrs is what a read of one object asks for: its attributes and
// its entryCSN, which Update asserts.
var objectAttrs = []string{"*", ldapschema.AttrEntryCSN}

// remember notes the entryCSN of an object read, for Update.
func (s *Store) remember(e *ldap.Entry) {
	if e.GetEqualFoldAttributeValue(ldapschema.AttrEntryCSN) != "" {
		s.rememberKey(e, ldapschema.NormalizeDN(e.DN))
	}
}

// rememberKey is remember for an entry whose DN's key (NormalizeDN) is
// known.
func (s *Store) rememberKey(e *ldap.Entry, key string) {
	csn := e.GetEqualFoldAttributeValue(ldapschema.AttrEntryCSN)
	if csn == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read == nil {
		s.read = map[string]string{}
	}
	s.read[key] = csn
}

// Entry reads one entry by DN; it returns nil, nil when it does not exist.
// Without attrs it reads the whole entry, and remembers its entryCSN for
// Update.
func (s *Store) Entry(dn string, attrs ...string) (*ldap.Entry, error) {
	whole := len(attrs) == 0
	if whole {
		attrs = objectAttrs
	}
	res, err := s.Client.Search(ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false,
		ldapclient.AnyEntry, attrs, nil))
	if ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) {
		if hidden := s.hiddenFromAnonymous(dn, err); hidden != nil {
			return nil, hidden
		}
		return nil, nil
	}
	if err != nil {
		if refused, ok := s.readRefused(err, dn); ok {
			return nil, refused
		}
		return nil, ldapclient.OpErrorf(err, "reading %s", dn)
	}
	if len(res.Entries) == 0 {
		return nil, nil
	}
	if whole {
		s.remember(res.Entries[0])
	}
	return res.Entries[0], nil
}

// Find searches under base; a base that does not exist is a *LayoutError
// (exit 3): the base DN is wrong, or `cpactl init` has not run. The search
// is paged (Client.SearchEach); Find collects what it streams, so use Each
// for reads that can be as large as the directory.
func (s *Store) Find(base string, scope int, filter string, attrs ...string) ([]*ldap.Entry, error) {
	var entries []*ldap.Entry
	err := s.Each(base, scope, filter, attrs, func(e *ldap.Entry) error {
		entries = append(entries, e)
		return nil
	})
	return entries, err
}

// Each streams the entries a search under base finds to each, as Find
// finds them, without holding them: memory stays bounded however many
// there are. A base that does not exist is a *LayoutError, known from the
// search's own answer (its matched DN), in the same round trip. An error
// from each stops the search and is returned as is.
func (s *Store) Each(base string, scope int, filter string, attrs []string, each func(*ldap.Entry) error) error {
	if len(attrs) == 0 {
		attrs = []string{"*"}
	}
	var stopped error
	err := s.Client.SearchEach(ldap.NewSearchRequest(base, scope, ldap.NeverDerefAliases, 0, 0, false,
		filter, attrs, nil), func(e *ldap.Entry) error {
		s.Progress.Add(1)
		if err := each(e); err != nil {
			stopped = err
			return err
		}
		return nil
	})
	switch {
	case stopped != nil:
		return stopped
	case ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject):
		return s.layoutError(base, err)
	case ldapclient.IsCode(err, ldap.LDAPResultSizeLimitExceeded):
		return fmt.Errorf("%w (hint: the server limits how many entries this bind may read; "+
			"give the bind DN `limits dn.exact=\"DN\" size.prtotal=unlimited` in slapd's configuration, see docs/performance.md)",
			ldapclient.OpErrorf(err, "searching %s for %s", base, filter))
	case err != nil:
		if refused, ok := s.readRefused(err, base); ok {
			return refused
		}
		return ldapclient.OpErrorf(err, "searching %s for %s", base, filter)
	}
	return nil
}

// FindOne searches for at most one entry; nil when none matches. More than
// one match is an *AmbiguousError naming the kind (names are unique within
// a kind).
func (s *Store) FindOne(kind, name, base string, scope int, filter string) (*ldap.Entry, error) {
	entries, err := s.Find(base, scope, filter, objectAttrs...)
	if err != nil {
		return nil, err
	}
	switch len(entries) {
	case 0:
		return nil, nil
	case 1:
		s.remember(entries[0])
		return entries[0], nil
	}
	dns := make([]string, len(entries))
	for i, e := range entries {
		dns[i] = e.DN
	}
	return nil, &AmbiguousError{Kind: kind, Name: name, DNs: dns}
}

// Add adds an entry, turning "already exists" into a clear error.
//
// Written directly (not in a transaction), an add whose answer never came
// is settled by reading it again (written, not written, or unknown); an
// add that refers to other entries goes in one transaction with their
// touches (guarded), and a parent gone meanwhile is a *ConflictError.
func (s *Store) Add(w ldapclient.Writer, dn string, a ldapschema.Attrs) error {
	req := a.AddRequest(dn)
	if s.direct(w) {
		if ok, err := s.guarded(Write{Verb: "create", Object: s.DIT.Describe(dn), DN: dn, req: ldapconn.Request{Add: req}}); ok {
			return err
		}
	}
	if err := w.Add(req); err != nil {
		if s.direct(w) && ldapconn.Unanswered(err) {
			return s.settle(err, "adding "+dn, []Write{{DN: dn, req: ldapconn.Request{Add: req}}})
		}
		if s.direct(w) && IsNoSuchObject(err) {
			// Its parent was read, so it is gone since.
			return s.readFromReplica(&ldapclient.ConflictError{What: ldapschema.ParentOf(dn), Err: err})
		}
		if refused, ok := s.writeRefused(err, []Write{{Verb: "create", Object: s.DIT.Describe(dn), DN: dn, req: ldapconn.Request{Add: req}}}, false); ok {
			return refused
		}
		return ldapclient.OpErrorf(err, "adding %s", dn)
	}
	return nil
}

// guarded writes w, a write made directly, in one transaction with the
// touches of the entries it makes its entry refer to (guard.go), and
// reports true; when it refers to none, it writes nothing and reports
// false (w goes alone). A touched entry gone or changed since it was read
// is a *ConflictError; "already exists" stays visible to IsAlreadyExists.
func (s *Store) guarded(w Write) (bool, error) {
	refs := s.touches([]Write{w}, scopeOf([]Write{w}))
	if len(refs) == 0 {
		return false, nil
	}
	// The conflict names the entries referred to (not those above them)
	// by their names: "S1, P1 (which cn=Q,ou=Pods,... refers to)".
	touched := writtenDNs(refs)
	var names []string
	for _, dn := range s.referredDNs(w) {
		if k := ldapschema.NormalizeDN(dn); touched[k] {
			delete(touched, k)
			names = append(names, ldapschema.NameOf(dn))
		}
	}
	if len(names) == 0 {
		for _, t := range refs {
			names = append(names, t.DN)
		}
	}
	what := strings.Join(names, ", ") + " (which " + w.DN + " refers to)"
	if w.req.Add == nil {
		what = w.DN + ", or " + what
	}
	return true, s.applyPlan(&Plan{Writes: []Write{w}, Conflict: what})
}

// direct reports whether w is the store's client itself, not a
// transaction's writer (whose writes are settled at the commit).
func (s *Store) direct(w ldapclient.Writer) bool { return any(w) == any(s.Client) }

// ApplyChanges modifies dn with changes; it does nothing when there are
// none.
func (s *Store) ApplyChanges(w ldapclient.Writer, dn string, changes []ldap.Change, controls ...ldap.Control) error {
	if len(changes) == 0 {
		return nil
	}
	req := ldap.NewModifyRequest(dn, controls)
	req.Changes = changes
	if s.direct(w) {
		if ok, err := s.guarded(Write{Verb: "change", Object: s.DIT.Describe(dn), DN: dn, req: ldapconn.Request{Modify: req}}); ok {
			return err
		}
	}
	if err := w.Modify(req); err != nil {
		if ldapclient.IsCode(err, ldap.LDAPResultAssertionFailed) {
			return s.readFromReplica(&ldapclient.ConflictError{What: dn})
		}
		if s.direct(w) && ldapconn.Unanswered(err) {
			return s.settle(err, "modifying "+dn, []Write{{DN: dn, req: ldapconn.Request{Modify: req}}})
		}
		if refused, ok := s.writeRefused(err, []Write{{Verb: "change", Object: s.DIT.Describe(dn), DN: dn, req: ldapconn.Request{Modify: req}}}, false); ok {
			return refused
		}
		return ldapclient.OpErrorf(err, "modifying %s", dn)
	}
	return nil
}

// Update modifies an object this store read (Entry, or a read by name)
// with changes, asserting that it is still as it was read: the modify
// carries an assertion on the entryCSN read, which slapd changes on every
// write, so a change someone else made in between fails the whole modify
// with a *ConflictError (exit 5) instead of being overwritten. An object
// the store did not read, or read from a server that keeps no entryCSN, is
// modified without the assertion. It does nothing when there are no
// changes.
func (s *Store) Update(dn string, changes []ldap.Change) error {
	if len(changes) == 0 {
		return nil
	}
	key := ldapschema.NormalizeDN(dn)
	s.mu.Lock()
	csn, ok := s.read[key]
	s.mu.Unlock()
	var controls []ldap.Control
	if ok {
		ctl, err := ldapconn.AssertionControl(ldapclient.Filter(ldapschema.AttrEntryCSN, csn))
		if err != nil {
			return err
		}
		controls = append(controls, ctl)
	}
	if err := s.ApplyChanges(s.Client, dn, changes, controls...); err != nil {
		return err
	}
	// The entry has a new entryCSN now, which this store did not read.
	s.mu.Lock()
	delete(s.read, key)
	s.mu.Unlock()
	return nil
}

// Settings reads cn=Common. A missing cn=Common in the layout means every
// default; a missing base or layout is a *LayoutError, as for every read:
// the server's matched DN tells them apart (the layout is there when it is
// cn=Common's parent). A base the bind may not read is hidden as missing.
func (s *Store) Settings() (ldapschema.SettingsRecord, error) {
	dn := s.DIT.Settings()
	res, err := s.Client.Search(ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false,
		ldapclient.AnyEntry, objectAttrs, nil))
	var e *ldap.Entry
	var le *ldap.Error
	switch {
	case ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) && errors.As(err, &le) &&
		ldapschema.NormalizeDN(le.MatchedDN) == ldapschema.NormalizeDN(s.DIT.Global()):
		// The layout without cn=Common: the defaults are in force.
	case ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject):
		return ldapschema.SettingsRecord{}, s.layoutError(dn, err)
	case err != nil:
		if refused, ok := s.readRefused(err, dn); ok {
			return ldapschema.SettingsRecord{}, refused
		}
		return ldapschema.SettingsRecord{}, ldapclient.OpErrorf(err, "reading %s", dn)
	case len(res.Entries) > 0:
		e = res.Entries[0]
		s.remember(e)
	}
	rec, err := ldapschema.SettingsFromEntry(e)
	if e == nil {
		rec.DN = dn
	}
	return rec, err
}

// layoutError explains a search whose base is missing, from the deepest
// existing entry the server matched. With none matched, a live server's
// naming contexts (one more read, on this error only) tell a base it
// holds no database for.
func (s *Store) layoutError(searchBase string, err error) error {
	var le *ldap.Error
	matched := ""
	if errors.As(err, &le) {
		matched = le.MatchedDN
	}
	exists := matched != "" && ldapschema.IsUnder(matched, s.DIT.Base)
	if conn, ok := s.Client.(*ldapconn.Conn); ok && matched == "" {
		if contexts, err := conn.NamingContexts(); err == nil && len(contexts) > 0 && !ldapconn.UnderAny(s.DIT.Base, contexts) {
			return &ldapconn.LayoutError{Base: s.DIT.Base, DN: searchBase, Contexts: contexts}
		}
		if conn.Anonymous() {
			return hiddenRefusal(s.DIT, searchBase, err)
		}
	}
	return &ldapconn.LayoutError{Base: s.DIT.Base, DN: searchBase, BaseExists: exists, Enclosing: s.enclosingLayout(exists)}
}

// notEnclosed refuses a base that lies inside a cpactl layout (a
// *LayoutError naming it): what init, apply and export would do there
// (nest a second layout inside the first, or read a container as a
// federation) is never what was meant. For a base no layout could hold
// (the usual case) it reads nothing.
func (s *Store) notEnclosed() error {
	if x := s.enclosingLayout(true); x != "" {
		return &ldapconn.LayoutError{Base: s.DIT.Base, DN: s.DIT.Base, BaseExists: true, Enclosing: x}
	}
	return nil
}

// enclosingLayout returns the base of a cpactl layout that holds this
// store's base inside it (ldapschema.LayoutsAround: -b ou=Sites,dc=example
// names a container of dc=example's layout), when the base exists and
// such a layout is there (its ou=Sites container is read, one read per
// candidate, on this error path only); "" otherwise.
func (s *Store) enclosingLayout(baseExists bool) string {
	if !baseExists {
		return ""
	}
	for _, x := range ldapschema.LayoutsAround(s.DIT.Base) {
		if e, err := s.Entry(ldapschema.DIT{Base: x}.Sites(), "1.1"); err == nil && e != nil {
			return x
		}
	}
	return ""
}

// hiddenRefusal is what slapd's "no such object" with nothing matched
// means on an anonymous connection: it hides what it may not read, the
// base included (cpactl's ACLs give anonymous nothing).
func hiddenRefusal(dit ldapschema.DIT, dn string, err error) error {
	return &RefusedError{Who: Identity{Anonymous: true}, Action: "read", Object: dit.Describe(dn),
		Needs: ldapschema.RoleToRead, Hidden: true, Err: err}
}

// hiddenFromAnonymous returns the refusal an entry's "no such object"
// (err) is on an anonymous connection when nothing was matched and the
// entry lies in one of the server's naming contexts; nil otherwise (the
// entry does not exist, as a bound reader learns from the matched DN).
func (s *Store) hiddenFromAnonymous(dn string, err error) error {
	conn, ok := s.Client.(*ldapconn.Conn)
	var le *ldap.Error
	if !ok || !conn.Anonymous() || !errors.As(err, &le) || le.MatchedDN != "" {
		return nil
	}
	if contexts, cerr := conn.NamingContexts(); cerr != nil || !ldapconn.UnderAny(dn, contexts) {
		return nil
	}
	return hiddenRefusal(s.DIT, dn, err)
}

// InitStep is one entry `cpactl init` considered.
type InitStep struct {
	DN      string `json:"dn"`
	Created bool   `json:"created"`
}

// LayoutEntry is one entry of the layout `cpactl init` creates.
type LayoutEntry struct {
	DN    string
	Attrs ldapschema.Attrs
}

// Layout returns the entries `cpactl init` creates under dit.Base, parents
// first: the base entry when its first RDN is a dc= or o= value, the
// containers of docs/schema.md (ldapschema.DIT.Containers) and cn=Common with
// every setting at its default.
func Layout(dit ldapschema.DIT) ([]LayoutEntry, error) {
	var wants []LayoutEntry
	base, err := ldap.ParseDN(dit.Base)
	if err != nil || len(base.RDNs) == 0 {
		return nil, fmt.Errorf("base %q is not a DN", dit.Base)
	}
	first := base.RDNs[0].Attributes[0]
	switch strings.ToLower(first.Type) {
	case "dc":
		wants = append(wants, LayoutEntry{dit.Base, ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop, "domain"},
			ldapschema.AttrDC: {first.Value}}})
	case "o":
		wants = append(wants, LayoutEntry{dit.Base, ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassOrganization},
			"o": {first.Value}}})
	}
	for _, dn := range dit.Containers() {
		wants = append(wants, LayoutEntry{dn, ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassOrganizationalUnit},
			ldapschema.AttrOU: {ldapschema.NameOf(dn)}}})
	}
	wants = append(wants, LayoutEntry{dit.Settings(), ldapschema.Attrs{
		ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassGlobalSettings}, ldapschema.AttrCN: {ldapschema.NameOf(dit.Settings())}}})
	return wants, nil
}

// Init creates the base entry (when it is a dc= or o= entry that is
// missing), the containers of docs/schema.md and cn=Common, skipping what exists
// (the entries of Layout). With dryRun it reports what it would create.
func (s *Store) Init(dryRun bool) ([]InitStep, error) {
	wants, err := Layout(s.DIT)
	if err != nil {
		return nil, err
	}
	if err := s.notEnclosed(); err != nil {
		return nil, err
	}
	var steps []InitStep
	for _, w := range wants {
		e, err := s.Entry(w.DN, "1.1")
		if err != nil {
			return steps, err
		}
		if e != nil {
			steps = append(steps, InitStep{DN: w.DN})
			continue
		}
		if !dryRun {
			if err := s.Add(s.Client, w.DN, w.Attrs); err != nil {
				var layout *ldapconn.LayoutError
				switch {
				case errors.As(err, &layout):
					return steps, layout // a base outside the server's naming contexts
				case w.DN == s.DIT.Base && (ldapclient.IsCode(err, ldap.LDAPResultUnwillingToPerform) || ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject)):
					// The result code is kept (a refusal is exit 4 as
					// always); only these two mean there is no database.
					return steps, fmt.Errorf("%w (hint: the server has no database for %q? check -b)", err, s.DIT.Base)
				}
				return steps, err
			}
		}
		steps = append(steps, InitStep{DN: w.DN, Created: true})
	}
	return steps, nil
}
