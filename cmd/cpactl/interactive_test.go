package main

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/slapdtest"
)

// Keys as a terminal sends them.
const (
	keyUp    = "\x1b[A"
	keyDown  = "\x1b[B"
	keyEnter = "\r"
)

// terminal runs cpactl on a pseudo-terminal (stdin, stdout and stderr), as
// an administrator would: testscript's ttyin makes stdin a terminal but not
// stdout, and cpactl prompts only when both are.
type terminal struct {
	t       *testing.T
	cmd     *exec.Cmd
	tty     *os.File
	mu      sync.Mutex
	out     bytes.Buffer
	seen    int       // output already matched by expect
	queries int       // cursor position queries answered
	last    time.Time // when output last arrived
	done    chan error
}

// cpactlCommand is cpactl (the test binary testscript.Main installs in
// PATH) with args, connected to srv, on an xterm, reading no config file,
// with env added.
func cpactlCommand(t *testing.T, srv *slapdtest.Server, args []string, env ...string) *exec.Cmd {
	t.Helper()
	bin, err := exec.LookPath("cpactl")
	if err != nil {
		t.Fatalf("cpactl is not in PATH: %v", err)
	}
	cmd := exec.Command(bin, args...)
	// No pager: these tests look at what the command itself draws on a
	// terminal (the pager's own tests: pager_test.go).
	cmd.Env = append(append(append(os.Environ(), srv.Env()...), "TERM=xterm", "CPACTL_CONFIG="+noConfig, "CPACTL_PAGER=cat"), env...)
	return cmd
}

func startTerminal(t *testing.T, srv *slapdtest.Server, args ...string) *terminal {
	t.Helper()
	return startTerminalCols(t, srv, 150, args...)
}

// startTerminalCols is startTerminal on a terminal cols columns wide.
func startTerminalCols(t *testing.T, srv *slapdtest.Server, cols uint16, args ...string) *terminal {
	t.Helper()
	cmd := cpactlCommand(t, srv, args, "LDAPNOINIT=1")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, cmd: cmd, tty: tty, done: make(chan error, 1)}
	go term.read()
	go func() { term.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		tty.Close()
	})
	return term
}

// read collects the output and answers the terminal's cursor position
// queries, as a real terminal does.
func (term *terminal) read() {
	buf := make([]byte, 4096)
	for {
		n, err := term.tty.Read(buf)
		if n > 0 {
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.last = time.Now()
			asked := bytes.Count(term.out.Bytes(), []byte("\x1b[6n"))
			for ; term.queries < asked; term.queries++ {
				_, _ = term.tty.WriteString("\x1b[1;1R")
			}
			term.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// expect waits until the output after the last match holds text.
func (term *terminal) expect(text string) {
	term.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		term.mu.Lock()
		rest := term.out.String()[term.seen:]
		if i := strings.Index(rest, text); i >= 0 {
			term.seen += i + len(text)
			term.mu.Unlock()
			return
		}
		term.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	term.t.Fatalf("timed out waiting for %q; the terminal shows:\n%s", text, term.output())
}

func (term *terminal) output() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

// settle waits until the prompt has stopped drawing (and its cursor
// queries are answered), so that keys are not read as their answers.
func (term *terminal) settle() {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		term.mu.Lock()
		idle := time.Since(term.last)
		term.mu.Unlock()
		if idle > 150*time.Millisecond {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (term *terminal) send(keys ...string) {
	term.t.Helper()
	term.settle()
	for _, k := range keys {
		if _, err := term.tty.WriteString(k); err != nil {
			term.t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // let the prompt redraw
	}
}

// wait returns the exit code.
func (term *terminal) wait() int {
	term.t.Helper()
	select {
	case err := <-term.done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			term.t.Fatal(err)
		}
		return 0
	case <-time.After(10 * time.Second):
		term.t.Fatalf("cpactl did not exit; the terminal shows:\n%s", term.output())
	}
	return -1
}

func startSeed(t *testing.T) (*slapdtest.Server, *directory.Store) {
	t.Helper()
	seed, err := os.ReadFile("../../fixtures/seed-000.ldif")
	if err != nil {
		t.Fatal(err)
	}
	srv := slapdtest.Start(t, slapdtest.Config{LDIF: string(seed)})
	c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{srv.URL}, BindDN: srv.AdminDN(), Password: slapdtest.AdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, directory.NewStore(c, srv.Base)
}

func storedPreferred(t *testing.T, st *directory.Store, site string) []string {
	t.Helper()
	s, err := st.Site(site)
	if err != nil {
		t.Fatal(err)
	}
	return s.PreferredSites
}

// TestInteractivePreferredOrder orders India's preferred sites through the
// survey prompt on a real terminal: US first, then UK; confirm; the
// directory holds the new order.
func TestInteractivePreferredOrder(t *testing.T) {
	srv, st := startSeed(t)
	term := startTerminal(t, srv, "site", "preferred", "India")
	term.expect("Current preferred sites of India: 1. UK, 2. US")
	term.expect("Preferred site 1 of India")
	term.send(keyDown, keyEnter) // from the default UK down to US
	term.expect("Preferred site 2 of India (chosen: 1. US)")
	term.send(keyEnter) // the default: UK, the next site of the current order
	term.expect("Set the preferred sites of India to 1. US, 2. UK?")
	term.send("y", keyEnter)
	term.expect("set preferred sites of site India: 1. US, 2. UK")
	if code := term.wait(); code != 0 {
		t.Fatalf("exit %d; the terminal shows:\n%s", code, term.output())
	}
	if got := storedPreferred(t, st, "India"); !slices.Equal(got, []string{"US", "UK"}) {
		t.Fatalf("stored %q, want [US UK]", got)
	}
}

// TestInteractivePreferredKeep: "keep current order" writes nothing.
func TestInteractivePreferredKeep(t *testing.T) {
	srv, st := startSeed(t)
	term := startTerminal(t, srv, "site", "preferred", "India")
	term.expect("Preferred site 1 of India")
	// Options: UK (default), US, (done), (keep current order).
	term.send(keyDown, keyDown, keyDown, keyEnter)
	term.expect("preferred sites of site India: unchanged")
	if code := term.wait(); code != 0 {
		t.Fatalf("exit %d; the terminal shows:\n%s", code, term.output())
	}
	if got := storedPreferred(t, st, "India"); !slices.Equal(got, []string{"UK", "US"}) {
		t.Fatalf("stored %q, want [UK US]", got)
	}
}

// TestInteractivePreferredDeclined: answering no at the confirmation
// writes nothing and exits 1.
func TestInteractivePreferredDeclined(t *testing.T) {
	srv, st := startSeed(t)
	term := startTerminal(t, srv, "site", "preferred", "UK")
	term.expect("Site UK has no preferred sites.")
	term.expect("Preferred site 1 of UK")
	// Options: India, US, (done) (the default: the list is empty), (keep
	// current order).
	term.send(keyUp, keyUp, keyEnter)
	term.expect("Preferred site 2 of UK")
	term.send(keyEnter) // (done)
	term.expect("Set the preferred sites of UK to 1. India?")
	term.send("n", keyEnter)
	term.expect("preferred sites of site UK: cancelled: nothing written")
	if code := term.wait(); code != 1 {
		t.Fatalf("exit %d, want 1; the terminal shows:\n%s", code, term.output())
	}
	if got := storedPreferred(t, st, "UK"); len(got) != 0 {
		t.Fatalf("stored %q, want nothing", got)
	}
}

// TestInteractivePreferredClearDefaultsToNo: emptying the list is asked
// with No as the default: Enter alone cancels, exit 1, nothing written.
func TestInteractivePreferredClearDefaultsToNo(t *testing.T) {
	srv, st := startSeed(t)
	term := startTerminal(t, srv, "site", "preferred", "India")
	term.expect("Preferred site 1 of India")
	// Options: UK (default), US, (done), (keep current order).
	term.send(keyDown, keyDown, keyEnter) // (done) at rank 1: an empty list
	term.expect("Remove every preferred site of India?")
	term.expect("(y/N)")
	term.send(keyEnter)
	term.expect("preferred sites of site India: cancelled: nothing written")
	if code := term.wait(); code != 1 {
		t.Fatalf("exit %d, want 1; the terminal shows:\n%s", code, term.output())
	}
	if got := storedPreferred(t, st, "India"); !slices.Equal(got, []string{"UK", "US"}) {
		t.Fatalf("stored %q, want [UK US]", got)
	}
}

// TestInteractiveDeleteDefaultsToNo: Enter alone at a delete's question
// cancels.
func TestInteractiveDeleteDefaultsToNo(t *testing.T) {
	srv, st := startSeed(t)
	term := startTerminal(t, srv, "cs", "delete", "cs-lon-1")
	term.expect("Delete connection server cs-lon-1?")
	term.expect("(y/N)")
	term.send(keyEnter)
	term.expect(`deleting connection server cs-lon-1: cancelled: nothing written`)
	if code := term.wait(); code != 1 {
		t.Fatalf("exit %d, want 1; the terminal shows:\n%s", code, term.output())
	}
	if _, err := st.ConnectionServer("cs-lon-1"); err != nil {
		t.Fatalf("declined, yet: %v", err)
	}
}

// TestTableFitsTheTerminal: on a terminal of 85 columns a table's long
// cells wrap; -o wide leaves them whole.
func TestTableFitsTheTerminal(t *testing.T) {
	srv, _ := startSeed(t)
	term := startTerminalCols(t, srv, 85, "pool", "list")
	term.expect("blr-desk-2  Bangalore-1  desktop  floating    10        10        yes      Sales\r\n")
	term.expect("Desktop UK\r\n")
	if code := term.wait(); code != 0 {
		t.Fatalf("exit %d; the terminal shows:\n%s", code, term.output())
	}
	term = startTerminalCols(t, srv, 85, "pool", "list", "-o", "wide")
	term.expect("yes      Sales Desktop UK Busy\r\n")
	if code := term.wait(); code != 0 {
		t.Fatalf("exit %d; the terminal shows:\n%s", code, term.output())
	}
}

// TestInteractiveDeleteConfirm: on a terminal, delete asks; "y" deletes.
func TestInteractiveDeleteConfirm(t *testing.T) {
	srv, st := startSeed(t)
	term := startTerminal(t, srv, "cs", "delete", "cs-lon-1")
	term.expect("Delete connection server cs-lon-1?")
	term.send("y", keyEnter)
	term.expect("deleted connection server cs-lon-1")
	if code := term.wait(); code != 0 {
		t.Fatalf("exit %d; the terminal shows:\n%s", code, term.output())
	}
	if _, err := st.ConnectionServer("cs-lon-1"); err == nil {
		t.Fatal("cs-lon-1 still exists")
	}
}
