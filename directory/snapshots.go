package directory

import (
	"io"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/progress"
)

// The in-memory directories, an LDIF snapshot and the what-if overlay, are
// package snapshot's (an LDAP server's search, filters and change sets in
// memory, behind the same Client); here under the names the rest of cpactl
// uses.
type (
	// Snapshot is a read-only directory held in memory, loaded from an LDIF
	// file (snapshot.Snapshot).
	Snapshot = snapshot.Snapshot
	// Overlay lays changes over a Client in memory, for what-ifs
	// (snapshot.Overlay).
	Overlay = snapshot.Overlay
)

// ErrWhatIf is returned by every write to an Overlay.
var ErrWhatIf = snapshot.ErrWhatIf

// LoadSnapshot reads an LDIF file ("-" is standard input).
func LoadSnapshot(path string) (*Snapshot, error) { return snapshot.LoadSnapshot(path) }

// LoadSnapshotCounting is LoadSnapshot, counting the bytes it reads into
// read (nil counts nothing).
func LoadSnapshotCounting(path string, read *progress.Counter) (*Snapshot, error) {
	return snapshot.LoadSnapshotCounting(path, read)
}

// ReadSnapshot reads LDIF content entries from r.
func ReadSnapshot(r io.Reader) (*Snapshot, error) { return snapshot.ReadSnapshot(r) }

// FileSize is the size of the file at path, for a progress total; 0 when
// it cannot tell.
func FileSize(path string) int64 { return snapshot.FileSize(path) }

// NewOverlay returns an overlay over c with no change yet.
func NewOverlay(c Client) *Overlay { return snapshot.NewOverlay(c) }

// IsChangeSet reports whether the LDIF file at path holds change records.
func IsChangeSet(path string) (bool, error) { return snapshot.IsChangeSet(path) }

// EachPrepared decodes every entry of s on workers goroutines
// (snapshot.EachPrepared).
func EachPrepared[T any](s *Snapshot, workers int, prepare func(w int, e *ldap.Entry) T, commit func(T)) {
	snapshot.EachPrepared(s, workers, prepare, commit)
}
