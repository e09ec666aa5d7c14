package history

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cpactl/cpactl/ldapschema"
)

// Record is one write record of the accesslog overlay (an auditWriteObject
// entry), its attributes as slapd stores them; package directory reads
// them from the log database.
type Record struct {
	Start        string   // reqStart: generalized time with microseconds, the record's RDN
	Type         string   // reqType: add, delete, modify, modrdn
	DN           string   // reqDN: the entry written
	AuthzID      string   // reqAuthzID: who (the bound DN)
	Result       int      // reqResult: 0 for a success
	Message      string   // reqMessage
	Mod          []string // reqMod: "attr:+ value", "attr:- value", "attr:= value", "attr:+" ...
	Old          []string // reqOld: "attr: value", the old values (logold)
	NewRDN       string   // reqNewRDN (modrdn)
	DeleteOldRDN bool     // reqDeleteOldRDN (modrdn)
	NewSuperior  string   // reqNewSuperior (modrdn)
	EntryUUID    string   // reqEntryUUID: the entry's entryUUID, stable across renames
	Session      string   // reqSession: slapd's connection number
	Controls     []string // reqControls: "{N}{OID [criticality TRUE] [controlValue "HEX"]}"
	// CSN is the log entry's own entryCSN: when slapd logged the write,
	// to the microsecond. reqStart's fraction is a counter that orders
	// the records of one second, not a time.
	CSN string
}

// Time is when the write was logged: the log entry's entryCSN, or
// reqStart's second when it has none.
func (r Record) Time() (time.Time, error) {
	if stamp, _, found := strings.Cut(r.CSN, "#"); found {
		if t, err := ParseGeneralizedTime(stamp); err == nil {
			return t, nil
		}
	}
	t, err := ParseGeneralizedTime(r.Start)
	return t.Truncate(time.Second), err
}

// ParseGeneralizedTime reads slapd's generalized time, with or without a
// fraction: 20261203134512.000066Z, 20261203134512Z.
func ParseGeneralizedTime(s string) (time.Time, error) {
	layout := "20060102150405Z"
	if strings.Contains(s, ".") {
		layout = "20060102150405.999999Z"
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("not a generalized time: %q", s)
	}
	return t, nil
}

// GeneralizedTime writes t as reqStart is written (UTC, microseconds).
func GeneralizedTime(t time.Time) string {
	return t.UTC().Format("20060102150405.000000Z")
}

// EntryCSN is the entryCSN the write gave its entry (from reqMod), ""
// when it logged none (a delete).
func (r Record) EntryCSN() string {
	for _, m := range r.Mod {
		for _, prefix := range []string{"entryCSN:= ", "entryCSN:+ "} {
			if v, ok := strings.CutPrefix(m, prefix); ok {
				return v
			}
		}
	}
	return ""
}

// Control is one request control of a record.
type Control struct {
	OID      string
	Critical bool
	Value    []byte
}

// ParseControl reads one reqControls value as slapd writes it:
// {0}{1.3.6.1.1.21.2 criticality TRUE controlValue ""}.
func ParseControl(s string) (Control, error) {
	bad := func(why string) (Control, error) { return Control{}, fmt.Errorf("reqControls %q: %s", cut(s), why) }
	rest := s
	if strings.HasPrefix(rest, "{") {
		i := strings.IndexByte(rest, '}')
		if i < 0 {
			return bad("no closing brace of the index")
		}
		if _, err := strconv.Atoi(rest[1:i]); err != nil {
			return bad("the index is not a number")
		}
		rest = rest[i+1:]
	}
	if !strings.HasPrefix(rest, "{") || !strings.HasSuffix(rest, "}") {
		return bad("not in braces")
	}
	fields := strings.Fields(rest[1 : len(rest)-1])
	if len(fields) == 0 {
		return bad("no OID")
	}
	c := Control{OID: fields[0]}
	for i := 1; i < len(fields); i += 2 {
		if i+1 >= len(fields) {
			return bad("a keyword without its value")
		}
		switch v := fields[i+1]; fields[i] {
		case "criticality":
			c.Critical = v == "TRUE"
		case "controlValue":
			if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
				return bad("the value is not quoted")
			}
			b, err := hex.DecodeString(v[1 : len(v)-1])
			if err != nil {
				return bad("the value is not hex")
			}
			c.Value = b
		default:
			return bad("unknown keyword " + strconv.Quote(fields[i]))
		}
	}
	return c, nil
}

func cut(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// OIDTxnSpec is the transaction specification control (RFC 5805): a
// write that carries it was queued in a transaction.
const OIDTxnSpec = "1.3.6.1.1.21.2"

// runOrNone is RunOf with a run control that cannot be read taken as
// none (another client's, or a damaged one): the write is shown alone.
func (r Record) runOrNone() (Run, bool) {
	run, inTxn, err := r.RunOf()
	if err != nil {
		return Run{}, r.inTxn()
	}
	return run, inTxn
}

// inTxn says whether the record carries the transaction control.
func (r Record) inTxn() bool {
	for _, v := range r.Controls {
		if c, err := ParseControl(v); err == nil && c.OID == OIDTxnSpec {
			return true
		}
	}
	return false
}

// RunOf returns the run a record's controls name (the run control,
// ldapschema.OIDRunControl), and whether the write was queued in a transaction. A
// record without a run control (a write by another client) has a zero
// Run; a run control that cannot be read is an error.
func (r Record) RunOf() (run Run, inTxn bool, err error) {
	for _, v := range r.Controls {
		c, cerr := ParseControl(v)
		if cerr != nil {
			return Run{}, false, cerr
		}
		switch c.OID {
		case OIDTxnSpec:
			inTxn = true
		case ldapschema.OIDRunControl:
			if run, err = ParseRun(c.Value); err != nil {
				return Run{}, false, err
			}
		}
	}
	return run, inTxn, nil
}
