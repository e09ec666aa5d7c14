package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/progress"
)

// Snapshot is a read-only directory held in memory, loaded from an LDIF
// file such as `cpactl export` or `ldapsearch -LLL` writes. It answers the
// same searches a server would (base, one-level and subtree scopes; and, or,
// not, equality, presence, substring and ordering filters, matched as
// cpactl's schema says), so every read command works on it unchanged.
//
// It is built to answer a few searches of a large file quickly: each
// entry's DN is normalized once, when the file is read, and entries are
// indexed by DN and by parent, so a search visits only the entries in its
// scope. Values stay encoded, in file order, until a search needs them: an
// entry becomes an *ldap.Entry only when it is a candidate, and the first
// equality filter on an attribute within a scope builds an index of that
// attribute's values there, so later searches such as
// (&(objectClass=pae-Session)(pae-UserDN=...)) or (|(cn=a)(cn=b)) look
// entries up instead of decoding the whole scope. A Snapshot is safe for
// concurrent use.
type Snapshot struct {
	entries []snapEntry
	byDN    map[string]int32  // normalized DN -> entry
	roots   []int32           // entries whose parent is not in the snapshot, in file order
	orphans map[int32][]int32 // entry -> the roots whose nearest ancestor in the snapshot it is
	names   []attrName        // attribute names by id, as first written

	mu      sync.Mutex
	indexes map[indexKey]map[string][]int32

	decodes atomic.Int64 // entries decoded (tests)
}

type snapEntry struct {
	dn       string
	key      string // ldapschema.NormalizeDN(dn)
	parent   int32  // -1 when not in the snapshot
	up       int32  // the nearest ancestor in the snapshot (the parent when it is there), -1 for none
	children []int32
	// values holds the entry's values in file order, each as the uvarint
	// id of its attribute name, the uvarint length of the value, and the
	// value.
	values []byte
}

// text returns the entry's values as one string, without a copy. The
// bytes never change once written: ReadSnapshot only appends to its arena
// and starts a new block when one is full, so what any entry's values
// slice covers is read-only from then on, as a string's bytes must be.
func (e *snapEntry) text() string {
	if len(e.values) == 0 {
		return ""
	}
	return unsafe.String(&e.values[0], len(e.values))
}

type attrName struct {
	name  string
	group uint32 // the id of the first name equal to this one ignoring case
}

// indexKey names an equality index: the values of one attribute among the
// entries of one scope.
type indexKey struct {
	root  int32 // -1: the whole snapshot (base "")
	scope int
	attr  string // lower case
}

// LoadSnapshot reads an LDIF file ("-" is standard input).
func LoadSnapshot(path string) (*Snapshot, error) {
	return LoadSnapshotCounting(path, nil)
}

// FileSize is the size of the file at path, for a progress total; 0 when
// it cannot tell (standard input, a pipe, an error: the read reports it).
func FileSize(path string) int64 {
	if path == "-" {
		return 0
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return fi.Size()
}

// LoadSnapshotCounting is LoadSnapshot, counting the bytes it reads into
// read (nil counts nothing): the counter is added to once per block read,
// not per entry.
func LoadSnapshotCounting(path string, read *progress.Counter) (*Snapshot, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("cannot read snapshot: %v", err)
		}
		defer f.Close()
		r = f
	}
	if read != nil {
		r = &sizedReader{Reader: progress.Reader{R: r, Count: read}, size: sizeHint(r)}
	}
	s, err := ReadSnapshot(r)
	var syntax *snapshotError
	if err != nil && !errors.As(err, &syntax) {
		return nil, fmt.Errorf("cannot read snapshot %s: %v", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %v", path, err)
	}
	return s, nil
}

// snapshotError is what is wrong with the LDIF of a snapshot, as opposed to
// an error reading it.
type snapshotError struct{ msg string }

func (e *snapshotError) Error() string { return e.msg }

func badSnapshot(format string, args ...any) error {
	return &snapshotError{msg: fmt.Sprintf(format, args...)}
}

// sizeHint returns the size of what r reads when it tells, else 0.
func sizeHint(r io.Reader) int {
	switch r := r.(type) {
	case interface{ Size() int64 }: // strings.Reader, bytes.Reader
		return int(min(r.Size(), 1<<34))
	case *os.File:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			return int(min(fi.Size(), 1<<34))
		}
	}
	return 0
}

// decode turns entry i into an *ldap.Entry: one attribute per name
// (compared ignoring case; the first spelling kept), in file order.
func (s *Snapshot) decode(i int32) *ldap.Entry { return s.decodeIn(i, nil) }

// decodeBuf holds the memory of a batch of decoded entries, reused from
// batch to batch by EachPrepared.
type decodeBuf struct {
	entries []ldap.Entry
	list    []*ldap.EntryAttribute
	attrs   []ldap.EntryAttribute
	values  []string
}

// reset makes the whole buffer free again: decodeIn sets every field it
// hands out.
func (b *decodeBuf) reset() {
	b.entries, b.list, b.attrs, b.values = b.entries[:0], b.list[:0], b.attrs[:0], b.values[:0]
}

// grow returns the next n elements of *slab, appending room when it is
// full. The elements handed out before stay where they are: a slab that
// grows is copied, and earlier slices keep the old array.
func grow[T any](slab *[]T, n int) []T {
	if len(*slab)+n > cap(*slab) {
		*slab = make([]T, 0, max(2*cap(*slab), n, 64))
	}
	lo := len(*slab)
	*slab = (*slab)[:lo+n]
	return (*slab)[lo : lo+n : lo+n]
}

// decodeIn is decode, taking the entry's memory from b (nil: fresh
// allocations).
func (s *Snapshot) decodeIn(i int32, b *decodeBuf) *ldap.Entry {
	s.decodes.Add(1)
	e := &s.entries[i]
	// One string holds the values; ByteValues are left empty, as a live
	// connection's streamed search leaves them (nothing in cpactl reads
	// them).
	text, raw := e.text(), e.values
	// A first pass counts the attributes and values, so that the entry
	// takes four allocations (the entry, its attribute list, the
	// attributes, their values) instead of two for each attribute. An
	// entry with more attributes than the stack arrays hold (never one of
	// cpactl's) takes the same path with the arrays on the heap.
	var groupsBuf, countsBuf [24]uint32
	groups, counts := groupsBuf[:0], countsBuf[:0]
	values := 0
	for p := 0; p < len(raw); {
		id, n := binary.Uvarint(raw[p:])
		p += n
		size, n := binary.Uvarint(raw[p:])
		p += n + int(size)
		g := s.names[id].group
		j := slices.Index(groups, g)
		if j < 0 {
			groups, counts = append(groups, g), append(counts, 0)
			j = len(groups) - 1
		}
		counts[j]++
		values++
	}
	var (
		entry *ldap.Entry
		attrs []ldap.EntryAttribute
		list  []*ldap.EntryAttribute
		slab  []string
	)
	if b == nil {
		entry = &ldap.Entry{}
		attrs = make([]ldap.EntryAttribute, len(groups))
		list = make([]*ldap.EntryAttribute, len(groups))
		slab = make([]string, values)
	} else {
		entry = &grow(&b.entries, 1)[0]
		attrs, list, slab = grow(&b.attrs, len(groups)), grow(&b.list, len(groups)), grow(&b.values, values)
	}
	off := 0
	for j := range attrs {
		list[j] = &attrs[j]
		attrs[j].Values = slab[off : off : off+int(counts[j])]
		off += int(counts[j])
	}
	for p := 0; p < len(raw); {
		id, n := binary.Uvarint(raw[p:])
		p += n
		size, n := binary.Uvarint(raw[p:])
		p += n
		v := text[p : p+int(size)]
		p += int(size)
		name := s.names[id]
		j := slices.Index(groups, name.group)
		a := &attrs[j]
		if len(a.Values) == 0 {
			a.Name = name.name // the first spelling, as before
		}
		a.Values = append(a.Values, v)
	}
	entry.DN, entry.Attributes = e.dn, list
	return entry
}

// eachValue calls fn with every value of entry i whose attribute name is
// in group.
func (s *Snapshot) eachValue(i int32, group uint32, fn func(string)) {
	e := &s.entries[i]
	text, raw := e.text(), e.values
	for p := 0; p < len(raw); {
		id, n := binary.Uvarint(raw[p:])
		p += n
		size, n := binary.Uvarint(raw[p:])
		p += n
		if s.names[id].group == group {
			fn(text[p : p+int(size)])
		}
		p += int(size)
	}
}

// Len returns the number of entries.
func (s *Snapshot) Len() int { return len(s.entries) }

// Each calls fn with every entry, in file order, decoding one at a time:
// memory stays bounded however large the snapshot. An error from fn stops
// and is returned.
//
// Entries are decoded a batch ahead of fn, on another goroutine.
func (s *Snapshot) Each(fn func(*ldap.Entry) error) error {
	batches := make(chan []*ldap.Entry, 8)
	var stopped atomic.Bool
	go func() {
		defer close(batches)
		for i := 0; i < len(s.entries) && !stopped.Load(); i += ldapclient.BatchSize {
			batch := make([]*ldap.Entry, 0, ldapclient.BatchSize)
			for j := i; j < min(i+ldapclient.BatchSize, len(s.entries)); j++ {
				batch = append(batch, s.decode(int32(j)))
			}
			batches <- batch
		}
	}()
	var err error
	for batch := range batches {
		for _, e := range batch {
			if err == nil {
				if err = fn(e); err != nil {
					stopped.Store(true)
				}
			}
		}
	}
	return err
}

// Decodes returns how many entries the snapshot has decoded since it was
// read (loading decodes none; a search decodes the candidates its indexes
// find): what a test of the indexes counts.
func (s *Snapshot) Decodes() int64 { return s.decodes.Load() }

// EachPrepared decodes every entry on workers goroutines, calls prepare
// there (w is the goroutine's number, for its own caches) and calls commit
// with the results in file order, on the caller's goroutine. prepare may
// keep the entry's strings, not the entry or its slices (their memory is
// reused from batch to batch). At most four batches per worker are ahead
// of commit.
func EachPrepared[T any](s *Snapshot, workers int, prepare func(w int, e *ldap.Entry) T, commit func(T)) {
	n := len(s.entries)
	batches := (n + ldapclient.BatchSize - 1) / ldapclient.BatchSize
	slots := make([]chan []T, batches)
	for i := range slots {
		slots[i] = make(chan []T, 1)
	}
	// A batch takes a token before it is claimed and gives it back once
	// committed: the lowest batch not committed always holds one.
	tokens := make(chan struct{}, 4*workers)
	var next atomic.Int64
	for w := range workers {
		go func() {
			buf := &decodeBuf{}
			for {
				tokens <- struct{}{}
				b := int(next.Add(1) - 1)
				if b >= batches {
					<-tokens
					return
				}
				buf.reset()
				out := make([]T, 0, ldapclient.BatchSize)
				for j := b * ldapclient.BatchSize; j < min(n, (b+1)*ldapclient.BatchSize); j++ {
					out = append(out, prepare(w, s.decodeIn(int32(j), buf)))
				}
				slots[b] <- out
			}
		}()
	}
	for b := range batches {
		out := <-slots[b]
		<-tokens
		for _, x := range out {
			commit(x)
		}
	}
}

// Entries returns every entry of the snapshot, in file order. It decodes
// them all: commands that can work entry by entry use Each.
func (s *Snapshot) Entries() []*ldap.Entry {
	out := make([]*ldap.Entry, len(s.entries))
	for i := range s.entries {
		out[i] = s.decode(int32(i))
	}
	return out
}

// Base returns the base DN of the federation the snapshot holds: the
// parent of the first ou=Sites entry in file order; "" when there is none.
func (s *Snapshot) Base() string {
	for _, e := range s.entries {
		if strings.HasPrefix(e.key, "ou=sites,") {
			return ldapschema.ParentOf(e.dn)
		}
	}
	return ""
}

// Holds reports whether an entry of the snapshot is base or lies below it.
func (s *Snapshot) Holds(base string) bool {
	key := ldapschema.NormalizeDN(base)
	if _, ok := s.byDN[key]; ok || (key == "" && len(s.entries) > 0) {
		return true
	}
	// base is not an entry, so the entries below it hang from roots below it.
	for _, r := range s.roots {
		if strings.HasSuffix(s.entries[r].key, ","+key) && parentEnds(s.entries[r].key, len(key)) {
			return true
		}
	}
	return false
}

// parentEnds reports whether the last n bytes of key are a whole
// ancestor's DN: the comma before them is not escaped.
func parentEnds(key string, n int) bool {
	for k := key; k != ""; k = ldapschema.ParentKey(k) {
		if len(k) == n {
			return true
		}
	}
	return false
}

// Close does nothing.
func (s *Snapshot) Close() error { return nil }

// Add refuses: a snapshot is read-only.
func (s *Snapshot) Add(*ldap.AddRequest) error { return ldapclient.ErrReadOnly }

// Modify refuses: a snapshot is read-only.
func (s *Snapshot) Modify(*ldap.ModifyRequest) error { return ldapclient.ErrReadOnly }

// ModifyDN refuses: a snapshot is read-only.
func (s *Snapshot) ModifyDN(*ldap.ModifyDNRequest) error { return ldapclient.ErrReadOnly }

// Del refuses: a snapshot is read-only.
func (s *Snapshot) Del(*ldap.DelRequest) error { return ldapclient.ErrReadOnly }

// Transaction refuses: a snapshot is read-only.
func (s *Snapshot) Transaction(func(ldapclient.Writer) error) error { return ldapclient.ErrReadOnly }

// Search answers a search like a server: noSuchObject (32) when the base does
// not exist, entries in file order, only the requested attributes.
func (s *Snapshot) Search(req *ldap.SearchRequest) (*ldap.SearchResult, error) {
	res := &ldap.SearchResult{}
	err := s.SearchEach(req, func(e *ldap.Entry) error {
		res.Entries = append(res.Entries, e)
		return nil
	})
	if err != nil && !ldapclient.IsCode(err, ldap.LDAPResultSizeLimitExceeded) {
		return nil, err
	}
	return res, err
}

// SearchEach answers a search like Search, one entry at a time, decoding
// only the candidates the indexes leave.
func (s *Snapshot) SearchEach(req *ldap.SearchRequest, each func(*ldap.Entry) error) error {
	base := ldapschema.NormalizeDN(req.BaseDN)
	root := int32(-1)
	if base != "" {
		i, ok := s.byDN[base]
		if !ok {
			return s.noSuchObject(req.BaseDN)
		}
		root = i
	}
	filter, err := ldap.CompileFilter(req.Filter)
	if err != nil {
		return err
	}
	found := 0
	for _, i := range s.candidates(filter, root, req.Scope) {
		e := s.decode(i)
		ok, err := Matches(filter, e)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := each(projectInPlace(e, req.Attributes)); err != nil {
			return err
		}
		found++
		if req.SizeLimit > 0 && found >= req.SizeLimit {
			return ldap.NewError(ldap.LDAPResultSizeLimitExceeded, fmt.Errorf("size limit exceeded"))
		}
	}
	return nil
}

// noSuchObject is the server's answer for a missing base: result 32 with
// the deepest existing ancestor as the matched DN.
func (s *Snapshot) noSuchObject(dn string) error {
	err := &ldap.Error{ResultCode: ldap.LDAPResultNoSuchObject, Err: fmt.Errorf("no such object: %s", dn)}
	for p := ldapschema.ParentOf(dn); p != ""; p = ldapschema.ParentOf(p) {
		if _, ok := s.byDN[ldapschema.NormalizeDN(p)]; ok {
			err.MatchedDN = p
			break
		}
	}
	return err
}

// inScope returns the entries of a search's scope, in file order.
func (s *Snapshot) inScope(root int32, scope int) []int32 {
	switch scope {
	case ldap.ScopeBaseObject:
		if root < 0 {
			return nil
		}
		return []int32{root}
	case ldap.ScopeSingleLevel:
		if root >= 0 {
			return s.entries[root].children
		}
		var out []int32
		for i, e := range s.entries {
			if ldapschema.ParentKey(e.key) == "" {
				out = append(out, int32(i))
			}
		}
		return out
	}
	if root < 0 {
		out := make([]int32, len(s.entries))
		for i := range out {
			out[i] = int32(i)
		}
		return out
	}
	out := []int32{root}
	deep := false
	for next := 0; next < len(out); next++ {
		children, orphans := s.entries[out[next]].children, s.orphans[out[next]]
		if (next > 0 && len(children) > 0) || len(orphans) > 0 {
			deep = true
		}
		out = append(append(out, children...), orphans...)
	}
	if deep {
		sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	}
	return out
}

// candidates returns, in file order, the entries of the scope that may
// match f: those an equality index finds when f allows one, else the whole
// scope. Each candidate is still matched against f.
func (s *Snapshot) candidates(f *ber.Packet, root int32, scope int) []int32 {
	asserts, ok := lookups(f)
	if !ok || scope == ldap.ScopeBaseObject {
		return s.inScope(root, scope)
	}
	var out []int32
	for _, a := range asserts {
		if a.children {
			key := ldapschema.NormalizeDN(a.value)
			children := s.roots // a parent that is not in the snapshot has roots for children
			if parent, ok := s.byDN[key]; ok {
				children = s.entries[parent].children
			}
			for _, c := range children {
				if ldapschema.ParentKey(s.entries[c].key) == key && s.within(c, root, scope) {
					out = append(out, c)
				}
			}
			continue
		}
		index := s.index(indexKey{root: root, scope: scope, attr: strings.ToLower(a.attr)})
		out = append(out, index[equalityKey(a.attr, a.value)]...)
	}
	if len(asserts) > 1 {
		sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
		out = compactSorted(out)
	}
	return out
}

// within reports whether entry i is in the scope.
func (s *Snapshot) within(i, root int32, scope int) bool {
	switch {
	case scope == ldap.ScopeBaseObject:
		return i == root && root >= 0
	case scope == ldap.ScopeSingleLevel && root < 0:
		return ldapschema.ParentKey(s.entries[i].key) == ""
	case scope == ldap.ScopeSingleLevel:
		return s.entries[i].parent == root
	}
	for ; root >= 0 && i >= 0; i = s.entries[i].up {
		if i == root {
			return true
		}
	}
	return root < 0
}

func compactSorted(list []int32) []int32 {
	out := list[:0]
	for i, x := range list {
		if i == 0 || x != list[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// index returns the equality index of k, building it on first use: the
// entries of the scope (in file order) by equalityKey of each value of
// the attribute.
func (s *Snapshot) index(k indexKey) map[string][]int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if idx, ok := s.indexes[k]; ok {
		return idx
	}
	idx := map[string][]int32{}
	group, known := uint32(0), false
	for _, n := range s.names {
		if strings.EqualFold(n.name, k.attr) {
			group, known = n.group, true
			break
		}
	}
	if known {
		syntax := syntaxOf(k.attr)
		// Values repeat (a user's DN in each of its sessions): each
		// distinct value is keyed once.
		keys := map[string]string{}
		for _, i := range s.inScope(k.root, k.scope) {
			s.eachValue(i, group, func(v string) {
				key, ok := keys[v]
				if !ok {
					key = equalityKeyOf(syntax, v)
					keys[v] = key
				}
				if list := idx[key]; len(list) == 0 || list[len(list)-1] != i {
					idx[key] = append(list, i)
				}
			})
		}
	}
	s.indexes[k] = idx
	return idx
}

// assertion is an equality assertion of a filter, or (children) the
// assertion entryDN:dnOneLevelMatch:=value.
type assertion struct {
	attr, value string
	children    bool
}

// lookups returns equality (or children) assertions such that every entry f matches
// satisfies at least one of them; ok is false when f offers none. Of an
// and, the most selective part is used: assertions on attributes other
// than objectClass (few values), else ones on objectClass.
func lookups(f *ber.Packet) (asserts []assertion, ok bool) {
	switch f.Tag {
	case ldap.FilterEqualityMatch, ldap.FilterApproxMatch:
		return []assertion{{attr: packetString(f.Children[0]), value: packetString(f.Children[1])}}, true
	case ldap.FilterExtensibleMatch:
		if rule, attr, value := extensibleParts(f); isChildrenMatch(rule, attr) {
			return []assertion{{attr: attr, value: value, children: true}}, true
		}
	case ldap.FilterOr:
		for _, c := range f.Children {
			more, ok := lookups(c)
			if !ok {
				return nil, false
			}
			asserts = append(asserts, more...)
		}
		return asserts, len(asserts) > 0
	case ldap.FilterAnd:
		var best []assertion
		bestScore := 0
		for _, c := range f.Children {
			more, ok := lookups(c)
			if !ok {
				continue
			}
			score := 2
			for _, a := range more {
				if strings.EqualFold(a.attr, ldapschema.AttrObjectClass) {
					score = 1
				}
			}
			if score > bestScore || (score == bestScore && len(more) < len(best)) {
				best, bestScore = more, score
			}
		}
		return best, bestScore > 0
	}
	return nil, false
}

// sizedReader is a counting reader that keeps telling sizeHint the size of
// the file it reads.
type sizedReader struct {
	progress.Reader
	size int
}

// Size is the size of the file read.
func (r *sizedReader) Size() int64 { return int64(r.size) }
