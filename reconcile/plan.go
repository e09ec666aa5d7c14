package reconcile

import (
	"container/heap"
	"fmt"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// Plan is what `cpactl apply` writes to make the current state match the
// desired one, in order: adds (parents before children, referred entries
// before the entries that refer to them), modifies, then, when pruning,
// deletes (children before parents, referrers before what they refer to).
// directory.Store.ApplyPlan runs it, as one transaction when the server
// can take it.
type Plan struct {
	directory.Plan
	// Adds, Updates and Deletes count the entries added, modified and
	// deleted (not the writes that break reference cycles).
	Adds, Updates, Deletes int
	// Kept lists the objects only the current state holds, left in place
	// because pruning was not asked for.
	Kept []EntryChange
}

// PlanApply plans the writes that turn current into desired, from their
// comparison r. With prune, objects only the current state holds are
// deleted. The problems say why the plan cannot be written (nothing is
// then planned): a structural object class that changes, an entry whose
// parent exists nowhere, an entry that exists in the directory but is not
// cpactl's.
func PlanApply(desired, current *State, r *Report, prune bool) (*Plan, []Problem) {
	p := &Plan{}
	p.Conflict = "the directory"
	problems := checkParents(desired, current)
	var adds, deletes []*Entry
	var updates []EntryChange
	for _, c := range r.Entries {
		switch c.Change {
		case Added:
			if current.Present(c.DN) {
				problems = append(problems, Problem{DN: c.DN, Message: "exists in the directory but is not a cpactl " + c.Kind + " there: remove or rename it first"})
				continue
			}
			adds = append(adds, c.desired)
		case Changed:
			from, to := ldapschema.StructuralClass(c.current.Classes()), ldapschema.StructuralClass(c.desired.Classes())
			if !strings.EqualFold(from, to) {
				problems = append(problems, Problem{DN: c.DN, Message: fmt.Sprintf(
					"%s: its structural object class changes from %s to %s, which LDAP cannot do in place: delete the object first (or apply a file without it, with --prune), then apply again",
					c.Object(), from, to)})
				continue
			}
			updates = append(updates, c)
		case Removed:
			if prune {
				deletes = append(deletes, c.current)
			} else {
				p.Kept = append(p.Kept, c)
			}
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}

	for _, e := range orderAdds(desired.DIT, adds) {
		p.Add(directory.AddWrite("add", e.Object(), e.DN, e.Attrs()))
		p.Adds++
	}
	for _, c := range updates {
		w, err := updateWrite(desired.DIT, c)
		if err != nil {
			return nil, []Problem{{DN: c.DN, Message: err.Error()}}
		}
		p.Add(w)
		p.Updates++
	}
	ordered, breakers := orderDeletes(current.DIT, deletes)
	// The first write of each deleted entry asserts the entryCSN read, so
	// that an entry changed, or referred to (directory/guard.go), since
	// the read fails the apply with a conflict rather than be deleted
	// under a new reference.
	asserted := map[string]bool{}
	assert := func(w directory.Write) directory.Write {
		k := ldapschema.NormalizeDN(w.DN)
		e := current.entries[k]
		if e == nil || e.csn == "" || asserted[k] {
			return w
		}
		asserted[k] = true
		if a, err := w.Asserting(ldapclient.Filter(ldapschema.AttrEntryCSN, e.csn)); err == nil {
			return a
		}
		return w
	}
	for _, w := range breakers {
		p.Add(assert(w))
	}
	for _, e := range ordered {
		p.Add(assert(directory.DeleteWrite("delete", e.Object(), e.DN)))
		p.Deletes++
	}
	return p, nil
}

// checkParents checks that the parent of every desired entry will exist:
// it is in the file, or it is in the directory and is structure (an object
// missing from the file would be pruned, or left with children the file
// does not explain).
//
// O(n) look-ups by the parents' normalized DNs, and the problems sorted in
// report order.
func checkParents(desired, current *State) []Problem {
	type found struct {
		e *Entry
		p Problem
	}
	var out []found
	for _, d := range desired.entries {
		if d.Kind == objkind.Base {
			continue
		}
		parent := ldapschema.ParentKey(d.Key)
		switch pc := current.entries[parent]; {
		case desired.entries[parent] != nil:
		case pc != nil && !IsStructure(pc.Kind):
			out = append(out, found{d, Problem{DN: d.DN, Message: fmt.Sprintf("its parent %s %s is not in the file: add it", pc.Kind, pc.Name)}})
		case !current.present(parent):
			out = append(out, found{d, Problem{DN: d.DN, Message: fmt.Sprintf(
				"its parent %s is neither in the directory nor in the file: add it to the file, or run `cpactl init` first",
				ldapschema.ParentOf(d.DN))}})
		}
	}
	sortEntries(out, func(f found) *Entry { return f.e }, rank)
	problems := make([]Problem, len(out))
	for i, f := range out {
		problems[i] = f.p
	}
	return problems
}

// updateWrite is the modify of a changed entry: each attribute that differs
// replaced by the desired values (or removed), asserting the values read so
// that a concurrent change makes the whole apply fail with a conflict
// rather than be overwritten.
//
// The write names the entries it makes the entry refer to (the DN values
// and preferred sites the desired values add to the current ones), so
// that ApplyPlan guards those references alone, not every value of a
// rewritten attribute (a group's members).
func updateWrite(dit ldapschema.DIT, c EntryChange) (directory.Write, error) {
	var changes []ldap.Change
	var names, asserts, refs []string
	for _, a := range c.Attributes {
		refs = append(refs, AddedReferences(dit, a.Attribute, c.desired.Values(a.Attribute), c.current.Values(a.Attribute))...)
		want := c.desired.Values(a.Attribute)
		if len(want) == 0 {
			changes = append(changes, ldap.Change{Operation: ldap.DeleteAttribute,
				Modification: ldap.PartialAttribute{Type: a.Attribute}})
		} else {
			changes = append(changes, ldap.Change{Operation: ldap.ReplaceAttribute,
				Modification: ldap.PartialAttribute{Type: a.Attribute, Vals: want}})
		}
		names = append(names, a.Attribute)
		asserts = append(asserts, Assertion(a.Attribute, c.current.Values(a.Attribute)))
	}
	ctl, err := ldapconn.AssertionControl(ldapclient.And(asserts...))
	if err != nil {
		return directory.Write{}, err
	}
	return directory.ModifyWrite("update", fmt.Sprintf("%s (%s)", c.Object(), strings.Join(names, ", ")), c.DN, changes, ctl).
		Referring(refs...), nil
}

// AddedReferences returns the entries (DNs, as desired spells them) that
// the desired values of attr refer to and the current ones do not: DN
// values, and the sites of a preferred-site list. Other attributes refer
// to nothing.
func AddedReferences(dit ldapschema.DIT, attr string, desired, current []string) []string {
	var out []string
	if ldapschema.IsOrderedAttribute(attr) {
		had := map[string]bool{}
		cur, _ := ldapschema.DecodePreferredSites(current)
		for _, n := range cur.Names() {
			had[strings.ToLower(n)] = true
		}
		want, _ := ldapschema.DecodePreferredSites(desired)
		for _, n := range want.Names() {
			if !had[strings.ToLower(n)] {
				out = append(out, dit.Site(n))
			}
		}
		return out
	}
	if info, _ := ldapschema.LookupAttribute(attr); info.Equality != ldapschema.EqualityDN {
		return nil
	}
	had := make(map[string]bool, len(current))
	for _, v := range current {
		had[ldapschema.NormalizeDN(v)] = true
	}
	for _, v := range desired {
		if !had[ldapschema.NormalizeDN(v)] {
			out = append(out, v)
		}
	}
	return out
}

// Assertion returns the RFC 4528 filter that holds while attr still has
// the values read: the ranked preferred-site list pinned as
// directory.PreferredAssertion does; every value read present; no value
// when none was read. Values of attributes without an equality rule, and
// sensitive ones, are asserted present only.
func Assertion(attr string, values []string) string {
	if ldapschema.IsOrderedAttribute(attr) {
		return directory.PreferredAssertion(values)
	}
	if len(values) == 0 {
		return ldapclient.Not(ldapclient.Present(attr))
	}
	info, _ := ldapschema.LookupAttribute(attr)
	if info.Equality == ldapschema.EqualityNone || info.Sensitive {
		return ldapclient.Present(attr)
	}
	fs := make([]string, len(values))
	for i, v := range values {
		fs[i] = ldapclient.Filter(attr, v)
	}
	return ldapclient.And(fs...)
}

// references returns the entries e refers to (normalized DNs): the values
// of its DN-valued attributes, and the sites its preferred-site list names.
func references(dit ldapschema.DIT, e *Entry) []string {
	var out []string
	for _, a := range e.attrs {
		values := e.valuesOf(a)
		if ldapschema.IsOrderedAttribute(a.t.name) {
			list, _ := ldapschema.DecodePreferredSites(values)
			for _, n := range list.Names() {
				out = append(out, ldapschema.NormalizeDN(dit.Site(n)))
			}
			continue
		}
		if a.t.info.Equality == ldapschema.EqualityDN {
			for _, v := range values {
				out = append(out, ldapschema.NormalizeDN(v))
			}
		}
	}
	return out
}

// orderAdds puts parents before their children (the server needs it) and
// referred entries before their referrers (a reference never dangles; a
// cycle, such as two sites preferring each other, is cut at the first
// entry in report order, which is harmless as the adds go in one
// transaction).
func orderAdds(dit ldapschema.DIT, adds []*Entry) []*Entry {
	set := map[string]*Entry{}
	for _, e := range adds {
		set[e.Key] = e
	}
	hard, soft := map[*Entry][]*Entry{}, map[*Entry][]*Entry{}
	for _, e := range adds {
		if p := set[ldapschema.ParentKey(e.Key)]; p != nil {
			hard[e] = append(hard[e], p)
		}
		for _, k := range references(dit, e) {
			if r := set[k]; r != nil && r != e {
				soft[e] = append(soft[e], r)
			}
		}
	}
	adds = append([]*Entry(nil), adds...)
	sortEntries(adds, itself, rank)
	out, _ := order(adds, hard, soft)
	return out
}

// orderDeletes puts children before their parents and referrers before
// what they refer to, the reverse of orderAdds. Deleted entries that refer
// to each other in a cycle (groups nested in each other, sites preferring
// each other) would leave a reference dangling between two deletes when
// the server cannot take them in one transaction: the returned writes,
// which go first, remove those references from the referrers.
func orderDeletes(dit ldapschema.DIT, deletes []*Entry) ([]*Entry, []directory.Write) {
	set := map[string]*Entry{}
	for _, e := range deletes {
		set[e.Key] = e
	}
	hard, soft := map[*Entry][]*Entry{}, map[*Entry][]*Entry{}
	for _, e := range deletes {
		if p := set[ldapschema.ParentKey(e.Key)]; p != nil {
			hard[p] = append(hard[p], e) // the child goes first
		}
		for _, k := range references(dit, e) {
			if r := set[k]; r != nil && r != e {
				soft[r] = append(soft[r], e) // the referrer goes first
			}
		}
	}
	// Later kinds first (sessions before users, ...), then by name.
	deletes = append([]*Entry(nil), deletes...)
	sortEntries(deletes, itself, func(kind string) int { return -rank(kind) })
	out, broken := order(deletes, hard, soft)
	var writes []directory.Write
	preferred := map[*Entry][]string{} // sites rewritten so far: their lists
	for _, b := range broken {
		target, referrer := b[0], b[1]
		if w, ok := dropReference(dit, referrer, target, preferred); ok {
			writes = append(writes, w)
		}
	}
	return out, writes
}

// dropReference plans removing referrer's references to target, when its
// classes allow it to lose them.
func dropReference(dit ldapschema.DIT, referrer, target *Entry, preferred map[*Entry][]string) (directory.Write, bool) {
	must, _, _ := ldapschema.ClassRules(referrer.Classes())
	var changes []ldap.Change
	var names []string
	for _, a := range referrer.attrs {
		name, values := a.t.name, referrer.valuesOf(a)
		if ldapschema.IsOrderedAttribute(name) {
			list, ok := preferred[referrer]
			if !ok {
				decoded, _ := ldapschema.DecodePreferredSites(values)
				list = decoded.Names()
			}
			var keep []string
			for _, n := range list {
				if ldapschema.NormalizeDN(dit.Site(n)) != target.Key {
					keep = append(keep, n)
				}
			}
			if len(keep) == len(list) {
				continue
			}
			preferred[referrer] = keep
			change := ldap.Change{Operation: ldap.ReplaceAttribute,
				Modification: ldap.PartialAttribute{Type: name, Vals: ldapschema.EncodePreferredSites(keep)}}
			if len(keep) == 0 {
				change = ldap.Change{Operation: ldap.DeleteAttribute, Modification: ldap.PartialAttribute{Type: name}}
			}
			changes = append(changes, change)
			names = append(names, name)
			continue
		}
		if a.t.info.Equality != ldapschema.EqualityDN || must[a.t.lower] {
			continue
		}
		var drop []string
		for _, v := range values {
			if ldapschema.NormalizeDN(v) == target.Key {
				drop = append(drop, v)
			}
		}
		if len(drop) > 0 {
			changes = append(changes, ldap.Change{Operation: ldap.DeleteAttribute,
				Modification: ldap.PartialAttribute{Type: name, Vals: drop}})
			names = append(names, name)
		}
	}
	if len(changes) == 0 {
		return directory.Write{}, false
	}
	return directory.ModifyWrite("remove", fmt.Sprintf("%s from %s (%s)", target.Object(), referrer.Object(),
		strings.Join(names, ", ")), referrer.DN, changes), true
}

// order sorts entries, given in priority order, so that each one comes
// after its hard and soft dependencies, the first in priority order among
// those ready. A cycle of soft dependencies is cut at the first entry, in
// priority order, whose hard dependencies are met: the cut pairs (entry,
// dependency still pending) are returned.
//
// O((n + d) log n) for n entries and d dependencies: the entries ready, and
// those a cut may pick, wait in heaps.
func order(sorted []*Entry, hard, soft map[*Entry][]*Entry) ([]*Entry, [][2]*Entry) {
	index := make(map[*Entry]int, len(sorted))
	for i, e := range sorted {
		index[e] = i
	}
	n := len(sorted)
	hardLeft, softLeft := make([]int, n), make([]int, n)
	type dependent struct {
		i    int
		hard bool
	}
	dependents := make([][]dependent, n)
	for i, e := range sorted {
		for _, d := range hard[e] {
			hardLeft[i]++
			dependents[index[d]] = append(dependents[index[d]], dependent{i, true})
		}
		for _, d := range soft[e] {
			softLeft[i]++
			dependents[index[d]] = append(dependents[index[d]], dependent{i, false})
		}
	}
	done, queued := make([]bool, n), make([]bool, n)
	// ready holds the entries with nothing left to wait for; cuttable those
	// whose hard dependencies are met but not their soft ones (an entry
	// there may have become ready or done since: skipped when popped).
	ready, cuttable := &intHeap{}, &intHeap{}
	for i := range sorted {
		switch {
		case hardLeft[i] == 0 && softLeft[i] == 0:
			heap.Push(ready, i)
			queued[i] = true
		case hardLeft[i] == 0:
			heap.Push(cuttable, i)
		}
	}
	out := make([]*Entry, 0, n)
	var cut [][2]*Entry
	next := 0 // every entry before it is done
	for len(out) < n {
		if ready.Len() == 0 {
			pick := -1
			for cuttable.Len() > 0 {
				if i := heap.Pop(cuttable).(int); !done[i] && !queued[i] {
					pick = i
					break
				}
			}
			if pick < 0 { // cannot happen: parents form a tree
				for next < n && done[next] {
					next++
				}
				for i := next; i < n; i++ {
					if !done[i] && !queued[i] {
						pick = i
						break
					}
				}
			}
			for _, d := range soft[sorted[pick]] {
				if !done[index[d]] {
					cut = append(cut, [2]*Entry{sorted[pick], d})
				}
			}
			heap.Push(ready, pick)
			queued[pick] = true
		}
		i := heap.Pop(ready).(int)
		done[i] = true
		out = append(out, sorted[i])
		for _, d := range dependents[i] {
			if d.hard {
				hardLeft[d.i]--
			} else {
				softLeft[d.i]--
			}
			switch {
			case done[d.i] || queued[d.i]:
			case hardLeft[d.i] <= 0 && softLeft[d.i] <= 0:
				heap.Push(ready, d.i)
				queued[d.i] = true
			case d.hard && hardLeft[d.i] == 0:
				heap.Push(cuttable, d.i)
			}
		}
	}
	return out, cut
}

// intHeap is a min-heap of indices (priority order).
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
