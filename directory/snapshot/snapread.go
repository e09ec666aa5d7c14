package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/ldif"
)

// Reading a snapshot: the file is cut into blocks at empty lines (where
// one record ends and the next begins), each block is parsed on its own
// processor into entries whose values and DN are packed in that
// processor's arena, and the blocks' entries are joined in file order. Parsing is most
// of the cost of a --from command (a CPA-maximum file is 178 MB), and two
// processors read it in a little more than half the time of one.
//
// A block that holds no empty line (a single record or comment run longer
// than snapBlockMax) ends the cutting: the rest of the input is parsed in
// one piece, as a plain sequential read would, so any input reads the same
// whichever way it is cut. Line numbers are counted across blocks, so
// errors name the line of the whole file, and the error reported is the
// first in file order.

const (
	// snapBlock is the size a block is cut at (at the last empty line
	// before it).
	snapBlock = 4 << 20
	// snapBlockMax is how far a block may grow to reach an empty line
	// before the rest of the input is read in one piece.
	snapBlockMax = ldif.MaxRecord + 8<<20
	// arenaChunk is the size of the blocks of memory that hold the
	// entries' values and DNs.
	arenaChunk = 4 << 20
)

// ReadSnapshot reads LDIF content entries from r (change records are
// refused, except add records, read as entries). Syntax errors name their
// line; the error returned is the first in the input.
func ReadSnapshot(r io.Reader) (*Snapshot, error) {
	return readSnapshot(r, snapCut{workers: runtime.GOMAXPROCS(0), block: snapBlock, max: snapBlockMax})
}

// snapCut says how a snapshot is read: on how many processors, and in
// blocks of what size (tests cut small inputs into many blocks).
type snapCut struct{ workers, block, max int }

// readSnapshot is ReadSnapshot, cut as c says.
func readSnapshot(r io.Reader, c snapCut) (*Snapshot, error) {
	s := &Snapshot{indexes: map[indexKey]map[string][]int32{}}
	// Room for the entries of a file of this size, at a few hundred bytes
	// an entry, so that the list is not copied as it grows.
	size := sizeHint(r)
	hint := size / 384
	s.entries = make([]snapEntry, 0, hint)
	s.byDN = make(map[string]int32, hint)
	names := &nameTable{ids: map[string]uint32{}, groups: map[string]uint32{}}
	var lines []int // of each entry's dn:, for errors
	err := eachSnapPart(r, size, c, names, func(p *snapPart) error {
		if p.err != nil {
			return p.err
		}
		s.entries = append(s.entries, p.entries...)
		lines = append(lines, p.lines...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.names = names.names
	// The list is not trimmed to its length: the hint overestimates by a
	// few tens of thousands of entries at most (88 bytes each), and a copy
	// of the whole list costs more than those bytes (0.4 s at 358,000
	// entries).
	for i := range s.entries {
		e := &s.entries[i]
		if _, dup := s.byDN[e.key]; dup {
			return nil, badSnapshot("line %d: entry %q appears twice", lines[i], e.dn)
		}
		s.byDN[e.key] = int32(i)
	}
	s.link()
	return s, nil
}

// link sets the entries' parents, children, roots and orphans.
func (s *Snapshot) link() {
	for i := range s.entries {
		e := &s.entries[i]
		if p, ok := s.byDN[ldapschema.ParentKey(e.key)]; ok {
			e.parent, e.up = p, p
			s.entries[p].children = append(s.entries[p].children, int32(i))
			continue
		}
		s.roots = append(s.roots, int32(i))
		// An entry whose parent is missing is still in the subtree of its
		// nearest ancestor that is there, as a search of the file finds it.
		for k := ldapschema.ParentKey(ldapschema.ParentKey(e.key)); k != ""; k = ldapschema.ParentKey(k) {
			if a, ok := s.byDN[k]; ok {
				e.up = a
				if s.orphans == nil {
					s.orphans = map[int32][]int32{}
				}
				s.orphans[a] = append(s.orphans[a], int32(i))
				break
			}
		}
	}
}

// nameTable gives attribute names their ids, shared by the parsers of all
// blocks. Ids are only compared (a name's group is the id of the first
// name equal to it ignoring case), so the order blocks meet names in does
// not matter.
type nameTable struct {
	mu     sync.Mutex
	ids    map[string]uint32 // name as written -> id
	groups map[string]uint32 // lower-case name -> group
	names  []attrName
}

func (t *nameTable) id(name string) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.ids[name]; ok {
		return id
	}
	name = strings.Clone(name)
	id := uint32(len(t.names))
	lower := strings.ToLower(name)
	group, known := t.groups[lower]
	if !known {
		group = id
		t.groups[lower] = id
	}
	t.ids[name] = id
	t.names = append(t.names, attrName{name: name, group: group})
	return id
}

// snapPart is what one block (or the sequential rest of the input) holds.
type snapPart struct {
	entries []snapEntry
	lines   []int
	err     error // the first in the part; nothing after it is read
}

// snapJob is one piece of input to parse: a block, or (when in is set)
// the rest of the input, or a read error.
type snapJob struct {
	data []byte
	in   io.Reader
	line int // lines before the piece: 0 for the piece that opens the input
	err  error
	done chan *snapPart
}

// eachSnapPart cuts r (of size bytes, 0 when it cannot tell) into blocks,
// parses them on c.workers processors and calls fn with each part in input
// order; the first error (fn's or a part's, which fn returns) stops it.
func eachSnapPart(r io.Reader, size int, c snapCut, names *nameTable, fn func(*snapPart) error) error {
	workers := c.workers
	if workers < 2 || (size > 0 && size < 2*c.block) {
		var arena []byte
		return fn(parseSnapPart(snapJob{in: r}, names, &arena))
	}
	jobs := make(chan snapJob, workers)
	order := make(chan snapJob, 2*workers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var arena []byte // kept from block to block: full chunks only
			for j := range jobs {
				select {
				case <-stop:
					j.done <- &snapPart{}
				default:
					j.done <- parseSnapPart(j, names, &arena)
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		defer close(order)
		cutBlocks(r, c, func(j snapJob) bool {
			j.done = make(chan *snapPart, 1)
			select {
			case order <- j:
			case <-stop:
				return false
			}
			if j.err != nil {
				j.done <- &snapPart{err: j.err}
				return false
			}
			jobs <- j
			return true
		})
	}()
	var err error
	for j := range order {
		p := <-j.done
		if err == nil {
			if err = fn(p); err != nil {
				close(stop)
			}
		}
	}
	wg.Wait()
	return err
}

// cutBlocks reads r and hands each block to send, ending at the end of
// the input, at a read error (sent as a job's err), at a block with no
// empty line (sent with the rest of the input as in), or when send
// returns false.
func cutBlocks(r io.Reader, c snapCut, send func(snapJob) bool) {
	var (
		lines int
		carry []byte
	)
	for {
		buf := make([]byte, len(carry), c.block+len(carry))
		copy(buf, carry)
		cut := -1
		var rerr error
		for {
			for len(buf) < cap(buf) && rerr == nil {
				var n int
				n, rerr = r.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+n]
			}
			if rerr != nil {
				break
			}
			if cut = lastEmptyLine(buf); cut >= 0 {
				break
			}
			if len(buf) >= c.max {
				send(snapJob{in: io.MultiReader(bytes.NewReader(buf), r), line: lines})
				return
			}
			buf = slices.Grow(buf, c.block)
		}
		if rerr == io.EOF {
			if len(buf) > 0 {
				send(snapJob{data: buf, line: lines})
			}
			return
		}
		if rerr != nil {
			// The records before the last empty line are whole: their
			// errors come first, as in a sequential read.
			if cut = lastEmptyLine(buf); cut > 0 && !send(snapJob{data: buf[:cut], line: lines}) {
				return
			}
			send(snapJob{err: rerr})
			return
		}
		carry = buf[cut:]
		block := buf[:cut:cut]
		if !send(snapJob{data: block, line: lines}) {
			return
		}
		lines += bytes.Count(block, []byte{'\n'})
	}
}

// lastEmptyLine returns the offset just after the last empty line of buf
// ("\n\n" or "\n\r\n"), or -1.
func lastEmptyLine(buf []byte) int {
	for end := len(buf); ; {
		i := bytes.LastIndexByte(buf[:end], '\n')
		if i < 1 {
			return -1
		}
		switch {
		case buf[i-1] == '\n':
			return i + 1
		case buf[i-1] == '\r' && i >= 2 && buf[i-2] == '\n':
			return i + 1
		}
		end = i
	}
}

// parseSnapPart parses one piece of input into entries, each DN checked
// and normalized, values and DNs packed into arena (appended to, and a new
// chunk started when it is full).
func parseSnapPart(j snapJob, names *nameTable, arenap *[]byte) *snapPart {
	in := j.in
	if in == nil {
		in = bytes.NewReader(j.data)
	}
	var rd *ldif.Reader
	if j.line == 0 {
		rd = ldif.NewReader(in)
	} else {
		rd = ldif.NewReaderAt(in, j.line)
	}
	rd.ReuseStrings()
	p := &snapPart{}
	local := map[string]uint32{} // names seen here, as written -> id
	var rec ldif.Record
	arena := *arenap
	defer func() { *arenap = arena }()
	for {
		err := rd.Read(&rec)
		if err == io.EOF {
			return p
		}
		var le *ldif.Error
		if errors.As(err, &le) {
			p.err = badSnapshot("not valid LDIF: %v", err)
			return p
		}
		if err != nil {
			p.err = err
			return p
		}
		if rec.ChangeType != "" && rec.ChangeType != ldif.ChangeAdd {
			p.err = badSnapshot("line %d: holds a change record (changetype: %s); a snapshot holds entries only",
				rec.Line, rec.ChangeType)
			return p
		}
		if rec.DN == "" {
			p.err = badSnapshot("line %d: an entry without a DN", rec.Line)
			return p
		}
		need := len(rec.DN)
		for _, v := range rec.Values {
			need += len(v.Value) + 2*binary.MaxVarintLen32
		}
		if len(arena)+need > cap(arena) {
			arena = make([]byte, 0, max(arenaChunk, need))
		}
		first := len(arena)
		arena = append(arena, rec.DN...)
		dn := unsafe.String(&arena[first], len(rec.DN))
		key, err := ldapschema.NormalizeDNChecked(dn)
		if err != nil {
			p.err = badSnapshot("line %d: entry %q: bad DN: %v", rec.Line, dn, err)
			return p
		}
		if key == dn {
			key = dn // the arena's copy, not a second one
		}
		first = len(arena)
		for _, v := range rec.Values {
			id, ok := local[v.Name]
			if !ok {
				id = names.id(v.Name)
				local[strings.Clone(v.Name)] = id
			}
			arena = binary.AppendUvarint(arena, uint64(id))
			arena = binary.AppendUvarint(arena, uint64(len(v.Value)))
			arena = append(arena, v.Value...)
		}
		p.lines = append(p.lines, rec.Line)
		p.entries = append(p.entries, snapEntry{dn: dn, key: key, parent: -1, up: -1, values: arena[first:len(arena):len(arena)]})
	}
}
