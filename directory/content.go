package directory

// What a server holds, by container, in a form two servers can compare
// cheaply: `cpactl status` and `apply --wait-replicas` tell a replica
// that holds the provider's contextCSN but not its entries
// (docs/replication.md). Only entryUUID and entryCSN are read, streamed.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"sort"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// Operational attributes the content is made of.
const (
	attrEntryUUID = "entryUUID"
	attrEntryCSN  = "entryCSN"
)

// ContainerContent is what a server holds in one container: an entry
// directly under the base and everything below it (or the base entry
// alone, DN the base).
type ContainerContent struct {
	DN      string // as the server spelled it
	Entries int
	// Digest is the sum, modulo 2^256, of the SHA-256 of "entryUUID
	// entryCSN" of each entry, in hex: the same set of entries in the same
	// versions gives the same digest whatever order the server returns
	// them in, and memory does not grow with the container.
	Digest string
}

// digest is a running sum of SHA-256 values modulo 2^256, as four 64-bit
// words, most significant first.
type digest [4]uint64

func (d *digest) add(uuid, csn string) {
	h := sha256.Sum256([]byte(uuid + " " + csn))
	var carry uint64
	for i := 3; i >= 0; i-- {
		d[i], carry = bits.Add64(d[i], binary.BigEndian.Uint64(h[i*8:]), carry)
	}
}

func (d *digest) hex() string {
	var b [32]byte
	for i, w := range d {
		binary.BigEndian.PutUint64(b[i*8:], w)
	}
	return hex.EncodeToString(b[:])
}

// containerKey returns the normalized DN of the container of dn under
// base (normalized base nbase): the RDN directly under the base, plus the
// base; nbase for the base entry; "" for a DN outside the base.
func containerKey(dn, nbase string) string {
	n := ldapschema.NormalizeDN(dn)
	if n == nbase {
		return nbase
	}
	if !strings.HasSuffix(n, ","+nbase) {
		return ""
	}
	rel := n[:len(n)-len(nbase)-1]
	// The comma before the base must separate RDNs: not escaped by an odd
	// run of backslashes ("cn=a\,dc=..." is one value).
	slashes := 0
	for i := len(rel) - 1; i >= 0 && rel[i] == '\\'; i-- {
		slashes++
	}
	if slashes%2 == 1 {
		return ""
	}
	// The last RDN of rel: after its last comma that no backslash escapes.
	last := 0
	for i := 0; i < len(rel); i++ {
		switch rel[i] {
		case '\\':
			i++
		case ',':
			last = i + 1
		}
	}
	return rel[last:] + "," + nbase
}

// ReadContent reads the entryUUID and entryCSN of every entry under base
// (one streamed, paged search) and returns the content of each container,
// sorted by normalized DN.
func ReadContent(c ldapclient.Client, base string) ([]ContainerContent, error) {
	nbase := ldapschema.NormalizeDN(base)
	type acc struct {
		dn      string
		entries int
		sum     digest
	}
	by := map[string]*acc{}
	req := ldap.NewSearchRequest(base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		ldapclient.AnyEntry, []string{attrEntryUUID, attrEntryCSN}, nil)
	err := c.SearchEach(req, func(e *ldap.Entry) error {
		key := containerKey(e.DN, nbase)
		a := by[key]
		if a == nil {
			a = &acc{dn: containerDN(e.DN, key, nbase)}
			by[key] = a
		}
		a.entries++
		a.sum.add(e.GetEqualFoldAttributeValue(attrEntryUUID), e.GetEqualFoldAttributeValue(attrEntryCSN))
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]ContainerContent, 0, len(by))
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := by[k]
		out = append(out, ContainerContent{DN: a.dn, Entries: a.entries, Digest: a.sum.hex()})
	}
	return out, nil
}

// containerDN is the container's DN as the server spells it, from the
// first entry seen in it: the entry's own DN cut to as many RDNs as the
// key holds (the key itself when the server's spelling cannot be cut).
func containerDN(dn, key, nbase string) string {
	if key == "" {
		return dn
	}
	if ldapschema.NormalizeDN(dn) == key {
		return dn
	}
	for p := ldapschema.ParentOf(dn); p != ""; p = ldapschema.ParentOf(p) {
		if ldapschema.NormalizeDN(p) == key {
			return p
		}
	}
	return key
}

// ContentTotal is the number of entries of a content.
func ContentTotal(cs []ContainerContent) int {
	n := 0
	for _, c := range cs {
		n += c.Entries
	}
	return n
}

// ContainerDiff is a container whose content differs between a reference
// server (the provider) and another: entry counts, and whether each holds
// it at all.
type ContainerDiff struct {
	DN           string
	Entries      int // on the server compared
	ReferenceHas int // on the reference
}

// CompareContent returns the containers whose entries differ between ref
// (the provider's) and other, by count or digest, sorted by DN.
func CompareContent(ref, other []ContainerContent) []ContainerDiff {
	type side struct{ ref, other *ContainerContent }
	by := map[string]*side{}
	var keys []string
	get := func(dn string) *side {
		k := ldapschema.NormalizeDN(dn)
		s := by[k]
		if s == nil {
			s = &side{}
			by[k] = s
			keys = append(keys, k)
		}
		return s
	}
	for i := range ref {
		get(ref[i].DN).ref = &ref[i]
	}
	for i := range other {
		get(other[i].DN).other = &other[i]
	}
	sort.Strings(keys)
	var out []ContainerDiff
	for _, k := range keys {
		s := by[k]
		var d ContainerDiff
		switch {
		case s.ref != nil && s.other != nil:
			if s.ref.Digest == s.other.Digest && s.ref.Entries == s.other.Entries {
				continue
			}
			d = ContainerDiff{DN: s.ref.DN, Entries: s.other.Entries, ReferenceHas: s.ref.Entries}
		case s.ref != nil:
			d = ContainerDiff{DN: s.ref.DN, ReferenceHas: s.ref.Entries}
		default:
			d = ContainerDiff{DN: s.other.DN, Entries: s.other.Entries}
		}
		out = append(out, d)
	}
	return out
}
