package directory

// Transactions: how ApplyPlan writes a plan in one RFC 5805 transaction,
// with placeholders that keep a deleted entry's parent non-leaf and the
// trash container subtrees are moved into before they go.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/ldapschema"
)

// applyOne applies a plan that fits one transaction: in one, unless it
// deletes a subtree (see deleteSteps).
func (s *Store) applyOne(p *Plan) error {
	steps := deleteSteps(p.Writes)
	p.Stepwise = len(steps) > 1
	run := trashRunName()
	moved := 0
	for i, st := range steps {
		if err := ldapconn.StopBefore("step", i, len(steps)); err != nil {
			return err
		}
		if st.move != nil {
			if moved == 0 {
				if err := s.ensureTrash(); err != nil {
					return ldapconn.StepFailed(err, "step", i, len(steps))
				}
			}
			// One modrdn outside a transaction: the subtree leaves the
			// layout at once.
			req := s.toTrash(st.move.DN, fmt.Sprintf("%s-%d", run, moved))
			// The root's delete asserted it is as read: so does its move.
			req.Controls = slices.Clone(st.move.req.Del.Controls)
			err := s.Client.ModifyDN(req)
			moved++
			s.Progress.Add(1)
			if ldapconn.Unanswered(err) {
				err = s.settle(err, fmt.Sprintf("the %s of %s", st.move.Verb, st.move.Object),
					[]Write{{DN: st.move.DN, req: ldapconn.Request{Rename: req}}})
			}
			if IsAssertionFailed(err) {
				err = p.failure("", err)
				if i > 0 {
					err = fmt.Errorf("%w (step %d of %d; the steps before it are written and the directory is consistent)", err, i+1, len(steps))
				}
				return err
			}
			if refused, ok := s.writeRefused(err, []Write{*st.move}, false); ok {
				return ldapconn.StepFailed(refused, "step", i, len(steps))
			}
			if err != nil && !ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) {
				return ldapconn.StepFailed(&WriteError{What: fmt.Sprintf("cannot %s %s", st.move.Verb, st.move.Object), Err: err},
					"step", i, len(steps))
			}
			continue
		}
		if err := s.applyTransaction(p, st.writes, run); err != nil {
			return ldapconn.StepFailed(err, "step", i, len(steps))
		}
		p.Transactions++
	}
	if moved > 0 {
		if err := s.EmptyTrash(); err != nil {
			// The change is complete: what is left in the trash is not
			// part of the federation (IsTransient).
			s.note(fmt.Sprintf("the change is complete, but emptying %s failed (%v): what is left there is not part of the federation, "+
				"and the next change that deletes an entry with children empties it (or delete it with `ldapdelete -r`)", s.DIT.Trash(), err))
		}
	}
	return nil
}

// note passes msg to s.Note, when set.
func (s *Store) note(msg string) {
	if s.Note != nil {
		s.Note(msg)
	}
}

// applyTransaction writes writes (no subtree among their deletes) in one
// transaction: first a placeholder under the parent of every deleted
// entry, then the writes in order, pipelined; after the commit, the
// placeholders go.
func (s *Store) applyTransaction(p *Plan, writes []Write, run string) error {
	parents := map[string]bool{}
	var placeholders []Write
	for _, w := range writes {
		if w.req.Del == nil {
			continue
		}
		parent := ldapschema.ParentOf(w.DN)
		if k := ldapschema.NormalizeDN(parent); !parents[k] {
			parents[k] = true
			dn := ldapschema.RDN(ldapschema.AttrOU, run) + "," + parent
			placeholders = append(placeholders, Write{Verb: "add", Object: "placeholder " + dn, DN: dn,
				req: ldapconn.Request{Add: placeholder(dn).AddRequest(dn)}})
		}
	}
	touches := s.touches(writes, p.scope)
	fail := func(w Write, err error) error {
		if errors.Is(err, ldapconn.ErrStopped) {
			return err // Transaction aborts and says so
		}
		return p.failure(fmt.Sprintf("cannot %s %s", w.Verb, w.Object), err)
	}
	err := s.Client.Transaction(func(tx ldapclient.Writer) error {
		// A delete must find its placeholder queued before it.
		if err := sendAll(tx, placeholders, func(_ Write, err error) error { return err }, nil); err != nil {
			return err
		}
		// The touches keep the references the writes add from dangling
		// (guard.go); they are not counted as the plan's writes. They go
		// first: sent after the writes, slapd 2.5.13 stored entries it
		// could not read back ("internal error in mdb_entry_decode", 80,
		// in TestReferenceRaces). The price: slapd 2.5's syncprov sends
		// a consumer each write of a transaction as the commit executes
		// it, even when a later write is refused, so the touches of a
		// write the bind may not make reach the consumers
		// (docs/access.md, "Touches need no right").
		if err := sendAll(tx, touches, fail, nil); err != nil {
			return err
		}
		return sendAll(tx, writes, fail, s.Progress)
	})
	if err != nil {
		var unknown *ldapconn.OutcomeUnknownError
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
		switch {
		case errors.As(err, &le) && le.ResultCode >= ldap.ErrorNetwork:
			// No result from the server, and End Transaction was not sent
			// (a commit without an answer is settled above): the
			// connection broke, or cpactl closed it when an answer did not
			// come; the server drops a transaction that is not committed.
			return &WriteError{What: "the connection broke before the commit, so the server dropped the transaction: nothing of it was written", Err: err}
		case errors.As(err, &le):
			// slapd reports the failed operation only at the end of the
			// transaction, sometimes as a bare "other (80)".
			if refused, ok := s.writeRefused(err, writes, true); ok {
				return refused
			}
			return p.failure("the transaction was refused, nothing was written", err)
		}
		return err
	}
	var cleanup []string
	for _, w := range placeholders {
		cleanup = append(cleanup, w.DN)
	}
	if err := s.cleanUp(cleanup, false); err != nil {
		// The transaction is written: a placeholder left behind is not
		// part of the federation (IsTransient), but keeps its parent from
		// being deleted in a later transaction.
		s.note(fmt.Sprintf("the transaction is written, but removing its placeholders failed (%v): they are not part of the federation; "+
			"delete them (`ldapdelete`, entries named ou=%s*) before deleting the entries above them", err, transientPrefix))
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
	return ldap.NewModifyDNRequest(dn, ldapschema.RDN(attr, run), false, s.DIT.Trash())
}

// cleanUp deletes placeholders and, when asked, empties the trash.
func (s *Store) cleanUp(placeholders []string, trash bool) error {
	for _, dn := range placeholders {
		if err := s.Client.Del(ldap.NewDelRequest(dn, nil)); err != nil && !ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) {
			return ldapclient.OpErrorf(err, "deleting %s", dn)
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
		!ldapclient.IsCode(err, ldap.LDAPResultEntryAlreadyExists) {
		return ldapclient.OpErrorf(err, "creating %s", s.DIT.Trash())
	}
	return nil
}

// EmptyTrash deletes everything in the trash container, deepest entries
// first, then the container itself (unless another run refilled it).
func (s *Store) EmptyTrash() error {
	entries, err := s.Find(s.DIT.Trash(), ldap.ScopeWholeSubtree, ldapclient.AnyEntry, "1.1")
	var missing *ldapconn.LayoutError
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
		case err == nil, ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject):
		case ldapschema.EqualDN(e.DN, s.DIT.Trash()) && ldapclient.IsCode(err, ldap.LDAPResultNotAllowedOnNonLeaf):
		default:
			return ldapclient.OpErrorf(err, "deleting %s", e.DN)
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
	return NewTransientKeys(dit).Is(ldapschema.NormalizeDN(dn))
}

// TransientKeys is IsTransient for DNs already normalized
// (ldapschema.NormalizeDN): what a pass over a whole directory uses, so
// that each DN is normalized once.
type TransientKeys struct {
	trash, underTrash, placeholder string
	roles, underRoles              string
}

// NewTransientKeys prepares the test for the federation under dit.
func NewTransientKeys(dit ldapschema.DIT) TransientKeys {
	trash := ldapschema.NormalizeDN(dit.Trash())
	roles := ldapschema.NormalizeDN(dit.Roles())
	return TransientKeys{trash: trash, underTrash: "," + trash,
		placeholder: ldapschema.RDN(ldapschema.AttrOU, transientPrefix),
		roles:       roles, underRoles: "," + roles}
}

// IsRoles reports whether the entry of normalized DN key is the role
// groups' container (ou=Roles) or lies below it: access control, not part
// of the federation, so export, diff, apply and lint leave it alone (it
// is managed with `cpactl role`).
func (k TransientKeys) IsRoles(key string) bool {
	return key == k.roles || strings.HasSuffix(key, k.underRoles)
}

// Is reports whether the entry of normalized DN key is one of cpactl's own
// temporary entries.
func (k TransientKeys) Is(key string) bool {
	return key == k.trash || strings.HasSuffix(key, k.underTrash) || strings.HasPrefix(key, k.placeholder)
}
