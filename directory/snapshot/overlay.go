package snapshot

// What-if overlays: changes laid over a live directory or a snapshot in
// memory, for the reads that decide (resolve, simulate storm, loads,
// impact). Nothing is ever written (docs/resolve.md "What-if").

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// ErrWhatIf is returned by every write to an Overlay.
var ErrWhatIf = errors.New("a what-if is laid over the directory in memory and is never written")

// Overlay is a ldapclient.Client that answers every search from another ldapclient.Client with
// the overlay's changes laid over the answer: an entry the overlay changed
// replaces the one read (when it still matches the search's filter), an
// entry it deleted is dropped, and an entry it added is returned when it
// lies in the search's scope and matches its filter (evaluated in memory,
// as a Snapshot does). It refuses every write (ErrWhatIf).
//
// The changes are made with Replace, Put, Delete and ApplyChangeSet. Each
// search costs what the underlying search costs plus one look-up per entry
// returned and, for the entries the overlay holds in the search's scope,
// one filter evaluation each: an overlay of a few changes adds nothing
// that grows with the directory.
type Overlay struct {
	under ldapclient.Client
	// entries are the changed entries by normalized DN: the entry as it now
	// is, nil when deleted.
	entries map[string]*ldap.Entry
	// children lists, by normalized parent DN, the keys of entries that
	// lies below it, in the order they were first changed.
	children map[string][]string
	order    []string // every key, in the order first changed
	// patches are attribute values laid over entries read from under,
	// by normalized DN, applied in order when the entry is read: what
	// --at takes back of a modify without reading the entry (asof.go).
	patches map[string][]patch
}

// patch sets attr to values (none removes it).
type patch struct {
	attr   string
	values []string
}

// NewOverlay returns an overlay over c with no change yet.
func NewOverlay(c ldapclient.Client) *Overlay {
	return &Overlay{under: c, entries: map[string]*ldap.Entry{}, children: map[string][]string{}, patches: map[string][]patch{}}
}

// Empty reports whether the overlay changes nothing.
func (o *Overlay) Empty() bool { return len(o.entries) == 0 && len(o.patches) == 0 }

// Patch sets attr of the entry at dn to values (none removes it) without
// reading it: applied when the entry is read, after the patches before it.
// An entry the overlay holds whole is changed in place.
func (o *Overlay) Patch(dn, attr string, values []string) {
	k := ldapschema.NormalizeDN(dn)
	if e, ok := o.entries[k]; ok {
		if e != nil {
			SetValues(e, attr, values)
		}
		return
	}
	o.register(k)
	o.patches[k] = append(o.patches[k], patch{attr: attr, values: values})
}

// patched returns a copy of e with the patches of key applied.
func patched(e *ldap.Entry, ps []patch) *ldap.Entry {
	out := CopyEntry(e)
	for _, p := range ps {
		SetValues(out, p.attr, p.values)
	}
	return out
}

// touches says whether a patch of ps changes an attribute filter names
// (then the server's decision on the entry does not hold).
func touches(ps []patch, names map[string]bool) bool {
	for _, p := range ps {
		if names[strings.ToLower(p.attr)] {
			return true
		}
	}
	return false
}

// filterNames lists the attribute names a filter tests, lower case.
func filterNames(f *ber.Packet, names map[string]bool) {
	switch f.Tag {
	case ldap.FilterAnd, ldap.FilterOr, ldap.FilterNot:
		for _, c := range f.Children {
			filterNames(c, names)
		}
	case ldap.FilterPresent:
		names[strings.ToLower(packetString(f))] = true
	case ldap.FilterExtensibleMatch:
		_, attr, _ := extensibleParts(f)
		names[strings.ToLower(attr)] = true
	default:
		if len(f.Children) > 0 {
			names[strings.ToLower(packetString(f.Children[0]))] = true
		}
	}
}

// EachChanged calls each with every entry the overlay adds or changes (not
// the deleted ones), in the order first changed.
func (o *Overlay) EachChanged(each func(*ldap.Entry) error) error {
	for _, k := range o.order {
		if e := o.entries[k]; e != nil {
			if err := each(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// Entry returns the entry at dn as the overlay shows it (a copy the caller
// may change), nil when it does not exist.
func (o *Overlay) Entry(dn string) (*ldap.Entry, error) {
	k := ldapschema.NormalizeDN(dn)
	if e, ok := o.entries[k]; ok {
		if e == nil {
			return nil, nil
		}
		return CopyEntry(e), nil
	}
	return o.fetch(k, dn)
}

// fetch reads the entry at dn from under, with its patches applied; nil
// when it does not exist.
func (o *Overlay) fetch(k, dn string) (*ldap.Entry, error) {
	res, err := o.under.Search(ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false,
		ldapclient.AnyEntry, nil, nil))
	if ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) {
		return nil, nil
	}
	if err != nil {
		return nil, ldapclient.OpErrorf(err, "reading %s", dn)
	}
	if len(res.Entries) == 0 {
		return nil, nil
	}
	return patched(res.Entries[0], o.patches[k]), nil
}

// CopyEntry returns a copy of e that shares no slice with it.
func CopyEntry(e *ldap.Entry) *ldap.Entry {
	out := &ldap.Entry{DN: e.DN, Attributes: make([]*ldap.EntryAttribute, 0, len(e.Attributes))}
	for _, a := range e.Attributes {
		out.Attributes = append(out.Attributes, &ldap.EntryAttribute{Name: a.Name, Values: append([]string(nil), a.Values...)})
	}
	return out
}

// Set records e (nil: deleted) as the entry at its DN, in place of the
// patches of that DN (Entry applied them to what it returned).
func (o *Overlay) Set(dn string, e *ldap.Entry) {
	k := ldapschema.NormalizeDN(dn)
	o.register(k)
	delete(o.patches, k)
	o.entries[k] = e
}

// register lists a key the overlay changes, once, in order and under its
// parent.
func (o *Overlay) register(k string) {
	if _, seen := o.entries[k]; seen {
		return
	}
	if _, seen := o.patches[k]; seen {
		return
	}
	o.order = append(o.order, k)
	p := ldapschema.ParentKey(k)
	o.children[p] = append(o.children[p], k)
}

// Replace sets attr of the entry at dn to values (none removes the
// attribute). A missing entry is a *ldapclient.NotFoundError of kind.
func (o *Overlay) Replace(kind, name, dn, attr string, values []string) error {
	e, err := o.Entry(dn)
	if err != nil {
		return err
	}
	if e == nil {
		return &ldapclient.NotFoundError{Kind: kind, Name: name}
	}
	SetValues(e, attr, values)
	o.Set(e.DN, e)
	return nil
}

// SetValues replaces attr's values on e; none removes it.
func SetValues(e *ldap.Entry, attr string, values []string) {
	kept := e.Attributes[:0]
	done := false
	for _, a := range e.Attributes {
		if !strings.EqualFold(a.Name, attr) {
			kept = append(kept, a)
			continue
		}
		if len(values) > 0 && !done {
			kept = append(kept, &ldap.EntryAttribute{Name: a.Name, Values: append([]string(nil), values...)})
			done = true
		}
	}
	if len(values) > 0 && !done {
		kept = append(kept, &ldap.EntryAttribute{Name: attr, Values: append([]string(nil), values...)})
	}
	e.Attributes = kept
}

// Put lays the whole entry dn with attrs over whatever is there (a
// desired federation's entry).
func (o *Overlay) Put(dn string, attrs ldapschema.Attrs) {
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	e := &ldap.Entry{DN: dn}
	for _, n := range names {
		if len(attrs[n]) > 0 {
			e.Attributes = append(e.Attributes, &ldap.EntryAttribute{Name: n, Values: append([]string(nil), attrs[n]...)})
		}
	}
	o.Set(dn, e)
}

// Delete removes the entry at dn from what searches see.
func (o *Overlay) Delete(dn string) { o.Set(dn, nil) }

// Search answers like the underlying client, with the overlay laid over.
func (o *Overlay) Search(req *ldap.SearchRequest) (*ldap.SearchResult, error) {
	if o.Empty() {
		return o.under.Search(req)
	}
	res := &ldap.SearchResult{}
	err := o.SearchEach(req, func(e *ldap.Entry) error {
		res.Entries = append(res.Entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// SearchEach streams the underlying search's entries with the overlay laid
// over them: changed entries in place (when they still match), then the
// overlay's other entries in scope that match, in the order first changed.
func (o *Overlay) SearchEach(req *ldap.SearchRequest, each func(*ldap.Entry) error) error {
	if o.Empty() {
		return o.under.SearchEach(req, each)
	}
	filter, err := ldap.CompileFilter(req.Filter)
	if err != nil {
		return err
	}
	base := ldapschema.NormalizeDN(req.BaseDN)
	if e, ok := o.entries[base]; ok && e == nil && base != "" {
		return &ldap.Error{ResultCode: ldap.LDAPResultNoSuchObject, Err: fmt.Errorf("no such object: %s", req.BaseDN)}
	}
	emitted := map[string]bool{}
	emit := func(k string, e *ldap.Entry) error {
		emitted[k] = true
		ok, err := Matches(filter, e)
		if err != nil || !ok {
			return err
		}
		return each(project(e, req.Attributes))
	}
	var names map[string]bool // what the filter tests, for the patches
	if len(o.patches) > 0 {
		names = map[string]bool{}
		filterNames(filter, names)
	}
	// emitPatched lays a patched entry over the search: when its patches
	// leave what the filter tests alone, the server's decision holds;
	// else the whole entry is read and the filter evaluated on it.
	emitPatched := func(k string, e *ldap.Entry, ps []patch) error {
		if !touches(ps, names) {
			emitted[k] = true
			return each(project(patched(e, ps), req.Attributes))
		}
		whole, err := o.fetch(k, e.DN)
		if err != nil || whole == nil {
			return err
		}
		return emit(k, whole)
	}
	err = o.under.SearchEach(req, func(e *ldap.Entry) error {
		k := ldapschema.NormalizeDN(e.DN)
		if mine, ok := o.entries[k]; ok {
			if mine == nil {
				return nil
			}
			return emit(k, mine)
		}
		if ps, ok := o.patches[k]; ok {
			return emitPatched(k, e, ps)
		}
		return each(e)
	})
	if ldapclient.IsCode(err, ldap.LDAPResultNoSuchObject) && o.entries[base] != nil {
		err = nil // the base is an entry the overlay adds
	}
	if err != nil {
		return err
	}
	for _, k := range o.inScope(base, req.Scope) {
		if e := o.entries[k]; e != nil && !emitted[k] {
			if err := emit(k, e); err != nil {
				return err
			}
		}
		// A patched entry the server did not return may match once
		// patched, when a patch changes what the filter tests.
		if ps, ok := o.patches[k]; ok && !emitted[k] && touches(ps, names) {
			whole, err := o.fetch(k, k)
			if err != nil {
				return err
			}
			if whole != nil {
				if err := emit(k, whole); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// inScope lists the overlay's keys in the scope of a search from base.
func (o *Overlay) inScope(base string, scope int) []string {
	switch scope {
	case ldap.ScopeBaseObject:
		if _, ok := o.entries[base]; ok {
			return []string{base}
		}
		if _, ok := o.patches[base]; ok {
			return []string{base}
		}
		return nil
	case ldap.ScopeSingleLevel:
		return o.children[base]
	}
	var out []string
	for _, k := range o.order {
		if withinKey(k, base) {
			out = append(out, k)
		}
	}
	return out
}

// withinKey reports whether key is base or lies below it (normalized DNs).
func withinKey(key, base string) bool {
	if base == "" {
		return true
	}
	for k := key; k != ""; k = ldapschema.ParentKey(k) {
		if len(k) == len(base) {
			return k == base
		}
		if len(k) < len(base) {
			return false
		}
	}
	return false
}

// Add refuses: a what-if is never written.
func (o *Overlay) Add(*ldap.AddRequest) error { return ErrWhatIf }

// Modify refuses: a what-if is never written.
func (o *Overlay) Modify(*ldap.ModifyRequest) error { return ErrWhatIf }

// ModifyDN refuses: a what-if is never written.
func (o *Overlay) ModifyDN(*ldap.ModifyDNRequest) error { return ErrWhatIf }

// Del refuses: a what-if is never written.
func (o *Overlay) Del(*ldap.DelRequest) error { return ErrWhatIf }

// Transaction refuses: a what-if is never written.
func (o *Overlay) Transaction(func(ldapclient.Writer) error) error { return ErrWhatIf }

// Close closes the underlying client.
func (o *Overlay) Close() error { return o.under.Close() }

// PutEntry lays e over whatever is at its DN, its attributes in the order
// given (an entry as the server held it).
func (o *Overlay) PutEntry(e *ldap.Entry) { o.Set(e.DN, CopyEntry(e)) }
