package reconcile

import (
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
)

// Exporter decides what `cpactl export` writes: the federation as apply
// takes it back. Only cpactl's objects and the structure of its layout
// (classified as diff and apply classify them); of each, the attributes
// cpactl's schema and the standard classes define, operational ones and
// secrets (userPassword and every sensitive attribute) left out. Entries
// that are not cpactl's (a service account under the base, an ou=Admins)
// are left out and counted.
type Exporter struct {
	transient directory.TransientKeys
	layout    layoutKeys
	types     map[string]*attrType
	// Foreign counts the entries left out because they are not cpactl's;
	// Example is the first of them. Secrets counts the values of
	// sensitive attributes left out, Unknown the attributes no schema
	// cpactl knows defines.
	Foreign, Secrets, Unknown int
	Example                   string
}

// NewExporter returns an exporter for the federation under dit's base.
func NewExporter(dit ldapschema.DIT) *Exporter {
	return &Exporter{transient: directory.NewTransientKeys(dit), layout: newLayoutKeys(dit), types: map[string]*attrType{}}
}

// Keep returns raw as export writes it, or nil when export leaves it out;
// key is raw's normalized DN (what Store.Export hands over).
// It is called from one goroutine at a time.
func (x *Exporter) Keep(raw *ldap.Entry, key string) *ldap.Entry {
	if x.transient.Is(key) || x.transient.IsRoles(key) {
		return nil
	}
	kind := ""
	if key == x.layout.base || strings.HasSuffix(key, x.layout.commaBase) {
		kind, _ = classify(x.layout, key, raw)
	}
	if kind == "" {
		if x.Foreign == 0 {
			x.Example = raw.DN
		}
		x.Foreign++
		return nil
	}
	out := &ldap.Entry{DN: raw.DN, Attributes: make([]*ldap.EntryAttribute, 0, len(raw.Attributes))}
	for _, a := range raw.Attributes {
		t, ok := x.types[a.Name]
		if !ok {
			t = &attrType{operational: ldapschema.IsOperational(a.Name)}
			t.info, t.known = ldapschema.LookupAttribute(a.Name)
			x.types[a.Name] = t
		}
		switch {
		case t.operational:
		case !t.known:
			x.Unknown++
		case leftOutByExport(t):
			x.Secrets += len(a.Values)
		default:
			out.Attributes = append(out.Attributes, a)
		}
	}
	return out
}

// leftOutByExport reports whether export leaves an attribute out although
// cpactl's schema or the standard classes define it: secrets (userPassword,
// every sensitive attribute). Operational and undefined attributes, which
// export leaves out too, are never compared. diff and apply compare such
// an attribute only when the desired entry carries it (attributeChanges),
// so that an export applied back removes no password.
func leftOutByExport(t *attrType) bool { return t.info.Sensitive }
