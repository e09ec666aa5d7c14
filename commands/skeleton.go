package commands

import (
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
)

// The shared shape of the write verbs. Each noun fills in what is its own
// (the object, how an existing one compares, its messages); the order of
// the steps, the idempotency and what is printed when are decided here
// once:
//
//   - create: createOrUnchanged (an identical object is "unchanged", a
//     different one is refused, a new one is added after --dry-run);
//   - update: writeChanges (one modify asserting the entryCSN read, or
//     "unchanged");
//   - delete: newNamedDeleteCommand and runDelete (refused while entries
//     refer to the object, --force removes them in the same transaction).

// creation is one `NOUN create`.
type creation[T any] struct {
	kind  string // directory.Kind*: how messages name the object
	name  string // as given
	where string // " in pod P" for the created line, or ""
	dn    string
	attrs ldapschema.Attrs
	// read finds the existing object of that name; a
	// *directory.NotFoundError when there is none.
	read func() (T, error)
	// same compares an existing object with the one asked for: its name as
	// stored and a note for the "unchanged" line, or the refusal when its
	// configuration differs (live counters never count).
	same func(existing T) (stored, note string, err error)
	// check, when set, runs for a new object before anything is written or
	// --dry-run reports (a free slot in the layout, ...).
	check func() error
}

// createOrUnchanged runs c: "KIND NAME: unchanged" for an identical
// object, the refusal for a different one, else "would create" (dry run)
// or the add, and "created KIND NAME" only once the server confirmed it.
func createOrUnchanged[T any](g *Globals, st *directory.Store, dryRun bool, c creation[T]) error {
	existing, err := c.read()
	switch {
	case err == nil:
		stored, note, err := c.same(existing)
		if err != nil {
			return err
		}
		g.report("%s %s: unchanged%s", c.kind, stored, note)
		return nil
	case !directory.IsNotFound(err):
		return err
	}
	if c.check != nil {
		if err := c.check(); err != nil {
			return err
		}
	}
	if dryRun {
		g.report("would create %s %s%s", c.kind, c.name, c.where)
		return nil
	}
	if err := st.Add(st.Client, c.dn, c.attrs); err != nil {
		return existsHint(err, c.kind, c.name)
	}
	g.report("created %s %s%s", c.kind, c.name, c.where)
	return nil
}

// modification is one `NOUN update` that rewrites one entry in place.
type modification[T any] struct {
	kind string // directory.Kind*
	// read finds the object; apply sets the flags on a copy of it and
	// checks the rules (with any read they need), before anything is
	// written.
	read  func() (T, error)
	apply func(current T, next *T) error
	// name, dn and attrs describe a record: its name as stored, its DN
	// and its entry; managed are the attributes the update may change.
	name    func(T) string
	dn      func(T) string
	attrs   func(T) ldapschema.Attrs
	managed []string
}

// updateOne runs m: one modify of what changed (asserting the entryCSN
// read), "updated KIND NAME (what)" once the server confirmed it, or
// "unchanged".
func updateOne[T any](g *Globals, st *directory.Store, dryRun bool, m modification[T]) error {
	current, err := m.read()
	if err != nil {
		return err
	}
	next := current
	if err := m.apply(current, &next); err != nil {
		return err
	}
	return writeChanges(g, st, dryRun, m.kind, m.name(current), m.dn(current),
		m.attrs(next).Changes(m.attrs(current), m.managed...))
}
