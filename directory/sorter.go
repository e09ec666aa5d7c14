package directory

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// recordSorter puts records (a key and bytes) in key order with bounded
// memory: once more than half the limit is held, the records are sorted
// and spilled to a temporary file as one run, and the runs are merged at the end (an
// external merge sort), with what is still held as one more run, in
// memory. Export uses it to write a whole directory in a stable order
// however large it is; Go's standard library has no external sort and
// none of the well-kept modules does this small job better.
//
// The records are copied, key and bytes back to back, into one large
// buffer (a slab) with a small index beside it: no allocation per record,
// and nothing for the garbage collector to scan. A run is sorted and
// written by a goroutine while the next one fills (at most one in flight,
// so memory holds at most two slabs: the limit); the slab of a written
// run is reused for the next. On two cores that takes the spills off the
// reading path.
type recordSorter struct {
	slabLimit int   // bytes a slab holds before a spill: half the limit
	cur       *slab // the records being added
	spare     *slab // the slab of the run written last, for reuse
	runs      []*os.File
	spilling  chan error // the spill in flight; nil when none
}

// slab holds records back to back: recs[i] is the key at
// data[off:off+klen] followed by the record's klen..klen+dlen bytes.
type slab struct {
	data []byte
	recs []slabRecord
}

type slabRecord struct{ off, klen, dlen int }

func (s *slab) key(r slabRecord) []byte  { return s.data[r.off : r.off+r.klen] }
func (s *slab) body(r slabRecord) []byte { return s.data[r.off+r.klen : r.off+r.klen+r.dlen] }

// held is what the slab counts against the limit: its bytes and its index.
func (s *slab) held() int { return len(s.data) + len(s.recs)*24 }

func (s *slab) reset() { s.data, s.recs = s.data[:0], s.recs[:0] }

// sort orders the records by key, and records of the same key by their
// bytes, so that the order never depends on the order of Add.
func (s *slab) sort() {
	slices.SortFunc(s.recs, func(a, b slabRecord) int {
		if c := bytes.Compare(s.key(a), s.key(b)); c != 0 {
			return c
		}
		return bytes.Compare(s.body(a), s.body(b))
	})
}

// spillLimit is how many bytes of records export holds in memory, the
// run being spilled included: two slabs of 16 MiB, about 25,000 entries
// of a federation each; more spill to disk. Larger slabs spill less but
// cost more than they save: memory fresh from the system is paid for
// page by page, and the collector lets the heap grow to twice what is
// live (an import of 250,000 sessions took a fifth more processor time
// with slabs of 64 MiB than of 16).
const spillLimit = 32 << 20

func newRecordSorter(limit int) *recordSorter {
	return &recordSorter{slabLimit: max(limit/2, 1), cur: &slab{}}
}

// Add adds a record (both slices are copied). Records of the same key
// come out in the order of their bytes. A slab grows to its limit at
// most (or to one record larger than that).
func (s *recordSorter) Add(key, data []byte) error {
	size := len(key) + len(data)
	if len(s.cur.recs) > 0 && s.cur.held()+size+24 > s.slabLimit {
		if err := s.spill(); err != nil {
			return err
		}
	}
	c := s.cur
	if need := len(c.data) + size; need > cap(c.data) {
		// The first slab is made as large as a slab gets (up to half
		// spillLimit) at once: memory fresh from the system costs
		// nothing until it is written, and a slab grown step by step
		// copies itself each time.
		grown := make([]byte, len(c.data), max(need, min(2*cap(c.data), s.slabLimit), min(s.slabLimit, spillLimit/2)))
		copy(grown, c.data)
		c.data = grown
	}
	c.recs = append(c.recs, slabRecord{off: len(c.data), klen: len(key), dlen: len(data)})
	c.data = append(append(c.data, key...), data...)
	return nil
}

// spill hands the held records to a goroutine that writes them, sorted,
// to a new run file, once the spill before it is done; the records that
// follow go to the slab of that earlier run.
func (s *recordSorter) spill() error {
	if err := s.wait(); err != nil {
		return err
	}
	f, err := os.CreateTemp("", "cpactl-sort-*")
	if err != nil {
		return fmt.Errorf("cannot spill to a temporary file: %v", err)
	}
	s.runs = append(s.runs, f)
	full := s.cur
	if s.spare == nil {
		s.spare = &slab{data: make([]byte, 0, cap(full.data)), recs: make([]slabRecord, 0, cap(full.recs))}
	}
	s.cur, s.spare = s.spare, full
	s.cur.reset()
	done := make(chan error, 1)
	s.spilling = done
	go func() { done <- writeRun(f, full) }()
	return nil
}

// wait waits for the spill in flight, if any, and returns its error.
func (s *recordSorter) wait() error {
	if s.spilling == nil {
		return nil
	}
	err := <-s.spilling
	s.spilling = nil
	return err
}

// writeRun writes the slab's records, sorted, to f.
func writeRun(f *os.File, sl *slab) error {
	sl.sort()
	w := bufio.NewWriterSize(f, 1<<20)
	var n [binary.MaxVarintLen64]byte
	for _, r := range sl.recs {
		w.Write(n[:binary.PutUvarint(n[:], uint64(r.klen))])
		w.Write(sl.key(r))
		w.Write(n[:binary.PutUvarint(n[:], uint64(r.dlen))])
		w.Write(sl.body(r))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("cannot spill to a temporary file: %v", err)
	}
	return nil
}

// Each hands every record to fn in key order. The slices fn gets are
// valid until it returns.
func (s *recordSorter) Each(fn func(key, data []byte) error) error {
	if err := s.wait(); err != nil {
		return err
	}
	s.spare = nil // no more spills: let the collector have it
	s.cur.sort()
	if len(s.runs) == 0 {
		for _, r := range s.cur.recs {
			if err := fn(s.cur.key(r), s.cur.body(r)); err != nil {
				return err
			}
		}
		return nil
	}
	// The runs on disk and, as one more run, the records still held.
	h := &runHeap{}
	mem := &run{mem: s.cur}
	if ok, _ := mem.next(); ok {
		h.items = append(h.items, mem)
	}
	for _, f := range s.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		r := &run{r: bufio.NewReaderSize(f, 64<<10)}
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			h.items = append(h.items, r)
		}
	}
	heap.Init(h)
	for h.Len() > 0 {
		top := h.items[0]
		if err := fn(top.key, top.data); err != nil {
			return err
		}
		ok, err := top.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

// Close removes the run files.
func (s *recordSorter) Close() {
	_ = s.wait()
	for _, f := range s.runs {
		f.Close()
		os.Remove(f.Name())
	}
	s.runs = nil
}

// run reads one sorted run back, record by record: a spilled one from
// its file (into buffers reused from record to record), or the records
// held in memory.
type run struct {
	r         *bufio.Reader
	mem       *slab
	pos       int
	key, data []byte
}

func (r *run) next() (bool, error) {
	if r.mem != nil {
		if r.pos == len(r.mem.recs) {
			return false, nil
		}
		rec := r.mem.recs[r.pos]
		r.pos++
		r.key, r.data = r.mem.key(rec), r.mem.body(rec)
		return true, nil
	}
	klen, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading a spilled run: %v", err)
	}
	if r.key, err = readN(r.r, r.key, klen); err != nil {
		return false, err
	}
	dlen, err := binary.ReadUvarint(r.r)
	if err != nil {
		return false, fmt.Errorf("reading a spilled run: %v", err)
	}
	if r.data, err = readN(r.r, r.data, dlen); err != nil {
		return false, err
	}
	return true, nil
}

// readN reads n bytes into buf (grown as needed).
func readN(r io.Reader, buf []byte, n uint64) ([]byte, error) {
	if n > 1<<40 {
		return nil, fmt.Errorf("reading a spilled run: a record of %d bytes", n)
	}
	buf = slices.Grow(buf[:0], int(n))[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("reading a spilled run: %v", err)
	}
	return buf, nil
}

type runHeap struct{ items []*run }

func (h *runHeap) Len() int { return len(h.items) }
func (h *runHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c < 0
	}
	return bytes.Compare(a.data, b.data) < 0
}
func (h *runHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *runHeap) Push(x any)    { h.items = append(h.items, x.(*run)) }
func (h *runHeap) Pop() any {
	old := h.items
	it := old[len(old)-1]
	h.items = old[:len(old)-1]
	return it
}
