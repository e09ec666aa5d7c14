package directory

import (
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapconn"
)

// The live connection, its errors and the interrupt control are package
// ldapconn's (the transport: the connection, the bulk connection that
// streams searches and pipelines a transaction's requests, replicas and
// failover, stopping on an interrupt); here under the names the rest of
// cpactl uses.
type (
	// Conn is a live directory connection (ldapconn.Conn).
	Conn = ldapconn.Conn
	// Options says how to reach and bind to a server.
	Options = ldapconn.Options
	// Request is one write request as the transport sends it.
	Request = ldapconn.Request
	// NoAnswerError says the server did not answer a request in time.
	NoAnswerError = ldapconn.NoAnswerError
	// ClosedError says the server closed the connection before answering.
	ClosedError = ldapconn.ClosedError
	// AuthError says the bind failed (exit code 4).
	AuthError = ldapconn.AuthError
	// CAFileError is a --ca-file that cannot be used.
	CAFileError = ldapconn.CAFileError
	// OutcomeUnknownError says a write got no answer (exit code 7).
	OutcomeUnknownError = ldapconn.OutcomeUnknownError
	// LayoutError says the federation's layout is not where the base says.
	LayoutError = ldapconn.LayoutError
	// ChangeState is the progress of this process's changes, as an
	// interrupt finds them.
	ChangeState = ldapconn.ChangeState
	// InterruptedError says a change stopped on an interrupt (exit code 130).
	InterruptedError = ldapconn.InterruptedError
	// PartialError says a change written in steps stopped part way (exit
	// code 8).
	PartialError = ldapconn.PartialError
)

// The states StopChanges reports (ldapconn's).
const (
	NoChange         = ldapconn.NoChange
	ChangeComplete   = ldapconn.ChangeComplete
	ChangeInProgress = ldapconn.ChangeInProgress
	TransactionOpen  = ldapconn.TransactionOpen
	CommitInProgress = ldapconn.CommitInProgress
)

// PageSize is how many entries each page of a streamed search asks for.
const PageSize = ldapconn.PageSize

// ErrMoveInTransaction refuses a move inside a transaction.
var ErrMoveInTransaction = ldapconn.ErrMoveInTransaction

// Dial connects to the first reachable URL of opts and binds.
func Dial(opts Options) (*Conn, error) { return ldapconn.Dial(opts) }

// CommitInFlight reports whether a transaction is being committed.
func CommitInFlight() bool { return ldapconn.CommitInFlight() }

// AssertionControl returns the RFC 4528 assertion control for filter.
func AssertionControl(filter string) (ldap.Control, error) { return ldapconn.AssertionControl(filter) }

// StopChanges asks the changes in progress to stop where the directory is
// consistent.
func StopChanges() ChangeState { return ldapconn.StopChanges() }

// ResetChanges forgets the changes made and a stop asked for.
func ResetChanges() { ldapconn.ResetChanges() }

// Stopped reports whether StopChanges was called.
func Stopped() bool { return ldapconn.Stopped() }

// StopWait bounds how long a change takes to stop after StopChanges.
func StopWait() time.Duration { return ldapconn.StopWait() }
