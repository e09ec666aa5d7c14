package commands

import (
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// consoleArgs splits a documented command line ("$ cpactl ..." with
// backslash-newline continuations and single or double quotes) into its
// arguments, cpactl left out.
func consoleArgs(t *testing.T, line string) []string {
	t.Helper()
	line = strings.ReplaceAll(strings.TrimPrefix(line, "$ cpactl "), "\\\n", " ")
	var args []string
	var cur strings.Builder
	quote, in := rune(0), false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\n':
			if in || cur.Len() > 0 {
				args = append(args, cur.String())
			}
			cur.Reset()
			in = false
		default:
			cur.WriteRune(r)
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if in || cur.Len() > 0 {
		args = append(args, cur.String())
	}
	return args
}

// TestImpactWalkthroughIsCurrent: every console block of docs/impact.md
// that runs `cpactl impact` shows what it prints (stdout, then stderr) and
// the exit code it ends with.
func TestImpactWalkthroughIsCurrent(t *testing.T) {
	doc, err := os.ReadFile("../docs/impact.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for _, part := range strings.Split(string(doc), "```console\n")[1:] {
		block, _, ok := strings.Cut(part, "```")
		if !ok {
			t.Fatal("docs/impact.md: a console block does not end")
		}
		if !strings.HasPrefix(block, "$ cpactl impact") {
			continue
		}
		blocks++
		// The command runs to the first line that does not continue it.
		lines := strings.SplitAfter(block, "\n")
		n := 1
		for n < len(lines) && strings.HasSuffix(lines[n-1], "\\\n") {
			n++
		}
		cmdLine, shown := strings.Join(lines[:n], ""), strings.Join(lines[n:], "")
		args := consoleArgs(t, cmdLine)
		for i, a := range args {
			if strings.HasPrefix(a, "fixtures/") {
				args[i] = "../" + a
			}
		}
		code, out, errOut := run(t, args...)
		got := out + errOut + "$ echo $?\n" + strconv.Itoa(code) + "\n"
		if got != shown {
			t.Errorf("docs/impact.md shows for %q:\n%s\nimpact prints:\n%s", strings.TrimSpace(cmdLine), shown, got)
		}
	}
	if blocks == 0 {
		t.Fatal("docs/impact.md has no console block running cpactl impact")
	}
}

// TestImpactJSONShape pins the field names of impact's JSON.
func TestImpactJSONShape(t *testing.T) {
	code, out, _ := run(t, "impact", "--from", "../fixtures/demo.ldif", "--offline-pod", "London-1", "--limit", "1", "-o", "json")
	if code != ExitDiff {
		t.Fatalf("exit %d, want %d", code, ExitDiff)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	keysOf := func(m any) string {
		var ks []string
		for k := range m.(map[string]any) {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return strings.Join(ks, ",")
	}
	for _, c := range []struct{ what, got, want string }{
		{"report", keysOf(v), "connecting_points,moves,moves_left_out,summary,what_if"},
		{"summary", keysOf(v["summary"]), "changed_outcome,changed_pod_or_pool,changed_site,outcomes,requests,resolved,sites,unchanged"},
		{"what_if", keysOf(v["what_if"].([]any)[0]), "kind,target,value"},
		{"move", keysOf(v["moves"].([]any)[0]), "after,before,change,connecting_pod,connection_server,entitlement,first_difference,user,why"},
		{"result", keysOf(v["moves"].([]any)[0].(map[string]any)["before"]), "farm,host,machine,outcome,pod,pool,reason,session,site"},
		{"first_difference", keysOf(v["moves"].([]any)[0].(map[string]any)["first_difference"]), "after,before"},
		{"count", keysOf(v["summary"].(map[string]any)["sites"].([]any)[0]), "from,requests,to"},
	} {
		if c.got != c.want {
			t.Errorf("%s fields %s, want %s", c.what, c.got, c.want)
		}
	}
}

// TestImpactTableFoldsMoves: the table has one row per user, entitlement,
// before, after and why, the connecting pods folded into one cell, and a
// short why instead of the broker's trace step, so that it can be pasted
// into a change ticket; JSON keeps one move per request.
func TestImpactTableFoldsMoves(t *testing.T) {
	code, out, _ := run(t, "impact", "--from", "../fixtures/demo.ldif", "--offline-pod", "London-1")
	if code != ExitDiff {
		t.Fatalf("exit %d, want %d", code, ExitDiff)
	}
	_, table, ok := strings.Cut(out, "\nMOVES\n")
	if !ok {
		t.Fatalf("no MOVES table:\n%s", out)
	}
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	header := regexpFields(lines[0])
	if want := "USER|ENTITLEMENT|CONNECTING PODS|BEFORE|AFTER|WHY"; strings.Join(header, "|") != want {
		t.Errorf("header %q, want %s", lines[0], want)
	}
	want := map[string]string{
		"carol|Desktops|Bangalore-1, Bangalore-2":              "pod London-1 is offline: the session there is ignored",
		"carol|Desktops|Dallas-1, NewYork-1":                   "pod London-1 is offline: the session there is ignored",
		"alice|Engineering Workstations|all 5 connecting pods": "pod London-1 is offline: the assigned machine there is unavailable",
	}
	rows := map[string]string{}
	for _, l := range lines[1:] {
		f := regexpFields(l)
		if len(f) != 6 {
			t.Fatalf("row %q: %d cells", l, len(f))
		}
		k := strings.Join(f[:3], "|")
		if _, dup := rows[k]; dup {
			t.Errorf("two rows for %s", k)
		}
		rows[k] = f[5]
		if len([]rune(f[5])) > 100 {
			t.Errorf("why of %d characters: %q", len([]rune(f[5])), f[5])
		}
	}
	for k, why := range want {
		if rows[k] != why {
			t.Errorf("row %s: why %q, want %q (rows %v)", k, rows[k], why, rows)
		}
	}
	if len(lines)-1 != 5 {
		t.Errorf("%d rows for 13 moves, want 5:\n%s", len(lines)-1, table)
	}
	code, out, _ = run(t, "impact", "--from", "../fixtures/demo.ldif", "--offline-pod", "London-1", "-o", "json")
	var v struct{ Moves []map[string]any }
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != ExitDiff {
		t.Fatalf("exit %d: %v", code, err)
	}
	if len(v.Moves) != 13 {
		t.Errorf("JSON lists %d moves, want one per request (13)", len(v.Moves))
	}
}

// regexpFields splits a table row at runs of two or more spaces.
func regexpFields(l string) []string {
	var out []string
	for _, f := range strings.Split(l, "  ") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
