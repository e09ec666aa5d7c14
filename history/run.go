// Package history is the federation's history as pure logic: the run a
// write belongs to (the request control cpactl attaches to every write),
// the records of slapd's accesslog overlay decoded into changes in
// cpactl's words, grouped by run, and the plans that take them back
// (`history undo`, `--at`). It speaks no LDAP and knows no cobra: package
// directory reads the log and hands its entries over as plain values
// (docs/history.md).
package history

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// Run identifies one cpactl command run. Every write the run sends carries
// it in a non-critical request control (ldapschema.OIDRunControl), which
// the accesslog overlay keeps in reqControls: the log groups the writes of
// one command by it.
type Run struct {
	// ID is random, 12 hex digits: what `history --run` and `history
	// undo` take.
	ID string `json:"run"`
	// Command is the command line, without the flags that take a password
	// or a secret file (and their values).
	Command string `json:"cmd"`
	// Version is cpactl's version.
	Version string `json:"version"`
	// Txn numbers the transactions of the run from 1 (0: a write sent
	// alone): the writes of a transaction stand or fall together.
	Txn int `json:"txn,omitempty"`
}

// runIDLength is the length of a run ID in hex digits.
const runIDLength = 12

// NewRunID returns a fresh random run ID.
func NewRunID() string {
	b := make([]byte, runIDLength/2)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// CheckRunID says whether id is written as a run ID is.
func CheckRunID(id string) error {
	if len(id) != runIDLength {
		return fmt.Errorf("a run ID has %d hex digits", runIDLength)
	}
	if _, err := hex.DecodeString(id); err != nil {
		return errors.New("a run ID is hex digits")
	}
	return nil
}

// Value is the control's value: the run as JSON.
func (r Run) Value() []byte {
	b, _ := json.Marshal(r) // strings only: cannot fail
	return b
}

// ParseRun reads a control's value back.
func ParseRun(value []byte) (Run, error) {
	var r Run
	if err := json.Unmarshal(value, &r); err != nil {
		return Run{}, fmt.Errorf("run control: %v", err)
	}
	if err := CheckRunID(r.ID); err != nil {
		return Run{}, fmt.Errorf("run control: %v", err)
	}
	return r, nil
}
