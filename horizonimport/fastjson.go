package horizonimport

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/cpactl/cpactl/horizon"
)

// Sessions are most of a pull (250,000 records of about 1 KB at the CPA
// maximum), and encoding/json reads each three times (the array split,
// its validity check, the decode by reflection). These read a page of
// sessions in one pass: eachElement splits a page and decodeSession reads
// the fields the import needs and checks the syntax of the others. They
// decode as encoding/json decodes into sessionJSON, value for value and
// error for error (FuzzDecodeSession compares them): keys matched exactly
// or, failing that, case-insensitively, the last of a repeated key
// winning, null leaving a string as it is, strings with escapes or
// bytes beyond ASCII unquoted by encoding/json itself.

var errSyntax = errors.New("invalid JSON")

type scanner struct {
	b []byte
	i int
	// guesses remember, for each record type, the field of the key at
	// each position of the last object read: the records of a page
	// name their keys in the same order, so a key is mostly matched by
	// comparing it with one name, not by a look-up.
	guesses map[*recordType][]keyGuess
}

// keyGuess is a key seen at a position of an object, and its field
// (-1: none).
type keyGuess struct {
	key   string
	field int
}

// maxGuesses bounds the positions remembered per record type.
const maxGuesses = 64

// fieldAt returns the field of key, the pos-th of an object of type rt.
func (s *scanner) fieldAt(rt *recordType, pos int, key []byte) *recordField {
	g := s.guesses[rt]
	if pos < len(g) && g[pos].key == string(key) {
		if i := g[pos].field; i >= 0 {
			return &rt.fields[i]
		}
		return nil
	}
	i := rt.fieldOf(key)
	var f *recordField
	if i >= 0 {
		f = &rt.fields[i]
	}
	if pos > len(g) || pos >= maxGuesses {
		return f
	}
	if s.guesses == nil {
		s.guesses = map[*recordType][]keyGuess{}
	}
	if pos == len(g) {
		g = append(g, keyGuess{})
	}
	g[pos] = keyGuess{string(key), i}
	s.guesses[rt] = g
	return f
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// literal consumes word (true, false, null).
func (s *scanner) literal(word string) error {
	if !strings.HasPrefix(string(s.b[s.i:min(len(s.b), s.i+len(word))]), word) {
		return errSyntax
	}
	s.i += len(word)
	return nil
}

// stringEnd returns the end of the string literal at s.i (after its
// closing quote), and whether it is plain: ASCII without escapes.
func (s *scanner) stringEnd() (int, bool, error) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return 0, false, errSyntax
	}
	// Most strings have no escape: the closing quote is the next one, and
	// the bytes before it are checked eight at a time.
	start := s.i + 1
	if q := bytes.IndexByte(s.b[start:], '"'); q >= 0 {
		if span := s.b[start : start+q]; bytes.IndexByte(span, '\\') < 0 {
			ascii, ok := checkSpan(span)
			if !ok {
				return 0, false, errSyntax
			}
			return start + q + 1, ascii, nil
		}
	}
	plain := true
	for j := s.i + 1; j < len(s.b); j++ {
		c := s.b[j]
		switch {
		case c == '"':
			return j + 1, plain, nil
		case c < 0x20:
			return 0, false, errSyntax
		case c == '\\':
			plain = false
			j++
			if j >= len(s.b) {
				return 0, false, errSyntax
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.b) {
					return 0, false, errSyntax
				}
				for _, h := range s.b[j+1 : j+5] {
					if !isHex(h) {
						return 0, false, errSyntax
					}
				}
				j += 4
			default:
				return 0, false, errSyntax
			}
		case c >= 0x80:
			plain = false
		}
	}
	return 0, false, errSyntax
}

// checkSpan reports whether the bytes of a string literal (between its
// quotes, no escape) are all ASCII, and whether they are allowed at all:
// no control character.
func checkSpan(b []byte) (ascii, ok bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var high uint64
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		// A byte below 0x20 (and not 0x80 or above) borrows into its
		// own high bit: the classic "has a byte less than n".
		if (w-ones*0x20)&^w&highs != 0 {
			return false, false
		}
		high |= w
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return false, false
		}
		high |= uint64(c)
	}
	return high&highs == 0, true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// str reads a string literal as encoding/json decodes it.
func (s *scanner) str() (string, error) {
	end, plain, err := s.stringEnd()
	if err != nil {
		return "", err
	}
	lit := s.b[s.i:end]
	s.i = end
	if plain {
		return string(lit[1 : len(lit)-1]), nil
	}
	var v string
	if err := json.Unmarshal(lit, &v); err != nil {
		return "", err
	}
	return v, nil
}

// number consumes a JSON number.
func (s *scanner) number() error {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
			s.i++
		}
	default:
		return errSyntax
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return errSyntax
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return errSyntax
		}
	}
	if s.i == start {
		return errSyntax
	}
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// maxDepth is encoding/json's limit on nested objects and arrays.
const maxDepth = 10000

// skip consumes any value, checking its syntax; depth is the number of
// objects and arrays around it.
func (s *scanner) skip(depth int) error {
	switch s.peek() {
	case '"':
		// encoding/json takes any bytes in a string (invalid UTF-8
		// becomes U+FFFD): the syntax is all there is to check.
		end, _, err := s.stringEnd()
		if err != nil {
			return err
		}
		s.i = end
		return nil
	case '{':
		if depth >= maxDepth {
			return errSyntax
		}
		return s.object(func([]byte) error { return s.skip(depth + 1) })
	case '[':
		if depth >= maxDepth {
			return errSyntax
		}
		return s.array(func() error { return s.skip(depth + 1) })
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}

// object reads an object, calling field with each key (unquoted: for a
// key of plain ASCII, the bytes of the input, valid until field returns)
// with the scanner at its value, which field must consume.
func (s *scanner) object(field func(key []byte) error) error {
	if s.peek() != '{' {
		return errSyntax
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return errSyntax
		}
		end, plain, err := s.stringEnd()
		if err != nil {
			return err
		}
		k := s.b[s.i+1 : end-1]
		if !plain {
			var u string
			if err := json.Unmarshal(s.b[s.i:end], &u); err != nil {
				return err
			}
			k = []byte(u)
		}
		s.i = end
		if s.peek() != ':' {
			return errSyntax
		}
		s.i++
		s.ws()
		if err := field(k); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// array reads an array, calling elem with the scanner at each element,
// which elem must consume.
func (s *scanner) array(elem func() error) error {
	if s.peek() != '[' {
		return errSyntax
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// typeError is a value of the wrong JSON type for its field.
type typeError struct{ field string }

func (e *typeError) Error() string { return "wrong type for field " + e.field }

// A recordType is what the decoder knows of a record type (a struct of
// the answers' fields, mapping.go), built once from its json tags.
type recordType struct {
	name   string
	fields []recordField
	byName map[string]int // the tag's name -> index in fields
}

type recordField struct {
	name  string
	index int // the struct's field
	kind  fieldKind
	sub   *recordType // the struct of a kindStruct or kindStructs
}

type fieldKind uint8

const (
	kindString fieldKind = iota
	kindBool
	kindBoolPtr
	kindIntPtr
	kindStrings
	kindStruct  // a pointer to a struct
	kindStructs // a slice of structs
)

var recordTypes sync.Map // reflect.Type -> *recordType

// recordTypeOf returns what the decoder knows of t, a struct type whose
// fields are of the kinds above, each with a json tag of a lower-case
// ASCII name (what fieldOf relies on); any other is a programming error.
func recordTypeOf(t reflect.Type) *recordType {
	if rt, ok := recordTypes.Load(t); ok {
		return rt.(*recordType)
	}
	rt := &recordType{name: t.String(), byName: map[string]int{}}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name != strings.ToLower(name) || !isASCII(name) {
			panic(fmt.Sprintf("horizonimport: %s.%s: a json tag of a lower-case ASCII name is needed", t, f.Name))
		}
		rf := recordField{name: name, index: i}
		switch ft := f.Type; {
		case ft.Kind() == reflect.String:
			rf.kind = kindString
		case ft.Kind() == reflect.Bool:
			rf.kind = kindBool
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Bool:
			rf.kind = kindBoolPtr
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Int:
			rf.kind = kindIntPtr
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String:
			rf.kind = kindStrings
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
			rf.kind, rf.sub = kindStruct, recordTypeOf(ft.Elem())
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			rf.kind, rf.sub = kindStructs, recordTypeOf(ft.Elem())
		default:
			panic(fmt.Sprintf("horizonimport: %s.%s: the decoder has no %s", t, f.Name, ft))
		}
		rt.byName[name] = len(rt.fields)
		rt.fields = append(rt.fields, rf)
	}
	got, _ := recordTypes.LoadOrStore(t, rt)
	return got.(*recordType)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// fieldOf matches a key to a field (its index; -1: none) as encoding/json does: exactly, else
// case-insensitively (strings.EqualFold is its rule: K, the Kelvin sign,
// is k). The names are lower-case ASCII, so a key without an upper-case
// ASCII letter and without a byte beyond ASCII matches exactly or not at
// all.
func (rt *recordType) fieldOf(key []byte) int {
	if i, ok := rt.byName[string(key)]; ok {
		return i
	}
	folds := false
	for _, c := range key {
		if 'A' <= c && c <= 'Z' || c >= 0x80 {
			folds = true
			break
		}
	}
	if !folds {
		return -1
	}
	for i := range rt.fields {
		if strings.EqualFold(rt.fields[i].name, string(key)) {
			return i
		}
	}
	return -1
}

// decodeRecord decodes one record into v (a pointer to a record type)
// as json.Unmarshal would: the same value, and an error exactly when it
// fails (FuzzDecodeRecord compares them).
func decodeRecord(b []byte, v any) error {
	s := &scanner{b: b}
	if err := s.record(v); err != nil {
		return err
	}
	if s.ws(); s.i != len(s.b) {
		return errSyntax
	}
	return nil
}

// record reads the value at the scanner into v (a pointer to a record
// type) as json.Unmarshal would read it alone.
func (s *scanner) record(v any) error {
	rv := reflect.ValueOf(v).Elem()
	var typeErr error
	if err := s.structValue(rv, recordTypeOf(rv.Type()), 0, &typeErr); err != nil {
		return err
	}
	return typeErr
}

// structValue reads an object into the struct v, field by field (a key
// repeated: the last wins; a key no field has: skipped, its syntax
// checked); null leaves v as it is. depth is the number of objects and
// arrays around the value. A value of the wrong type is skipped and
// noted in *typeErr (the first), as encoding/json goes on to the end
// before it reports.
func (s *scanner) structValue(v reflect.Value, rt *recordType, depth int, typeErr *error) error {
	switch s.peek() {
	case 'n':
		return s.literal("null")
	case '{':
		if depth >= maxDepth {
			return errSyntax
		}
		pos := 0
		return s.object(func(key []byte) error {
			f := s.fieldAt(rt, pos, key)
			pos++
			if f == nil {
				return s.skip(depth + 1)
			}
			return s.field(v.Field(f.index), f, depth+1, typeErr)
		})
	}
	return s.wrongType(rt.name, depth, typeErr)
}

// wrongType skips a value of the wrong type for the field named, and
// notes it.
func (s *scanner) wrongType(name string, depth int, typeErr *error) error {
	if err := s.skip(depth); err != nil {
		return err
	}
	if *typeErr == nil {
		*typeErr = &typeError{name}
	}
	return nil
}

// field reads the value of one field into v, as encoding/json does for
// its kind: null clears a pointer or a slice and leaves anything else; a
// pointer is allocated when nil, else reused; an array is read into the
// slice's elements in place (an element null keeps what it held), grown
// as encoding/json grows it.
func (s *scanner) field(v reflect.Value, f *recordField, depth int, typeErr *error) error {
	c := s.peek()
	if c == 'n' {
		switch f.kind {
		case kindBoolPtr, kindIntPtr, kindStrings, kindStruct, kindStructs:
			v.SetZero()
		}
		return s.literal("null")
	}
	switch f.kind {
	case kindString:
		if c == '"' {
			str, err := s.str()
			if err != nil {
				return err
			}
			v.SetString(str)
			return nil
		}
	case kindBool, kindBoolPtr:
		if c == 't' || c == 'f' {
			b, word := c == 't', "false"
			if b {
				word = "true"
			}
			if err := s.literal(word); err != nil {
				return err
			}
			if f.kind == kindBool {
				v.SetBool(b)
				return nil
			}
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v.Elem().SetBool(b)
			return nil
		}
	case kindIntPtr:
		if c == '-' || '0' <= c && c <= '9' {
			start := s.i
			if err := s.number(); err != nil {
				return err
			}
			n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
			if err != nil || v.Type().Elem().OverflowInt(n) {
				if *typeErr == nil {
					*typeErr = &typeError{f.name}
				}
				return nil
			}
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v.Elem().SetInt(n)
			return nil
		}
	case kindStrings:
		if c == '[' {
			return s.slice(v, depth, func(e reflect.Value) error {
				switch s.peek() {
				case '"':
					str, err := s.str()
					if err != nil {
						return err
					}
					e.SetString(str)
					return nil
				case 'n':
					return s.literal("null")
				}
				return s.wrongType(f.name, depth+1, typeErr)
			})
		}
	case kindStruct:
		if c == '{' {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			return s.structValue(v.Elem(), f.sub, depth, typeErr)
		}
	case kindStructs:
		if c == '[' {
			return s.slice(v, depth, func(e reflect.Value) error {
				return s.structValue(e, f.sub, depth+1, typeErr)
			})
		}
	}
	return s.wrongType(f.name, depth, typeErr)
}

// slice reads an array into the slice v as encoding/json does: element
// i is read into v[i] in place, the slice grown by one (reflect's Grow)
// past its capacity and re-sliced past its length, and cut to the
// elements read; an empty array is a new empty slice (not nil, and not
// the old one cut: what it held is gone).
func (s *scanner) slice(v reflect.Value, depth int, elem func(reflect.Value) error) error {
	if depth >= maxDepth {
		return errSyntax
	}
	i := 0
	err := s.array(func() error {
		if i >= v.Cap() {
			v.Grow(1)
		}
		if i >= v.Len() {
			v.SetLen(i + 1)
		}
		i++
		return elem(v.Index(i - 1))
	})
	if err != nil {
		return err
	}
	if i < v.Len() {
		v.SetLen(i)
	}
	if i == 0 {
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	}
	return nil
}

// eachRecordIn reads one file of the pull in dir and hands each record
// to fn, with the scanner at it: the elements of its JSON array, or the
// one JSON object it holds (an endpoint that answers an object); fn must
// consume the record whole. It checks the count of records against the
// manifest's. The file is read into *buf (grown as needed), which the
// records must not outlive.
func eachRecordIn(dir string, f horizon.File, buf *[]byte, fn func(*scanner) error) error {
	b, err := horizon.ReadFile(dir, f, *buf)
	if err != nil {
		return err
	}
	*buf = b
	var n int
	if s := (&scanner{b: b}); s.peek() == '{' {
		n = 1
		if err := fn(s); err != nil {
			return err
		}
		if s.ws(); s.i != len(b) {
			return fmt.Errorf("%s: data after the JSON object", f.Name)
		}
	} else if n, err = eachElement(f.Name, b, fn); err != nil {
		return err
	}
	if n != f.Records {
		return fmt.Errorf("%s holds %d records, the manifest says %d", f.Name, n, f.Records)
	}
	return nil
}

// eachElement splits a page (a JSON array) into its elements: fn gets a
// scanner at each element, and must consume it whole (checking its
// syntax). It returns the number of elements; an error of fn is returned
// as it is, a syntax error of the page names it.
func eachElement(name string, b []byte, fn func(*scanner) error) (int, error) {
	s := &scanner{b: b}
	n := 0
	var fnErr error
	err := s.array(func() error {
		n++
		fnErr = fn(s)
		return fnErr
	})
	switch {
	case fnErr != nil:
		return n, fnErr
	case err != nil:
		return n, fmt.Errorf("%s: not a JSON array of records: %w", name, err)
	}
	if s.ws(); s.i != len(b) {
		return n, fmt.Errorf("%s: data after the JSON array", name)
	}
	return n, nil
}

// element consumes one element with skip and returns its bytes.
func (s *scanner) element() ([]byte, error) {
	start := s.i
	if err := s.skip(0); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}
