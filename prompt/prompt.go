// Package prompt asks an administrator questions on the terminal. Commands
// depend on the small Prompter interface; Survey implements it with
// github.com/AlecAivazis/survey/v2, and tests can supply their own.
package prompt

import (
	"errors"
	"io"
	"os"

	"github.com/AlecAivazis/survey/v2"
	"github.com/AlecAivazis/survey/v2/terminal"
	"golang.org/x/term"

	"github.com/cpactl/cpactl/quote"
)

// ErrInterrupted is returned when the administrator presses Ctrl-C at a
// prompt (exit code 130).
var ErrInterrupted = errors.New("interrupted")

// Prompter asks questions.
type Prompter interface {
	// Confirm asks a yes/no question.
	Confirm(message string, def bool) (bool, error)
	// Select asks to pick one of options.
	Select(message string, options []string, def string) (string, error)
	// Password reads a secret without echo.
	Password(message string) (string, error)
}

// Survey is the terminal Prompter. Prompts are drawn on Err (stderr), so
// that stdout keeps only results. Messages and options are shown rendered
// by quote.Visible (they hold names from the directory); Select answers
// the option as given.
type Survey struct {
	In  *os.File
	Out *os.File
	Err io.Writer
}

// Interactive reports whether both stdin and stdout are terminals: cpactl
// prompts only then (docs/conventions.md).
func Interactive(in, out any) bool {
	fi, ok1 := in.(*os.File)
	fo, ok2 := out.(*os.File)
	return ok1 && ok2 && term.IsTerminal(int(fi.Fd())) && term.IsTerminal(int(fo.Fd()))
}

func (s Survey) opts() []survey.AskOpt {
	out := s.Out
	if f, ok := s.Err.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		out = f
	}
	return []survey.AskOpt{survey.WithStdio(s.In, out, s.Err)}
}

func mapErr(err error) error {
	if errors.Is(err, terminal.InterruptErr) {
		return ErrInterrupted
	}
	return err
}

// Confirm implements Prompter.
func (s Survey) Confirm(message string, def bool) (bool, error) {
	var ok bool
	err := survey.AskOne(&survey.Confirm{Message: quote.Visible(message), Default: def}, &ok, s.opts()...)
	return ok, mapErr(err)
}

// Select implements Prompter.
func (s Survey) Select(message string, options []string, def string) (string, error) {
	shown := make([]string, len(options))
	for i, o := range options {
		shown[i] = quote.Visible(o)
	}
	q := &survey.Select{Message: quote.Visible(message), Options: shown}
	if def != "" {
		q.Default = quote.Visible(def)
	}
	var choice int // the index: what is shown may differ from the option
	if err := survey.AskOne(q, &choice, append(s.opts(), survey.WithPageSize(15))...); err != nil {
		return "", mapErr(err)
	}
	return options[choice], nil
}

// Password implements Prompter.
func (s Survey) Password(message string) (string, error) {
	var pw string
	err := survey.AskOne(&survey.Password{Message: quote.Visible(message)}, &pw, s.opts()...)
	return pw, mapErr(err)
}

// TerminalPassword reads a password from the controlling terminal
// (/dev/tty), as OpenLDAP's -W does, so it works even when stdin and stdout
// are redirected. The prompt goes to the terminal too.
func TerminalPassword(message string) (string, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return "", errors.New("-W needs a terminal to prompt on: use -y FILE or CPACTL_BIND_PASSWORD in scripts")
	}
	defer tty.Close()
	if _, err := io.WriteString(tty, quote.Visible(message)+" "); err != nil {
		return "", err
	}
	pw, err := term.ReadPassword(int(tty.Fd()))
	_, _ = io.WriteString(tty, "\n")
	if err != nil {
		return "", err
	}
	return string(pw), nil
}
