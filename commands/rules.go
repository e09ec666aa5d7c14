package commands

import (
	"errors"

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
