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
	"os"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"golang.org/x/term"
	"sigs.k8s.io/yaml"

	"github.com/cpactl/cpactl/quote"
)

// Format is an output format.
type Format string

// The formats -o accepts. Wide is the table with no cell wrapped, however
// wide the terminal.
const (
	Table Format = "table"
	Wide  Format = "wide"
	JSON  Format = "json"
	YAML  Format = "yaml"
)

// Formats are the values -o takes, in the order help names them: what
// ParseFormat accepts and shell completion offers.
var Formats = []Format{Table, Wide, JSON, YAML}

// FormatUsage is the help of every -o flag.
const FormatUsage = "output format: table (cells wrap to fit a terminal), wide (nothing wrapped), json or yaml"

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

// formatList names the formats a command takes: "table, wide, json or yaml".
func formatList(pictures []Format) string {
	names := make([]string, 0, len(Formats)+len(pictures))
	for _, f := range append(slices.Clone(Formats), pictures...) {
		names = append(names, string(f))
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Printer writes results in one format.
type Printer struct {
	Format Format
	Out    io.Writer
	// Width is the width of the terminal Out is, 0 when it is none (a pipe,
	// a file) or its width is unknown. A table's cells wrap to fit it
	// (Format Table only); with 0, tables are never wrapped, so that what
	// scripts read does not depend on a terminal.
	Width int
}

// fitted is the writer a table function gets when its table must fit a
// terminal of width columns: Rows wraps cells then.
type fitted struct {
	io.Writer
	width int
}

// TerminalWidth returns the width of the terminal w is, or 0 when w is
// not a terminal or its size is unknown.
func TerminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		return 0
	}
	return width
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
	case Table:
		if p.Width > 0 {
			return table(&fitted{Writer: p.Out, width: p.Width})
		}
		return table(p.Out)
	case Wide:
		return table(wideOut{p.Out})
	default:
		return table(p.Out)
	}
}

// wideOut is the writer a table function gets with -o wide: RowsWide
// shows every column then.
type wideOut struct{ io.Writer }

// RowsWide is Rows for a table some of whose columns (wide marks them)
// only -o wide shows: the default table leaves them out, so that its lines
// stay within about 100 columns (docs/conventions.md).
func RowsWide(w io.Writer, header []string, wide []bool, rows [][]string) error {
	if ww, ok := w.(wideOut); ok {
		return Rows(ww.Writer, header, rows)
	}
	keep := func(cells []string) []string {
		out := make([]string, 0, len(cells))
		for i, c := range cells {
			if i >= len(wide) || !wide[i] {
				out = append(out, c)
			}
		}
		return out
	}
	narrow := make([][]string, len(rows))
	for i, r := range rows {
		narrow[i] = keep(r)
	}
	return Rows(w, keep(header), narrow)
}

// PrintLazy is Print for a value that costs something to build (a view
// of 250,000 records): view is called only for JSON and YAML.
func (p Printer) PrintLazy(view func() any, table func(w io.Writer) error) error {
	if p.Format == JSON || p.Format == YAML {
		return p.Print(view(), table)
	}
	return p.Print(nil, table)
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
//
// When w comes from a Printer with a terminal width, the table is fitted
// to it: tablewriter wraps long cells at word boundaries. A large table is
// never wrapped (wrapping is tablewriter's, at its cost per row).
func Rows(w io.Writer, header []string, rows [][]string) error {
	return RowsKeeping(w, header, nil, rows)
}

// RowsKeeping is Rows with the header cells at the indexes keep marks
// shown as given rather than upper-cased: names such as file names
// (`diff OLD NEW` heads its columns with them), which upper case, or
// tablewriter's turning dots into blanks, would change.
func RowsKeeping(w io.Writer, header []string, keep []bool, rows [][]string) error {
	if ww, ok := w.(wideOut); ok {
		w = ww.Writer
	}
	header, rows = visibleCells(headerCells(header, keep), rows)
	width := 0
	if f, ok := w.(*fitted); ok {
		w, width = f.Writer, f.width
	}
	if len(rows) > largeTable {
		return plainRows(w, header, rows)
	}
	return tableRows(w, header, rows, width)
}

// headerCells formats a header: each cell upper-cased as tablewriter
// titles it (underscores and dots between letters read as blanks), but
// those keep marks, shown as given.
func headerCells(header []string, keep []bool) []string {
	shown := make([]string, len(header))
	for i, h := range header {
		if i < len(keep) && keep[i] {
			shown[i] = h
		} else {
			shown[i] = tw.Title(h)
		}
	}
	return shown
}

// visibleCells returns the header and rows with every cell rendered by
// quote.Visible (control characters, bidi overrides and the like written
// as escapes), so that a value another tool wrote cannot act on the
// terminal, and the widths are those of what is printed. The slices given
// are not changed; a row is copied only when one of its cells changes.
func visibleCells(header []string, rows [][]string) ([]string, [][]string) {
	header, _ = visibleRow(header)
	copied := false
	for i, r := range rows {
		v, changed := visibleRow(r)
		if !changed {
			continue
		}
		if !copied {
			rows, copied = slices.Clone(rows), true
		}
		rows[i] = v
	}
	return header, rows
}

// visibleRow returns cells rendered by quote.Visible, and whether one
// changed (cells itself is returned when none does).
func visibleRow(cells []string) ([]string, bool) {
	out, changed := cells, false
	for i, c := range cells {
		v := quote.Visible(c)
		if v == c {
			continue
		}
		if !changed {
			out, changed = slices.Clone(cells), true
		}
		out[i] = v
	}
	return out, changed
}

// largeTable is the row count above which Rows uses plainRows.
var largeTable = 5000

// plainRows lays out the table as text/tabwriter would (the header as
// Rows formatted it, each column as wide as its widest cell in characters plus
// two spaces, no trailing blanks), in two passes: widths, then lines.
func plainRows(w io.Writer, header []string, rows [][]string) error {
	upper := header
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

// tableRows lays the table out with tablewriter; width, when not 0, is the
// width the lines must fit in, long cells wrapped.
func tableRows(w io.Writer, header []string, rows [][]string, width int) error {
	var buf bytes.Buffer
	wrap, widths := tw.WrapNone, fit(header, rows, width)
	if widths != nil {
		wrap = tw.WrapNormal
	}
	t := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off), // Rows formats the header
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(wrap),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithColumnWidths(widths),
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

// columnGap is the blank between two columns of a table.
const columnGap = 2

// fit returns the widths (with the gap) the columns of a table must keep to
// for its lines to fit in width columns, or nil when they fit as they are
// (or width is 0): the table is then laid out exactly as when not fitted.
// The columns narrower than a fair share of the width keep theirs; the
// others are cut to one width (and wrap), none narrower than its header
// (which does not wrap) or its longest word (a wrap never cuts a word). A
// terminal too narrow for that gets lines longer than its width.
func fit(header []string, rows [][]string, width int) tw.Mapper[int, int] {
	if width <= 0 || len(header) == 0 {
		return nil
	}
	natural := make([]int, len(header))
	least := make([]int, len(header))
	for i, h := range header {
		natural[i] = twwidth.Width(h)
		least[i] = natural[i]
	}
	for _, r := range rows {
		for i, c := range r {
			if i >= len(natural) {
				continue
			}
			if w := twwidth.Width(c); w > natural[i] {
				natural[i] = w
			}
			if w := longestWord(c); w > least[i] {
				least[i] = w
			}
		}
	}
	avail := width - columnGap*(len(header)-1) // the last column's gap is trimmed
	total := 0
	for _, n := range natural {
		total += n
	}
	if total <= avail {
		return nil
	}
	// Water-filling: the widest level L such that the columns, each as wide
	// as L but within its least and natural widths, fit in avail.
	given := make([]int, len(header))
	at := func(level int) int {
		sum := 0
		for i := range natural {
			given[i] = min(natural[i], max(least[i], level))
			sum += given[i]
		}
		return sum
	}
	lo, hi := 0, avail // at(lo) may exceed avail only when the least widths do
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if at(mid) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	at(lo)
	widths := tw.NewMapper[int, int]()
	for i := range given {
		if given[i] < natural[i] {
			widths.Set(i, given[i]+columnGap)
		}
	}
	return widths
}

// longestWord returns the width of the widest word of s.
func longestWord(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		n = max(n, twwidth.Width(w))
	}
	return n
}

// Fields writes "key: value" lines with aligned values, for show commands;
// keys and values are rendered by quote.Visible, as table cells are.
func Fields(w io.Writer, pairs [][2]string) error {
	width := 0
	for _, p := range pairs {
		width = max(width, utf8.RuneCountInString(quote.Visible(p[0])))
	}
	for _, p := range pairs {
		if _, err := fmt.Fprintf(w, "%-*s  %s\n", width+1, quote.Visible(p[0])+":", quote.Visible(p[1])); err != nil {
			return err
		}
	}
	return nil
}

// Fprintf is fmt.Fprintf for a plain line (a result, a warning, a trace):
// every argument that prints as text (a string, an error, a Stringer, a
// list) is rendered by quote.Visible under %s and %v, so that a name or
// value from the directory or a file cannot act on the terminal, while
// the format's own newlines stay. %q quotes and escapes by itself and is
// left alone; numbers are too.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return fmt.Fprintf(w, format, visibleArgs(args)...)
}

// visibleArgs wraps the arguments that print as text in visibleArg.
func visibleArgs(args []any) []any {
	out := args
	for i, a := range args {
		if !printsText(a) {
			continue
		}
		if len(out) > 0 && &out[0] == &args[0] {
			out = slices.Clone(args)
		}
		out[i] = visibleArg{a}
	}
	return out
}

// printsText reports whether a prints as text that may hold a value
// (numbers, booleans and pointers do not).
func printsText(a any) bool {
	switch a.(type) {
	case nil:
		return false
	case error, fmt.Stringer:
		return true
	}
	switch reflect.ValueOf(a).Kind() {
	case reflect.String, reflect.Slice, reflect.Array, reflect.Map, reflect.Struct, reflect.Interface:
		return true
	}
	return false
}

// visibleArg formats its value as fmt would, rendered by quote.Visible
// under %s and %v (without the # flag); a width pads what is shown.
type visibleArg struct{ v any }

func (a visibleArg) Format(f fmt.State, verb rune) {
	directive := fmt.FormatString(f, verb)
	switch {
	case verb != 's' && verb != 'v' || f.Flag('#'):
		fmt.Fprintf(f, directive, a.v)
	case f.Flag('+'):
		io.WriteString(f, quote.Visible(fmt.Sprintf(directive, a.v)))
	default:
		fmt.Fprintf(f, directive, quote.Visible(fmt.Sprint(a.v)))
	}
}
