package objkind

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// words are the kinds' words, and the other spellings issue 24 found
// ("assignment" in lint, "home site" in lint and the push plan).
var words = map[string]bool{
	Settings: true, Site: true, Pod: true, ConnectionServer: true, Pool: true, Farm: true, Host: true,
	Entitlement: true, HomeSiteRow: true, User: true, Group: true, Computer: true, Session: true,
	Assignment: true, RoleGroup: true, Entry: true, Base: true, Container: true,
	"assignment": true, "home site": true,
}

// TestSpelledOnce: no non-test file of cpactl spells an object kind itself,
// as a Kind* constant or as the Kind of a composite literal (an error, a
// referrer, a plan's change); each takes it from this package. A new kind
// is added here.
func TestSpelledOnce(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			filepath.Dir(path) == "." {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		word := func(e ast.Expr) (string, bool) {
			lit, ok := e.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(lit.Value)
			return s, err == nil && words[s]
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Kind" {
					if s, ok := word(n.Value); ok {
						t.Errorf("%s: Kind: %q: use the objkind constant", fset.Position(n.Pos()), s)
					}
				}
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if i < len(n.Values) && strings.HasPrefix(name.Name, "Kind") {
						if s, ok := word(n.Values[i]); ok {
							t.Errorf("%s: %s = %q: use the objkind constant", fset.Position(name.Pos()), name.Name, s)
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d files: the walk did not find the tree", files)
	}
}
