package commands

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCommandsSpeakNoLDAP: package commands reaches the directory only
// through package directory (and its names through ldapschema); no
// non-test file imports go-ldap. Every file is parsed, whatever its build
// constraints.
func TestCommandsSpeakNoLDAP(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if path == "github.com/go-ldap" || strings.HasPrefix(path, "github.com/go-ldap/") ||
				strings.HasPrefix(path, "github.com/go-asn1-ber/") {
				t.Errorf("%s imports %s: ask package directory for what it needs", fset.Position(imp.Pos()), path)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no non-test file of package commands found")
	}
}
