package commands

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// nounFiles are the files of each noun's commands: what one defines no
// other noun uses (issue 24). What several nouns share lives in the
// shared files (write.go, words.go, lookup.go, options.go, confirm.go
// and the others that are no noun's).
var nounFiles = map[string]string{
	"site.go": "site", "preferred.go": "site", "pod.go": "pod", "cs.go": "cs", "pool.go": "pool",
	"farm.go": "farm", "host.go": "host", "entitlement.go": "entitlement", "entitlement_edit.go": "entitlement",
	"user.go": "user", "user_entitlements.go": "user", "group.go": "group", "computer.go": "computer",
	"session.go": "session", "assignment.go": "assignment", "homesite.go": "homesite", "settings.go": "settings",
	"role.go": "role",
}

// commandFiles parses the package's files but its tests, by file name.
func commandFiles(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	parsed := map[string]*ast.File{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed[name] = f
	}
	return fset, parsed
}

// TestNounsShareNothing: no function, type, variable or constant a noun's
// file defines is used by another noun's file.
func TestNounsShareNothing(t *testing.T) {
	_, parsed := commandFiles(t)
	defined := map[string]string{} // top-level name -> the noun file that defines it
	for name, f := range parsed {
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

// writeSteps are the calls that write, plan or compare for a write, and
// the files that may make them: write.go, the one road (createOrUnchanged,
// updateOne and planUpdate, applyPlan, newNamedDeleteCommand and
// runDelete), and the few writes that are no create, update or delete of
// one object, each for its reason.
var writeSteps = map[string][]string{
	"ApplyPlan": {"write.go",
		"apply.go",    // apply and horizon sync: reconcile's plan of a whole file
		"history.go",  // history undo: the inverse of a run
		"session.go",  // session end: many records, no question (record keeping)
		"settings.go", // settings set and reset: one line per setting, not per write
	},
	"Update":       nil, // an update is a plan (planUpdate), which asserts what was read
	"ApplyChanges": nil,
	// An added or removed value does not depend on the others: no
	// assertion, so two administrators adding members both succeed.
	"AddValues":      {"entitlement_edit.go"},
	"RemoveValues":   {"entitlement_edit.go"},
	"PlanRename":     {"write.go"},
	"PlanDelete":     {"write.go"},
	"RepeatedCreate": {"write.go"},
	"runDelete":      {"write.go"},
	// Store.Add (three arguments; Plan.Add takes writes): a create is
	// createOrUnchanged; session record and assignment set add a record
	// where none is, and update the one there through planUpdate.
	"Add": {"write.go", "session.go", "assignment.go"},
}

// TestOneWriteRoad: every create, update and delete goes through the
// shared steps of write.go (writeSteps says who else may write, and why),
// and every `NOUN delete` is a newNamedDeleteCommand.
func TestOneWriteRoad(t *testing.T) {
	fset, parsed := commandFiles(t)
	deletes := 0
	for name, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				var called string
				switch fn := n.Fun.(type) {
				case *ast.SelectorExpr:
					called = fn.Sel.Name
				case *ast.Ident:
					called = fn.Name
				}
				allowed, ok := writeSteps[called]
				if !ok || (called == "Add" && len(n.Args) != 3) {
					return true
				}
				if !slices.Contains(allowed, name) {
					t.Errorf("%s: %s calls %s: go through write.go's steps (or say why not in writeSteps)",
						fset.Position(n.Pos()), name, called)
				}
			case *ast.FuncDecl:
				if !strings.HasPrefix(n.Name.Name, "new") || !strings.HasSuffix(n.Name.Name, "DeleteCommand") || n.Name.Name == "newNamedDeleteCommand" {
					return true
				}
				deletes++
				last, ok := n.Body.List[len(n.Body.List)-1].(*ast.ReturnStmt)
				var call *ast.CallExpr
				if ok && len(last.Results) == 1 {
					call, _ = last.Results[0].(*ast.CallExpr)
				}
				if id, isIdent := callee(call); !isIdent || id != "newNamedDeleteCommand" {
					t.Errorf("%s: %s does not return newNamedDeleteCommand(...)", name, n.Name.Name)
				}
			}
			return true
		})
	}
	if deletes < 11 {
		t.Errorf("only %d delete commands found: site, pod, cs, pool, farm, host, entitlement, user, group, computer and assignment have one", deletes)
	}
}

func callee(call *ast.CallExpr) (string, bool) {
	if call == nil {
		return "", false
	}
	id, ok := call.Fun.(*ast.Ident)
	if !ok {
		return "", false
	}
	return id.Name, true
}

// TestNamesUnquoted: the one quoting rule for names in messages
// (docs/conventions.md#names): an object's name follows its kind as it is,
// so no format string of commands or rules quotes a name after a kind
// word ("pool %q"); a value that is itself wrong is quoted by the message
// that says so (quote.Name, "--kind %q").
func TestNamesUnquoted(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"rules", "lint", "broker", "impact", "horizonpush", "ldapschema"} {
		more, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, more...)
	}
	kindThenQuoted := regexp.MustCompile(`\b(site|pod|pool|farm|host|entitlement|backup|user|group|computer|server|session|assignment|%s) %q`)
	// The exception: a value that is itself what is wrong, as typed or
	// stored (a name that does not exist, a malformed value).
	wrongValue := regexp.MustCompile(`does not exist|not in the federation|is not known|more than once|has no |names no |has rank`)
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			if kindThenQuoted.MatchString(line) && !wrongValue.MatchString(line) {
				t.Errorf("%s:%d quotes a name after its kind: %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
	if checked < 60 {
		t.Fatalf("only %d files checked", checked)
	}
}
