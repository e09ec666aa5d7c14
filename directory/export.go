package directory

import (
	"bufio"
	"io"
	"sync"

	"github.com/go-ldap/ldap/v3"

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
	err := s.Each(s.DIT.Base, ldap.ScopeWholeSubtree, AnyEntry, nil, func(e *ldap.Entry) error {
		key := ldapschema.NormalizeDN(e.DN)
		if e = keep(e, key); e == nil {
			return nil
		}
		return out.add(orderKey(key), encodeLDIFEntry(e))
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
// there are. Add may be called from several goroutines; Flush writes
// everything once; Close removes the temporary files.
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

// Add encodes one entry from a record type's attributes (ldapschema.Site.Attrs()
// and the like; empty attributes are left out).
func (s *SortedLDIF) Add(dn string, attrs ldapschema.Attrs) error {
	return s.add(ldifOrderKey(dn), encodeAttrs(dn, attrs))
}

func (s *SortedLDIF) add(key string, data []byte) error {
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
	written, last := 0, ""
	err := s.sorter.Each(func(key string, data []byte) error {
		if written > 0 && key == last {
			if s.Duplicates == 0 {
				s.FirstDuplicate = key[4:]
			}
			s.Duplicates++
			return nil
		}
		if written > 0 {
			if err := bw.WriteByte('\n'); err != nil {
				return err
			}
		}
		last = key
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
