package directory

// Referential integrity: who refers to an entry, what deleting or renaming
// it must also change, and applying those writes in one transaction.
//
// References between entries are DN-valued attributes (every attribute of
// DN syntax in ldapschema, and member), except the ordered preferred-site
// lists, which hold site names (SPEC §2.3). When a referred entry goes away,
// a referrer either loses the value (an optional reference, such as a group
// member or a session's pool) or goes away too (a required reference, such
// as a pod's site, and every reference of a home-site row, which means
// nothing without its user or group, site and entitlement).

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/ldapschema"
)

// Write is one planned change of a Plan, described for people.
type Write struct {
	// Verb is the present tense of what the write does: "delete", "remove",
	// "update", "rename", "set".
	Verb string
	// Object says what it applies to: "pod P1", "UK from the preferred
	// sites of site India".
	Object string
	// DN is the entry written.
	DN string

	add    *ldap.AddRequest
	modify *ldap.ModifyRequest
	rename *ldap.ModifyDNRequest
	del    *ldap.DelRequest
}

// Done renders the write as a result line: "deleted pod P1".
func (w Write) Done() string { return pastTense(w.Verb) + " " + w.Object }

func pastTense(verb string) string {
	switch {
	case strings.HasSuffix(verb, "set"):
		return verb
	case strings.HasSuffix(verb, "e"):
		return verb + "d"
	}
	return verb + "ed"
}

// Planned renders the write as a dry-run line: "would delete pod P1".
func (w Write) Planned() string { return "would " + w.Verb + " " + w.Object }

// apply sends the write. It sends copies of the requests, as a
// transaction adds its control to them: a plan can be applied again.
func (w Write) apply(c Writer) error {
	switch {
	case w.add != nil:
		req := *w.add
		req.Controls = slices.Clone(req.Controls)
		return c.Add(&req)
	case w.modify != nil:
		req := *w.modify
		req.Controls = slices.Clone(req.Controls)
		return c.Modify(&req)
	case w.rename != nil:
		req := *w.rename
		req.Controls = slices.Clone(req.Controls)
		return c.ModifyDN(&req)
	case w.del != nil:
		req := *w.del
		req.Controls = slices.Clone(req.Controls)
		return c.Del(&req)
	}
	return nil
}

// AddWrite plans adding an entry.
func AddWrite(verb, object, dn string, a ldapschema.Attrs) Write {
	return Write{Verb: verb, Object: object, DN: dn, add: a.AddRequest(dn)}
}

// ModifyWrite plans modifying an entry; controls (an assertion) go with it.
func ModifyWrite(verb, object, dn string, changes []ldap.Change, controls ...ldap.Control) Write {
	req := ldap.NewModifyRequest(dn, controls)
	req.Changes = changes
	return Write{Verb: verb, Object: object, DN: dn, modify: req}
}

// RenameWrite plans renaming an entry (and its subtree) to newRDN under
// the same parent.
func RenameWrite(verb, object, dn, newRDN string) Write {
	return Write{Verb: verb, Object: object, DN: dn, rename: ldap.NewModifyDNRequest(dn, newRDN, true, "")}
}

// DeleteWrite plans deleting a leaf entry.
func DeleteWrite(verb, object, dn string) Write {
	return Write{Verb: verb, Object: object, DN: dn, del: ldap.NewDelRequest(dn, nil)}
}

// Plan is a list of writes that belong together: Store.ApplyPlan runs them
// in one LDAP transaction, so they are applied all together or not at all
// (within the limits Store.Atomic reports).
type Plan struct {
	Writes []Write
	// Conflict names what an assertion protects, for the ConflictError a
	// failed assertion becomes.
	Conflict string
	// Stepwise is set by Store.ApplyPlan when the server could not take
	// the plan in one transaction and it was applied in steps.
	Stepwise bool
	// Transactions is set by Store.ApplyPlan: how many transactions it
	// used (more than one when the plan was split, or applied in steps).
	Transactions int
	// Split is set by Store.ApplyPlan when the plan was larger than
	// MaxTxnWrites and went in several transactions.
	Split bool
}

// assertRead makes the first modify of each object this store read
// assert it is unchanged since (the entryCSN read, as Update does), unless
// the write carries its own assertion: a plan computed from what was read
// fails with a conflict instead of overwriting someone else's change.
func (s *Store) assertRead(p *Plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.read) == 0 {
		return
	}
	seen := map[string]bool{}
	for i := range p.Writes {
		w := &p.Writes[i]
		key := ldapschema.NormalizeDN(w.DN)
		if seen[key] {
			continue
		}
		seen[key] = true
		csn, ok := s.read[key]
		if !ok || w.modify == nil || hasAssertion(w.modify.Controls) {
			continue
		}
		if ctl, err := AssertionControl(Filter(ldapschema.AttrEntryCSN, csn)); err == nil {
			w.modify.Controls = append(w.modify.Controls, ctl)
		}
	}
}

func hasAssertion(controls []ldap.Control) bool {
	for _, c := range controls {
		if c.GetControlType() == oidAssertion {
			return true
		}
	}
	return false
}

// Add appends writes.
func (p *Plan) Add(w ...Write) { p.Writes = append(p.Writes, w...) }

// Empty reports whether the plan writes nothing.
func (p *Plan) Empty() bool { return len(p.Writes) == 0 }

// ApplyPlan runs a plan: one write directly, several in one RFC 5805
// transaction, so that they are applied all together or not at all. A
// failed assertion becomes a *ConflictError; a commit that got no answer
// an *OutcomeUnknownError.
//
// Inside the transaction, writes that do not depend on each other are
// sent together (pipelined, see waves); slapd queues them in any order,
// and the order of dependent writes is kept.
//
// slapd 2.5's back-mdb (2.5.13, and the same code up to 2.6's latest
// releases) limits what one transaction can do (docs/topology.md):
//
//   - a delete that leaves its parent without children fails ("other
//     (80)": mdb_delete keeps the MDB_NOTFOUND of its "has children"
//     check as its result when a transaction is open), so every parent of
//     a deleted entry first receives a placeholder child (an
//     organizational unit named after the run), deleted after the commit;
//   - a move (modrdn with a new superior) queued in a transaction points
//     into the stack of the thread that queued it, and crashes the server
//     when the commit finds that stack reused; so a subtree (an entry with
//     children, whose last child cannot be deleted in a transaction) is
//     not deleted in one: it is moved, with one modrdn outside any
//     transaction, to the trash container (ldapschema.DIT.Trash), which is
//     emptied afterwards.
//
// A plan that deletes a subtree is therefore applied in steps (Stepwise):
// transactions for the other writes, a move for each subtree, in the
// plan's order (referrers before what they refer to), so that no step
// leaves a dangling reference. A plan of more than MaxTxnWrites writes
// goes in several transactions, cut where no reference dangles
// (Transactions says how many). Either way, a run that fails half-way
// leaves a consistent directory, and running the command again finishes
// it; Atomic tells beforehand.
func (s *Store) ApplyPlan(p *Plan) error {
	s.assertRead(p)
	p.Stepwise, p.Split = false, false
	p.Transactions = 0
	if len(p.Writes) == 0 {
		return nil
	}
	if len(p.Writes) == 1 {
		w := p.Writes[0]
		if err := w.apply(s.Client); err != nil {
			if unanswered(err) {
				return s.settle(err, fmt.Sprintf("the %s of %s", w.Verb, w.Object), p.Writes)
			}
			return p.failure(fmt.Sprintf("cannot %s %s", w.Verb, w.Object), err)
		}
		return nil
	}
	chunks := s.chunks(p.Writes)
	if len(chunks) == 1 {
		return s.applyOne(p)
	}
	p.Split = true
	for i, c := range chunks {
		part := &Plan{Writes: c, Conflict: p.Conflict}
		err := s.ApplyPlan(part)
		p.Transactions += part.Transactions
		p.Stepwise = p.Stepwise || part.Stepwise
		if err != nil {
			if i == 0 {
				return err
			}
			return fmt.Errorf("%w (transaction %d of %d; the %d before it are written and the directory is consistent: run the command again to finish)",
				err, i+1, len(chunks), i)
		}
	}
	return nil
}

// applyOne applies a plan that fits one transaction: in one, unless it
// deletes a subtree (see deleteSteps).
func (s *Store) applyOne(p *Plan) error {
	steps := deleteSteps(p.Writes)
	p.Stepwise = len(steps) > 1
	run := trashRunName()
	moved := 0
	for i, st := range steps {
		if st.move != nil {
			if moved == 0 {
				if err := s.ensureTrash(); err != nil {
					return err
				}
			}
			// One modrdn outside a transaction: the subtree leaves the
			// layout at once.
			req := s.toTrash(st.move.DN, fmt.Sprintf("%s-%d", run, moved))
			err := s.Client.ModifyDN(req)
			moved++
			if unanswered(err) {
				err = s.settle(err, fmt.Sprintf("the %s of %s", st.move.Verb, st.move.Object),
					[]Write{{DN: st.move.DN, rename: req}})
			}
			if err != nil && !IsCode(err, ldap.LDAPResultNoSuchObject) {
				return &WriteError{What: fmt.Sprintf("cannot %s %s (step %d of %d; the steps before it are written and the directory is consistent: run the command again to finish)",
					st.move.Verb, st.move.Object, i+1, len(steps)), Err: err}
			}
			continue
		}
		if err := s.applyTransaction(p, st.writes, run); err != nil {
			if i > 0 {
				return fmt.Errorf("%w (step %d of %d; the steps before it are written and the directory is consistent: run the command again to finish)",
					err, i+1, len(steps))
			}
			return err
		}
		p.Transactions++
	}
	if moved > 0 {
		if err := s.EmptyTrash(); err != nil {
			return fmt.Errorf("the change is complete, but emptying %s failed (run the command again to retry): %v", s.DIT.Trash(), err)
		}
	}
	return nil
}

// applyTransaction writes writes (no subtree among their deletes) in one
// transaction: first a placeholder under the parent of every deleted
// entry, then the writes in order, pipelined; after the commit, the
// placeholders go.
func (s *Store) applyTransaction(p *Plan, writes []Write, run string) error {
	parents := map[string]bool{}
	var placeholders []Write
	for _, w := range writes {
		if w.del == nil {
			continue
		}
		parent := ldapschema.ParentOf(w.DN)
		if k := ldapschema.NormalizeDN(parent); !parents[k] {
			parents[k] = true
			dn := ldapschema.AttrOU + "=" + run + "," + parent
			placeholders = append(placeholders, Write{Verb: "add", Object: "placeholder " + dn, DN: dn,
				add: placeholder(dn).AddRequest(dn)})
		}
	}
	fail := func(w Write, err error) error {
		return p.failure(fmt.Sprintf("cannot %s %s", w.Verb, w.Object), err)
	}
	err := s.Client.Transaction(func(tx Writer) error {
		// A delete must find its placeholder queued before it.
		if err := sendAll(tx, placeholders, func(_ Write, err error) error { return err }); err != nil {
			return err
		}
		return sendAll(tx, writes, fail)
	})
	if err != nil {
		var unknown *OutcomeUnknownError
		if errors.As(err, &unknown) {
			// The commit got no answer: all of the writes are in place,
			// or none (a transaction), or the re-read cannot tell.
			if err = s.settle(err, "the commit of the transaction", writes); err != nil {
				return err
			}
		}
	}
	if err != nil {
		var le *ldap.Error
		if errors.As(err, &le) {
			// slapd reports the failed operation only at the end of the
			// transaction, sometimes as a bare "other (80)".
			return p.failure("the transaction was refused, nothing was written", err)
		}
		return err
	}
	var cleanup []string
	for _, w := range placeholders {
		cleanup = append(cleanup, w.DN)
	}
	if err := s.cleanUp(cleanup, false); err != nil {
		return fmt.Errorf("the change is complete, but removing its placeholders failed (run the command again to retry): %v", err)
	}
	return nil
}

// placeholder is the entry that keeps a parent from being emptied inside
// a transaction.
func placeholder(dn string) ldapschema.Attrs {
	return ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassOrganizationalUnit},
		ldapschema.AttrOU: {ldapschema.NameOf(dn)}}
}

// toTrash moves the subtree at dn to the trash under a new name (same RDN
// attribute, so the entry's classes allow it).
func (s *Store) toTrash(dn, run string) *ldap.ModifyDNRequest {
	attr := ldapschema.AttrCN
	if parsed, err := ldap.ParseDN(dn); err == nil && len(parsed.RDNs) > 0 {
		attr = parsed.RDNs[0].Attributes[0].Type
	}
	return ldap.NewModifyDNRequest(dn, attr+"="+run, false, s.DIT.Trash())
}

// cleanUp deletes placeholders and, when asked, empties the trash.
func (s *Store) cleanUp(placeholders []string, trash bool) error {
	for _, dn := range placeholders {
		if err := s.Client.Del(ldap.NewDelRequest(dn, nil)); err != nil && !IsCode(err, ldap.LDAPResultNoSuchObject) {
			return opError(err, "deleting %s", dn)
		}
	}
	if trash {
		return s.EmptyTrash()
	}
	return nil
}

// ensureTrash creates the trash container when it is missing.
func (s *Store) ensureTrash() error {
	e, err := s.Entry(s.DIT.Trash(), "1.1")
	if err != nil || e != nil {
		return err
	}
	if err := s.Client.Add(placeholder(s.DIT.Trash()).AddRequest(s.DIT.Trash())); err != nil &&
		!IsCode(err, ldap.LDAPResultEntryAlreadyExists) {
		return opError(err, "creating %s", s.DIT.Trash())
	}
	return nil
}

// EmptyTrash deletes everything in the trash container, deepest entries
// first, then the container itself (unless another run refilled it).
func (s *Store) EmptyTrash() error {
	entries, err := s.Find(s.DIT.Trash(), ldap.ScopeWholeSubtree, "(objectClass=*)", "1.1")
	var missing *LayoutError
	if errors.As(err, &missing) {
		return nil // no trash: nothing to empty
	}
	if err != nil {
		return err
	}
	sort.SliceStable(entries, func(i, j int) bool { return depth(entries[i].DN) > depth(entries[j].DN) })
	for _, e := range entries {
		err := s.Client.Del(ldap.NewDelRequest(e.DN, nil))
		switch {
		case err == nil, IsCode(err, ldap.LDAPResultNoSuchObject):
		case ldapschema.EqualDN(e.DN, s.DIT.Trash()) && IsCode(err, ldap.LDAPResultNotAllowedOnNonLeaf):
		default:
			return opError(err, "deleting %s", e.DN)
		}
	}
	return nil
}

// trashRunName returns a fresh name for one run's placeholders and trash
// entries.
func trashRunName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return transientPrefix + hex.EncodeToString(b[:])
}

// transientPrefix starts the names of a run's placeholders and trash
// entries.
const transientPrefix = "cpactl-txn-"

// IsTransient reports whether dn is an entry that ApplyPlan creates only
// for the duration of a change (the trash container and what lies in it,
// and the placeholders ou=cpactl-txn-...): left over by an interrupted
// run, it is not part of the federation. A placeholder is told apart by
// its RDN, not its name alone: it is an organizational unit (ou=), and no
// cpactl object is named by ou (sites, pods, pools, ... are cn=, users
// uid=), so an object an administrator names cpactl-txn-lab is an object
// like any other.
func IsTransient(dit ldapschema.DIT, dn string) bool {
	return ldapschema.IsUnder(dn, dit.Trash()) ||
		strings.HasPrefix(ldapschema.NormalizeDN(dn), ldapschema.AttrOU+"="+transientPrefix)
}

// Apply runs the plan on c, as Store.ApplyPlan does, under the base DN of
// the entries it writes (found from cpactl's layout).
//
// Deprecated: use Store.ApplyPlan, which knows the base.
func (p *Plan) Apply(c Client) error {
	base := ""
	for _, w := range p.Writes {
		if base = layoutBase(w.DN); base != "" {
			break
		}
	}
	return NewStore(c, base).ApplyPlan(p)
}

// layoutBase returns the base DN of an entry in cpactl's layout: what
// follows its container (ou=Sites, ou=Pods, ...); "" when there is none.
func layoutBase(dn string) string {
	parsed, err := ldap.ParseDN(dn)
	if err != nil {
		return ""
	}
	containers := map[string]bool{}
	for _, c := range (ldapschema.DIT{}).Containers() {
		containers[strings.ToLower(strings.TrimSuffix(c, ","))] = true
	}
	containers[strings.ToLower(strings.TrimSuffix((ldapschema.DIT{}).Trash(), ","))] = true
	for i, r := range parsed.RDNs {
		if len(r.Attributes) == 1 && i+1 < len(parsed.RDNs) &&
			containers[strings.ToLower(r.Attributes[0].Type+"="+r.Attributes[0].Value)] {
			return (&ldap.DN{RDNs: parsed.RDNs[i+1:]}).String()
		}
	}
	return ""
}

func (p *Plan) failure(what string, err error) error {
	var conflict *ConflictError
	if errors.As(err, &conflict) {
		return err
	}
	// A failed assertion, and an entry the plan read that is gone (or a
	// name it found free that is taken) at write time, mean the same: the
	// directory changed since the plan was made from it.
	if IsCode(err, ldap.LDAPResultAssertionFailed) || IsCode(err, ldap.LDAPResultNoSuchObject) ||
		IsCode(err, ldap.LDAPResultEntryAlreadyExists) {
		what := p.Conflict
		if what == "" {
			what = "an entry this change rewrites"
		}
		return &ConflictError{What: what}
	}
	return &WriteError{What: what, Err: err}
}

// WriteError is a refused write; it keeps the LDAP result.
type WriteError struct {
	What string
	Err  error
}

// Error renders "what: result (code): message".
func (e *WriteError) Error() string { return e.What + ": " + describe(e.Err) }

// Unwrap returns the LDAP error.
func (e *WriteError) Unwrap() error { return e.Err }

// Referrer is an entry that refers to another one (or lies below it).
type Referrer struct {
	DN   string `json:"dn"`
	Kind string `json:"kind"` // "pod", "site", "home-site row", ...
	Name string `json:"name"`
	// Via says how it refers: an attribute name, "preferred sites" or
	// "child" for an entry below the referred one.
	Via string `json:"via"`
}

// String renders "pod P1 (pae-SiteDN)".
func (r Referrer) String() string { return fmt.Sprintf("%s %s (%s)", r.Kind, r.Name, r.Via) }

// Via values that are not attribute names.
const (
	ViaChild          = "child"
	ViaPreferredSites = "preferred sites"
)

// DNAttributes lists the attributes whose values refer to entries: every
// attribute of DN syntax in the schema, and member.
func DNAttributes() []string { return ldapschema.ReferenceAttributes() }

// DescribeEntry names an entry for people, from its object classes: its kind
// ("pod", "home-site row", ...) and its name.
func DescribeEntry(e *ldap.Entry) (kind, name string) {
	has := func(c string) bool { return ldapschema.HasClass(e, c) }
	name = ldapschema.NameOf(e.DN)
	switch {
	case has(ldapschema.ClassSite):
		return KindSite, name
	case has(ldapschema.ClassPod):
		return KindPod, name
	case has(ldapschema.ClassConnectionServer):
		return KindConnectionServer, name
	case has(ldapschema.ClassDesktopPool), has(ldapschema.ClassFarmPool):
		return KindPool, name
	case has(ldapschema.ClassRDSFarm):
		return KindFarm, name
	case has(ldapschema.ClassRDSHost):
		return KindHost, name
	case has(ldapschema.ClassGlobalEntitlement):
		return KindEntitlement, name
	case has(ldapschema.ClassHomeSite):
		return KindHomeSiteRow, homeSiteRowName(e)
	case has(ldapschema.ClassSession):
		return KindSession, name
	case has(ldapschema.ClassPodAssignment):
		return KindAssignment, fmt.Sprintf("of user %s for entitlement %s",
			ldapschema.NameOf(e.GetEqualFoldAttributeValue(ldapschema.AttrUserDN)),
			ldapschema.NameOf(e.GetEqualFoldAttributeValue(ldapschema.AttrEntitlementDN)))
	case has(ldapschema.ClassGroup):
		return KindGroup, name
	case has(ldapschema.ClassInetOrgPerson):
		return KindUser, name
	case has(ldapschema.ClassDevice):
		return KindComputer, name
	}
	return "entry", e.DN
}

// homeSiteRowName renders a row as "of user alice (global)" or "of group
// Sales for entitlement Desktops".
func homeSiteRowName(e *ldap.Entry) string {
	who := "user " + ldapschema.NameOf(e.GetEqualFoldAttributeValue(ldapschema.AttrUserDN))
	if g := e.GetEqualFoldAttributeValue(ldapschema.AttrGroupDN); g != "" {
		who = "group " + ldapschema.NameOf(g)
	}
	if ge := e.GetEqualFoldAttributeValue(ldapschema.AttrEntitlementDN); ge != "" {
		return "of " + who + " for entitlement " + ldapschema.NameOf(ge)
	}
	return "of " + who + " (global)"
}

// Kinds of entries that only Describe names.
const (
	KindHomeSiteRow = "home-site row"
	KindAssignment  = "pod assignment"
)

// goesWithReference reports whether a referrer must be deleted when the
// entry its attribute refers to goes away: the attribute is required by one
// of its classes, or the referrer is a home-site row.
func goesWithReference(e *ldap.Entry, attr string) bool {
	if ldapschema.HasClass(e, ldapschema.ClassHomeSite) {
		return true
	}
	for _, c := range ldapschema.Classes {
		if !ldapschema.HasClass(e, c.Name) {
			continue
		}
		for _, m := range c.Must {
			if strings.EqualFold(m, attr) {
				return true
			}
		}
	}
	return false
}

// refHit is one attribute value of a referrer that names a target.
type refHit struct {
	entry *ldap.Entry
	attr  string
	value string // as stored
}

// findReferences finds the DN-valued attributes that name any of targets
// (normalized DN -> true), searching the whole base in chunks.
func (s *Store) findReferences(targets []string) ([]refHit, error) {
	set := map[string]bool{}
	for _, t := range targets {
		set[ldapschema.NormalizeDN(t)] = true
	}
	attrs := DNAttributes()
	var hits []refHit
	seen := map[string]bool{}
	const chunk = 40
	for i := 0; i < len(targets); i += chunk {
		end := min(i+chunk, len(targets))
		var fs []string
		for _, t := range targets[i:end] {
			for _, a := range attrs {
				fs = append(fs, Filter(a, t))
			}
		}
		entries, err := s.Find(s.DIT.Base, ldap.ScopeWholeSubtree, Or(fs...))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			for _, a := range attrs {
				for _, v := range e.GetEqualFoldAttributeValues(a) {
					key := ldapschema.NormalizeDN(e.DN) + "\x00" + strings.ToLower(a) + "\x00" + ldapschema.NormalizeDN(v)
					if set[ldapschema.NormalizeDN(v)] && !seen[key] {
						seen[key] = true
						hits = append(hits, refHit{entry: e, attr: a, value: v})
					}
				}
			}
		}
	}
	return hits, nil
}

// sitesPreferring reads the sites whose preferred-site list names any of
// names (compared without regard to case).
func (s *Store) sitesPreferring(names []string) ([]ldapschema.Site, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var fs []string
	for _, n := range names {
		// "{rank}name": the value ends with "}" and the name; the decoded
		// list is checked below, as "}name" may also end a longer name.
		fs = append(fs, "("+ldapschema.AttrPreferredSite+"=*"+ldap.EscapeFilter("}"+n)+")")
	}
	entries, err := s.Find(s.DIT.Sites(), ldap.ScopeSingleLevel, And(ClassFilter(ldapschema.ClassSite), Or(fs...)))
	if err != nil {
		return nil, err
	}
	var out []ldapschema.Site
	for _, e := range entries {
		site, err := ldapschema.SiteFromEntry(e)
		if err != nil {
			return nil, err
		}
		for _, p := range site.PreferredSites {
			if fold.Contains(names, p) {
				out = append(out, site)
				break
			}
		}
	}
	return out, nil
}

// subtree reads dn and every entry below it, parents first.
func (s *Store) subtree(dn string) ([]*ldap.Entry, error) {
	entries, err := s.Find(dn, ldap.ScopeWholeSubtree, "(objectClass=*)")
	if err != nil {
		return nil, err
	}
	sort.SliceStable(entries, func(i, j int) bool { return depth(entries[i].DN) < depth(entries[j].DN) })
	return entries, nil
}

func depth(dn string) int {
	parsed, err := ldap.ParseDN(dn)
	if err != nil {
		return 0
	}
	return len(parsed.RDNs)
}

// PreferredAssertion returns the RFC 4528 assertion filter that holds
// exactly when an entry's preferred-site list is still the list read
// (raw, the stored values): every value read is present and, as cpactl
// writes ranks 0..n-1, no value has rank n; an empty list asserts that no
// value is stored.
func PreferredAssertion(raw []string) string {
	a := ldapschema.AttrPreferredSite
	if len(raw) == 0 {
		return "(!(" + a + "=*))"
	}
	fs := make([]string, 0, len(raw)+1)
	ranks := map[int]bool{}
	top := -1
	for _, v := range raw {
		fs = append(fs, Filter(a, v))
		if rs, err := ldapschema.ParsePreferredSite(v); err == nil {
			ranks[rs.Rank] = true
			if rs.Rank > top {
				top = rs.Rank
			}
		}
	}
	// cpactl always writes ranks 0..n-1, so any other list written since
	// holds a rank the list read lacks: a gap, or the rank after the last.
	// Asserting those ranks absent pins the whole list, gaps included (lint
	// reports gaps, and the fix is to write the list again).
	for r := 0; r <= top+1; r++ {
		if !ranks[r] {
			fs = append(fs, "(!("+a+"="+ldap.EscapeFilter(fmt.Sprintf("{%d}", r))+"*))")
		}
	}
	return And(fs...)
}

// PreferredWrite plans replacing a site's preferred-site list with names
// (in rank order) in one modify that asserts the list read (site.PreferredRaw):
// if someone changed it since, the write fails with a *ConflictError.
func PreferredWrite(verb, object string, site ldapschema.Site, names []string) (Write, error) {
	ctl, err := AssertionControl(PreferredAssertion(site.PreferredRaw))
	if err != nil {
		return Write{}, err
	}
	change := ldap.Change{Operation: ldap.ReplaceAttribute,
		Modification: ldap.PartialAttribute{Type: ldapschema.AttrPreferredSite, Vals: ldapschema.EncodePreferredSites(names)}}
	if len(names) == 0 {
		change = ldap.Change{Operation: ldap.DeleteAttribute,
			Modification: ldap.PartialAttribute{Type: ldapschema.AttrPreferredSite}}
	}
	return ModifyWrite(verb, object, site.DN, []ldap.Change{change}, ctl), nil
}

// PreferredConflict is what a preferred-site assertion protects, for
// messages.
func PreferredConflict(site string) string {
	return fmt.Sprintf("the preferred-site list of site %s", site)
}

// SetPreferredSites replaces site's preferred-site list with names in one
// modify asserting the list read; a lost race is a *ConflictError.
func (s *Store) SetPreferredSites(site ldapschema.Site, names []string) error {
	w, err := PreferredWrite("set", "the preferred sites of site "+site.Name, site, names)
	if err != nil {
		return err
	}
	return s.ApplyPlan(&Plan{Writes: []Write{w}, Conflict: PreferredConflict(site.Name)})
}

// DeletePlan is what deleting an entry involves.
type DeletePlan struct {
	// Children are the entries below the target, deleted with it.
	Children []Referrer
	// Referrers are the entries outside the target's subtree that refer to
	// it or to its children.
	Referrers []Referrer
	// Plan deletes the target and its children and removes every
	// reference (deleting referrers that cannot live without it, and so on),
	// in one transaction. Without Children and Referrers it is just the
	// delete.
	Plan
}

// Blocked reports whether the delete needs --force.
func (d *DeletePlan) Blocked() bool { return len(d.Children) > 0 || len(d.Referrers) > 0 }

// PlanDelete plans deleting the entry dn (kind and name for messages),
// with everything below it and every reference to them.
func (s *Store) PlanDelete(kind, name, dn string) (*DeletePlan, error) {
	dp := &DeletePlan{}
	doomed := map[string]*ldap.Entry{} // normalized DN -> entry
	var doomedOrder []*ldap.Entry
	round := map[string]int{} // normalized DN -> cascade round that doomed it
	rounds := 0
	var removals []refHit                      // optional references to remove
	preferredRemovals := map[string][]string{} // normalized site DN -> names to drop
	preferredSites := map[string]ldapschema.Site{}
	var preferredOrder []string

	queue := []string{dn}
	first := true
	for len(queue) > 0 {
		var fresh []string // newly doomed DNs
		var freshSites []string
		for _, q := range queue {
			if doomed[ldapschema.NormalizeDN(q)] != nil {
				continue
			}
			entries, err := s.subtree(q)
			if err != nil {
				return nil, err
			}
			if len(entries) == 0 && first {
				return nil, &NotFoundError{Kind: kind, Name: name}
			}
			for _, e := range entries {
				k := ldapschema.NormalizeDN(e.DN)
				if doomed[k] != nil {
					continue
				}
				doomed[k] = e
				round[k] = rounds
				doomedOrder = append(doomedOrder, e)
				fresh = append(fresh, e.DN)
				if ldapschema.HasClass(e, ldapschema.ClassSite) {
					freshSites = append(freshSites, ldapschema.NameOf(e.DN))
				}
				if first && !ldapschema.EqualDN(e.DN, dn) {
					k, n := DescribeEntry(e)
					dp.Children = append(dp.Children, Referrer{DN: e.DN, Kind: k, Name: n, Via: ViaChild})
				}
			}
		}
		queue = nil
		hits, err := s.findReferences(fresh)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			if doomed[ldapschema.NormalizeDN(h.entry.DN)] != nil {
				continue
			}
			if first {
				k, n := DescribeEntry(h.entry)
				dp.Referrers = append(dp.Referrers, Referrer{DN: h.entry.DN, Kind: k, Name: n, Via: h.attr})
			}
			if goesWithReference(h.entry, h.attr) {
				queue = append(queue, h.entry.DN)
			} else {
				removals = append(removals, h)
			}
		}
		sites, err := s.sitesPreferring(freshSites)
		if err != nil {
			return nil, err
		}
		for _, site := range sites {
			k := ldapschema.NormalizeDN(site.DN)
			if doomed[k] != nil {
				continue
			}
			if first {
				dp.Referrers = append(dp.Referrers, Referrer{DN: site.DN, Kind: KindSite, Name: site.Name, Via: ViaPreferredSites})
			}
			if _, ok := preferredSites[k]; !ok {
				preferredSites[k] = site
				preferredOrder = append(preferredOrder, k)
			}
			for _, p := range site.PreferredSites {
				if fold.Contains(freshSites, p) {
					preferredRemovals[k] = append(preferredRemovals[k], p)
				}
			}
		}
		first = false
		rounds++
	}

	// Value removals and list rewrites first, on entries that stay.
	byEntry := map[string][]refHit{}
	var entryOrder []string
	for _, r := range removals {
		k := ldapschema.NormalizeDN(r.entry.DN)
		if doomed[k] != nil {
			continue
		}
		if _, ok := byEntry[k]; !ok {
			entryOrder = append(entryOrder, k)
		}
		byEntry[k] = append(byEntry[k], r)
	}
	for _, k := range entryOrder {
		rs := byEntry[k]
		var changes []ldap.Change
		var whats []string
		for _, r := range rs {
			changes = append(changes, ldap.Change{Operation: ldap.DeleteAttribute,
				Modification: ldap.PartialAttribute{Type: r.attr, Vals: []string{r.value}}})
			tk, tn := describeDN(doomed, r.value)
			whats = append(whats, tk+" "+tn)
		}
		rk, rn := DescribeEntry(rs[0].entry)
		dp.Add(ModifyWrite("remove", fmt.Sprintf("%s from %s %s", strings.Join(whats, ", "), rk, rn), rs[0].entry.DN, changes))
	}
	var conflicts []string
	for _, k := range preferredOrder {
		site := preferredSites[k]
		drop := preferredRemovals[k]
		var keep []string
		for _, p := range site.PreferredSites {
			if !fold.Contains(drop, p) {
				keep = append(keep, p)
			}
		}
		w, err := PreferredWrite("remove", fmt.Sprintf("%s from the preferred sites of site %s", strings.Join(drop, ", "), site.Name), site, keep)
		if err != nil {
			return nil, err
		}
		dp.Add(w)
		conflicts = append(conflicts, PreferredConflict(site.Name))
	}
	if len(conflicts) > 0 {
		dp.Conflict = strings.Join(conflicts, ", ")
	}
	// Then the deletes: referrers before what they refer to (later cascade
	// rounds first), children before parents.
	sort.SliceStable(doomedOrder, func(i, j int) bool {
		ri, rj := round[ldapschema.NormalizeDN(doomedOrder[i].DN)], round[ldapschema.NormalizeDN(doomedOrder[j].DN)]
		if ri != rj {
			return ri > rj
		}
		return depth(doomedOrder[i].DN) > depth(doomedOrder[j].DN)
	})
	for _, e := range doomedOrder {
		k, n := DescribeEntry(e)
		dp.Add(DeleteWrite("delete", k+" "+n, e.DN))
	}
	return dp, nil
}

// describeDN names a referred entry: from the doomed set when it is there,
// else from its DN alone.
func describeDN(known map[string]*ldap.Entry, dn string) (kind, name string) {
	if e := known[ldapschema.NormalizeDN(dn)]; e != nil {
		return DescribeEntry(e)
	}
	return "entry", ldapschema.NameOf(dn)
}

// PlanRename plans renaming the entry dn (kind and name for messages) to
// newName under the same parent, keeping its RDN attribute: the entry and
// its subtree move with one modrdn, and every reference to them is
// rewritten (DN values; site names in preferred-site lists; the names of
// home-site rows and pod assignments, derived from the DNs they hold), all
// in one transaction.
func (s *Store) PlanRename(kind, name, dn, newName string) (*Plan, error) {
	parsed, err := ldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) < 2 {
		return nil, fmt.Errorf("%s %q: cannot rename %q", kind, name, dn)
	}
	rdnAttr := parsed.RDNs[0].Attributes[0].Type
	newRDN := rdnAttr + "=" + ldap.EscapeDN(newName)
	newDN := newRDN + "," + ldapschema.ParentOf(dn)

	entries, err := s.subtree(dn)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, &NotFoundError{Kind: kind, Name: name}
	}
	var dns []string
	isSite := false
	for _, e := range entries {
		dns = append(dns, e.DN)
		if ldapschema.EqualDN(e.DN, dn) && ldapschema.HasClass(e, ldapschema.ClassSite) {
			isSite = true
		}
	}
	hits, err := s.findReferences(dns)
	if err != nil {
		return nil, err
	}
	p := &Plan{}
	// Group the rewrites by referrer.
	type rewrite struct{ attr, from, to string }
	byEntry := map[string][]rewrite{}
	entryOf := map[string]*ldap.Entry{}
	var order []string
	for _, h := range hits {
		k := ldapschema.NormalizeDN(h.entry.DN)
		if _, ok := entryOf[k]; !ok {
			entryOf[k] = h.entry
			order = append(order, k)
		}
		byEntry[k] = append(byEntry[k], rewrite{attr: h.attr, from: h.value, to: rebaseDN(h.value, dn, newDN)})
	}
	var rowRenames []Write
	for _, k := range order {
		e := entryOf[k]
		var changes []ldap.Change
		var attrs []string
		for _, r := range byEntry[k] {
			changes = append(changes,
				ldap.Change{Operation: ldap.DeleteAttribute, Modification: ldap.PartialAttribute{Type: r.attr, Vals: []string{r.from}}},
				ldap.Change{Operation: ldap.AddAttribute, Modification: ldap.PartialAttribute{Type: r.attr, Vals: []string{r.to}}})
			if !fold.Contains(attrs, r.attr) {
				attrs = append(attrs, r.attr)
			}
		}
		rk, rn := DescribeEntry(e)
		p.Add(ModifyWrite("update", fmt.Sprintf("%s %s (%s)", rk, rn, strings.Join(attrs, ", ")), e.DN, changes))
		// Rows named after the DNs they hold get a new name.
		if ldapschema.HasClass(e, ldapschema.ClassHomeSite) || ldapschema.HasClass(e, ldapschema.ClassPodAssignment) {
			value := func(attr string) string {
				v := e.GetEqualFoldAttributeValue(attr)
				for _, r := range byEntry[k] {
					if strings.EqualFold(r.attr, attr) {
						v = r.to
					}
				}
				return v
			}
			principal := value(ldapschema.AttrUserDN)
			if principal == "" {
				principal = value(ldapschema.AttrGroupDN)
			}
			id := ldapschema.RowID(principal, value(ldapschema.AttrEntitlementDN))
			if ldapschema.NameOf(e.DN) != id {
				// The row's cn follows its RDN (deleteOldRDN).
				rowRenames = append(rowRenames, RenameWrite("rename", rk+" "+rn, e.DN, ldapschema.AttrCN+"="+id))
			}
		}
	}
	if isSite {
		sites, err := s.sitesPreferring([]string{name})
		if err != nil {
			return nil, err
		}
		var conflicts []string
		for _, site := range sites {
			if ldapschema.EqualDN(site.DN, dn) {
				continue
			}
			names := make([]string, len(site.PreferredSites))
			for i, n := range site.PreferredSites {
				names[i] = n
				if strings.EqualFold(n, name) {
					names[i] = newName
				}
			}
			w, err := PreferredWrite("update", fmt.Sprintf("the preferred sites of site %s", site.Name), site, names)
			if err != nil {
				return nil, err
			}
			p.Add(w)
			conflicts = append(conflicts, PreferredConflict(site.Name))
		}
		p.Conflict = strings.Join(conflicts, ", ")
	}
	p.Add(rowRenames...)
	p.Add(RenameWrite("rename", fmt.Sprintf("%s %s to %s", kind, name, newName), dn, newRDN))
	return p, nil
}

// rebaseDN moves value, a DN at or below oldBase, under newBase.
func rebaseDN(value, oldBase, newBase string) string {
	v, err1 := ldap.ParseDN(value)
	o, err2 := ldap.ParseDN(oldBase)
	if err1 != nil || err2 != nil || len(v.RDNs) < len(o.RDNs) {
		return newBase
	}
	keep := v.RDNs[:len(v.RDNs)-len(o.RDNs)]
	if len(keep) == 0 {
		return newBase
	}
	parts := make([]string, 0, len(keep)+1)
	for _, r := range keep {
		avas := make([]string, 0, len(r.Attributes))
		for _, a := range r.Attributes {
			avas = append(avas, a.Type+"="+ldap.EscapeDN(a.Value))
		}
		parts = append(parts, strings.Join(avas, "+"))
	}
	return strings.Join(append(parts, newBase), ",")
}
