package horizonimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
		return s.object(func(string) error { return s.skip(depth + 1) })
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

// object reads an object, calling field with each key (unquoted) with
// the scanner at its value, which field must consume.
func (s *scanner) object(field func(key string) error) error {
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
		k, err := s.str()
		if err != nil {
			return err
		}
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

// strField reads a string field: a string sets it, null leaves it, any
// other value is a type error (after its syntax is checked, as
// encoding/json goes on to the end before it reports).
func (s *scanner) strField(name string, into *string, firstErr *error, depth int) error {
	switch s.peek() {
	case '"':
		v, err := s.str()
		if err != nil {
			return err
		}
		*into = v
		return nil
	case 'n':
		return s.literal("null")
	}
	if err := s.skip(depth); err != nil {
		return err
	}
	if *firstErr == nil {
		*firstErr = &typeError{name}
	}
	return nil
}

// sessionFields are the keys of sessionJSON.
var sessionFields = []string{"id", "user_id", "global_desktop_entitlement_id", "global_application_entitlement_ids",
	"application_names", "pod_id", "brokering_pod_id", "desktop_pool_id", "farm_id", "rds_server_id", "session_state", "client_data"}

// fieldOf matches a key to a field as encoding/json does: exactly, else
// case-insensitively.
func fieldOf(key string, fields []string) string {
	for _, f := range fields {
		if f == key {
			return f
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f, key) {
			return f
		}
	}
	return ""
}

// strList reads a list of strings into *into as json.Unmarshal would
// (null: nil; a list: reused from its start); ok is false for any other
// value, which the caller treats as a type error.
func (s *scanner) strList(f string, into *[]string, typeErr *error) (bool, error) {
	switch s.peek() {
	case 'n':
		*into = nil
		return true, s.literal("null")
	case '[':
		*into = (*into)[:0]
		if *into == nil {
			*into = []string{}
		}
		return true, s.array(func() error {
			var e string
			err := s.strField(f, &e, typeErr, 2)
			*into = append(*into, e)
			return err
		})
	}
	return false, nil
}

// decodeSession decodes one record into v as json.Unmarshal would.
func decodeSession(b []byte, v *sessionJSON) error {
	s := &scanner{b: b}
	if err := s.session(v); err != nil {
		return err
	}
	if s.ws(); s.i != len(s.b) {
		return errSyntax
	}
	return nil
}

// session reads the record at the scanner into v, as json.Unmarshal
// would read it alone.
func (s *scanner) session(v *sessionJSON) error {
	var typeErr error
	var err error
	switch s.peek() {
	case 'n':
		err = s.literal("null")
	case '{':
		err = s.object(func(key string) error { return s.sessionField(key, v, &typeErr) })
	default:
		if err = s.skip(0); err == nil {
			typeErr = &typeError{"session"}
		}
	}
	if err != nil {
		return err
	}
	return typeErr
}

func (s *scanner) sessionField(key string, v *sessionJSON, typeErr *error) error {
	switch f := fieldOf(key, sessionFields); f {
	case "id":
		return s.strField(f, &v.ID, typeErr, 1)
	case "user_id":
		return s.strField(f, &v.UserID, typeErr, 1)
	case "global_desktop_entitlement_id":
		return s.strField(f, &v.GDE, typeErr, 1)
	case "pod_id":
		return s.strField(f, &v.PodID, typeErr, 1)
	case "brokering_pod_id":
		return s.strField(f, &v.BrokeringPodID, typeErr, 1)
	case "desktop_pool_id":
		return s.strField(f, &v.DesktopPoolID, typeErr, 1)
	case "farm_id":
		return s.strField(f, &v.FarmID, typeErr, 1)
	case "rds_server_id":
		return s.strField(f, &v.RDSServerID, typeErr, 1)
	case "session_state":
		return s.strField(f, &v.State, typeErr, 1)
	case "global_application_entitlement_ids":
		if ok, err := s.strList(f, &v.GAEs, typeErr); ok {
			return err
		}
	case "application_names":
		if ok, err := s.strList(f, &v.Apps, typeErr); ok {
			return err
		}
	case "client_data":
		switch s.peek() {
		case 'n':
			v.Client = nil
			return s.literal("null")
		case '{':
			if v.Client == nil {
				v.Client = &struct {
					Name string `json:"name"`
				}{}
			}
			c := v.Client
			return s.object(func(k string) error {
				if fieldOf(k, []string{"name"}) == "name" {
					return s.strField("client_data.name", &c.Name, typeErr, 2)
				}
				return s.skip(2)
			})
		}
	default:
		return s.skip(1)
	}
	// A list or an object field given another type.
	if err := s.skip(1); err != nil {
		return err
	}
	if *typeErr == nil {
		*typeErr = &typeError{key}
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
