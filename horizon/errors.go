package horizon

import (
	"fmt"
)

// The errors of this package are typed values; commands.ExitCode maps them
// to exit codes with errors.As. None of them holds the password or a token:
// they name the server, the method and the path, and what the server said
// (its error_key and error_message, cut to one line).

// UnreachableError: the server could not be reached, its certificate was
// not trusted, or it did not answer within the timeout.
type UnreachableError struct {
	URL string // the server's REST base, https://cs.example.com/rest
	Op  string // what was asked: "POST /login", "GET /federation/v1/pods"
	Err error
	// Certificate: the TLS handshake failed on the server's certificate
	// (unknown authority, wrong name, expired): --ca-file is the fix.
	Certificate bool
}

func (e *UnreachableError) Error() string {
	if e.Certificate {
		return fmt.Sprintf("%s: the server's certificate is not trusted (%s): %v", e.URL, e.Op, e.Err)
	}
	return fmt.Sprintf("%s did not answer (%s): %v", e.URL, e.Op, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// AuthError: the server refused the credentials (login answered 400 or
// 401, or a logged-in session could not be renewed) or the account lacks
// a privilege (403).
type AuthError struct {
	URL    string
	Op     string
	Status int
	// Key and Message are the server's error_key and error_message.
	Key, Message string
}

func (e *AuthError) Error() string {
	what := "authentication refused"
	if e.Status == 403 {
		what = "access refused"
	}
	return fmt.Sprintf("%s: %s (%s: HTTP %d%s)", e.URL, what, e.Op, e.Status, serverSaid(e.Key, e.Message))
}

// NotFoundError: the server answered 404 on a path: an API version it does
// not have, or an object it does not hold.
type NotFoundError struct {
	URL          string
	Op           string
	Key, Message string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s has no %s (HTTP 404%s)", e.URL, e.Op, serverSaid(e.Key, e.Message))
}

// ThrottledError: the server kept answering 429 (too many requests) after
// the retries the client allows.
type ThrottledError struct {
	URL      string
	Op       string
	Attempts int
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("%s kept refusing %s as too many requests (HTTP 429, %d attempts)", e.URL, e.Op, e.Attempts)
}

// ServerError: any other answer that is not a success: a 5xx, a 400 that
// is not the end of a paged list, a 409 (CPA not initialized).
type ServerError struct {
	URL          string
	Op           string
	Status       int
	Key, Message string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("%s refused %s: HTTP %d%s", e.URL, e.Op, e.Status, serverSaid(e.Key, e.Message))
}

// ProtocolError: the answer is not what the API documents (not JSON, not
// a list where a list is documented, too large).
type ProtocolError struct {
	URL string
	Op  string
	Err error
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("%s answered %s with something that is not the documented JSON: %v", e.URL, e.Op, e.Err)
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// PodError: no Connection Server of a pod could be read (each address was
// tried); Err is the last server's error.
type PodError struct {
	Pod string
	Err error
}

func (e *PodError) Error() string {
	return fmt.Sprintf("pod %q: %v", e.Pod, e.Err)
}

func (e *PodError) Unwrap() error { return e.Err }

// TargetError: the pull directory cannot be written as asked (it exists and
// is not empty, or is not a pull to replace).
type TargetError struct {
	Dir    string
	Reason string
	Hint   string
}

func (e *TargetError) Error() string { return fmt.Sprintf("%s: %s", e.Dir, e.Reason) }

// serverSaid renders the server's error_key and error_message, if any.
func serverSaid(key, msg string) string {
	switch {
	case key != "" && msg != "":
		return fmt.Sprintf(": %s: %s", key, msg)
	case msg != "":
		return ": " + msg
	case key != "":
		return ": " + key
	}
	return ""
}
