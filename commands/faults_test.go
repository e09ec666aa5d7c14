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
				_, _, _ = readMessage(c)
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
