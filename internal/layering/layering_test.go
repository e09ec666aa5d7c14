// Package layering holds the test that keeps cpactl's packages in their
// layers (docs/architecture.md): who may speak LDAP, who may know cobra.
package layering

import (
	"go/ast"
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
		{"directory", "the directory package knows no command line, and reads what the rules need without applying them (the broker decides the backup rule)", [][]string{cobra, {"github.com/cpactl/cpactl/rules"}}},
		{"directory/ldapclient", "the client seam knows no command line and no rule", [][]string{cobra, {"github.com/cpactl/cpactl/rules"}}},
		{"directory/snapshot", "the in-memory server knows no command line and no rule", [][]string{cobra, {"github.com/cpactl/cpactl/rules"}}},
		{"directory/ldapconn", "the transport knows no command line and no rule", [][]string{cobra, {"github.com/cpactl/cpactl/rules"}}},
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

const module = "github.com/cpactl/cpactl/"

// packageMap reads the package table of docs/architecture.md: each row's
// packages (the backquoted names of its first cell) and the row's place.
func packageMap(t *testing.T) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Packages\n")
	if start < 0 {
		t.Fatal("docs/architecture.md has no \"## Packages\" section")
	}
	text = text[start+1:]
	if end := strings.Index(text[3:], "\n## "); end >= 0 {
		text = text[:end+3]
	}
	rows := map[string]int{}
	row := 0
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		row++
		first, _, _ := strings.Cut(line[2:], " |")
		for _, part := range strings.Split(first, "`")[1:] {
			if name := strings.TrimSpace(part); name != "" && name != "," {
				rows[name] = row
			}
		}
	}
	if row < 10 {
		t.Fatalf("docs/architecture.md: only %d package rows read", row)
	}
	return rows
}

// TestImportsGoDownTheMap: every package with non-test code is on the
// map of docs/architecture.md, and imports only packages below its own
// row (or in it: `prompt`, `quote`), so that an import up the list fails.
func TestImportsGoDownTheMap(t *testing.T) {
	rows := packageMap(t)
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		own, onMap := rows[pkg]
		if !onMap {
			t.Errorf("%s: package %s is not in docs/architecture.md's package table: add its row where its imports put it", path, pkg)
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			dep, ok := strings.CutPrefix(ip, module)
			if !ok {
				continue
			}
			r, ok := rows[dep]
			switch {
			case !ok:
				t.Errorf("%s imports %s, which is not in docs/architecture.md's package table", fset.Position(imp.Pos()), dep)
			case r < own:
				t.Errorf("%s imports %s, which is above %s in docs/architecture.md: imports go down the list", fset.Position(imp.Pos()), dep, pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d files checked", checked)
	}
}

// TestOneNamePerThing: package directory gives no second name to what its
// packages below hold (a type alias, a constant or variable copied, a
// function that only calls its namesake): a caller names each where it
// lives (directory/ldapclient, directory/ldapconn, directory/snapshot).
func TestOneNamePerThing(t *testing.T) {
	below := map[string]bool{"ldapclient": true, "ldapconn": true, "snapshot": true}
	files, err := filepath.Glob(filepath.Join("..", "..", "directory", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		isBelow := func(e ast.Expr, name string) bool {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			x, ok := sel.X.(*ast.Ident)
			return ok && below[x.Name] && sel.Sel.Name == name
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Assign.IsValid() && isBelow(s.Type, s.Name.Name) {
							t.Errorf("%s: type %s is an alias: name it where it lives", fset.Position(s.Pos()), s.Name.Name)
						}
					case *ast.ValueSpec:
						for i, n := range s.Names {
							if i < len(s.Values) && isBelow(s.Values[i], n.Name) {
								t.Errorf("%s: %s copies its namesake below: name it where it lives", fset.Position(n.Pos()), n.Name)
							}
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil || d.Body == nil || len(d.Body.List) != 1 {
					continue
				}
				var call ast.Expr
				switch st := d.Body.List[0].(type) {
				case *ast.ReturnStmt:
					if len(st.Results) == 1 {
						call = st.Results[0]
					}
				case *ast.ExprStmt:
					call = st.X
				}
				if c, ok := call.(*ast.CallExpr); ok && isBelow(c.Fun, d.Name.Name) {
					t.Errorf("%s: func %s only calls its namesake below: name it where it lives", fset.Position(d.Pos()), d.Name.Name)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d files of directory", checked)
	}
}
