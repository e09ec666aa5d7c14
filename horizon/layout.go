package horizon

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// A pull directory (docs/horizon.md#the-pull-directory):
//
//	DIR/manifest.json                          the Manifest below
//	DIR/global/<endpoint>[.<page>].json        federation-wide reads
//	DIR/pods/<NN>-<name>/<endpoint>[.<page>].json  a pod's reads
//
// Every file is one answer's body, byte for byte as the server sent it: a
// JSON array (or, for cpa, an object) of the schema docs/horizon.md names
// for its endpoint. Paged reads have one file per page (.0001, .0002, ...);
// the manifest lists every file in the order it was read, so an importer
// streams a list page after page with EachRecord and never holds more than
// one record.

// The manifest's name and the format it declares.
const (
	ManifestFile  = "manifest.json"
	FormatName    = "cpactl-horizon-pull"
	FormatVersion = 1
)

// maxManifest bounds the manifest read (it lists a few thousand files at
// most).
const maxManifest = 64 << 20

// Manifest describes a pull: what was asked of which server, what came
// back, and what did not.
type Manifest struct {
	Format   string    `json:"format"`
	Version  int       `json:"version"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Server is the Connection Server the pull was given (--url): it
	// answered the federation-wide reads.
	Server Server `json:"server"`
	// PageSize is the size of the pages asked for.
	PageSize int `json:"page_size"`
	// PreferredSites is false when the server had no /federation/v3/sites
	// (older than 2512): the sites carry no preferred sites, and the
	// entitlements may lack the preferred-site flags.
	PreferredSites bool `json:"preferred_sites"`
	// Pods lists every pod of the federation, in the order of
	// /federation/v1/pods, with the directory of its pod-local files.
	Pods []Pod `json:"pods"`
	// Files lists every file, in the order read.
	Files []File `json:"files"`
	// Skipped lists the reads a server answered with 404 (an endpoint it
	// does not have), which are not in the pull.
	Skipped []Skip `json:"skipped,omitempty"`
	// Notes are what the pull said on stderr: fallbacks, missing pods.
	Notes []string `json:"notes,omitempty"`
	// Counts is the number of records per endpoint, over every file.
	Counts map[string]int `json:"counts"`
	// Requests is the number of HTTP requests sent, logins and logouts
	// included. In a generated directory, the number a pull of that
	// federation sends (no retry, no refresh).
	Requests int64 `json:"requests"`
	// Generated is set when no server answered: `cpactl generate --format
	// horizon` wrote the directory (Server.URL is GeneratedURL, and the
	// times are zero).
	Generated *Generated `json:"generated,omitempty"`
}

// GeneratedURL stands for the server in a generated pull directory (the
// manifest's server, each pod's and each file's).
const GeneratedURL = "generated:cpactl-generate"

// Generated says how a generated pull directory was made: the same seed
// and counts give the same directory, byte for byte.
type Generated struct {
	By     string         `json:"by"`
	Seed   int64          `json:"seed"`
	Counts map[string]int `json:"counts"`
}

// Server is a Connection Server that answered.
type Server struct {
	URL string `json:"url"` // its REST base, https://cs.example.com/rest
	// Name and Version are its own entry in /config/v3/connection-servers
	// (local_connection_server), when it has one.
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// Pod is one pod of the federation and where its pod-local reads are.
type Pod struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	SiteID string `json:"site_id,omitempty"`
	// Dir is the pod's directory, pods/01-india-pod-1 (slash-separated).
	Dir string `json:"dir"`
	// Server answered the pod-local reads; nil when the pod is missing.
	Server *Server `json:"server,omitempty"`
	// Missing: no Connection Server of the pod answered and
	// --allow-missing-pod named it; Error says what the last one did.
	Missing bool   `json:"missing,omitempty"`
	Error   string `json:"error,omitempty"`
}

// File is one answer's body.
type File struct {
	// Name is the file's path in the directory, slash-separated.
	Name string `json:"name"`
	// Endpoint is the stable key of what was read (docs/horizon.md lists
	// them with their paths and schemas): "sites", "desktop-pools", ...
	Endpoint string `json:"endpoint"`
	// Path is the request's path under /rest, Query its query without
	// page and size.
	Path  string `json:"path"`
	Query string `json:"query,omitempty"`
	// Pod is the id of the pod the file belongs to, empty for
	// federation-wide reads.
	Pod string `json:"pod,omitempty"`
	// Page is the page number of a paged read, or the batch number of a
	// read in batches (desktop-pool-metrics); 0 for a single read.
	Page    int   `json:"page,omitempty"`
	Records int   `json:"records"`
	Bytes   int64 `json:"bytes"`
	// Server is the REST base of the Connection Server that answered.
	Server string `json:"server"`
	SHA256 string `json:"sha256"`
}

// Skip is a read a server did not have (404).
type Skip struct {
	Endpoint string `json:"endpoint"`
	Path     string `json:"path"`
	Pod      string `json:"pod,omitempty"`
	Server   string `json:"server"`
	Status   int    `json:"status"`
}

// ReadManifest reads and checks DIR/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	f, err := os.Open(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var m Manifest
	dec := json.NewDecoder(io.LimitReader(f, maxManifest))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Format != FormatName {
		return nil, fmt.Errorf("%s is not a cpactl Horizon pull (format %q)", filepath.Join(dir, ManifestFile), m.Format)
	}
	if m.Version != FormatVersion {
		return nil, fmt.Errorf("%s: pull format version %d, this cpactl reads %d", filepath.Join(dir, ManifestFile), m.Version, FormatVersion)
	}
	for _, fl := range m.Files {
		if !localName(fl.Name) {
			return nil, fmt.Errorf("%s: file name %q leaves the directory", filepath.Join(dir, ManifestFile), fl.Name)
		}
	}
	return &m, nil
}

// FilesOf returns the files of an endpoint, for one pod (its id) or, with
// pod "", the federation-wide ones, in the order they were read (page
// order).
func (m *Manifest) FilesOf(endpoint, pod string) []File {
	var out []File
	for _, f := range m.Files {
		if f.Endpoint == endpoint && f.Pod == pod {
			out = append(out, f)
		}
	}
	return out
}

// EachRecord streams the records of one file of the pull in dir: each
// element of its top-level array (or its object) to fn, one at a time. A
// file whose count of records is not the manifest's is an error.
func EachRecord(dir string, f File, fn func(json.RawMessage) error) error {
	if !localName(f.Name) {
		return fmt.Errorf("file name %q leaves the directory", f.Name)
	}
	name := filepath.Join(dir, filepath.FromSlash(f.Name))
	fh, err := os.Open(name)
	if err != nil {
		return err
	}
	defer fh.Close()
	n, err := decodeTop(bufio.NewReaderSize(fh, 64<<10), fn)
	if isCallback(err) {
		return callbackCause(err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if n != f.Records {
		return fmt.Errorf("%s holds %d records, the manifest says %d", name, n, f.Records)
	}
	return nil
}

// localName reports whether a manifest's file name stays inside the
// directory.
func localName(name string) bool {
	return name != "" && !strings.Contains(name, `\`) && !path.IsAbs(name) &&
		path.Clean(name) == name && !strings.HasPrefix(name, "../") && name != ".." && filepath.IsLocal(filepath.FromSlash(name))
}

// ReadFile reads one file of the pull in dir whole (a page: at most the
// largest answer a pull accepts), for a reader that splits the records
// itself; it checks the count of records no more than the name. It reads
// into buf when buf is large enough (a reader of many pages reuses one
// buffer: a page of sessions is a megabyte), else into a new buffer.
func ReadFile(dir string, f File, buf []byte) ([]byte, error) {
	if !localName(f.Name) {
		return nil, fmt.Errorf("file name %q leaves the directory", f.Name)
	}
	name := filepath.Join(dir, filepath.FromSlash(f.Name))
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxBody {
		return nil, fmt.Errorf("%s is not a regular file of at most %d MiB", name, maxBody>>20)
	}
	b := buf[:0]
	if int64(cap(b)) < st.Size() {
		b = make([]byte, st.Size())
	}
	b = b[:st.Size()]
	if _, err := io.ReadFull(fh, b); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}
