// Package layering holds the test that keeps cpactl's packages in their
// layers (docs/architecture.md): who may speak LDAP, who may know cobra.
package layering

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var (
	ldap  = []string{"github.com/go-ldap/", "github.com/go-asn1-ber/"}
	cobra = []string{"github.com/spf13/cobra", "github.com/spf13/pflag"}
)

// TestLayers: no non-test file of a package imports what its layer must not
// (every file is parsed, whatever its build constraints).
func TestLayers(t *testing.T) {
	for _, tc := range []struct {
		dir, why  string
		forbidden [][]string
	}{
		{"commands", "ask package directory for what it needs", [][]string{ldap}},
		{"rules", "rules take records and return violations", [][]string{ldap, cobra}},
		{"broker", "the broker is a pure function of plain values", [][]string{ldap, cobra, {"github.com/cpactl/cpactl/ldapschema", "github.com/cpactl/cpactl/directory"}}},
		{"impact", "impact compares broker decisions over plain values", [][]string{ldap, cobra, {"github.com/cpactl/cpactl/ldapschema", "github.com/cpactl/cpactl/directory"}}},
		{"history", "history decodes log records handed over as plain values", [][]string{ldap, cobra, {"github.com/cpactl/cpactl/directory"}}},
		{"directory", "the directory package knows no command line", [][]string{cobra}},
		{"reconcile", "reconcile knows no command line", [][]string{cobra}},
		{"lint", "lint reads records, not the directory", [][]string{ldap, cobra}},
		{"internal/nesting", "the walker is generic over its nodes", [][]string{ldap, cobra, {"github.com/cpactl/"}}},
		{"config", "the configuration file is read and written without LDAP or a command line", [][]string{ldap, cobra}},
		{"horizon", "the Horizon REST access knows no LDAP and no command line", [][]string{ldap, cobra, {"github.com/cpactl/cpactl/directory", "github.com/cpactl/cpactl/ldapschema"}}},
		{"horizonpush", "the push's mapping takes records and the REST side's plan: no LDAP access, no command line", [][]string{ldap, cobra, {"github.com/cpactl/cpactl/directory"}}},
		{"horizonimport", "the import maps records and reaches LDAP only through directory; it knows no command line", [][]string{ldap, cobra}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join("..", "..", tc.dir, "*.go"))
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
					for _, group := range tc.forbidden {
						for _, prefix := range group {
							if strings.HasPrefix(path, prefix) {
								t.Errorf("%s imports %s: %s", fset.Position(imp.Pos()), path, tc.why)
							}
						}
					}
				}
			}
			if checked == 0 {
				if _, err := os.Stat(filepath.Join("..", "..", tc.dir)); err != nil {
					t.Fatal(err)
				}
				t.Fatalf("no non-test file in %s", tc.dir)
			}
		})
	}
}
