package history

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
)

// Undo: the writes that take back what one run wrote (`history undo`),
// and the same for every change after a moment (`--at`).

// Step is one write that takes back a logged change.
type Step struct {
	// Op is the write: "modify" (set each attribute back), "delete" (an
	// entry the change created), "add" (an entry it deleted), "rename"
	// (back to its old name).
	Op string
	// DN is the entry as the step finds it (for a rename: its new name).
	DN string
	// Attrs: for a modify, each attribute to set back to Old, expected to
	// hold New now; for an add, the entry's values (Old).
	Attrs []AttrChange
	// NewRDN and NewSuperior: a rename's target ("" superior: the same
	// parent).
	NewRDN, NewSuperior string
}

// Inverse returns the steps that take back changes (in the order they
// were written), newest first. A change that cannot be taken back (a
// password, whose value the log hides) is an error naming it.
func Inverse(d ldapschema.DIT, changes []Change) ([]Step, error) {
	steps := make([]Step, 0, len(changes))
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		for _, a := range c.Attrs {
			if a.Hidden {
				return nil, fmt.Errorf("%s: its %s changed, and the log hides that value: it cannot be set back", d.Describe(c.DN), a.Attr)
			}
		}
		switch c.Op {
		case "modify":
			steps = append(steps, Step{Op: "modify", DN: c.DN, Attrs: c.Attrs})
		case "add":
			steps = append(steps, Step{Op: "delete", DN: c.DN})
		case "delete":
			steps = append(steps, Step{Op: "add", DN: c.DN, Attrs: c.Attrs})
		case "modrdn":
			rdn := strings.SplitN(c.DN, ",", 2)[0]
			s := Step{Op: "rename", DN: c.NewDN, NewRDN: rdn}
			if !ldapschema.EqualDN(ldapschema.ParentOf(c.DN), ldapschema.ParentOf(c.NewDN)) {
				s.NewSuperior = ldapschema.ParentOf(c.DN)
			}
			steps = append(steps, s)
		}
	}
	return steps, nil
}

// ChangedAgainError refuses to undo a run: an object it changed was
// changed again after it (undoing would take back that change too, or
// fail on it).
type ChangedAgainError struct {
	Run    string
	Object string // as cpactl names it
	By     string // who changed it again
	When   string // the later change's time
	Later  string // the later run's ID ("" for another client's write)
}

func (e *ChangedAgainError) Error() string {
	later := ""
	if e.Later != "" {
		later = " (run " + e.Later + ")"
	}
	return fmt.Sprintf("cannot undo run %s: %s was changed again after it, by %s at %s%s", e.Run, e.Object, e.By, e.When, later)
}

// UndoScan finds, in one pass over the log (oldest first), the changes of
// one run and the later changes of the objects it changed.
type UndoScan struct {
	run     string
	started bool
	dns     map[string]bool
	uuids   map[string]bool
	col     *Collector
}

// NewUndoScan scans for the run with ID run.
func NewUndoScan(run string) *UndoScan {
	return &UndoScan{run: strings.ToLower(run), dns: map[string]bool{}, uuids: map[string]bool{}, col: NewCollector()}
}

// Add takes the next record of the log.
func (u *UndoScan) Add(r Record) error {
	run, inTxn := r.runOrNone()
	if run.ID == u.run {
		u.started = true
		if c, ok := Decode(r); ok {
			u.dns[ldapschema.NormalizeDN(c.DN)] = true
			if c.NewDN != "" {
				u.dns[ldapschema.NormalizeDN(c.NewDN)] = true
			}
			if c.UUID != "" {
				u.uuids[c.UUID] = true
			}
		}
		return u.col.Add(r)
	}
	if !u.started {
		return nil
	}
	// A later record counts when it is of one of the run's objects, or
	// in a transaction (whose failure elsewhere decides whether it was
	// written).
	if inTxn || u.dns[ldapschema.NormalizeDN(r.DN)] || (r.EntryUUID != "" && u.uuids[r.EntryUUID]) {
		return u.col.Add(r)
	}
	return nil
}

// Result returns the run's entry, or false when the log holds no write of
// it; an object changed again after it is a *ChangedAgainError.
func (u *UndoScan) Result(d ldapschema.DIT) (Entry, bool, error) {
	entries := u.col.Entries()
	var run Entry
	found := false
	for _, e := range entries {
		if e.Run == u.run {
			run, found = e, true
		}
	}
	if !found {
		return Entry{}, false, nil
	}
	last := ""
	for _, c := range run.Changes {
		last = max(last, c.Start)
	}
	for i := len(entries) - 1; i >= 0; i-- { // oldest first: name the first later change
		e := entries[i]
		if e.Run == u.run {
			continue
		}
		for _, c := range e.Changes {
			if !c.Written || c.Start <= last {
				continue
			}
			if u.dns[ldapschema.NormalizeDN(c.DN)] || (c.UUID != "" && u.uuids[c.UUID]) {
				return run, true, &ChangedAgainError{Run: u.run, Object: d.Describe(c.DN), By: e.Who,
					When: e.Time.UTC().Format("2006-01-02 15:04:05"), Later: e.Run}
			}
		}
	}
	return run, true, nil
}

// WrittenChanges are the changes of e that were written.
func (e Entry) WrittenChanges() []Change {
	var out []Change
	for _, c := range e.Changes {
		if c.Written {
			out = append(out, c)
		}
	}
	return out
}
