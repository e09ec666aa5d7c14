// Package config is cpactl's configuration file: named contexts of
// connection settings (URIs, base DN, bind DN, StartTLS, CA file, timeout)
// and the current one, as kubectl keeps clusters in kubeconfig. It reads,
// checks and writes the file; which setting wins over which is decided by
// the caller (commands/globals.go). It never holds a password: a key that
// looks like one is refused.
//
// Nothing here imports cobra or go-ldap.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/cpactl/cpactl/internal/ldapuri"
	"github.com/cpactl/cpactl/internal/osfile"
)

// Context is one named set of connection settings. Empty fields are not
// set: the next source in the order of precedence gives them.
type Context struct {
	Name     string `json:"name"`
	URL      URIs   `json:"url,omitempty"`
	Base     string `json:"base,omitempty"`
	BindDN   string `json:"bind-dn,omitempty"`
	StartTLS bool   `json:"starttls,omitempty"`
	CAFile   string `json:"ca-file,omitempty"`
	// Timeout is a Go duration ("5s", "1m30s"), checked when the file is
	// read.
	Timeout string `json:"timeout,omitempty"`
}

// URIs are one or more LDAP URIs, written in the file as a list or as one
// string.
type URIs []string

// UnmarshalJSON takes a list of strings or a single string.
func (u *URIs) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*u = URIs{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("url must be a URI or a list of URIs")
	}
	*u = list
	return nil
}

// TimeoutDuration is the context's timeout, 0 when it sets none.
func (c Context) TimeoutDuration() time.Duration {
	d, _ := time.ParseDuration(c.Timeout) // checked by Load
	return d
}

// File is the whole configuration file.
type File struct {
	CurrentContext string    `json:"current-context,omitempty"`
	Contexts       []Context `json:"contexts"`
	// Unsafe, set by Load, says why users other than the one running
	// cpactl could change the file (nil when they cannot): the caller
	// warns or refuses.
	Unsafe *UnsafeError `json:"-"`
}

// UnsafeError is a configuration file that others could change: it is
// writable by its group or by others (Owner -1), or owned by another user
// than the one running cpactl (User) and root. It names the server that
// receives the bind password, so whoever can change it can send the
// password elsewhere.
type UnsafeError struct {
	Path  string
	Mode  fs.FileMode // its permission bits
	Owner int         // the uid that owns it; -1 when it is writable by others
	User  int         // the uid running cpactl, when Owner is set
}

func (e *UnsafeError) Error() string {
	why := fmt.Sprintf("other users can write it (mode %04o)", e.Mode)
	if e.Owner >= 0 {
		why = fmt.Sprintf("it is owned by uid %d, not by you (uid %d) or root", e.Owner, e.User)
	}
	return fmt.Sprintf("config file %s: %s, and it names the server your bind password goes to", e.Path, why)
}

// Lookup returns the named context (names compare exactly, as kubectl's).
func (f *File) Lookup(name string) (Context, bool) {
	for _, c := range f.Contexts {
		if c.Name == name {
			return c, true
		}
	}
	return Context{}, false
}

// Set adds c, or replaces the context of the same name in place.
func (f *File) Set(c Context) {
	for i := range f.Contexts {
		if f.Contexts[i].Name == c.Name {
			f.Contexts[i] = c
			return
		}
	}
	f.Contexts = append(f.Contexts, c)
}

// Error is a configuration file that cannot be used: its path, the line
// when known (0 otherwise) and what is wrong.
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("config file %s, line %d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("config file %s: %s", e.Path, e.Msg)
}

// Path is where the configuration file is: $CPACTL_CONFIG, else
// $XDG_CONFIG_HOME/cpactl/config.yaml, else ~/.config/cpactl/config.yaml.
// It is "" when none of CPACTL_CONFIG, XDG_CONFIG_HOME and HOME is set.
func Path(getenv func(string) string) string {
	if p := getenv("CPACTL_CONFIG"); p != "" {
		return p
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "cpactl", "config.yaml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "cpactl", "config.yaml")
	}
	return ""
}

// contextKeys are the keys a context may hold, as the file spells them.
var contextKeys = []string{"name", "url", "base", "bind-dn", "starttls", "ca-file", "timeout"}

// fileKeys are the keys of the file's top level.
var fileKeys = []string{"current-context", "contexts"}

// Load reads and checks the file at path. A file that does not exist is an
// empty configuration; one that is not a regular file (a device, a pipe)
// or is larger than 1 MiB is refused before it is read. A file others
// could change is read, with File.Unsafe set. A password key anywhere (password, bind_password,
// bindPassword, ...), an unknown key, a context without a name or twice
// the same name, a bad timeout and YAML that does not parse are *Errors.
func Load(path string) (*File, error) {
	raw, fi, err := source.Read(path)
	var kind *osfile.KindError
	var large *osfile.TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &File{}, nil
	case errors.As(err, &kind), errors.As(err, &large):
		return nil, fmt.Errorf("config file %w", err)
	case err != nil:
		return nil, &Error{Path: path, Msg: err.Error()}
	}
	f, err := parse(path, raw)
	if err != nil {
		return nil, err
	}
	f.Unsafe = exposure(path, fi)
	return f, nil
}

// source is what the configuration file may be: a regular file (cpactl
// replaces it when it writes it) of at most 1 MiB, which holds thousands
// of contexts.
var source = osfile.Source{Max: osfile.MiB}

func parse(path string, raw []byte) (*File, error) {
	failAt := func(line int, format string, args ...any) error {
		return &Error{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	fail := func(key, format string, args ...any) error {
		return failAt(lineOf(raw, key, "", false), format, args...)
	}
	j, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return nil, yamlError(path, raw, err)
	}
	if len(bytes.TrimSpace(j)) == 0 || string(bytes.TrimSpace(j)) == "null" {
		return &File{}, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(j, &top); err != nil {
		return nil, &Error{Path: path, Msg: "the file must hold a map with the keys current-context and contexts"}
	}
	if err := checkKeys(top, fileKeys, "", fail); err != nil {
		return nil, err
	}
	var contexts []map[string]json.RawMessage
	if c, ok := top["contexts"]; ok && string(c) != "null" {
		if err := json.Unmarshal(c, &contexts); err != nil {
			return nil, fail("contexts", "contexts must be a list of maps, each with a name")
		}
	}
	for _, c := range contexts {
		if err := checkKeys(c, contextKeys, "a context's ", fail); err != nil {
			return nil, err
		}
	}
	var f File
	if err := json.Unmarshal(j, &f); err != nil {
		return nil, typeError(path, raw, err)
	}
	seen := map[string]bool{}
	for _, c := range f.Contexts {
		switch {
		case c.Name == "":
			return nil, fail("contexts", "a context has no name")
		case seen[c.Name]:
			return nil, failAt(lineOf(raw, "name", c.Name, true), "context %q is given twice", c.Name)
		}
		seen[c.Name] = true
		for _, u := range c.URL {
			if err := ldapuri.Check(fmt.Sprintf("context %q", c.Name), u); err != nil {
				return nil, failAt(lineWith(raw, u), "%v; remove it and bind with -D DN (bind-dn) and -y FILE, -W or CPACTL_BIND_PASSWORD", err)
			}
		}
		if c.Timeout != "" {
			if d, err := time.ParseDuration(c.Timeout); err != nil || d <= 0 {
				return nil, failAt(lineOf(raw, "timeout", c.Timeout, false), "context %q: timeout %q is not a duration such as 5s or 1m", c.Name, c.Timeout)
			}
		}
	}
	return &f, nil
}

// checkKeys refuses password keys first, then keys not in allowed.
func checkKeys(m map[string]json.RawMessage, allowed []string, what string, fail func(key, format string, args ...any) error) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if IsPasswordKey(k) {
			return fail(k, "%q: cpactl keeps no password in its config file; remove it and use -y FILE, -W or CPACTL_BIND_PASSWORD", k)
		}
	}
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return fail(k, "unknown key %q (%skeys: %s)", k, what, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// IsPasswordKey reports whether a key names a password or a secret,
// however it is spelled: password, bind_password, bindPassword,
// BIND-PASSWORD, passwd, pw, secret.
func IsPasswordKey(key string) bool {
	k := strings.NewReplacer("-", "", "_", "", ".", "", " ", "").Replace(strings.ToLower(key))
	for _, w := range []string{"password", "passwd", "secret"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return k == "pw" || k == "pass" || k == "bindpw"
}

// lineOf finds the line holding key as a map key (after indentation and
// a list dash), with this value when value is not "" and with the last
// match when last is set; 0 when there is none.
func lineOf(raw []byte, key, value string, last bool) int {
	found := 0
	for i, line := range strings.Split(string(raw), "\n") {
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "-"))
		k, v, ok := strings.Cut(t, ":")
		if !ok || strings.Trim(strings.TrimSpace(k), `"'`) != key {
			continue
		}
		if value != "" && strings.Trim(strings.TrimSpace(v), `"'`) != value {
			continue
		}
		found = i + 1
		if !last {
			break
		}
	}
	return found
}

// lineWith finds the first line that holds s; 0 when none does.
func lineWith(raw []byte, s string) int {
	for i, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, s) {
			return i + 1
		}
	}
	return 0
}

// yamlLine finds "line N:" in a YAML parser's message.
var yamlLine = regexp.MustCompile(`line (\d+): `)

// yamlError turns "yaml: line 3: mapping values are not allowed ..." (or
// "unmarshal errors:\n  line 4: key ...") into an *Error with the line.
// The parser gives an error at the end of the file the line after the
// last one: that is the last line.
func yamlError(path string, raw []byte, err error) error {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
		line, _ = strconv.Atoi(msg[m[2]:m[3]])
		msg = msg[m[1]:]
	}
	if n := lineCount(raw); line > n {
		line = n
	}
	return &Error{Path: path, Line: line, Msg: msg}
}

// lineCount is the number of lines of raw, the last one counted whether or
// not a newline ends it.
func lineCount(raw []byte) int {
	n := bytes.Count(raw, []byte("\n"))
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		n++
	}
	return n
}

// typeError says which key holds a value of the wrong type, and the line.
func typeError(path string, raw []byte, err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return &Error{Path: path, Msg: err.Error()}
	}
	field := te.Field
	if i := strings.LastIndex(field, "."); i >= 0 {
		field = field[i+1:]
	}
	msg := fmt.Sprintf("%s must be a %s, not a %s", field, te.Type.Kind(), te.Value)
	if field == "timeout" {
		msg = "timeout must be a duration such as 5s or 1m"
	}
	return &Error{Path: path, Line: lineOf(raw, field, "", false), Msg: msg}
}

// Save writes f to path atomically (a temporary file in the same
// directory, synced, then a rename), mode 0600, creating the directory
// with mode 0700 when it is missing. A symbolic link is followed to the
// file it names, which is replaced (the link stays); a path that is not a
// regular file is refused. A failure is an *osfile.WriteError.
func Save(path string, f *File) error {
	b, err := yaml.Marshal(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	out, err := osfile.Create(path, osfile.Options{Perm: 0o600, Sync: true, RegularOnly: true})
	if err != nil {
		return err
	}
	defer out.Discard()
	if _, err := out.Write(b); err != nil {
		return err
	}
	return out.Commit()
}
