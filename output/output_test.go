package output

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"table": Table, "wide": Wide, "JSON": JSON, "yaml": YAML} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "table, wide, json or yaml") {
		t.Errorf("xml: %v", err)
	}
}

func TestRowsAlignsAndTrims(t *testing.T) {
	var b bytes.Buffer
	if err := Rows(&b, []string{"name", "load_index"}, [][]string{{"R&D, \"West\" Zürich", "12"}, {"x", ""}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	if !strings.HasPrefix(lines[0], "NAME ") || !strings.Contains(lines[0], "LOAD INDEX") {
		t.Errorf("header %q", lines[0])
	}
	for _, l := range lines {
		if strings.HasSuffix(l, " ") {
			t.Errorf("trailing blank in %q", l)
		}
	}
	// The second column starts at the same rune offset on every line.
	col := func(l, cell string) int { return len([]rune(l[:strings.Index(l, cell)])) }
	if col(lines[0], "LOAD") != col(lines[1], "12") {
		t.Errorf("columns not aligned:\n%s", b.String())
	}
}

func TestPrintJSONAndYAMLShareFieldNames(t *testing.T) {
	v := struct {
		LoadIndex int `json:"load_index"`
	}{7}
	var j, y bytes.Buffer
	if err := (Printer{Format: JSON, Out: &j}).Print(v, nil); err != nil {
		t.Fatal(err)
	}
	if err := (Printer{Format: YAML, Out: &y}).Print(v, nil); err != nil {
		t.Fatal(err)
	}
	if j.String() != "{\n  \"load_index\": 7\n}\n" || y.String() != "load_index: 7\n" {
		t.Errorf("json %q yaml %q", j.String(), y.String())
	}
}
