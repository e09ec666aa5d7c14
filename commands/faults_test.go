package commands

import (
	"net"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/internal/slapdtest"
)

// startBindBreaker listens like an LDAP server and breaks every connection
// during the bind: it reads the bind request, then closes the connection
// (the client reads EOF) or, with reset, resets it (SO_LINGER 0: RST).
func startBindBreaker(t *testing.T, reset bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_, _, _ = slapdtest.ReadMessage(c)
				if reset {
					_ = c.(*net.TCPConn).SetLinger(0)
				}
				c.Close()
			}()
		}
	}()
	return "ldap://" + ln.Addr().String()
}

// TestBindConnectionBreakGoesToNextURI (issue 22, item 6): a server that
// breaks the connection during the bind (EOF or reset) is a server that
// cannot be used, like one that does not answer, not an authentication
// failure: cpactl goes on to the next URI of -H; with none left it exits 1
// saying the server closed the connection, with a hint.
func TestBindConnectionBreakGoesToNextURI(t *testing.T) {
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: demoLDIF(t)})
	for _, reset := range []bool{false, true} {
		name := "EOF"
		if reset {
			name = "reset"
		}
		t.Run(name, func(t *testing.T) {
			broken := startBindBreaker(t, reset)
			code, stdout, stderr := run(t, append(rootArgs(t, srv, broken+","+srv.URL), "site", "list")...)
			if code != ExitOK || !strings.Contains(stdout, "UK") {
				t.Fatalf("-H %s,%s: exit %d, stdout %q, stderr %q; want the next URI's sites", broken, srv.URL, code, stdout, stderr)
			}
			code, _, stderr = run(t, append(rootArgs(t, srv, broken), "site", "list")...)
			if code != ExitError {
				t.Fatalf("-H %s alone: exit %d, want %d: %s", broken, code, ExitError, stderr)
			}
			assertOneLineError(t, stderr, broken+": the server closed the connection during the bind")
			if !strings.Contains(stderr, "\nhint: ") {
				t.Errorf("no hint: %q", stderr)
			}
		})
	}
}

// TestTrashNotEmptiedAfterACompleteChange (issue 22, item 7): a change
// that deletes a subtree moves it to the trash and empties the trash
// afterwards. When emptying fails (here the connection breaks on the
// first delete in the trash) the change itself is complete: exit 0, the
// usual output, and a note on what is left and how to remove it.
func TestTrashNotEmptiedAfterACompleteChange(t *testing.T) {
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: demoLDIF(t)})
	args := rootArgs(t, srv, srv.URL)
	for _, cmd := range [][]string{{"pod", "create", "trashpod", "--site", "UK"}, {"cs", "create", "cs-trash", "--pod", "trashpod"}} {
		if code, _, stderr := run(t, append(args, cmd...)...); code != ExitOK {
			t.Fatalf("%s: exit %d: %s", cmd, code, stderr)
		}
	}
	proxy := startDropProxy(t, strings.TrimPrefix(srv.URL, "ldap://"))
	proxy.arm(tagDelRequest, tagDelResponse, "ou=Trash", dropBefore, 0)
	code, stdout, stderr := run(t, append(rootArgs(t, srv, proxy.URL()), "apply", "../fixtures/demo.ldif", "--prune", "--yes")...)
	if !proxy.didFire() {
		t.Fatalf("the trash was not emptied (exit %d): %s", code, stderr)
	}
	if code != ExitOK {
		t.Fatalf("exit %d, want 0: %s", code, stderr)
	}
	if !strings.Contains(stdout, "deleted pod trashpod") {
		t.Errorf("stdout does not report the delete: %q", stdout)
	}
	if !strings.Contains(stderr, "note: the change is complete, but emptying ou=Trash,") {
		t.Errorf("stderr lacks the note on the trash: %q", stderr)
	}
	if code, stdout, stderr := run(t, append(args, "diff", "../fixtures/demo.ldif")...); code != ExitOK {
		t.Errorf("diff: exit %d: %s%s", code, stdout, stderr)
	}
}

// startCloser listens like an LDAP server and closes every connection as
// soon as it accepts it, before reading anything (issue 27 item 4: a port
// that accepts the connection and then closes it).
func startCloser(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return "ldap://" + ln.Addr().String()
}

// TestAcceptThenCloseIsAConnectionFailure (issue 27 item 4): a port that
// accepts the connection and closes it at once, before the bind request
// is read, is a connection failure, exit 1 with "the server closed the
// connection" and a hint, never an authentication failure (exit 4); the
// next URI of -H is used when there is one. (Anonymous, with no bind,
// the first search says "EOF", exit 1, without the hint: left for now.)
func TestAcceptThenCloseIsAConnectionFailure(t *testing.T) {
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: demoLDIF(t)})
	closer := startCloser(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"bound", rootArgs(t, srv, closer)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, append(tc.args, "site", "list")...)
			if code != ExitError {
				t.Fatalf("exit %d, want %d: %s", code, ExitError, stderr)
			}
			if !strings.Contains(stderr, closer+": the server closed the connection") {
				t.Errorf("stderr does not say the server closed the connection: %q", stderr)
			}
			if !strings.Contains(stderr, "\nhint: ") {
				t.Errorf("no hint: %q", stderr)
			}
		})
	}
	code, stdout, stderr := run(t, append(rootArgs(t, srv, closer+","+srv.URL), "site", "list")...)
	if code != ExitOK || !strings.Contains(stdout, "UK") {
		t.Fatalf("-H %s,%s: exit %d, stdout %q, stderr %q; want the next URI's sites", closer, srv.URL, code, stdout, stderr)
	}
}
