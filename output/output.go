// Package output renders command results as a table for people or as JSON
// or YAML for scripts. Every read command goes through Printer, so the three
// forms stay consistent: JSON and YAML come from the same json struct tags
// (snake_case field names, a stable contract) and tables from one style.
package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"sigs.k8s.io/yaml"
)

// Format is an output format.
type Format string

// The formats -o accepts.
const (
	Table Format = "table"
	JSON  Format = "json"
	YAML  Format = "yaml"
)

// Formats are the values -o takes, in the order help names them: what
// ParseFormat accepts and shell completion offers.
var Formats = []Format{Table, JSON, YAML}

// ParseFormat validates the value of -o.
func ParseFormat(s string) (Format, error) { return ParseFormatWith(s) }

// ParseFormatWith validates the value of -o for a command that also draws
// the pictures named (DOT, Mermaid). A picture format the command does not
// draw is refused as such.
func ParseFormatWith(s string, pictures ...Format) (Format, error) {
	f := Format(strings.ToLower(s))
	if slices.Contains(Formats, f) {
		return f, nil
	}
	for _, p := range pictures {
		if f == p {
			return f, nil
		}
	}
	switch {
	case (f == DOT || f == Mermaid) && len(pictures) == 0:
		return "", fmt.Errorf("this command draws no picture: -o %s is for `cpactl site graph` (dot, mermaid) and `cpactl resolve` (dot); use %s", f, formatList(pictures))
	case f == DOT || f == Mermaid:
		return "", fmt.Errorf("this command does not draw -o %s: use %s", f, formatList(pictures))
	}
	return "", fmt.Errorf("unknown output format %q: use %s", s, formatList(pictures))
}

// formatList names the formats a command takes: "table, json or yaml".
func formatList(pictures []Format) string {
	names := []string{string(Table), string(JSON), string(YAML)}
	for _, p := range pictures {
		names = append(names, string(p))
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Printer writes results in one format.
type Printer struct {
	Format Format
	Out    io.Writer
}

// Print writes v as JSON or YAML, or calls table to write the table form.
func (p Printer) Print(v any, table func(w io.Writer) error) error {
	switch p.Format {
	case JSON:
		return WriteJSON(p.Out, v)
	case YAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = p.Out.Write(b)
		return err
	default:
		return table(p.Out)
	}
}

// PrintLazy is Print for a value that costs something to build (a view
// of 250,000 records): view is called only for JSON and YAML.
func (p Printer) PrintLazy(view func() any, table func(w io.Writer) error) error {
	if p.Format == JSON || p.Format == YAML {
		return p.Print(view(), table)
	}
	return table(p.Out)
}

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Rows writes a plain, borderless table (kubectl style: upper-case header,
// columns separated by spaces) that reads well and greps well.
//
// A table of more than largeTable rows is laid out by plainRows with the
// same look (tablewriter spends about 30 µs a row, 7 s for the 250,000
// sessions of a CPA-maximum federation); a test keeps the two identical.
// (One difference remains: plainRows counts characters, so double-width
// letters such as CJK ones shift a large table's columns.)
func Rows(w io.Writer, header []string, rows [][]string) error {
	if len(rows) > largeTable {
		return plainRows(w, header, rows)
	}
	return tableRows(w, header, rows)
}

// largeTable is the row count above which Rows uses plainRows.
var largeTable = 5000

// plainRows lays out the table as text/tabwriter would (header
// upper-cased, each column as wide as its widest cell in characters plus
// two spaces, no trailing blanks), in two passes: widths, then lines.
func plainRows(w io.Writer, header []string, rows [][]string) error {
	upper := make([]string, len(header))
	for i, h := range header {
		upper[i] = strings.ToUpper(h)
	}
	clean := func(c string) string {
		if strings.IndexByte(c, '\t') >= 0 {
			return strings.ReplaceAll(c, "\t", " ")
		}
		return c
	}
	// The last cell of a line is not aligned: only the others set widths.
	var widths []int
	measure := func(cells []string) {
		for i := 0; i < len(cells)-1; i++ {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(clean(cells[i])))
		}
	}
	measure(upper)
	for _, r := range rows {
		measure(r)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var line []byte
	write := func(cells []string) {
		line = line[:0]
		for i, c := range cells {
			c = clean(c)
			line = append(line, c...)
			if i < len(cells)-1 {
				for pad := widths[i] - utf8.RuneCountInString(c) + 2; pad > 0; pad-- {
					line = append(line, ' ')
				}
			}
		}
		line = bytes.TrimRight(line, " ")
		line = append(line, '\n')
		bw.Write(line)
	}
	write(upper)
	for _, r := range rows {
		write(r)
	}
	return bw.Flush()
}

func tableRows(w io.Writer, header []string, rows [][]string) error {
	var buf bytes.Buffer
	t := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.On),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}),
		tablewriter.WithTrimSpace(tw.Off),
	)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	if err := t.Render(); err != nil {
		return err
	}
	// The padding leaves trailing blanks on the last column.
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line == "" {
			continue
		}
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// Fields writes "key: value" lines with aligned values, for show commands.
func Fields(w io.Writer, pairs [][2]string) error {
	width := 0
	for _, p := range pairs {
		if len(p[0]) > width {
			width = len(p[0])
		}
	}
	for _, p := range pairs {
		if _, err := fmt.Fprintf(w, "%-*s  %s\n", width+1, p[0]+":", p[1]); err != nil {
			return err
		}
	}
	return nil
}
