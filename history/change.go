package history

import (
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
)

// Change is one logged write decoded: what it did to which entry, in
// values cpactl can show, take back (undo) and replay backwards (--at).
type Change struct {
	Start string // the record's reqStart: its place in the log
	Op    string // add, delete, modify, modrdn
	DN    string // the entry written (before a rename)
	NewDN string // modrdn: the entry's DN after it
	UUID  string // the entry's entryUUID, stable across renames ("" when not logged)
	// Attrs are the attributes the write changed, each with its values
	// before and after: a modify's changed attributes (operational ones
	// left out), an add's attributes (Old empty), a delete's (New empty).
	Attrs []AttrChange
	// Result is the server's result code: 0 accepted, 50 refused, ...
	Result  int
	Message string
	// Written: accepted, and not part of a transaction that was not
	// committed (set when the run is complete: Collector.Entries).
	Written bool
	txn     string // the transaction it was queued in ("": sent alone)
}

// AttrChange is one attribute's values before and after a write.
type AttrChange struct {
	Attr     string
	Old, New []string
	// Hidden: the values are secret (a password) or were hidden by the
	// log's ACL: the change is shown without them and cannot be undone.
	Hidden bool
}

// probeValue is the value of cpactl's write probe (directory/replica.go),
// a modify that never changes anything.
const probeValue = "cpactl write probe: never stored"

// transientPrefix names the placeholders cpactl's transactions create and
// delete (directory/txn.go).
const transientPrefix = "cpactl-txn-"

// Decode turns a record into a Change; ok is false for a record that is
// no change of the federation: the write probe, a touch (an empty modify:
// directory/guard.go), a transaction's placeholder.
func Decode(r Record) (c Change, ok bool) {
	c = Change{Start: r.Start, Op: r.Type, DN: r.DN, UUID: r.EntryUUID, Result: r.Result, Message: r.Message}
	if strings.HasPrefix(strings.ToLower(ldapschema.NameOf(r.DN)), transientPrefix) {
		return c, false
	}
	mods := parseMods(r.Mod)
	old := parseOld(r.Old)
	switch r.Type {
	case "add":
		for _, m := range mods {
			if c.UUID == "" && strings.EqualFold(m.attr, "entryUUID") && len(m.values) > 0 {
				c.UUID = m.values[0]
			}
		}
		c.Attrs = attrChanges(nil, mods, false)
	case "delete":
		for _, a := range old.order {
			if ldapschema.IsOperational(a) {
				if strings.EqualFold(a, "entryUUID") && c.UUID == "" && len(old.values[a]) > 0 {
					c.UUID = old.values[a][0]
				}
				continue
			}
			c.Attrs = append(c.Attrs, AttrChange{Attr: a, Old: old.values[a], Hidden: sensitive(a)})
		}
	case "modify":
		for _, m := range mods {
			for _, v := range m.values {
				if v == probeValue {
					return c, false
				}
			}
		}
		c.Attrs = attrChanges(&old, mods, true)
		if len(c.Attrs) == 0 {
			return c, false // a touch
		}
	case "modrdn":
		parent := r.NewSuperior
		if parent == "" {
			parent = ldapschema.ParentOf(r.DN)
		}
		c.NewDN = r.NewRDN + "," + parent
		// A rename's naming attribute changes value too.
		if attr, _, found := strings.Cut(r.NewRDN, "="); found {
			c.Attrs = []AttrChange{{Attr: attr, Old: []string{ldapschema.NameOf(r.DN)}, New: []string{ldapschema.NameOf(c.NewDN)}}}
		}
	default:
		return c, false
	}
	return c, true
}

// sensitive says whether attr's values are never shown (passwords).
func sensitive(attr string) bool {
	for _, a := range ldapschema.StandardAttributes {
		if a.Sensitive && strings.EqualFold(a.Name, attr) {
			return true
		}
	}
	return false
}

// mod is one reqMod value: "attr:+ value", "attr:- value", "attr:-",
// "attr:= value", "attr:=".
type mod struct {
	attr   string
	op     byte
	values []string
}

// parseMods reads reqMod into one mod per attribute and operation, in
// the order logged (consecutive values of one operation together).
func parseMods(values []string) []mod {
	var out []mod
	for _, v := range values {
		attr, rest, found := strings.Cut(v, ":")
		if !found || rest == "" {
			continue
		}
		op := rest[0]
		value, hasValue := strings.CutPrefix(rest[1:], " ")
		if n := len(out); n > 0 && strings.EqualFold(out[n-1].attr, attr) && out[n-1].op == op && hasValue {
			out[n-1].values = append(out[n-1].values, value)
			continue
		}
		m := mod{attr: attr, op: op}
		if hasValue {
			m.values = []string{value}
		}
		out = append(out, m)
	}
	return out
}

// oldValues are reqOld's values by attribute, in the order logged.
type oldValues struct {
	order  []string
	values map[string][]string
}

func (o *oldValues) get(attr string) []string {
	for _, a := range o.order {
		if strings.EqualFold(a, attr) {
			return o.values[a]
		}
	}
	return nil
}

func parseOld(values []string) oldValues {
	o := oldValues{values: map[string][]string{}}
	for _, v := range values {
		attr, value, found := strings.Cut(v, ": ")
		if !found {
			attr, value = strings.TrimSuffix(v, ":"), ""
		}
		if _, seen := o.values[attr]; !seen {
			o.order = append(o.order, attr)
		}
		o.values[attr] = append(o.values[attr], value)
	}
	return o
}

// attrChanges applies mods to the old values (nil for an add), attribute
// by attribute, and keeps the attributes whose values changed; operational
// attributes are left out.
func attrChanges(old *oldValues, mods []mod, modify bool) []AttrChange {
	var order []string
	after := map[string][]string{}
	before := map[string][]string{}
	for _, m := range mods {
		if ldapschema.IsOperational(m.attr) {
			continue
		}
		key := strings.ToLower(m.attr)
		if _, seen := after[key]; !seen {
			order = append(order, m.attr)
			var start []string
			if old != nil {
				start = old.get(m.attr)
			}
			before[key] = start
			after[key] = append([]string(nil), start...)
		}
		cur := after[key]
		switch m.op {
		case '+':
			cur = append(cur, m.values...)
		case '-':
			if len(m.values) == 0 {
				cur = nil
			} else {
				cur = without(m.attr, cur, m.values)
			}
		case '=':
			cur = append([]string(nil), m.values...)
		}
		after[key] = cur
	}
	var out []AttrChange
	for _, a := range order {
		key := strings.ToLower(a)
		if modify && sameValues(a, before[key], after[key]) && !sensitive(a) {
			continue
		}
		out = append(out, AttrChange{Attr: a, Old: before[key], New: after[key], Hidden: sensitive(a)})
	}
	return out
}

// without returns values less those in drop, compared as attr's equality
// rule compares them.
func without(attr string, values, drop []string) []string {
	gone := ldapschema.ValueKeys(attr, drop)
	var out []string
	for _, v := range values {
		if !gone[ldapschema.ValueKey(attr, v)] {
			out = append(out, v)
		}
	}
	return out
}

// sameValues compares two value lists as sets under attr's equality
// (a ranked list's order is in its values).
func sameValues(attr string, a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	keys := ldapschema.ValueKeys(attr, a)
	for _, v := range b {
		if !keys[ldapschema.ValueKey(attr, v)] {
			return false
		}
	}
	return true
}
