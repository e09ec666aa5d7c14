package output

import (
	"bytes"
	"testing"
)

func TestQuoting(t *testing.T) {
	for _, c := range []struct{ in, dot, mermaid string }{
		{`UK`, `"UK"`, `"UK"`},
		{`R&D "West" \N <b>`, `"R&D \"West\" \\N <b>"`, `"R&D #quot;West#quot; \N #lt;b#gt;"`},
		{"two\nlines", `"two\nlines"`, `"two<br/>lines"`},
		{`pod #1`, `"pod #1"`, `"pod #35;1"`},
	} {
		if got := dotQuote(c.in); got != c.dot {
			t.Errorf("dotQuote(%q) = %s, want %s", c.in, got, c.dot)
		}
		if got := mermaidQuote(c.in); got != c.mermaid {
			t.Errorf("mermaidQuote(%q) = %s, want %s", c.in, got, c.mermaid)
		}
	}
}

// TestGraphForms pins both forms of one small graph: clusters, nodes
// outside them, labelled edges and every emphasis.
func TestGraphForms(t *testing.T) {
	g := Graph{Title: "t", LeftToRight: true,
		Clusters: []Cluster{{ID: "c", Label: "C", Emphasis: Alert, Nodes: []Node{
			{ID: "a", Lines: []string{"A", "x"}, Box: true},
			{ID: "b", Lines: []string{"B"}, Emphasis: Muted},
		}}},
		Nodes: []Node{{ID: "z", Lines: []string{"Z"}, Box: true, Emphasis: Highlight}},
		Edges: []Edge{{From: "a", To: "z", Label: "1", Emphasis: Highlight}, {From: "a", To: "b", Emphasis: Muted},
			{From: "b", To: "z", Label: "2", AtTail: true}},
	}
	var dot, mmd bytes.Buffer
	if err := WriteDOT(&dot, g); err != nil {
		t.Fatal(err)
	}
	if err := WriteMermaid(&mmd, g); err != nil {
		t.Fatal(err)
	}
	wantDOT := `digraph cpactl {
  rankdir=LR;
  labelloc=t;
  label="t";
  node [fontname="Helvetica"];
  edge [fontname="Helvetica"];
  subgraph "cluster c" {
    label="C";
    color="red3"; fontcolor="red3";
    "a" [label="A\nx", shape=box];
    "b" [label="B", shape=ellipse, style=dashed, color="gray50", fontcolor="gray40"];
  }
  "z" [label="Z", shape=box, style="bold,filled", fillcolor="palegreen", penwidth=2];
  "a" -> "z" [label="1", decorate=true, style=bold, color="darkgreen", penwidth=2];
  "a" -> "b" [style=dashed, color="gray50", fontcolor="gray40"];
  "b" -> "z" [taillabel="2", labeldistance=1.8, labelangle=30, labelfontcolor="blue4"];
}
`
	wantMermaid := `%% t
flowchart LR
  subgraph n0["C"]
    n1["A<br/>x"]
    n2(["B"])
  end
  n3["Z"]
  n1 ==>|"1"| n3
  n1 -.-> n2
  n2 -->|"2"| n3
  classDef muted stroke-dasharray:5 5,stroke:#888,color:#666
  class n2 muted
  classDef alert stroke:#c00,color:#c00
  class n0 alert
  classDef highlight fill:#cfc,stroke:#060,stroke-width:3px
  class n3 highlight
`
	if dot.String() != wantDOT {
		t.Errorf("DOT:\n%s\nwant:\n%s", dot.String(), wantDOT)
	}
	if mmd.String() != wantMermaid {
		t.Errorf("Mermaid:\n%s\nwant:\n%s", mmd.String(), wantMermaid)
	}
}

func TestParseFormatWith(t *testing.T) {
	if f, err := ParseFormatWith("DOT", DOT); err != nil || f != DOT {
		t.Errorf("dot where drawn: %v %v", f, err)
	}
	if _, err := ParseFormat("dot"); err == nil || err.Error() != "this command draws no picture: -o dot is for `cpactl site graph` (dot, mermaid) and `cpactl resolve` (dot); use table, wide, json or yaml" {
		t.Errorf("dot where not drawn: %v", err)
	}
	if _, err := ParseFormatWith("mermaid", DOT); err == nil || err.Error() != "this command does not draw -o mermaid: use table, wide, json, yaml or dot" {
		t.Errorf("mermaid where only dot is drawn: %v", err)
	}
	if _, err := ParseFormatWith("xml", DOT); err == nil || err.Error() != `unknown output format "xml": use table, wide, json, yaml or dot` {
		t.Errorf("unknown: %v", err)
	}
}
