package directory

import (
	"bufio"
	"io"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// Export writes the entries under the base that keep returns (as it
// returns them; nil leaves an entry out) to w as LDIF, in WriteLDIF's
// order (parents first, then by DN), and returns how many it wrote. keep
// gets each entry with its normalized DN (ldapschema.NormalizeDN), the
// one the order is made of: each DN is normalized once. It
// streams: entries are encoded as the paged search delivers them and put
// in order by an external merge sort, so memory stays bounded whatever the
// directory's size. Nothing is written to w when the read fails.
func (s *Store) Export(w io.Writer, keep func(e *ldap.Entry, key string) *ldap.Entry) (int, error) {
	if err := s.notEnclosed(); err != nil {
		return 0, err
	}
	sorter := newRecordSorter(exportSpillLimit)
	defer sorter.Close()
	n := 0
	err := s.Each(s.DIT.Base, ldap.ScopeWholeSubtree, AnyEntry, nil, func(e *ldap.Entry) error {
		key := ldapschema.NormalizeDN(e.DN)
		if e = keep(e, key); e == nil {
			return nil
		}
		n++
		return sorter.Add(orderKey(key), encodeLDIFEntry(e))
	})
	if err != nil || n == 0 {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	first := true
	err = sorter.Each(func(data []byte) error {
		if !first {
			if err := bw.WriteByte('\n'); err != nil {
				return err
			}
		}
		first = false
		_, err := bw.Write(data)
		return err
	})
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// exportSpillLimit is spillLimit; tests lower it to force spills.
var exportSpillLimit = spillLimit
