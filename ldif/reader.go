// Package ldif reads LDIF (RFC 2849): the entries `cpactl export` and
// `ldapsearch -LLL` write, and the change records `ldapmodify` reads
// (changetype add, delete, modify, modrdn and moddn). It streams one record
// at a time and bounds every line, value and record, so that no input can
// take more memory than a record's worth.
//
// It is written by hand rather than with github.com/go-ldap/ldif for two
// reasons. That package follows "attr:< URL" values: an LDIF file given to
// cpactl could make it read any local file into an attribute (the bind
// password file ended up in a site's description, and file:///dev/zero
// exhausted memory). And it is slow: several times slower than slapadd on
// a large snapshot. This reader refuses URL values, and reads faster than
// `slapadd -u` parses the same file.
//
// What it reads: "dn:" and "dn::" (base64) lines, "name: value",
// "name:: base64" and attribute names with options ("cn;lang-fr"); lines
// folded by starting the next one with a space; comment lines ("#", folded
// comments included); an optional "version: 1" first line; CRLF or LF line
// ends; records separated by one or more empty lines. Control lines
// ("control:") are refused.
package ldif

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"unsafe"
)

// Bounds on what one record may hold. A longer line, value or record is a
// syntax error naming its line, so that a file without line breaks (or
// /dev/zero) fails after reading a few MiB instead of exhausting memory.
const (
	// MaxValue is the longest value, in bytes after unfolding and base64
	// decoding.
	MaxValue = 1 << 20
	// MaxRecord is the longest record, in bytes of its lines after
	// unfolding: room for a group of several hundred thousand members.
	MaxRecord = 64 << 20
	// maxLine is the longest line, unfolded: a name and MaxValue in base64.
	maxLine = (MaxValue+2)/3*4 + 1024
)

// Change types of change records; an entry (a content record) has none.
const (
	ChangeAdd    = "add"
	ChangeDelete = "delete"
	ChangeModify = "modify"
	ChangeModRDN = "modrdn" // "moddn" is read as modrdn too
)

// Modification operations of a changetype: modify record.
const (
	ModAdd       = "add"
	ModDelete    = "delete"
	ModReplace   = "replace"
	ModIncrement = "increment"
)

// Record is one LDIF record: an entry, or a change record.
type Record struct {
	// Line is the line number of the record's dn: line (from 1).
	Line int
	// DN is the record's DN as written (base64 decoded), not validated.
	DN string
	// ChangeType is "" for an entry, else ChangeAdd, ChangeDelete,
	// ChangeModify or ChangeModRDN.
	ChangeType string
	// Values are an entry's or an add record's attribute values, in file
	// order.
	Values []Value
	// Mods are a modify record's modifications, in file order.
	Mods []Mod
	// NewRDN, DeleteOldRDN and NewSuperior are a modrdn record's.
	NewRDN       string
	DeleteOldRDN bool
	NewSuperior  string
}

// Value is one attribute value line.
type Value struct {
	Line  int
	Name  string // the attribute description as written: "cn", "CN;lang-fr"
	Value string
}

// Mod is one modification of a modify record: an "add:", "delete:",
// "replace:" or "increment:" line, its values, and the "-" that ends it.
type Mod struct {
	Line      int
	Op        string // ModAdd, ModDelete, ModReplace or ModIncrement
	Attribute string
	Values    []string
}

// Error is a syntax error in an LDIF input: one line naming the line.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func errorAt(line int, format string, args ...any) error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Reader reads LDIF records one at a time from an io.Reader.
type Reader struct {
	in      *bufio.Reader
	line    int    // physical lines read
	long    []byte // a physical line longer than in's buffer
	buf     []byte // the record being read: its lines unfolded, back to back
	lines   []start
	strs    []string // the unfolded lines of the record being parsed
	src     []byte   // base64 decoding: the encoded value
	scratch []byte   // base64 decoding: the decoded value
	first   bool     // no record read yet: a version line may come
	reuse   bool     // ReuseStrings: a record's strings share buf
	err     error    // sticky
}

// start is where one unfolded line begins in Reader.buf, and its number.
type start struct{ off, line int }

// NewReader returns a reader of the LDIF in r.
func NewReader(r io.Reader) *Reader {
	return &Reader{in: bufio.NewReaderSize(r, 64<<10), first: true}
}

// NewReaderAt returns a reader of LDIF that continues a larger input: what
// r reads starts a line after the first lines lines of that input, at a
// record boundary (after an empty line). Line numbers in records and
// errors count from the start of the whole input, and a version line is
// not read (it may only open the input).
func NewReaderAt(r io.Reader, lines int) *Reader {
	rd := NewReader(r)
	rd.line, rd.first = lines, false
	return rd
}

// ReuseStrings makes the strings of the records read (DN, names, values)
// share the reader's buffer: they stay valid only until the next Read,
// and a caller that keeps one must copy it (strings.Clone). It saves a
// copy of every record, for callers that copy what they keep anyway.
func (r *Reader) ReuseStrings() { r.reuse = true }

// Read reads the next record into rec, reusing its slices (the strings of
// an earlier record stay valid, unless ReuseStrings was called); io.EOF
// when there is none.
func (r *Reader) Read(rec *Record) error {
	for r.err == nil {
		var found bool
		found, r.err = r.readLines()
		if r.err != nil {
			break
		}
		if !found {
			r.err = io.EOF
			break
		}
		var parsed bool
		parsed, r.err = r.parse(rec)
		if parsed {
			return r.err
		}
	}
	return r.err
}

// readLine returns the next physical line without its line end; io.EOF
// when there is none.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.in.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(r.long) > maxLine {
				return nil, errorAt(r.line+1, "the line is longer than %d bytes", maxLine)
			}
			line, err = r.in.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(line) == 0 {
		return nil, io.EOF
	}
	r.line++
	if len(line) > maxLine+2 {
		return nil, errorAt(r.line, "the line is longer than %d bytes", maxLine)
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	// A carriage return cannot end a value: drop any before the line feed.
	line = bytes.TrimRight(line, "\r")
	return line, nil
}

// readLines reads the lines of one record into buf, unfolded, leaving out
// comments; found is false at the end of the input.
func (r *Reader) readLines() (found bool, err error) {
	r.buf, r.lines = r.buf[:0], r.lines[:0]
	comment := false
	for {
		line, err := r.readLine()
		if err == io.EOF {
			return len(r.lines) > 0, nil
		}
		if err != nil {
			return false, err
		}
		switch {
		case len(line) == 0:
			if len(r.lines) > 0 {
				return true, nil
			}
			comment = false
			continue
		case line[0] == ' ':
			if comment {
				continue
			}
			if len(r.lines) == 0 {
				return false, errorAt(r.line, "a continuation line (one starting with a space) with no line before it to continue")
			}
			if len(r.buf)-r.lines[len(r.lines)-1].off+len(line)-1 > maxLine {
				return false, errorAt(r.lines[len(r.lines)-1].line, "the line is longer than %d bytes once unfolded", maxLine)
			}
			r.buf = append(r.buf, line[1:]...)
		case line[0] == '#':
			comment = true
			continue
		default:
			comment = false
			r.lines = append(r.lines, start{off: len(r.buf), line: r.line})
			r.buf = append(r.buf, line...)
		}
		if len(r.buf) > MaxRecord {
			return false, errorAt(r.lines[0].line, "the record is longer than %d MiB", MaxRecord>>20)
		}
	}
}

// parse parses the lines read into rec; parsed is false for a record that
// holds only the version line.
func (r *Reader) parse(rec *Record) (parsed bool, err error) {
	var text string
	if r.reuse && len(r.buf) > 0 {
		text = unsafe.String(&r.buf[0], len(r.buf))
	} else {
		text = string(r.buf)
	}
	lines := r.strs[:0]
	for i, s := range r.lines {
		end := len(text)
		if i+1 < len(r.lines) {
			end = r.lines[i+1].off
		}
		lines = append(lines, text[s.off:end])
	}
	r.strs = lines
	nums := r.lines
	if r.first {
		r.first = false
		if name, rest, ok := strings.Cut(lines[0], ":"); ok && strings.EqualFold(name, "version") {
			if v := strings.Trim(rest, " "); v != "1" {
				return true, errorAt(nums[0].line, "version %q: only LDIF version 1 is read", v)
			}
			lines, nums = lines[1:], nums[1:]
			if len(lines) == 0 {
				return false, nil
			}
		}
	}
	*rec = Record{Values: rec.Values[:0], Mods: rec.Mods[:0]}
	rec.Line = nums[0].line
	name, dn, err := r.value(lines[0], nums[0].line)
	if err != nil {
		return true, err
	}
	if !strings.EqualFold(name, "dn") {
		return true, errorAt(nums[0].line, "a record starts with its dn: line, not %s:", name)
	}
	rec.DN = dn
	lines, nums = lines[1:], nums[1:]
	if len(lines) > 0 {
		if name, _, _ := strings.Cut(lines[0], ":"); strings.EqualFold(name, "control") {
			return true, errorAt(nums[0].line, "control: lines are not supported")
		}
		if name, v, err := r.value(lines[0], nums[0].line); err == nil && strings.EqualFold(name, "changetype") {
			switch t := strings.ToLower(strings.Trim(v, " ")); t {
			case ChangeAdd, ChangeDelete, ChangeModify, ChangeModRDN:
				rec.ChangeType = t
			case "moddn":
				rec.ChangeType = ChangeModRDN
			default:
				return true, errorAt(nums[0].line, "changetype %q: not add, delete, modify, modrdn or moddn", v)
			}
			lines, nums = lines[1:], nums[1:]
		}
	}
	switch rec.ChangeType {
	case "", ChangeAdd:
		if len(lines) == 0 {
			return true, errorAt(rec.Line, "the record of %s has no attributes", quote(rec.DN))
		}
		for i, l := range lines {
			name, v, err := r.value(l, nums[i].line)
			if err != nil {
				return true, err
			}
			if err := r.checkAttrLine(name, nums[i].line); err != nil {
				return true, err
			}
			rec.Values = append(rec.Values, Value{Line: nums[i].line, Name: name, Value: v})
		}
	case ChangeDelete:
		if len(lines) > 0 {
			return true, errorAt(nums[0].line, "a changetype: delete record has no other lines")
		}
	case ChangeModify:
		return true, r.parseMods(rec, lines, nums)
	case ChangeModRDN:
		return true, r.parseModRDN(rec, lines, nums)
	}
	return true, nil
}

// checkAttrLine refuses, among an entry's attribute lines, the lines that
// belong elsewhere.
func (r *Reader) checkAttrLine(name string, line int) error {
	// EqualFold, not ToLower: this runs for every value, and ToLower
	// allocates for every name with a capital letter (pae-UserDN).
	switch {
	case len(name) == 2 && strings.EqualFold(name, "dn"):
		return errorAt(line, "a second dn: line in one record (records are separated by an empty line)")
	case len(name) == 10 && strings.EqualFold(name, "changetype"):
		return errorAt(line, "changetype: must follow the dn: line")
	}
	return nil
}

func (r *Reader) parseMods(rec *Record, lines []string, nums []start) error {
	var mod *Mod
	for i, l := range lines {
		line := nums[i].line
		if strings.TrimRight(l, " ") == "-" {
			if mod == nil {
				return errorAt(line, "a \"-\" with no modification before it")
			}
			mod = nil
			continue
		}
		name, v, err := r.value(l, line)
		if err != nil {
			return err
		}
		if mod == nil {
			op := strings.ToLower(name)
			switch op {
			case ModAdd, ModDelete, ModReplace, ModIncrement:
			default:
				return errorAt(line, "%s: is not a modification (add:, delete:, replace: or increment:)", name)
			}
			attr := strings.Trim(v, " ")
			if !validName(attr) {
				return errorAt(line, "%s: %s: not an attribute name", name, quote(attr))
			}
			rec.Mods = append(rec.Mods, Mod{Line: line, Op: op, Attribute: attr})
			mod = &rec.Mods[len(rec.Mods)-1]
			continue
		}
		if !strings.EqualFold(name, mod.Attribute) {
			return errorAt(line, "a value of %s in the %s: %s modification (end each modification with a \"-\" line)",
				name, mod.Op, mod.Attribute)
		}
		mod.Values = append(mod.Values, v)
	}
	return nil
}

func (r *Reader) parseModRDN(rec *Record, lines []string, nums []start) error {
	seen := map[string]bool{}
	for i, l := range lines {
		line := nums[i].line
		name, v, err := r.value(l, line)
		if err != nil {
			return err
		}
		key := strings.ToLower(name)
		if seen[key] {
			return errorAt(line, "%s: given twice", name)
		}
		seen[key] = true
		switch key {
		case "newrdn":
			rec.NewRDN = v
		case "deleteoldrdn":
			switch strings.Trim(v, " ") {
			case "0":
			case "1":
				rec.DeleteOldRDN = true
			default:
				return errorAt(line, "deleteoldrdn: %s: not 0 or 1", quote(v))
			}
		case "newsuperior":
			rec.NewSuperior = v
		default:
			return errorAt(line, "%s: in a changetype: modrdn record (newrdn:, deleteoldrdn:, newsuperior:)", name)
		}
	}
	if !seen["newrdn"] || !seen["deleteoldrdn"] {
		return errorAt(rec.Line, "a changetype: modrdn record needs newrdn: and deleteoldrdn:")
	}
	return nil
}

// value parses one unfolded line "name: value", "name:: base64" or
// "name:< URL" (refused).
func (r *Reader) value(l string, line int) (name, value string, err error) {
	colon := strings.IndexByte(l, ':')
	if colon < 0 {
		if strings.TrimRight(l, " ") == "-" {
			return "", "", errorAt(line, "a \"-\" line outside a changetype: modify record")
		}
		return "", "", errorAt(line, "%s is not an attribute line (name: value)", quote(l))
	}
	name, rest := l[:colon], l[colon+1:]
	if !validName(name) {
		return "", "", errorAt(line, "%s is not an attribute name", quote(name))
	}
	switch {
	case strings.HasPrefix(rest, ":"):
		enc := strings.Trim(rest[1:], " ")
		if base64.StdEncoding.DecodedLen(len(enc)) > MaxValue+2 {
			return "", "", errorAt(line, "the value of %s is longer than %d MiB", name, MaxValue>>20)
		}
		r.src = append(r.src[:0], enc...)
		if cap(r.scratch) < base64.StdEncoding.DecodedLen(len(enc)) {
			r.scratch = make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
		}
		n, err := base64.StdEncoding.Decode(r.scratch[:cap(r.scratch)], r.src)
		if err != nil {
			return "", "", errorAt(line, "%s:: the value is not valid base64", name)
		}
		value = string(r.scratch[:n])
	case strings.HasPrefix(rest, "<"):
		return "", "", errorAt(line, "%s:< a URL value; cpactl reads no files or URLs named in LDIF: put the value in the file", name)
	default:
		value = strings.TrimLeft(rest, " ")
	}
	if len(value) > MaxValue {
		return "", "", errorAt(line, "the value of %s is longer than %d MiB", name, MaxValue>>20)
	}
	return name, value, nil
}

// validName reports whether s is an attribute description (RFC 4512): a
// name (a letter, then letters, digits and hyphens) or a numeric OID,
// then options (";" and letters, digits and hyphens).
func validName(s string) bool {
	typ, options, _ := strings.Cut(s, ";")
	if typ == "" {
		return false
	}
	if isDigit(typ[0]) {
		for _, part := range strings.Split(typ, ".") {
			if part == "" || strings.IndexFunc(part, func(c rune) bool { return c < '0' || c > '9' }) >= 0 {
				return false
			}
		}
	} else if !isAlpha(typ[0]) || !keychars(typ) {
		return false
	}
	if options == "" {
		return !strings.HasSuffix(s, ";")
	}
	for _, o := range strings.Split(options, ";") {
		if o == "" || !keychars(o) {
			return false
		}
	}
	return true
}

func keychars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlpha(c) && !isDigit(c) && c != '-' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// quote quotes a piece of input for an error message, cut to a readable
// length.
func quote(s string) string {
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return fmt.Sprintf("%q", s)
}
