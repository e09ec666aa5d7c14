// Package osfile reads and writes the files a command line names, so that
// what a path is stays what it is:
//
//   - Read reads a small file whole (a password file, a CA bundle, the
//     configuration file) up to a bound, and refuses what is not of a kind
//     the caller accepts (a device such as /dev/zero, a directory) before
//     reading a byte of it.
//   - Create writes an output file (-O): a regular file, or a path where
//     none exists yet, is replaced atomically (a temporary file in the same
//     directory, then a rename), a symbolic link is followed to the regular
//     file it names (the link stays a link), and a device, a fifo or a
//     descriptor already open (/dev/stdout) is written in place, streamed:
//     never replaced by a regular file.
//
// Errors name the path given and say what is wrong in one line.
package osfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Common bounds of Read.
const (
	KiB = 1 << 10
	MiB = 1 << 20
)

// Source says what a file read whole may be.
type Source struct {
	// Max is the most bytes the file may hold.
	Max int64
	// Pipes accepts a fifo or a pipe besides a regular file: a password
	// given as -y /dev/stdin or -y <(pass show ldap).
	Pipes bool
}

// Read reads the file at path whole and returns its bytes and what it is.
// A file of a kind s does not accept is a *KindError, and one longer than
// s.Max a *TooLargeError, both before it is read past s.Max; a file that
// does not exist is the fs.ErrNotExist of os.Open.
func (s Source) Read(path string) ([]byte, fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if err := s.check(path, fi); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// What was opened, which the name may no longer be.
	if fi, err = f.Stat(); err != nil {
		return nil, nil, err
	}
	if err := s.check(path, fi); err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, s.Max+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(b)) > s.Max {
		return nil, nil, &TooLargeError{Path: path, Max: s.Max}
	}
	return b, fi, nil
}

// check refuses a file s does not accept, or one whose size is known to
// be over the bound.
func (s Source) check(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular():
		if fi.Size() > s.Max {
			return &TooLargeError{Path: path, Max: s.Max}
		}
		return nil
	case s.Pipes && m&fs.ModeNamedPipe != 0:
		return nil
	}
	want := "a regular file"
	if s.Pipes {
		want = "a regular file or a pipe"
	}
	return &KindError{Path: path, Kind: kind(m), Want: want}
}

// KindError is a file that is not of the kind expected: a device where a
// regular file is read, a directory where a file is written.
type KindError struct {
	Path string
	Kind string // "a character device"
	Want string // "a regular file"
}

func (e *KindError) Error() string {
	return fmt.Sprintf("%s is %s, not %s", e.Path, e.Kind, e.Want)
}

// TooLargeError is a file longer than the bound of its Source.
type TooLargeError struct {
	Path string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s", e.Path, Size(e.Max))
}

// Size says a bound in KiB or MiB when it is a whole number of them.
func Size(n int64) string {
	switch {
	case n >= MiB && n%MiB == 0:
		return fmt.Sprintf("%d MiB", n/MiB)
	case n >= KiB && n%KiB == 0:
		return fmt.Sprintf("%d KiB", n/KiB)
	}
	return fmt.Sprintf("%d bytes", n)
}

// kind names what a file mode is, with its article.
func kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// Options say how Create writes.
type Options struct {
	// Perm is the mode of a file Create makes (a replaced file gets it
	// too); a file written in place keeps its own.
	Perm fs.FileMode
	// Sync flushes the new file to disk before it replaces the old one.
	Sync bool
	// RegularOnly refuses a path that is not a regular file (or missing)
	// instead of writing in place: what cpactl writes for itself (its
	// configuration file).
	RegularOnly bool
}

// Output is a file being written: Write to it, then Commit, or Discard
// when something failed (a replaced file then stays as it was).
type Output struct {
	path   string   // as given, for messages
	target string   // the regular file Commit replaces; "" in place
	f      *os.File // the temporary file, or the path opened in place
	sync   bool
	done   bool
}

// WriteError is an output that could not be written: the path as given
// and the system's reason ("no space left on device").
type WriteError struct {
	Path string
	Err  error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("cannot write %s: %v", e.Path, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// writeError makes err a *WriteError of path, with the reason alone: an
// *fs.PathError or *os.LinkError names a temporary file the user never
// gave.
func writeError(path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &WriteError{Path: path, Err: err}
}

// Create starts writing path. A regular file (through any symbolic links
// that lead to it) or a missing one gets a temporary file in the same
// directory, renamed over it by Commit. A device or a fifo is opened and
// written in place (opening a fifo waits for its reader), and so is a file
// reached through /proc, as /dev/stdout and /dev/fd/N are: that is a
// descriptor the process already has open, written after what it holds as
// standard output would be. A directory, a socket and a link to nothing
// are refused, as is anything but a regular file with opts.RegularOnly.
// Every error is a *WriteError.
func Create(path string, opts Options) (*Output, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			dest, _ := os.Readlink(path)
			return nil, &WriteError{Path: path, Err: fmt.Errorf("it is a symbolic link to %s, which does not exist", dest)}
		}
		return replace(path, path, opts)
	case err != nil:
		return nil, writeError(path, err)
	case fi.IsDir() || fi.Mode()&fs.ModeSocket != 0:
		return nil, &WriteError{Path: path, Err: fmt.Errorf("it is %s", kind(fi.Mode()))}
	case fi.Mode().IsRegular() && !throughProc(path):
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, writeError(path, err)
		}
		return replace(path, target, opts)
	case opts.RegularOnly:
		return nil, &WriteError{Path: path, Err: fmt.Errorf("it is %s, not a regular file", kind(fi.Mode()))}
	}
	// In place: no O_CREATE (it exists) and no O_TRUNC (it means nothing
	// to a device; a descriptor's file is written after what it holds).
	flag := os.O_WRONLY
	if fi.Mode().IsRegular() {
		flag |= os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, writeError(path, err)
	}
	return &Output{path: path, f: f}, nil
}

// throughProc reports whether path, or a symbolic link on the way from it
// to its file, lies under /proc: /dev/stdout leads to /proc/self/fd/1,
// whose "link" is the descriptor itself (a pipe, a terminal, the file the
// shell redirected standard output to), not a path to replace.
func throughProc(path string) bool {
	p, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	for range 40 { // the kernel's own limit of links followed
		if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			p = filepath.Join(dir, filepath.Base(p))
		}
		if p == "/proc" || strings.HasPrefix(p, "/proc/") {
			return true
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return false // not a link: p is the file
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = dest
	}
	return false
}

// replace starts a temporary file next to target.
func replace(path, target string, opts Options) (*Output, error) {
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return nil, writeError(path, err)
	}
	if err := f.Chmod(opts.Perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, writeError(path, err)
	}
	return &Output{path: path, target: target, f: f, sync: opts.Sync}, nil
}

// Write writes to the temporary file, or in place; a failure is a
// *WriteError naming the path given.
func (o *Output) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	if err != nil {
		err = writeError(o.path, err)
	}
	return n, err
}

// Commit closes the file and, unless it was written in place, renames it
// over the target, which must still be a regular file or missing.
func (o *Output) Commit() error {
	if o.done {
		return nil
	}
	o.done = true
	if o.target == "" {
		if err := o.f.Close(); err != nil {
			return writeError(o.path, err)
		}
		return nil
	}
	defer os.Remove(o.f.Name()) // after the rename: nothing to remove
	if o.sync {
		if err := o.f.Sync(); err != nil {
			o.f.Close()
			return writeError(o.path, err)
		}
	}
	if err := o.f.Close(); err != nil {
		return writeError(o.path, err)
	}
	// The target may have changed since Create: never rename over what
	// is not a regular file.
	if fi, err := os.Lstat(o.target); err == nil && !fi.Mode().IsRegular() {
		return &WriteError{Path: o.path, Err: fmt.Errorf("%s became %s while it was written", o.target, kind(fi.Mode()))}
	}
	if err := os.Rename(o.f.Name(), o.target); err != nil {
		return writeError(o.path, err)
	}
	return nil
}

// Discard closes the file and removes the temporary one; a file written
// in place keeps what was written. It does nothing after Commit.
func (o *Output) Discard() {
	if o.done {
		return
	}
	o.done = true
	o.f.Close()
	if o.target != "" {
		os.Remove(o.f.Name())
	}
}
