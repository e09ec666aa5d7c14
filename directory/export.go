package directory

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// Export writes the entries under the base that keep returns (as it
// returns them; nil leaves an entry out) to w as LDIF, in WriteLDIF's
// order (parents first, then by DN), and returns how many it wrote. keep
// gets each entry with its normalized DN (ldapschema.NormalizeDN), the
// one the order is made of: each DN is normalized once. It
// streams: entries are encoded as the paged search delivers them and put
// in order by an external merge sort (SortedLDIF), so memory stays bounded
// whatever the directory's size. Nothing is written to w when the read
// fails.
func (s *Store) Export(w io.Writer, keep func(e *ldap.Entry, key string) *ldap.Entry) (int, error) {
	if err := s.notEnclosed(); err != nil {
		return 0, err
	}
	out := NewSortedLDIF()
	defer out.Close()
	var orderBuf []byte
	err := s.Each(s.DIT.Base, ldap.ScopeWholeSubtree, ldapclient.AnyEntry, nil, func(e *ldap.Entry) error {
		key := ldapschema.NormalizeDN(e.DN)
		if e = keep(e, key); e == nil {
			return nil
		}
		orderBuf = appendOrderKey(orderBuf[:0], key)
		return out.add(orderBuf, encodeLDIFEntry(e))
	})
	if err != nil || out.Len() == 0 {
		return 0, err
	}
	return out.Flush(w)
}

// exportSpillLimit is spillLimit; tests lower it to force spills.
var exportSpillLimit = spillLimit

// SortedLDIF takes entries in any order and writes them as `cpactl export`
// does: LDIF content records, parents first and then by normalized DN,
// objectClass first, the other attributes by name, values sorted. It is
// export's writer, shared with what builds a federation from another
// source (horizon import): the records are encoded as they come and put in
// order by an external merge sort, so memory stays bounded (about 64 MiB
// of records, the rest spilled to temporary files) however many entries
// there are. Add and AddOrdered may be called from several goroutines;
// Flush writes everything once; Close removes the temporary files.
type SortedLDIF struct {
	mu     sync.Mutex
	sorter *recordSorter
	n      int
	// Duplicates counts the entries Flush left out because an entry of
	// the same DN came first; FirstDuplicate is the DN of the first.
	Duplicates     int
	FirstDuplicate string
}

// NewSortedLDIF returns an empty writer.
func NewSortedLDIF() *SortedLDIF { return &SortedLDIF{sorter: newRecordSorter(exportSpillLimit)} }

// scratch is one goroutine's buffers for a key and a record, encoded
// there and copied into the sorter under its lock.
type scratch struct{ key, rec []byte }

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(sc *scratch) {
	if cap(sc.rec) > 1<<20 { // a huge entry: do not keep its buffer
		sc.rec = nil
	}
	scratchPool.Put(sc)
}

// Add encodes one entry from a record type's attributes (ldapschema.Site.Attrs()
// and the like; empty attributes are left out).
func (s *SortedLDIF) Add(dn string, attrs ldapschema.Attrs) error {
	sc := getScratch()
	defer putScratch(sc)
	sc.key = appendOrderKey(sc.key[:0], ldapschema.NormalizeDN(dn))
	sc.rec = appendAttrs(sc.rec[:0], dn, attrs)
	return s.add(sc.key, sc.rec)
}

// A Line is one attribute value of an entry given to AddOrdered.
type Line struct{ Name, Value string }

// AddOrdered adds one entry given as its lines in the order export writes
// them: objectClass first, then the other attributes by name compared
// case-insensitively, the values of an attribute on consecutive lines,
// sorted. A line with an empty value is left out (an attribute without a
// value, as ldapschema.Attrs.SetString leaves it out). It writes the same
// record as Add does for the same attributes, with no map and no sort:
// what an import uses for entries it writes by the hundred thousand
// (sessions). Lines out of that order are refused with an error, and the
// entry is not added.
func (s *SortedLDIF) AddOrdered(dn string, lines []Line) error {
	sc := getScratch()
	defer putScratch(sc)
	sc.key = appendOrderKey(sc.key[:0], ldapschema.NormalizeDN(dn))
	b := appendLDIFLine(sc.rec[:0], "dn", dn)
	var prev *Line
	for i := range lines {
		l := &lines[i]
		if l.Value == "" {
			continue
		}
		if prev != nil && !linesInOrder(prev, l) {
			sc.rec = b
			return fmt.Errorf("entry %s: line %s: %s comes after %s: %s, out of export's order", dn, l.Name, l.Value, prev.Name, prev.Value)
		}
		b = appendLDIFLine(b, l.Name, l.Value)
		prev = l
	}
	sc.rec = b
	return s.add(sc.key, sc.rec)
}

// linesInOrder reports whether line b may follow line a in a record:
// objectClass first, then by name compared case-insensitively (as
// lowerName compares), values of the same name in order.
func linesInOrder(a, b *Line) bool {
	ac, bc := strings.EqualFold(a.Name, ldapschema.AttrObjectClass), strings.EqualFold(b.Name, ldapschema.AttrObjectClass)
	if ac != bc {
		return ac
	}
	if a.Name == b.Name {
		return a.Value <= b.Value
	}
	c := compareFold(a.Name, b.Name)
	return c < 0 || c == 0 && a.Name < b.Name
}

// compareFold compares two attribute names as their lower-case forms
// (lowerName) compare, without lower-casing ASCII names.
func compareFold(a, b string) int {
	if !isASCII(a) || !isASCII(b) {
		return strings.Compare(lowerName(a), lowerName(b))
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := a[i], b[i]
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if 'A' <= cb && cb <= 'Z' {
			cb += 'a' - 'A'
		}
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
	}
	return len(a) - len(b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func (s *SortedLDIF) add(key, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.sorter.Add(key, data)
}

// Len is the number of entries added.
func (s *SortedLDIF) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Flush writes every entry to w in order, blank lines between them, and
// returns how many it wrote. Of entries with the same DN only one is
// written (the one whose record sorts first; the others are counted in
// Duplicates), whatever the order they were added in.
func (s *SortedLDIF) Flush(w io.Writer) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	bw := bufio.NewWriterSize(w, 1<<20)
	written := 0
	var last []byte
	err := s.sorter.Each(func(key, data []byte) error {
		if written > 0 && bytes.Equal(key, last) {
			if s.Duplicates == 0 {
				s.FirstDuplicate = string(key[4:])
			}
			s.Duplicates++
			return nil
		}
		if written > 0 {
			if err := bw.WriteByte('\n'); err != nil {
				return err
			}
		}
		last = append(last[:0], key...)
		written++
		_, err := bw.Write(data)
		return err
	})
	if err != nil {
		return written, err
	}
	return written, bw.Flush()
}

// Close removes the temporary files.
func (s *SortedLDIF) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sorter.Close()
}
