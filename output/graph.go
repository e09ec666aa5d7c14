package output

// Pictures: a small graph model drawn as Graphviz DOT or as a Mermaid
// flowchart. Callers give nodes, clusters and edges in the order they
// want them drawn (sorted, so that the same data draws the same bytes);
// every name is quoted here, so any printable name is safe.

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/cpactl/cpactl/quote"
)

// The picture formats -o accepts where a command draws one.
const (
	DOT     Format = "dot"
	Mermaid Format = "mermaid"
)

// Emphasis is how a node or an edge stands out.
type Emphasis int

// The emphases.
const (
	Plain     Emphasis = iota
	Muted              // dashed and grey: offline, skipped, not reached
	Alert              // red: above a threshold, refused
	Highlight          // bold and filled: where the session lands
)

// Graph is a picture.
type Graph struct {
	// Title is drawn above the picture (DOT) or as a comment (Mermaid).
	Title    string
	Clusters []Cluster
	Nodes    []Node // outside any cluster
	Edges    []Edge
	// LeftToRight lays the picture out from left to right instead of top
	// down.
	LeftToRight bool
}

// Cluster is a box of nodes.
type Cluster struct {
	ID       string // unique among clusters and nodes
	Label    string
	Emphasis Emphasis
	Nodes    []Node
}

// Node is one box or oval.
type Node struct {
	ID       string   // unique among clusters and nodes
	Lines    []string // the label, one line each
	Box      bool     // a box, else a rounded oval
	Emphasis Emphasis
}

// Edge is an arrow between two nodes.
type Edge struct {
	From, To string // node IDs
	Label    string
	// AtTail draws the label at the arrow's start, next to the node it
	// leaves (DOT only): the label belongs to that node, as a rank in its
	// list does.
	AtTail   bool
	Emphasis Emphasis
}

// WriteDOT draws g in Graphviz's DOT language.
func WriteDOT(w io.Writer, g Graph) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "digraph cpactl {")
	if g.LeftToRight {
		fmt.Fprintln(bw, "  rankdir=LR;")
	}
	if g.Title != "" {
		fmt.Fprintf(bw, "  labelloc=t;\n  label=%s;\n", dotQuote(g.Title))
	}
	fmt.Fprintln(bw, `  node [fontname="Helvetica"];`)
	fmt.Fprintln(bw, `  edge [fontname="Helvetica"];`)
	for _, c := range g.Clusters {
		// Graphviz draws a subgraph as a box only when its ID starts
		// with "cluster".
		fmt.Fprintf(bw, "  subgraph %s {\n", dotQuote("cluster "+c.ID))
		fmt.Fprintf(bw, "    label=%s;\n", dotQuote(c.Label))
		if a := dotClusterStyle(c.Emphasis); a != "" {
			fmt.Fprintf(bw, "    %s;\n", a)
		}
		for _, n := range c.Nodes {
			writeDOTNode(bw, "    ", n)
		}
		fmt.Fprintln(bw, "  }")
	}
	for _, n := range g.Nodes {
		writeDOTNode(bw, "  ", n)
	}
	for _, e := range g.Edges {
		attrs := []string{}
		switch {
		case e.Label != "" && e.AtTail:
			attrs = append(attrs, "taillabel="+dotQuote(e.Label), "labeldistance=1.8", "labelangle=30")
			if e.Emphasis == Plain {
				attrs = append(attrs, `labelfontcolor="blue4"`)
			}
		case e.Label != "":
			// decorate ties the label to its arrow with a line: with many
			// arrows, a bare number floats between them.
			attrs = append(attrs, "label="+dotQuote(e.Label), "decorate=true")
		}
		attrs = append(attrs, dotStyle(e.Emphasis, false)...)
		fmt.Fprintf(bw, "  %s -> %s", dotQuote(e.From), dotQuote(e.To))
		if len(attrs) > 0 {
			fmt.Fprintf(bw, " [%s]", strings.Join(attrs, ", "))
		}
		fmt.Fprintln(bw, ";")
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

func writeDOTNode(bw *bufio.Writer, indent string, n Node) {
	shape := "ellipse"
	if n.Box {
		shape = "box"
	}
	attrs := append([]string{"label=" + dotQuote(strings.Join(n.Lines, "\n")), "shape=" + shape},
		dotStyle(n.Emphasis, true)...)
	fmt.Fprintf(bw, "%s%s [%s];\n", indent, dotQuote(n.ID), strings.Join(attrs, ", "))
}

func dotStyle(e Emphasis, node bool) []string {
	switch e {
	case Muted:
		return []string{`style=dashed`, `color="gray50"`, `fontcolor="gray40"`}
	case Alert:
		return []string{`color="red3"`, `fontcolor="red3"`}
	case Highlight:
		if node {
			return []string{`style="bold,filled"`, `fillcolor="palegreen"`, `penwidth=2`}
		}
		return []string{`style=bold`, `color="darkgreen"`, `penwidth=2`}
	}
	return nil
}

func dotClusterStyle(e Emphasis) string {
	switch e {
	case Muted:
		return `style=dashed; color="gray50"; fontcolor="gray40"`
	case Alert:
		return `color="red3"; fontcolor="red3"`
	case Highlight:
		return `style=bold; color="darkgreen"; penwidth=2`
	}
	return ""
}

// dotQuote quotes s as a DOT string: in DOT a backslash starts an escape
// (\n, \N, \l), so backslashes and double quotes are escaped, and a line
// break becomes \n.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", "", "\n", `\n`)
	return `"` + r.Replace(visibleLines(s)) + `"`
}

// visibleLines renders each line of s by quote.Visible, keeping the line
// breaks (a label's lines), so that a name another tool wrote cannot act
// on the terminal a picture is printed to.
func visibleLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = quote.Visible(strings.TrimSuffix(l, "\r"))
	}
	return strings.Join(lines, "\n")
}

// WriteMermaid draws g as a Mermaid flowchart.
func WriteMermaid(w io.Writer, g Graph) error {
	bw := bufio.NewWriter(w)
	if g.Title != "" {
		fmt.Fprintf(bw, "%%%% %s\n", strings.ReplaceAll(visibleLines(g.Title), "\n", " "))
	}
	dir := "TD"
	if g.LeftToRight {
		dir = "LR"
	}
	fmt.Fprintf(bw, "flowchart %s\n", dir)
	// Mermaid IDs are plain words: each cluster and node gets nN, in the
	// order drawn; names live in the quoted labels only.
	ids := map[string]string{}
	id := func(key string) string {
		if v, ok := ids[key]; ok {
			return v
		}
		v := fmt.Sprintf("n%d", len(ids))
		ids[key] = v
		return v
	}
	classes := map[Emphasis][]string{}
	for _, c := range g.Clusters {
		cid := id(c.ID)
		fmt.Fprintf(bw, "  subgraph %s[%s]\n", cid, mermaidQuote(c.Label))
		for _, n := range c.Nodes {
			nid := id(n.ID)
			fmt.Fprintf(bw, "    %s\n", mermaidNode(nid, n))
			classes[n.Emphasis] = append(classes[n.Emphasis], nid)
		}
		fmt.Fprintln(bw, "  end")
		classes[c.Emphasis] = append(classes[c.Emphasis], cid)
	}
	for _, n := range g.Nodes {
		nid := id(n.ID)
		fmt.Fprintf(bw, "  %s\n", mermaidNode(nid, n))
		classes[n.Emphasis] = append(classes[n.Emphasis], nid)
	}
	for _, e := range g.Edges {
		arrow := map[Emphasis]string{Plain: "-->", Muted: "-.->", Alert: "-->", Highlight: "==>"}[e.Emphasis]
		label := ""
		if e.Label != "" {
			label = "|" + mermaidQuote(e.Label) + "|"
		}
		fmt.Fprintf(bw, "  %s %s%s %s\n", id(e.From), arrow, label, id(e.To))
	}
	for _, c := range []struct {
		e    Emphasis
		name string
		def  string
	}{
		{Muted, "muted", "stroke-dasharray:5 5,stroke:#888,color:#666"},
		{Alert, "alert", "stroke:#c00,color:#c00"},
		{Highlight, "highlight", "fill:#cfc,stroke:#060,stroke-width:3px"},
	} {
		if len(classes[c.e]) > 0 {
			fmt.Fprintf(bw, "  classDef %s %s\n", c.name, c.def)
			fmt.Fprintf(bw, "  class %s %s\n", strings.Join(classes[c.e], ","), c.name)
		}
	}
	return bw.Flush()
}

func mermaidNode(id string, n Node) string {
	label := mermaidQuote(strings.Join(n.Lines, "\n"))
	if n.Box {
		return id + "[" + label + "]"
	}
	return id + "([" + label + "])"
}

// mermaidQuote quotes s as a Mermaid label: inside double quotes, with
// the characters Mermaid would read as markup written as its entity
// codes (#quot; and friends), and line breaks as <br/>.
func mermaidQuote(s string) string {
	r := strings.NewReplacer(`#`, "#35;", `"`, "#quot;", `<`, "#lt;", `>`, "#gt;", "\r", "", "\n", "<br/>")
	return `"` + r.Replace(visibleLines(s)) + `"`
}
