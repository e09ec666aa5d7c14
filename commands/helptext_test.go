package commands

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelpSaysTheRuleItself: no command's help cites the specification
// ("SPEC", a section sign): an administrator reads the rule, not a pointer
// to a document they do not have.
func TestHelpSaysTheRuleItself(t *testing.T) {
	g := &Globals{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}}
	var walk func(c *cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		seen++
		for _, text := range []string{c.Short, c.Long, c.Example} {
			for _, word := range []string{"SPEC", "§"} {
				if strings.Contains(text, word) {
					t.Errorf("%s: help mentions %q", c.CommandPath(), word)
				}
			}
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "SPEC") || strings.Contains(f.Usage, "§") {
				t.Errorf("%s --%s: usage cites the specification", c.CommandPath(), f.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand(g))
	if seen < 50 {
		t.Fatalf("walked only %d commands", seen)
	}
}
