package rules

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsNoLDAPNorCobra keeps the rules plain Go: they take records
// and return violations, whoever reads the directory or parses the flags.
func TestImportsNoLDAPNorCobra(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, "go-ldap") || strings.Contains(path, "cobra") {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
