package directory

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"
)

// recordSorter puts records (a key and bytes) in key order with bounded
// memory: once more than limit bytes are held, they are sorted and spilled
// to a temporary file as one run, and the runs are merged at the end (an
// external merge sort). Export uses it to write a whole directory in a
// stable order however large it is; Go's standard library has no external
// sort and none of the well-kept modules does this small job better.
//
// A run is sorted and written by a goroutine while the next one fills
// (at most one in flight, so memory holds at most two runs' records):
// on two cores that takes the spills off the reading path.
type recordSorter struct {
	limit    int // bytes held before a spill
	held     int
	buf      []sortRecord
	runs     []*os.File
	spilling chan error // the spill in flight; nil when none
}

type sortRecord struct {
	key  string
	data []byte
}

// spillLimit is how many bytes of records export holds in memory before
// a spill (twice that while a spill is written): about 200,000 entries of
// a federation; larger directories spill to disk.
const spillLimit = 64 << 20

func newRecordSorter(limit int) *recordSorter { return &recordSorter{limit: limit} }

// Add adds a record. Records of the same key come out in the order of
// their bytes.
func (s *recordSorter) Add(key string, data []byte) error {
	s.buf = append(s.buf, sortRecord{key, data})
	s.held += len(key) + len(data) + 64
	if s.held > s.limit {
		return s.spill()
	}
	return nil
}

// spill hands the held records to a goroutine that writes them, sorted,
// to a new run file, once the spill before it is done.
func (s *recordSorter) spill() error {
	if err := s.wait(); err != nil {
		return err
	}
	f, err := os.CreateTemp("", "cpactl-sort-*")
	if err != nil {
		return fmt.Errorf("cannot spill to a temporary file: %v", err)
	}
	s.runs = append(s.runs, f)
	buf := s.buf
	s.buf, s.held = make([]sortRecord, 0, len(buf)), 0
	done := make(chan error, 1)
	s.spilling = done
	go func() { done <- writeRun(f, buf) }()
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

func sortRecords(buf []sortRecord) {
	sort.Slice(buf, func(i, j int) bool { return recordLess(buf[i].key, buf[j].key, buf[i].data, buf[j].data) })
}

// writeRun writes buf, sorted, to f.
func writeRun(f *os.File, buf []sortRecord) error {
	sortRecords(buf)
	w := bufio.NewWriterSize(f, 1<<20)
	var n [binary.MaxVarintLen64]byte
	for _, r := range buf {
		w.Write(n[:binary.PutUvarint(n[:], uint64(len(r.key)))])
		w.WriteString(r.key)
		w.Write(n[:binary.PutUvarint(n[:], uint64(len(r.data)))])
		w.Write(r.data)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("cannot spill to a temporary file: %v", err)
	}
	return nil
}

// Each hands every record to fn in key order.
func (s *recordSorter) Each(fn func(key string, data []byte) error) error {
	if err := s.wait(); err != nil {
		return err
	}
	if len(s.runs) == 0 {
		sortRecords(s.buf)
		for _, r := range s.buf {
			if err := fn(r.key, r.data); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.buf) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
		if err := s.wait(); err != nil {
			return err
		}
	}
	h := &runHeap{}
	for _, f := range s.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		r := &run{r: bufio.NewReaderSize(f, 1<<20)}
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

// run reads one spilled run back, record by record.
type run struct {
	r    *bufio.Reader
	key  string
	data []byte
}

func (r *run) next() (bool, error) {
	klen, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading a spilled run: %v", err)
	}
	key := make([]byte, klen)
	if _, err := io.ReadFull(r.r, key); err != nil {
		return false, fmt.Errorf("reading a spilled run: %v", err)
	}
	dlen, err := binary.ReadUvarint(r.r)
	if err != nil {
		return false, fmt.Errorf("reading a spilled run: %v", err)
	}
	data := make([]byte, dlen)
	if _, err := io.ReadFull(r.r, data); err != nil {
		return false, fmt.Errorf("reading a spilled run: %v", err)
	}
	r.key, r.data = string(key), data
	return true, nil
}

type runHeap struct{ items []*run }

func (h *runHeap) Len() int { return len(h.items) }
func (h *runHeap) Less(i, j int) bool {
	return recordLess(h.items[i].key, h.items[j].key, h.items[i].data, h.items[j].data)
}

// recordLess orders records by key, and records of the same key by their
// bytes, so that the order never depends on the order of Add.
func recordLess(ki, kj string, di, dj []byte) bool {
	if ki != kj {
		return ki < kj
	}
	return bytes.Compare(di, dj) < 0
}
func (h *runHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *runHeap) Push(x any)    { h.items = append(h.items, x.(*run)) }
func (h *runHeap) Pop() any {
	old := h.items
	it := old[len(old)-1]
	h.items = old[:len(old)-1]
	return it
}
