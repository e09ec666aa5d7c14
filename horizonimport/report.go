package horizonimport

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Report says what an import did: where what the API does not carry came
// from, how many objects of each kind it wrote, and what cpactl cannot
// hold (each kind of loss counted, with the objects' names).
type Report struct {
	// Source says where the values the API does not carry came from: the
	// Base's Source, or DefaultsSource.
	Source string
	// Counts is the number of objects written, by kind ("sites",
	// "sessions", ...), in Kinds order.
	Counts map[string]int
	// Findings are what was left out or changed, by kind of loss, sorted
	// by Key.
	Findings []Finding
	// Notes are what the reader should know that is not a loss (an older
	// server, a pod taken from the base).
	Notes []string
	// Entries is the number of entries written, the layout included.
	Entries int
}

// DefaultsSource is Report.Source without a Base.
const DefaultsSource = "cpactl's defaults (no directory was given)"

// Kinds lists the kinds of Report.Counts in the order a summary gives them.
var Kinds = []string{"sites", "pods", "connection servers", "pools", "farms", "hosts", "entitlements",
	"users", "groups", "computers", "home sites", "assignments", "sessions"}

// Finding is one kind of loss: what cpactl cannot hold, or a reference
// the pull cannot resolve, with the count and the first names.
type Finding struct {
	// Key names the kind of loss, stable for tests and scripts:
	// "backup-application-entitlement", "unknown-enum", ...
	Key string
	// What says it in words, and what the import did instead.
	What  string
	Count int
	// Names are the objects' names (with the value at fault), the first
	// MaxNames in sorted order.
	Names []string
}

// MaxNames is how many names a Finding keeps.
const MaxNames = 10

// String renders a finding on one line: "3 sessions are PENDING ...: a, b, c".
func (f Finding) String() string {
	names := strings.Join(f.Names, ", ")
	if f.Count > len(f.Names) {
		names += fmt.Sprintf(", and %d more", f.Count-len(f.Names))
	}
	return fmt.Sprintf("%d %s: %s", f.Count, f.What, names)
}

// Finding returns the finding of key, and whether there is one.
func (r *Report) Finding(key string) (Finding, bool) {
	for _, f := range r.Findings {
		if f.Key == key {
			return f, true
		}
	}
	return Finding{}, false
}

// reporter collects findings from several goroutines.
type reporter struct {
	mu       sync.Mutex
	findings map[string]*Finding
	notes    []string
}

func newReporter() *reporter { return &reporter{findings: map[string]*Finding{}} }

// add counts one object under key; what is the finding's text (the same
// for every object of a key).
func (r *reporter) add(key, what, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.findings[key]
	if f == nil {
		f = &Finding{Key: key, What: what}
		r.findings[key] = f
	}
	f.Count++
	// Keep the MaxNames smallest names, so that the report does not depend
	// on the order the records were read in.
	i, found := slices.BinarySearch(f.Names, name)
	if found {
		return
	}
	if i < MaxNames {
		f.Names = slices.Insert(f.Names, i, name)
		if len(f.Names) > MaxNames {
			f.Names = f.Names[:MaxNames]
		}
	}
}

func (r *reporter) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *reporter) result() ([]Finding, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Finding, 0, len(r.findings))
	for _, f := range r.findings {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, slices.Clone(r.notes)
}

// The kinds of loss (Finding.Key) and their words.
const (
	keyBackupApp       = "backup-application-entitlement"
	keyUltra           = "unsupported-protocol"
	keyPending         = "pending-session"
	keyAppOnDesktop    = "application-pool-on-desktop-pool"
	keyUnknownEnum     = "unknown-enum"
	keyHostState       = "host-state"
	keyNameClash       = "name-clash"
	keyNoName          = "no-name"
	keyDangling        = "dangling-reference"
	keyManyApps        = "session-several-applications"
	keyClient          = "unknown-client-computer"
	keyOutOfRange      = "out-of-range"
	keyDuplicate       = "duplicate-entry"
	keyMissingPodLocal = "missing-pod-session"
)

var findingWhat = map[string]string{
	keyBackupApp:       "application entitlements name a backup (cpactl holds backups of desktop entitlements only): the backup is left out",
	keyUltra:           "entitlements default to a display protocol cpactl does not model: the directory's protocol (or BLAST) is kept",
	keyPending:         "sessions are PENDING (cpactl holds CONNECTED and DISCONNECTED sessions): left out",
	keyAppOnDesktop:    "application pools are on a desktop pool (cpactl holds application pools on RDS farms): left out",
	keyUnknownEnum:     "values are unknown to this cpactl (a newer Horizon?): the directory's value (or the default) is kept",
	keyHostState:       "RDS hosts are in a state cpactl does not model (it holds the enabled flag only): imported with their enabled flag",
	keyNameClash:       "objects share a name cpactl keys them by (a user or group of the same name in two domains, ...): the first is kept, the others left out",
	keyNoName:          "objects have no name: left out",
	keyDangling:        "references name an object the pull does not hold: left out",
	keyManyApps:        "sessions run applications of several entitlements (cpactl holds one entitlement a session): the first is kept",
	keyClient:          "sessions come from a client computer cpactl does not hold (client computers come from the directory): the client is left out",
	keyOutOfRange:      "values are outside the range cpactl takes: the directory's value (or the default) is kept",
	keyDuplicate:       "entries repeat an earlier one's name: left out",
	keyMissingPodLocal: "pods are missing from the pull (--allow-missing-pod): their Connection Servers, pools, farms and hosts come from the directory, and their sessions are left out",
}

func (r *reporter) loss(key, name string) { r.add(key, findingWhat[key], name) }
