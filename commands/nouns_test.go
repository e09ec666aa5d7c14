package commands

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// nounFiles are the files of each noun's commands: what one defines no
// other noun uses (issue 24). What several nouns share lives in the
// shared files (write.go, words.go, skeleton.go, options.go, confirm.go
// and the others that are no noun's).
var nounFiles = map[string]string{
	"site.go": "site", "preferred.go": "site", "pod.go": "pod", "cs.go": "cs", "pool.go": "pool",
	"farm.go": "farm", "host.go": "host", "entitlement.go": "entitlement", "entitlement_edit.go": "entitlement",
	"user.go": "user", "user_entitlements.go": "user", "group.go": "group", "computer.go": "computer",
	"session.go": "session", "assignment.go": "assignment", "homesite.go": "homesite", "settings.go": "settings",
	"role.go": "role",
}

// TestNounsShareNothing: no function, type, variable or constant a noun's
// file defines is used by another noun's file.
func TestNounsShareNothing(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	parsed := map[string]*ast.File{}
	defined := map[string]string{} // top-level name -> the noun file that defines it
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed[name] = f
		if _, ok := nounFiles[name]; !ok {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					defined[d.Name.Name] = name
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						defined[s.Name.Name] = name
					case *ast.ValueSpec:
						for _, n := range s.Names {
							defined[n.Name] = name
						}
					}
				}
			}
		}
	}
	if len(defined) < 50 {
		t.Fatalf("only %d names defined in noun files: is nounFiles out of date?", len(defined))
	}
	var bad []string
	for name, f := range parsed {
		noun, isNoun := nounFiles[name]
		if name == "root.go" {
			continue // the tree: it calls each noun's constructor
		}
		seen := map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok || seen[id.Name] {
				return true
			}
			if def, ok := defined[id.Name]; ok && (!isNoun || nounFiles[def] != noun) && f.Scope.Lookup(id.Name) == nil {
				seen[id.Name] = true
				bad = append(bad, name+" uses "+id.Name+" of "+def)
			}
			return true
		})
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
