package horizontest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaFile is the trimmed copy of the 2512 swagger's schemas (the
// components reachable from what the test server answers and what cpactl
// sends), under testdata/ with its source and licence beside it
// (testdata/SWAGGER-SOURCE.md, testdata/LICENSE-CC-BY-4.0.txt).
// TestTrimSwagger writes it from the full swagger.
const SchemaFile = "swagger-2512-schemas.json"

// Schemas validates JSON bodies against the swagger's schemas, strictly:
// an object may hold only the properties its schema names (the swagger
// leaves additionalProperties open, which would let a misspelt field
// through), and every enum, type, required list and bound applies.
type Schemas struct {
	mu    sync.Mutex
	c     *jsonschema.Compiler
	cache map[string]*jsonschema.Schema
	doc   any
}

const schemaURL = "https://cpactl.invalid/horizon/" + SchemaFile

// LoadSchemas reads the trimmed schema file.
func LoadSchemas() (*Schemas, error) {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(Dir("x")), SchemaFile))
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SchemaFile, err)
	}
	strict(doc)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4) // OpenAPI 3.0's schemas are draft 4/5 (boolean exclusiveMinimum)
	c.UseRegexpEngine(javaRegexp)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return &Schemas{c: c, cache: map[string]*jsonschema.Schema{}, doc: doc}, nil
}

// strict sets additionalProperties false on every object schema that
// names its properties and says nothing of others.
func strict(v any) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["properties"].(map[string]any); ok {
			if _, set := x["additionalProperties"]; !set {
				x["additionalProperties"] = false
			}
		}
		for k, sub := range x {
			if k == "example" || k == "enum" {
				continue
			}
			strict(sub)
		}
	case []any:
		for _, sub := range x {
			strict(sub)
		}
	}
}

// compile returns the schema of name (a components.schemas key), or of
// an array of it.
func (s *Schemas) compile(name string, array bool) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := name
	if array {
		key = "[]" + name
	}
	if sch, ok := s.cache[key]; ok {
		return sch, nil
	}
	ref := schemaURL + "#/components/schemas/" + name
	loc := ref
	if array {
		loc = "https://cpactl.invalid/horizon/list/" + name
		if err := s.c.AddResource(loc, map[string]any{"type": "array", "items": map[string]any{"$ref": ref}}); err != nil {
			return nil, err
		}
	}
	sch, err := s.c.Compile(loc)
	if err != nil {
		return nil, err
	}
	s.cache[key] = sch
	return sch, nil
}

// Check validates body against the schema name (an array of it when
// array): nil, or an error naming each failing field.
func (s *Schemas) Check(name string, array bool, body []byte) error {
	sch, err := s.compile(name, array)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// javaRegexp compiles the swagger's patterns, which are Java's (the
// update specs' category_folder_name uses lookaheads and (?i:...), which
// Go's regexp does not have), with regexp2 in its default (.NET) syntax,
// which has both; a match is bounded in time.
func javaRegexp(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = time.Second
	return (*dotnetRegexp)(re), nil
}

type dotnetRegexp regexp2.Regexp

func (re *dotnetRegexp) MatchString(s string) bool {
	ok, err := (*regexp2.Regexp)(re).MatchString(s)
	return err == nil && ok
}

func (re *dotnetRegexp) String() string { return (*regexp2.Regexp)(re).String() }

// Properties lists the properties schema name declares, sorted.
func (s *Schemas) Properties(name string) []string {
	doc, _ := s.doc.(map[string]any)
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	sch, _ := schemas[name].(map[string]any)
	props, _ := sch["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SchemaOf returns the swagger schema of the answer to a GET of path
// (under /rest; a pod id in place of {id}), and whether the answer is an
// array of it, as Routes list them.
func SchemaOf(path string) (schema string, array bool, ok bool) {
	r, _, ok := match(path)
	return r.Schema, r.Array, ok
}
