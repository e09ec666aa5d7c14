package history

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cpactl/cpactl/ldapschema"
)

// Entry is one command run as the history shows it: the writes one run of
// cpactl sent (grouped by the run control), or one write (or transaction)
// of another client.
type Entry struct {
	Run     string // the run ID; "" for a write by another client
	Time    time.Time
	Who     string // the bound DN (reqAuthzID)
	Command string // the command line, without secrets
	Version string
	Changes []Change // every decoded write of the run, refused ones included
}

// Status says what became of the run's writes: "ok" (all written),
// "refused" (none written, a write refused), "rolled back" (a transaction
// refused at one write: none of it written), "partly refused" (some
// written, some not).
func (e Entry) Status() string {
	written, refused, phantom := 0, 0, 0
	for _, c := range e.Changes {
		switch {
		case c.Written:
			written++
		case c.Result != 0:
			refused++
		default:
			phantom++
		}
	}
	switch {
	case refused == 0 && phantom == 0:
		return "ok"
	case written > 0:
		return "partly refused"
	case phantom > 0:
		return "rolled back"
	}
	return "refused"
}

// Refused says whether a write of the run was refused or failed.
func (e Entry) Refused() bool {
	return slices.ContainsFunc(e.Changes, func(c Change) bool { return c.Result != 0 })
}

// Collector groups decoded records into entries as they stream in, oldest
// first. Memory grows with the records kept, not with the log.
type Collector struct {
	entries []*Entry
	byRun   map[string]*Entry
	// foreign is the open transaction of another client, by session.
	foreign map[string]*Entry
	// failed are the transactions with a write that did not succeed:
	// slapd logged their other writes, which it then did not commit.
	failed map[string]bool
	// Oldest is the start of the oldest record seen ("" before any).
	Oldest string
}

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{byRun: map[string]*Entry{}, foreign: map[string]*Entry{}, failed: map[string]bool{}}
}

// Add takes the next record of the log. A record that is no change (the
// write probe, a touch, a placeholder) only counts towards its
// transaction's outcome. It returns no error: a record is outside input,
// and one whose run control cannot be read is shown as another client's.
func (c *Collector) Add(r Record) error {
	if c.Oldest == "" {
		c.Oldest = r.Start
	}
	run, inTxn := r.runOrNone()
	ch, ok := Decode(r)
	switch {
	case run.ID != "" && run.Txn > 0:
		ch.txn = run.ID + "/" + itoa(run.Txn)
	case run.ID == "" && inTxn:
		ch.txn = "session " + r.Session
	}
	if ch.txn != "" && r.Result != 0 {
		c.failed[ch.txn] = true
	}
	var e *Entry
	switch {
	case run.ID != "":
		e = c.byRun[run.ID]
		if e == nil {
			e = c.newEntry(r, run)
			c.byRun[run.ID] = e
		}
	case inTxn:
		e = c.foreign[r.Session]
		if e == nil {
			e = c.newEntry(r, run)
			c.foreign[r.Session] = e
		}
	default:
		delete(c.foreign, r.Session)
		if !ok {
			return nil
		}
		e = c.newEntry(r, run)
	}
	if ok {
		e.Changes = append(e.Changes, ch)
	}
	return nil
}

func (c *Collector) newEntry(r Record, run Run) *Entry {
	t, _ := r.Time()
	e := &Entry{Run: run.ID, Time: t, Who: r.AuthzID, Command: run.Command, Version: run.Version}
	c.entries = append(c.entries, e)
	return e
}

// Entries returns the runs collected, newest first, with each change's
// Written settled; runs with no change left out.
func (c *Collector) Entries() []Entry {
	out := make([]Entry, 0, len(c.entries))
	for i := len(c.entries) - 1; i >= 0; i-- {
		e := *c.entries[i]
		if len(e.Changes) == 0 {
			continue
		}
		for j := range e.Changes {
			ch := &e.Changes[j]
			ch.Written = ch.Result == 0 && !c.failed[ch.txn]
		}
		out = append(out, e)
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// Filter selects entries.
type Filter struct {
	Run     string // one run ID
	By      string // who: a DN, or the value of its first RDN (ann)
	Refused bool   // only runs with a refused or failed write
	// Object keeps the changes of one object: its DNs (normalized; the
	// names it had) and entryUUIDs. Empty: every object.
	ObjectDNs   map[string]bool
	ObjectUUIDs map[string]bool
	// Feed: with false, changes of session records and of live figures
	// (what a feed writes) are left out, and runs left with none.
	Feed bool
	DIT  ldapschema.DIT
}

// Keep returns e as the filter shows it, and whether it shows it at all.
// ObjectUUIDs grows with the UUIDs of the object's records (a rename
// followed), so entries must come oldest first for that; Apply does that.
func (f Filter) keep(e Entry) (Entry, bool) {
	if f.Run != "" && !strings.EqualFold(e.Run, f.Run) {
		return e, false
	}
	if f.By != "" && !ldapschema.EqualDN(e.Who, f.By) && !strings.EqualFold(ldapschema.NameOf(e.Who), f.By) {
		return e, false
	}
	if f.Refused && !e.Refused() {
		return e, false
	}
	var kept []Change
	for _, c := range e.Changes {
		if !f.Feed && f.feedChange(c) {
			continue
		}
		if len(f.ObjectDNs) > 0 || len(f.ObjectUUIDs) > 0 {
			if !f.object(c) {
				continue
			}
		}
		kept = append(kept, c)
	}
	if len(kept) == 0 {
		return e, false
	}
	e.Changes = kept
	return e, true
}

// object says whether c is of the filter's object, and learns its UUID
// and its new DN after a rename.
func (f Filter) object(c Change) bool {
	match := f.ObjectDNs[ldapschema.NormalizeDN(c.DN)] || (c.UUID != "" && f.ObjectUUIDs[c.UUID])
	if match {
		if c.UUID != "" {
			f.ObjectUUIDs[c.UUID] = true
		}
		if c.NewDN != "" {
			f.ObjectDNs[ldapschema.NormalizeDN(c.NewDN)] = true
		}
	}
	return match
}

// feedChange says whether c is what a feed writes: a session record, or
// only live figures of a pool or host.
func (f Filter) feedChange(c Change) bool {
	if ldapschema.IsUnder(c.DN, f.DIT.Sessions()) {
		return true
	}
	if c.Op != "modify" {
		return false
	}
	for _, a := range c.Attrs {
		if !slices.ContainsFunc(ldapschema.LiveFigures, func(l string) bool { return strings.EqualFold(l, a.Attr) }) {
			return false
		}
	}
	return true
}

// Apply filters entries (newest first, as Entries returns them).
func (f Filter) Apply(entries []Entry) []Entry {
	if f.ObjectDNs == nil {
		f.ObjectDNs = map[string]bool{}
	}
	if f.ObjectUUIDs == nil {
		f.ObjectUUIDs = map[string]bool{}
	}
	keep := make([]bool, len(entries))
	shown := make([]Entry, len(entries))
	for i := len(entries) - 1; i >= 0; i-- { // oldest first: renames are followed forwards
		shown[i], keep[i] = f.keep(entries[i])
	}
	out := entries[:0:0]
	for i := range entries {
		if keep[i] {
			out = append(out, shown[i])
		}
	}
	return out
}
