package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/history"
	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/internal/ldapuri"
	"github.com/cpactl/cpactl/internal/pager"
	"github.com/cpactl/cpactl/prompt"
)

// Exit codes (docs/conventions.md). `cpactl help exit-codes` prints this table.
const (
	ExitOK          = 0   // success
	ExitError       = 1   // error: bad input, unreachable server, refused operation
	ExitDiff        = 2   // differences found (diff, schema check, lint with findings)
	ExitNotFound    = 3   // a named object does not exist
	ExitAuth        = 4   // authentication failed or access refused
	ExitConflict    = 5   // someone else changed the object first
	ExitNoSession   = 6   // resolve: the request would get no session
	ExitUnknown     = 7   // a write's outcome is unknown (no answer came)
	ExitPartial     = 8   // partly written, consistent: run the command again to finish
	ExitInterrupted = 130 // interrupted
)

var exitCodeHelp = []struct {
	code int
	text string
}{
	{ExitOK, "success"},
	{ExitError, "error: bad input (the message names the flag or value), a server that cannot be reached, closes the connection or does not answer within --timeout, refused operation; nothing was written (also when a write's answer was lost and a re-read shows it was not applied: \"not written\")"},
	{ExitDiff, "differences found: `diff`, `schema check`, `lint` with findings, `impact` when a request moves; `status`: a replica unreachable, lagging, or holding other entries than the provider with its contextCSN; `apply --wait-replicas`: the change is written, but a replica has not caught up when the wait ends, or holds entries the provider does not; `horizon push`: writes to make, and no --yes"},
	{ExitNotFound, "a named object (site, pod, user, entitlement, ...) does not exist, or the base DN (-b) or the layout `cpactl init` creates; a Horizon server without an API the federation needs (404)"},
	{ExitAuth, "authentication failed or access refused (bind, insufficient access: the line names the bound identity and its roles, the object and the role that would allow it; what the server hides from an anonymous connection; a Horizon login or privilege refused)"},
	{ExitConflict, "conflict: someone else changed the object first (for `horizon push`: in Horizon, between the plan and the write; for `history undo`: an object the run changed was changed again after it); re-read and retry"},
	{ExitNoSession, "resolve: the request would get no session (DENIED, UNAVAILABLE, NO_CAPACITY)"},
	{ExitUnknown, "a write's outcome is unknown: it was sent, no answer came, and a re-read on a fresh connection could not tell (check with `cpactl diff`); when the re-read finds the write in place the command succeeds (exit 0) with a note on stderr; for `horizon push`, also a write Horizon accepted that reading it back does not show"},
	{ExitPartial, "partly written: a change made in steps (several transactions, or the moves of deleted subtrees) stopped part way, on an error or an interrupt; the steps before it are written and the directory is consistent: run the command again to finish (the message names the step and why it stopped)"},
	{ExitInterrupted, "interrupted (Ctrl-C, SIGTERM) with nothing more written: a transaction being sent is aborted and its answer awaited first; a commit in flight is awaited, and when it completes the change the command exits 0 with a note"},
}

// Failure carries an exit code, the one-line error and an optional hint.
// A nil Err with a code means "the output already said it" (exit 2 or 6).
type Failure struct {
	Code int
	Err  error
	Hint string
}

func (e *Failure) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Failure) Unwrap() error { return e.Err }

// errorf returns an exit-1 error with a hint.
func errorf(hint string, format string, args ...any) error {
	return &Failure{Code: ExitError, Err: fmt.Errorf(format, args...), Hint: hint}
}

// silentExit ends the command with code after its output said why.
func silentExit(code int) error { return &Failure{Code: code} }

// ExitCode maps an error to its exit code: the one place where that happens.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *Failure
	if errors.As(err, &ee) {
		return ee.Code
	}
	var nf *ldapclient.NotFoundError
	var bnf *broker.NotFoundError
	var layout *ldapconn.LayoutError
	var conflict *ldapclient.ConflictError
	var auth *ldapconn.AuthError
	var refused *directory.RefusedError
	var unknown *ldapconn.OutcomeUnknownError
	var notWritten *directory.NotWrittenError
	var partial *ldapconn.PartialError
	var interrupted *ldapconn.InterruptedError
	var hzAuth *horizon.AuthError
	var hzNotFound *horizon.NotFoundError
	var hzUnknownPod *horizon.UnknownPodError
	var behind *directory.ReplicasBehindError
	var hzChanged *horizon.ChangedError
	var hzNotWritten *horizon.NotWrittenError
	var hzUnknown *horizon.OutcomeUnknownError
	var hzLost *horizon.LostAnswerError
	var changedAgain *history.ChangedAgainError
	switch {
	case errors.Is(err, pager.ErrClosed):
		return ExitOK // the reader quit the pager before the output ended
	case errors.Is(err, pager.ErrInterrupted):
		return ExitInterrupted
	case errors.As(err, &behind):
		return ExitDiff // written; a replica differs from the provider
	case errors.As(err, &hzChanged):
		return ExitConflict
	case errors.As(err, &hzNotWritten):
		return ExitError // a read back shows nothing was applied
	case errors.As(err, &hzUnknown), errors.As(err, &hzLost):
		return ExitUnknown
	case errors.As(err, &notWritten) && errors.As(err, &partial):
		return ExitPartial // the step in doubt was not written, those before it were
	case errors.As(err, &notWritten):
		return ExitError // a re-read shows nothing was applied
	case errors.As(err, &unknown):
		return ExitUnknown
	case errors.As(err, &partial):
		return ExitPartial
	case errors.Is(err, prompt.ErrInterrupted), errors.As(err, &interrupted), errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &hzUnknownPod), errors.As(err, &hzNotFound):
		return ExitNotFound
	case errors.As(err, &hzAuth):
		return ExitAuth
	case errors.As(err, &nf), errors.As(err, &bnf), errors.As(err, &layout):
		return ExitNotFound
	case errors.As(err, &conflict), errors.As(err, &changedAgain):
		return ExitConflict
	case errors.As(err, &auth), errors.As(err, &refused):
		return ExitAuth
	}
	switch {
	case directory.IsAccessRefused(err):
		return ExitAuth
	case directory.IsNoSuchObject(err):
		return ExitNotFound
	case directory.IsAssertionFailed(err):
		return ExitConflict
	}
	return ExitError
}

// hintOf returns the hint attached to err, if any.
func hintOf(err error) string {
	var ee *Failure
	if errors.As(err, &ee) && ee.Hint != "" {
		return ee.Hint
	}
	var conflict *ldapclient.ConflictError
	if errors.As(err, &conflict) {
		if conflict.Replica != "" {
			return "this command read from the replica " + conflict.Replica + ", which may not have caught up with the provider yet: check with `cpactl status`, then apply your change again (or list the provider first in -H)"
		}
		return "re-read the object and apply your change again"
	}
	var pagerRun *pager.RunError
	if errors.As(err, &pagerRun) {
		return "set CPACTL_PAGER or PAGER to a pager on PATH, or pass --no-pager"
	}
	var changedAgain *history.ChangedAgainError
	if errors.As(err, &changedAgain) {
		hint := "see what changed it with `cpactl history`, and undo the later run first if it should go too"
		if changedAgain.Later != "" {
			hint = "see what changed it with `cpactl history --run " + changedAgain.Later + "`, and undo that run first if it should go too"
		}
		return hint
	}
	var noHistory *directory.NoHistoryError
	if errors.As(err, &noHistory) {
		return noHistory.Hint()
	}
	var tooOld *directory.TooOldError
	if errors.As(err, &tooOld) {
		return tooOld.Hint()
	}
	var re *broker.RequestError
	if errors.As(err, &re) {
		return re.Hint
	}
	var nf *ldapclient.NotFoundError
	if errors.As(err, &nf) {
		return nf.Hint()
	}
	var bnf *broker.NotFoundError
	if errors.As(err, &bnf) {
		return bnf.Hint()
	}
	var layout *ldapconn.LayoutError
	if errors.As(err, &layout) {
		return layout.Hint()
	}
	var replica *ldapclient.ReplicaError
	if errors.As(err, &replica) {
		return replica.Hint()
	}
	var userinfo *ldapuri.Error
	if errors.As(err, &userinfo) {
		return userinfo.Hint()
	}
	var caFile *ldapconn.CAFileError
	if errors.As(err, &caFile) {
		return caFile.Hint()
	}
	var refused *directory.RefusedError
	if errors.As(err, &refused) {
		return refused.Hint()
	}
	var authRequired *ldapclient.AuthRequiredError
	if errors.As(err, &authRequired) {
		return authRequired.Hint()
	}
	var notWritten *directory.NotWrittenError
	if errors.As(err, &notWritten) {
		return "run the command again when the server answers: it writes what is missing"
	}
	if h := horizonHint(err); h != "" {
		return h
	}
	var unknown *ldapconn.OutcomeUnknownError
	if errors.As(err, &unknown) {
		return "run `cpactl diff` (or the show command) to see whether it was applied, then apply again if needed"
	}
	var partial *ldapconn.PartialError
	if errors.As(err, &partial) {
		return "run the command again to finish: it writes only what is missing"
	}
	var closed *ldapconn.ClosedError
	if errors.As(err, &closed) {
		return closed.Hint()
	}
	var auth *ldapconn.AuthError
	if errors.As(err, &auth) {
		return auth.Hint()
	}
	var behind *directory.ReplicasBehindError
	if errors.As(err, &behind) {
		return "check with `cpactl status`; a replica that holds entries the provider does not must be re-initialised (docs/replication.md)"
	}
	return ""
}

// oneLine keeps an error message on one line, lower case first letter.
func oneLine(err error) string {
	msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ")), " ")
	if msg != "" && !strings.HasPrefix(msg, "LDAP") {
		msg = strings.ToLower(msg[:1]) + msg[1:]
	}
	return msg
}

// horizonHint says how to fix a failed Horizon pull or push.
func horizonHint(err error) string {
	var (
		changed     *horizon.ChangedError
		notWritten  *horizon.NotWrittenError
		outcome     *horizon.OutcomeUnknownError
		unreachable *horizon.UnreachableError
		auth        *horizon.AuthError
		notFound    *horizon.NotFoundError
		throttled   *horizon.ThrottledError
		missing     *horizon.MissingPodsError
		unknownPod  *horizon.UnknownPodError
		target      *horizon.TargetError
	)
	switch {
	case errors.As(err, &changed):
		return "someone changed it in Horizon meanwhile: run the push again, which reads Horizon afresh and shows the new plan"
	case errors.As(err, &notWritten):
		return "run the push again when the server answers: it writes what is missing"
	case errors.As(err, &outcome):
		return "run `cpactl horizon push` again without --yes: its plan shows what is still to write"
	case errors.As(err, &auth) && auth.Status == 403 && !strings.HasPrefix(auth.Op, "GET "):
		return "pushing needs Administrators (FEDERATED_LDAP_MANAGE) on the root federated access group"
	case errors.As(err, &missing):
		return "check the pods' Connection Servers, pass --pod-url POD=https://HOST if this machine reaches them by another name, or --allow-missing-pod POD to pull without them"
	case errors.As(err, &unknownPod):
		return "name pods as the federation does (see its pods above)"
	case errors.As(err, &target):
		return target.Hint
	case errors.As(err, &unreachable) && unreachable.Certificate:
		return "pass --ca-file with the CA that signed the Connection Server's certificate"
	case errors.As(err, &unreachable):
		return "check --url (https://HOST of a Connection Server) and that this machine reaches its port 443; --timeout allows a slow server more time"
	case errors.As(err, &auth) && auth.Status == 403:
		return "the REST account needs Administrators (Read only) on the root federated access group"
	case errors.As(err, &auth):
		return "check --domain, --user and the password (-W, -y FILE or " + horizonPasswordEnv + "); Horizon takes no UPN"
	case errors.As(err, &notFound):
		return "the Connection Server does not have this API: it may be older than Horizon 8 2512"
	case errors.As(err, &throttled):
		return "Horizon's API throttling refused the pull: run it again later, or with a larger --page-size"
	}
	return ""
}
