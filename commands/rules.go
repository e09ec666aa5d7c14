package commands

import (
	"errors"
	"strings"

	"github.com/cpactl/cpactl/rules"
)

// refused turns a rule's refusal (a *rules.Error) into the command's
// error: exit 1, with the rule's hint. Other errors, and nil, pass as they
// are.
func refused(err error) error {
	var re *rules.Error
	if errors.As(err, &re) {
		return &Failure{Code: ExitError, Err: re, Hint: re.Hint}
	}
	return err
}

// attrWords lists attributes as the flags name them: "capacity, description".
func attrWords(attrs []string) string {
	words := make([]string, len(attrs))
	for i, a := range attrs {
		words[i] = attrWord(a)
	}
	return strings.Join(words, ", ")
}

// countersNote says when a repeated create left different live counters
// alone.
func countersNote(r rules.Repeat) string {
	if !r.CountersDiffer {
		return ""
	}
	return " (live counters left as they are)"
}
