package directory

// Plans: writes described for people, gathered into a Plan that
// Store.ApplyPlan runs together (in one transaction, see txn.go).

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
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
	// dn is DN read once, by the constructors (see normal).
	dn ldapschema.NormalDN

	// req is what the write sends: the transport sees only this.
	req ldapconn.Request

	// refs, when refsGiven, are the entries the write makes its entry
	// refer to (Referring); else they are read from its values.
	refs      []string
	refsGiven bool
}

// normal returns the write's DN read once: as the constructor read it,
// unless DN was set apart from it.
func (w Write) normal() ldapschema.NormalDN {
	if w.dn.String() != w.DN {
		return ldapschema.NormalDNOf(w.DN)
	}
	return w.dn
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
func (w Write) apply(c ldapclient.Writer) error {
	switch {
	case w.req.Add != nil:
		req := *w.req.Add
		req.Controls = slices.Clone(req.Controls)
		return c.Add(&req)
	case w.req.Modify != nil:
		req := *w.req.Modify
		req.Controls = slices.Clone(req.Controls)
		return c.Modify(&req)
	case w.req.Rename != nil:
		req := *w.req.Rename
		req.Controls = slices.Clone(req.Controls)
		return c.ModifyDN(&req)
	case w.req.Del != nil:
		req := *w.req.Del
		req.Controls = slices.Clone(req.Controls)
		return c.Del(&req)
	}
	return nil
}

// Asserting returns w with an RFC 4528 assertion of filter added to (a
// copy of) its request: the write fails with a conflict unless its entry
// still matches filter (an entryCSN read, for one).
func (w Write) Asserting(filter string) (Write, error) {
	ctl, err := ldapconn.AssertionControl(filter)
	if err != nil {
		return w, err
	}
	switch {
	case w.req.Add != nil:
		req := *w.req.Add
		req.Controls = append(slices.Clone(req.Controls), ctl)
		w.req.Add = &req
	case w.req.Modify != nil:
		req := *w.req.Modify
		req.Controls = append(slices.Clone(req.Controls), ctl)
		w.req.Modify = &req
	case w.req.Rename != nil:
		req := *w.req.Rename
		req.Controls = append(slices.Clone(req.Controls), ctl)
		w.req.Rename = &req
	case w.req.Del != nil:
		req := *w.req.Del
		req.Controls = append(slices.Clone(req.Controls), ctl)
		w.req.Del = &req
	}
	return w, nil
}

// AddWrite plans adding an entry.
func AddWrite(verb, object, dn string, a ldapschema.Attrs) Write {
	return Write{Verb: verb, Object: object, DN: dn, dn: ldapschema.NormalDNOf(dn), req: ldapconn.Request{Add: a.AddRequest(dn)}}
}

// ModifyWrite plans modifying an entry; controls (an assertion) go with it.
func ModifyWrite(verb, object, dn string, changes []ldap.Change, controls ...ldap.Control) Write {
	return modifyWrite(verb, object, ldapschema.NormalDNOf(dn), changes, controls...)
}

// modifyWrite is ModifyWrite for a DN read.
func modifyWrite(verb, object string, dn ldapschema.NormalDN, changes []ldap.Change, controls ...ldap.Control) Write {
	req := ldap.NewModifyRequest(dn.String(), controls)
	req.Changes = changes
	return Write{Verb: verb, Object: object, DN: dn.String(), dn: dn, req: ldapconn.Request{Modify: req}}
}

// RenameWrite plans renaming an entry (and its subtree) to newRDN under
// the same parent.
func RenameWrite(verb, object, dn, newRDN string) Write {
	return Write{Verb: verb, Object: object, DN: dn, dn: ldapschema.NormalDNOf(dn),
		req: ldapconn.Request{Rename: ldap.NewModifyDNRequest(dn, newRDN, true, "")}}
}

// DeleteWrite plans deleting a leaf entry.
func DeleteWrite(verb, object, dn string) Write {
	return deleteWrite(verb, object, ldapschema.NormalDNOf(dn))
}

// deleteWrite is DeleteWrite for a DN read.
func deleteWrite(verb, object string, dn ldapschema.NormalDN) Write {
	return Write{Verb: verb, Object: object, DN: dn.String(), dn: dn, req: ldapconn.Request{Del: ldap.NewDelRequest(dn.String(), nil)}}
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
	// Split is set by Store.ApplyPlan when the plan was larger than one
	// transaction takes (TxnWrites) and went in several transactions.
	Split bool

	// scope is what the whole plan writes and creates, for the touches of
	// its transactions (Store.touches).
	scope *guardScope
}

// assertRead makes the first write (modify, rename or delete) of each
// object this store read assert it is unchanged since (the entryCSN read,
// as Update does), unless the write carries its own assertion: a plan
// computed from what was read fails with a conflict instead of
// overwriting someone else's change. For a rename or a delete, the
// entryCSN read before its plan searched for referrers: a reference added
// since (which touches the entry, see guard.go) makes it fail rather
// than dangle.
func (s *Store) assertRead(p *Plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.read) == 0 {
		return
	}
	seen := map[string]bool{}
	for i := range p.Writes {
		w := &p.Writes[i]
		key := w.normal().Key()
		if seen[key] {
			continue
		}
		seen[key] = true
		csn, ok := s.read[key]
		var controls *[]ldap.Control
		switch {
		case w.req.Modify != nil:
			controls = &w.req.Modify.Controls
		case w.req.Rename != nil:
			controls = &w.req.Rename.Controls
		case w.req.Del != nil:
			controls = &w.req.Del.Controls
		}
		if !ok || controls == nil || hasAssertion(*controls) {
			continue
		}
		if ctl, err := ldapconn.AssertionControl(ldapclient.Filter(ldapschema.AttrEntryCSN, csn)); err == nil {
			*controls = append(*controls, ctl)
		}
	}
}

func hasAssertion(controls []ldap.Control) bool {
	for _, c := range controls {
		if c.GetControlType() == ldapconn.OIDAssertion {
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
// leaves a dangling reference. A plan of more than TxnWrites writes goes
// in several transactions, cut where no reference dangles (Transactions
// says how many). Either way, a run that fails half-way leaves a
// consistent directory, and running the command again finishes it (a
// *PartialError when steps before the failing one were written); Atomic
// tells beforehand. An interrupt (StopChanges) stops it where the
// directory is consistent: between steps, or by aborting the transaction
// being sent (ldapconn/stop.go). A store that asks for one transaction
// (OneTransaction) takes up to MaxTxnWrites writes in one, and refuses
// any other plan with a *NotAtomicError before writing anything.
func (s *Store) ApplyPlan(p *Plan) error {
	ldapconn.StartChange()
	defer ldapconn.EndChange()
	err := s.applyChecked(p)
	if err == nil && len(p.Writes) > 0 {
		ldapconn.ChangeDone()
	}
	var interrupted *ldapconn.InterruptedError
	var partial *ldapconn.PartialError
	if errors.As(err, &interrupted) && !errors.As(err, &partial) {
		interrupted.Nothing = true
	}
	return err
}

// applyChecked refuses a plan that cannot be one transaction when one is
// asked for, adds the assertions of what the plan read, and applies it.
func (s *Store) applyChecked(p *Plan) error {
	if s.OneTransaction {
		if ok, why := s.Atomic(p); !ok {
			return &NotAtomicError{Why: why}
		}
	}
	s.assertRead(p)
	return s.applyPlan(p)
}

// applyPlan is ApplyPlan without adding assertions: the writes of a plan
// (or of one of its parts), each reference guarded by touches in the
// transaction that adds it (guard.go).
func (s *Store) applyPlan(p *Plan) (err error) {
	defer func() { err = s.readFromReplica(err) }()
	p.Stepwise, p.Split = false, false
	p.Transactions = 0
	if len(p.Writes) == 0 {
		return nil
	}
	if err := ldapconn.StopBefore("step", 0, 1); err != nil {
		return err
	}
	if p.scope == nil {
		p.scope = scopeOf(p.Writes)
	}
	if len(p.Writes) == 1 && len(s.touches(p.Writes, p.scope)) == 0 {
		w := p.Writes[0]
		if err := w.apply(s.Client); err != nil {
			if ldapconn.Unanswered(err) {
				return s.settle(err, fmt.Sprintf("the %s of %s", w.Verb, w.Object), p.Writes)
			}
			if refused, ok := s.writeRefused(err, p.Writes, false); ok {
				return refused
			}
			return p.failure(fmt.Sprintf("cannot %s %s", w.Verb, w.Object), err)
		}
		s.Progress.Add(1)
		return nil
	}
	chunks := s.chunks(p.Writes)
	if len(chunks) == 1 {
		return s.applyOne(p)
	}
	p.Split = true
	for i, c := range chunks {
		if err := ldapconn.StopBefore("transaction", i, len(chunks)); err != nil {
			return err
		}
		part := &Plan{Writes: c, Conflict: p.Conflict, scope: p.scope}
		err := s.applyPlan(part)
		p.Transactions += part.Transactions
		p.Stepwise = p.Stepwise || part.Stepwise
		if err != nil {
			return ldapconn.StepFailed(err, "transaction", i, len(chunks))
		}
	}
	return nil
}

// readFromReplica notes on a conflict the read-only replica the store
// read from before its write moved to the provider (what it read may only
// lag behind the provider's).
func (s *Store) readFromReplica(err error) error {
	var conflict *ldapclient.ConflictError
	if conn, ok := s.Client.(*ldapconn.Conn); ok && errors.As(err, &conflict) && conflict.Replica == "" {
		conflict.Replica = conn.ReadReplica()
	}
	return err
}

func (p *Plan) failure(what string, err error) error {
	var conflict *ldapclient.ConflictError
	if errors.As(err, &conflict) {
		return err
	}
	// A failed assertion, and an entry the plan read that is gone (or a
	// name it found free that is taken, or an entry it deletes that got
	// children) at write time, mean the same: the directory changed since
	// the plan was made from it.
	if ldapclient.IsCode(err, ldap.LDAPResultAssertionFailed) || ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) ||
		ldapclient.IsCode(err, ldap.LDAPResultEntryAlreadyExists) || ldapclient.IsCode(err, ldap.LDAPResultNotAllowedOnNonLeaf) {
		what := p.Conflict
		if what == "" {
			what = "an entry this change rewrites or refers to"
		}
		return &ldapclient.ConflictError{What: what, Err: err}
	}
	return &WriteError{What: what, Err: err}
}

// WriteError is a refused write; it keeps the LDAP result.
type WriteError struct {
	What string
	Err  error
}

// Error renders "what: result (code): message".
func (e *WriteError) Error() string { return e.What + ": " + ldapclient.Describe(e.Err) }

// Unwrap returns the LDAP error.
func (e *WriteError) Unwrap() error { return e.Err }
