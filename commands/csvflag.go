package commands

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// csvQuoting is what the help of every list flag says about names holding
// a comma or a quote.
const csvQuoting = `quote a value holding a comma or a quote as CSV does: '"Paris, FR",London'`

// csvList is the value of a flag that takes a comma-separated list (A,B,C),
// read as one CSV record, as pflag's StringSlice reads it: a value with a
// comma or a quote is quoted ("Paris, FR"), a quote inside quotes doubled;
// blanks after a comma are ignored. Repeating the flag adds to the list.
// Unlike StringSlice, a value it cannot read is refused with a message that
// says how to quote.
type csvList struct {
	name    string
	values  *[]string
	changed bool
}

// csvListVar defines a list flag name on fs, stored in p. The usage gets
// the quoting rule appended.
func csvListVar(fs *pflag.FlagSet, p *[]string, name, usage string) {
	fs.Var(&csvList{name: name, values: p}, name, usage+"; "+csvQuoting)
}

func (c *csvList) Set(s string) error {
	r := csv.NewReader(strings.NewReader(s))
	r.TrimLeadingSpace = true
	var values []string
	if s != "" {
		rec, err := r.Read()
		if err == nil {
			if _, next := r.Read(); next != io.EOF { // a second line was dropped
				err = errors.New("a newline outside quotes")
			}
		}
		if err != nil {
			return fmt.Errorf("not a comma-separated list (%v): quote a value holding a comma or a quote, and double a quote inside quotes, e.g. --%s '\"Paris, FR\",London'", err, c.name)
		}
		// One empty field (" ", `""`) is the empty list, as "" is: String
		// writes both alike, and no list holds a name "".
		if len(rec) > 1 || rec[0] != "" {
			values = rec
		}
	}
	if !c.changed {
		*c.values = values
		c.changed = true
	} else {
		*c.values = append(*c.values, values...)
	}
	return nil
}

// Type is the name help shows after the flag, as for StringSlice.
func (c *csvList) Type() string { return "strings" }

// String writes the list back as CSV, "[a,b]" as StringSlice does, and
// an empty list as "" (so that help shows no default).
func (c *csvList) String() string {
	if c.values == nil || len(*c.values) == 0 {
		return ""
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(*c.values)
	w.Flush()
	return "[" + strings.TrimSuffix(b.String(), "\n") + "]"
}
