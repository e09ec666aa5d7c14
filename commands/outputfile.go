package commands

import (
	"errors"
	"io/fs"

	"github.com/cpactl/cpactl/internal/osfile"
)

// outputHint is the advice of every -O that cannot be written.
const outputHint = "pass -O a file in a writable directory with space left, or leave -O out to write to standard output"

// createOutput starts writing the file of -O (docs/conventions.md, "Output
// files"): a regular file, or a missing one, is replaced atomically when
// Commit is called (a symbolic link is followed to the file it names); a
// device or a fifo is written in place, never replaced. perm is the mode
// of a file it makes.
func createOutput(path string, perm fs.FileMode) (*osfile.Output, error) {
	out, err := osfile.Create(path, osfile.Options{Perm: perm})
	if err != nil {
		return nil, outputFailed(err)
	}
	return out, nil
}

// outputFailed gives a failed write of -O its hint (exit 1); any other
// error (a read of the directory that failed) is returned as it is.
func outputFailed(err error) error {
	var we *osfile.WriteError
	if errors.As(err, &we) {
		return errorf(outputHint, "%v", we)
	}
	return err
}
