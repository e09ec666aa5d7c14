package horizon

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// DirWriter writes a pull directory the way Pull does (and `cpactl
// generate --format horizon`, which writes one without a server): into a
// temporary directory beside the target; Commit syncs every file (sixteen
// at a time), writes the manifest last and renames the directory to the
// target. Until Commit the target is left as it was; Discard removes the
// temporary directory.
type DirWriter struct {
	target string
	tmp    string
	done   bool
	files  []string // written, to be synced
}

// NewDirWriter checks the target (CheckTarget: it does not exist, is
// empty, or with replace holds a pull) and creates the temporary
// directory beside it.
func NewDirWriter(dir string, replace bool) (*DirWriter, error) {
	if err := CheckTarget(dir, replace); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), ".cpactl-horizon-pull-*")
	if err != nil {
		return nil, fmt.Errorf("cannot write beside %s: %w", dir, err)
	}
	return &DirWriter{target: dir, tmp: tmp}, nil
}

// Create creates a file of the pull, name slash-separated and relative to
// the directory (global/sites.json), 0600 in directories 0700.
func (d *DirWriter) Create(name string) (*FileWriter, error) {
	if !localName(name) {
		return nil, fmt.Errorf("file name %q leaves the directory", name)
	}
	full := filepath.Join(d.tmp, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	d.files = append(d.files, full)
	fw := &FileWriter{f: f, sum: sha256.New(), name: full}
	fw.w = bufio.NewWriterSize(io.MultiWriter(f, fw.sum, &fw.n), 64<<10)
	return fw, nil
}

// Mkdir creates a directory of the pull (a pod's, which may hold no file).
func (d *DirWriter) Mkdir(name string) error {
	if !localName(name) {
		return fmt.Errorf("directory name %q leaves the directory", name)
	}
	return os.MkdirAll(filepath.Join(d.tmp, filepath.FromSlash(name)), 0o700)
}

// Commit syncs the files, writes m as manifest.json and renames the
// directory to the target (an earlier pull there is replaced).
func (d *DirWriter) Commit(m *Manifest) error {
	if err := syncAll(d.files); err != nil {
		return err
	}
	f, err := d.Create(ManifestFile)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		f.Abort()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := syncAll([]string{filepath.Join(d.tmp, ManifestFile)}); err != nil {
		return err
	}
	if err := install(d.tmp, d.target); err != nil {
		return err
	}
	d.done = true
	return nil
}

// Discard removes the temporary directory, unless Commit installed it.
func (d *DirWriter) Discard() {
	if !d.done {
		os.RemoveAll(d.tmp)
	}
}

// FileWriter is a file of a pull being written: buffered, hashed and
// counted.
type FileWriter struct {
	f    *os.File
	w    *bufio.Writer
	sum  hash.Hash
	n    byteCounter
	name string
}

type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}

func (fw *FileWriter) Write(b []byte) (int, error) { return fw.w.Write(b) }

// WriteString writes s.
func (fw *FileWriter) WriteString(s string) (int, error) { return fw.w.WriteString(s) }

// Close flushes and closes the file (Commit syncs it).
func (fw *FileWriter) Close() error {
	err := fw.w.Flush()
	if cerr := fw.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Abort closes and removes the file.
func (fw *FileWriter) Abort() {
	fw.f.Close()
	os.Remove(fw.name)
}

// Bytes is the number of bytes written so far (all of them once closed).
func (fw *FileWriter) Bytes() int64 { return int64(fw.n) }

// SHA256 is the hex SHA-256 of what was written (after Close).
func (fw *FileWriter) SHA256() string { return hex.EncodeToString(fw.sum.Sum(nil)) }

// MetricsBatch is how many desktop pool ids one request for their metrics
// names (desktop-pool-metrics.0001.json holds the first batch).
const MetricsBatch = metricsBatch

// syncAll syncs the files, 16 at a time.
func syncAll(names []string) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan string)
	for w := 0; w < min(16, len(names)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range next {
				err := syncFile(name)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, n := range names {
		next <- n
	}
	close(next)
	wg.Wait()
	return first
}

func syncFile(name string) error {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil // aborted and removed
	}
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// PodDir is the directory of the pod at place i (from 0) of
// /federation/v1/pods: pods/01-NAME, the name reduced to [A-Za-z0-9._-].
func PodDir(i int, name string) string { return fmt.Sprintf("pods/%02d-%s", i+1, slug(name)) }

// PageName is the name of page (or batch) n of an endpoint's read in dir
// (global, or a pod's directory); n 0 is an unpaged read.
func PageName(dir, endpoint string, n int) string {
	if n == 0 {
		return fmt.Sprintf("%s/%s.json", dir, endpoint)
	}
	return fmt.Sprintf("%s/%s.%04d.json", dir, endpoint, n)
}
