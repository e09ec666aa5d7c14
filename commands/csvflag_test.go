package commands

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestCSVList(t *testing.T) {
	tests := []struct {
		name string
		args []string // one per flag given
		want []string
		err  string
	}{
		{"plain", []string{"UK,US"}, []string{"UK", "US"}, ""},
		{"a quoted comma", []string{`"Paris, FR",London`}, []string{"Paris, FR", "London"}, ""},
		{"a blank after the comma", []string{`UK, "Paris, FR"`}, []string{"UK", "Paris, FR"}, ""},
		{"a doubled quote", []string{`"say ""hi""",UK`}, []string{`say "hi"`, "UK"}, ""},
		{"repeated flags add up", []string{"UK", "US,India"}, []string{"UK", "US", "India"}, ""},
		{"empty", []string{""}, nil, ""},
		{"blank is empty too", []string{" "}, nil, ""},
		{"so is one quoted empty name", []string{`""`}, nil, ""},
		{"an unclosed quote", []string{`"Paris, FR,London`}, nil, `--set '"Paris, FR",London'`},
		{"a bare quote", []string{`Pa"ris`}, nil, "double a quote inside quotes"},
		{"a second line (was dropped)", []string{"UK\nUS"}, nil, "a newline outside quotes"},
		{"a newline in quotes", []string{"\"U\nK\",US\n"}, []string{"U\nK", "US"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			fs.SetOutput(&bytes.Buffer{})
			got := []string{"default"}
			csvListVar(fs, &got, "set", "the list")
			var args []string
			for _, a := range tc.args {
				args = append(args, "--set="+a)
			}
			err := fs.Parse(args)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
			case !slices.Equal(got, tc.want):
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestListFlagsExplainQuoting: every list flag of cpactl is a csvList whose
// help says how to quote (the connection URLs excepted: a URL holds no
// comma), and none is pflag's StringSlice, whose errors do not say.
func TestListFlagsExplainQuoting(t *testing.T) {
	g := &Globals{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}}
	lists := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			switch f.Value.(type) {
			case *csvList:
				lists++
				if !strings.Contains(f.Usage, `'"Paris, FR",London'`) {
					t.Errorf("%s --%s: the help does not say how to quote", c.CommandPath(), f.Name)
				}
			default:
				if f.Value.Type() == "stringSlice" && f.Name != "url" && f.Name != "ldap-url" {
					t.Errorf("%s --%s is a StringSlice: use csvListVar", c.CommandPath(), f.Name)
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand(g))
	if lists < 6 {
		t.Errorf("found %d list flags, want at least 6", lists)
	}
}

func TestListFlagErrorSaysHowToQuote(t *testing.T) {
	code, _, errOut := run(t, "site", "preferred", "India", "--set", `"Paris, FR,London`)
	if code != ExitError {
		t.Fatalf("exit %d, want 1", code)
	}
	assertOneLineError(t, errOut, `e.g. --set '"Paris, FR",London'`)
}
