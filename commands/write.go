package commands

import (
	"errors"
	"fmt"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
)

// existsHint explains an "already exists" from a concurrent create.
func existsHint(err error, kind, name string) error {
	if directory.IsAlreadyExists(err) {
		return &Failure{Code: ExitConflict, Err: fmt.Errorf("%s %s was created by someone else meanwhile", kind, name),
			Hint: fmt.Sprintf("run `cpactl %s show %s` and update it if needed", cliNoun(kind), name)}
	}
	return err
}

// applyPlan applies (or, with dryRun, shows) a plan; an empty plan is
// "unchanged".
func applyPlan(g *Globals, st *directory.Store, plan *directory.Plan, dryRun bool, what string) error {
	if plan.Empty() {
		g.report("%s: unchanged", what)
		return nil
	}
	if !dryRun {
		if err := st.ApplyPlan(plan); err != nil {
			return err
		}
	}
	reportPlan(g, plan, dryRun)
	if dryRun {
		notePlanSteps(g, st, plan)
	}
	warnStepwise(g, plan)
	return nil
}

// checkFreeName refuses a rename onto a name another object of the kind
// holds; a change of case only of the object's own name is allowed.
func checkFreeName(newName, ownDN string, lookup func(string) (string, error), kind string) error {
	dn, err := lookup(newName)
	var nf *directory.NotFoundError
	switch {
	case errors.As(err, &nf):
		return nil
	case err != nil:
		return err
	case ldapschema.EqualDN(dn, ownDN):
		return nil
	}
	return errorf(fmt.Sprintf("pick another name, or delete %s %s first", kind, ldapschema.NameOf(dn)),
		"%s %s already exists", kind, ldapschema.NameOf(dn))
}

// checkFreeSlot refuses to create an entry where another one of a
// different kind sits: pools, farms and Connection Servers of a pod share
// one namespace in the directory (cn=NAME below the pod).
func checkFreeSlot(st *directory.Store, dn, kind, name, parent string) error {
	e, err := st.Entry(dn, "objectClass")
	if err != nil || e == nil {
		return err
	}
	other, _ := directory.DescribeEntry(e)
	return errorf("pick another name", "cannot create %s %q: %s already holds a %s of that name", kind, name, parent, other)
}

func anyChanged(changed func(string) bool, names ...string) bool {
	for _, n := range names {
		if changed(n) {
			return true
		}
	}
	return false
}

// userError adds the hint to a malformed user argument; a missing user,
// also one whose domain differs (a *directory.UserDomainError), stays a
// not-found error (exit 3).
func userError(err error) error {
	var nf *directory.NotFoundError
	if err == nil || errors.As(err, &nf) {
		return err
	}
	var form *directory.UserNameError
	if errors.As(err, &form) {
		return errorf(`write uid, DOMAIN\uid or uid@domain, with the user's own domain`, "%v", err)
	}
	return err
}

// checkTags validates restriction tags.
func checkTags(tags []string) error {
	for _, t := range tags {
		if err := checkName("tag", t, maxName); err != nil {
			return err
		}
	}
	if d := firstDuplicate(tags); d != "" {
		return errorf("give each tag once", "tag %s is given twice", d)
	}
	return nil
}
