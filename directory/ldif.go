package directory

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/ldif"
)

// ldifOrderKey orders entries the way export writes them:
// parents before children (by depth), then by normalized DN.
func ldifOrderKey(dn string) string { return orderKey(ldapschema.NormalizeDN(dn)) }

// orderKey is ldifOrderKey of a DN already normalized.
func orderKey(norm string) string { return string(appendOrderKey(make([]byte, 0, 4+len(norm)), norm)) }

// appendOrderKey appends orderKey(norm) to dst.
func appendOrderKey(dst []byte, norm string) []byte {
	depth := 1
	for i := 0; i < len(norm); i++ {
		switch norm[i] {
		case '\\':
			i++
		case ',':
			depth++
		}
	}
	if norm == "" {
		depth = 0
	}
	if depth > 9999 {
		depth = 9999 // deeper than any DN a server takes
	}
	dst = append(dst, byte('0'+depth/1000), byte('0'+depth/100%10), byte('0'+depth/10%10), byte('0'+depth%10))
	return append(dst, norm...)
}

// encodeLDIFEntry encodes one entry as WriteLDIF writes it: the dn,
// objectClass first, the other attributes by name, values sorted.
func encodeLDIFEntry(e *ldap.Entry) []byte {
	// Room for the record as written (base64 grows a value by a third, a
	// fold adds two bytes in 76), so that the buffer is not copied as it
	// grows.
	size := len(e.DN) + 8
	for _, a := range e.Attributes {
		for _, v := range a.Values {
			size += len(a.Name) + 3 + len(v) + len(v)/2
		}
	}
	var b bytes.Buffer
	b.Grow(size)
	writeEntrySorted(&b, e)
	return b.Bytes()
}

// appendAttrs appends a record encoded from its attributes as
// encodeLDIFEntry encodes the same entry (objectClass first, the others by
// name, values sorted), without building one: what SortedLDIF.Add writes
// for every entry of an import.
func appendAttrs(b []byte, dn string, attrs ldapschema.Attrs) []byte {
	type named struct {
		class       bool
		lower, name string
		vals        []string
	}
	var buf [24]named
	list := buf[:0]
	for name, vals := range attrs {
		if len(vals) == 0 {
			continue
		}
		if !sort.StringsAreSorted(vals) {
			vals = append([]string(nil), vals...)
			sort.Strings(vals)
		}
		list = append(list, named{strings.EqualFold(name, ldapschema.AttrObjectClass), lowerName(name), name, vals})
	}
	// By name, objectClass first; two names that differ only in case
	// (never in a record) by their spelling, so the order is the map's in
	// no case.
	slices.SortFunc(list, func(a, b named) int {
		if a.class != b.class {
			if a.class {
				return -1
			}
			return 1
		}
		if a.lower != b.lower {
			return strings.Compare(a.lower, b.lower)
		}
		return strings.Compare(a.name, b.name)
	})
	b = appendLDIFLine(b, "dn", dn)
	for _, n := range list {
		for _, v := range n.vals {
			b = appendLDIFLine(b, n.name, v)
		}
	}
	return b
}

// writeEntrySorted writes e as a record with each attribute's values
// sorted (e itself is left as it is).
func writeEntrySorted(b stringWriter, e *ldap.Entry) {
	attrs := make([]*ldap.EntryAttribute, len(e.Attributes))
	for j, a := range e.Attributes {
		vals := a.Values
		if !sort.StringsAreSorted(vals) {
			vals = append([]string(nil), vals...)
			sort.Strings(vals)
		}
		attrs[j] = &ldap.EntryAttribute{Name: a.Name, Values: vals}
	}
	writeRecord(b, e.DN, attrs)
}

// LDIFWriter writes LDIF content records (RFC 2849) one at a time, as they
// are produced, so that a large federation never sits in memory: what
// `cpactl generate` uses. Each record has objectClass first and the other
// attributes by name (as WriteLDIF orders them), values in the order given,
// and values that are not safe strings base64-encoded, exactly as WriteLDIF
// encodes them. The caller orders the records (parents first); Close
// flushes the output and reports the first write error.
type LDIFWriter struct {
	w       *bufio.Writer
	entries int
	started bool // something was written: the next record needs a blank line
}

// NewLDIFWriter returns a writer that buffers its output to w.
func NewLDIFWriter(w io.Writer) *LDIFWriter {
	return &LDIFWriter{w: bufio.NewWriterSize(w, 256<<10)}
}

// Comment writes comment lines ("# text"), as a block of their own.
func (lw *LDIFWriter) Comment(lines ...string) error {
	lw.separate()
	for _, l := range lines {
		lw.w.WriteString("#")
		if l != "" {
			lw.w.WriteString(" " + strings.ReplaceAll(l, "\n", " "))
		}
		lw.w.WriteString("\n")
	}
	return lw.err()
}

// WriteEntry writes one record from a record type's attributes
// (ldapschema.Site.Attrs() and the like). Empty attributes are left out.
func (lw *LDIFWriter) WriteEntry(dn string, attrs ldapschema.Attrs) error {
	list := make([]*ldap.EntryAttribute, 0, len(attrs))
	for name, vals := range attrs {
		if len(vals) > 0 {
			list = append(list, &ldap.EntryAttribute{Name: name, Values: vals})
		}
	}
	lw.separate()
	writeRecord(lw.w, dn, list)
	lw.entries++
	return lw.err()
}

// Entries returns the number of records written so far.
func (lw *LDIFWriter) Entries() int { return lw.entries }

// Close flushes what is buffered; it does not close the underlying writer.
func (lw *LDIFWriter) Close() error { return lw.w.Flush() }

func (lw *LDIFWriter) separate() {
	if lw.started {
		lw.w.WriteString("\n")
	}
	lw.started = true
}

// err reports a failed write: bufio.Writer keeps the first error and
// returns it from every later write.
func (lw *LDIFWriter) err() error {
	_, err := lw.w.Write(nil)
	return err
}

// stringWriter is what an LDIF record is written to: a strings.Builder
// (WriteLDIF) or a bufio.Writer (LDIFWriter), whose errors are sticky.
type stringWriter interface {
	WriteString(s string) (int, error)
}

// writeRecord writes one content record: the dn line, then attrs sorted
// objectClass first and the others by name (case-insensitively), each
// attribute's values in the order given. attrs itself is not reordered.
func writeRecord(b stringWriter, dn string, attrs []*ldap.EntryAttribute) {
	writeLDIFLine(b, "dn", dn)
	// Lower-case each name once, not in every comparison: this runs for
	// every entry of a generated federation.
	type keyed struct {
		class bool
		key   string
		attr  *ldap.EntryAttribute
	}
	var buf [24]keyed // most entries: no allocation
	sorted := buf[:0]
	if len(attrs) > len(buf) {
		sorted = make([]keyed, 0, len(attrs))
	}
	for _, a := range attrs {
		sorted = append(sorted, keyed{strings.EqualFold(a.Name, ldapschema.AttrObjectClass), lowerName(a.Name), a})
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].class != sorted[j].class {
			return sorted[i].class
		}
		return sorted[i].key < sorted[j].key
	})
	for _, k := range sorted {
		for _, v := range k.attr.Values {
			writeLDIFLine(b, k.attr.Name, v)
		}
	}
}

// lowerNames caches the lower-case form of attribute names: a federation
// has a few dozen, written on every entry. It holds at most 1,024 (a file
// of arbitrary names does not make it grow without bound).
var (
	lowerNames      sync.Map
	lowerNamesCount atomic.Int32
)

func lowerName(name string) string {
	if v, ok := lowerNames.Load(name); ok {
		return v.(string)
	}
	l := strings.ToLower(name)
	if lowerNamesCount.Load() < 1024 && lowerNamesCount.Add(1) <= 1024 {
		lowerNames.Store(name, l)
	}
	return l
}

func writeLDIFLine(b stringWriter, name, value string) {
	if ldif.SafeString(value) {
		b.WriteString(name)
		b.WriteString(": ")
		b.WriteString(value)
		b.WriteString("\n")
		return
	}
	b.WriteString(name)
	b.WriteString(":: ")
	b.WriteString(base64.StdEncoding.EncodeToString([]byte(value)))
	b.WriteString("\n")
}

// appendLDIFLine appends the line writeLDIFLine writes.
func appendLDIFLine(b []byte, name, value string) []byte {
	b = append(b, name...)
	if ldif.SafeString(value) {
		b = append(b, ": "...)
		b = append(b, value...)
		return append(b, '\n')
	}
	b = append(b, ":: "...)
	b = base64.StdEncoding.AppendEncode(b, []byte(value))
	return append(b, '\n')
}
