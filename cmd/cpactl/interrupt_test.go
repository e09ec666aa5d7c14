package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/commands"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// Faults in the middle of an apply, against a real slapd (`threads 2`, as
// the fault probe of issue 22 ran it) and a real cpactl process: the test
// binary testscript.Main installs as cpactl, which runs main() with its
// signal handler. A proxy between them watches the requests and injects
// the fault at a chosen request: SIGINT to cpactl, or kill -9 to slapd.

// LDAP protocol-op tags (RFC 4511) the proxy looks at.
const (
	tagAddRequest      = 0x68
	tagExtendedRequest = 0x77
)

// Transaction OIDs (RFC 5805) and the encoded commit flag FALSE of an End
// Transaction that aborts.
var (
	oidStartTxn = []byte("1.3.6.1.1.21.1")
	oidEndTxn   = []byte("1.3.6.1.1.21.3")
	berFalse    = []byte{0x01, 0x01, 0x00}
)

// txnRequest is a request the proxy saw, with the counts so far (over
// every connection of the run).
type txnRequest struct {
	tag    byte
	start  bool // Start Transaction
	end    bool // End Transaction
	abort  bool // an End Transaction that aborts (commit FALSE)
	starts int  // Start Transactions so far, this one included
	adds   int  // adds since the last Start Transaction, this one included
}

// faultProxy forwards LDAP between cpactl and slapd message by message.
// Each request from cpactl is handed to onRequest before it is forwarded;
// hold stops the answers from reaching cpactl until release.
type faultProxy struct {
	ln        net.Listener
	target    string
	onRequest func(p *faultProxy, r txnRequest)

	mu      sync.Mutex
	starts  int
	adds    int
	perTxn  []int // the adds of each transaction started
	aborts  int
	commits int
	gate    chan struct{} // closed by release; nil: not held
}

func startFaultProxy(t *testing.T, target string, onRequest func(p *faultProxy, r txnRequest)) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{ln: ln, target: strings.TrimPrefix(target, "ldap://"), onRequest: onRequest}
	t.Cleanup(func() {
		ln.Close()
		p.release()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *faultProxy) URL() string { return "ldap://" + p.ln.Addr().String() }

// hold keeps the server's answers from cpactl until release.
func (p *faultProxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate == nil {
		p.gate = make(chan struct{})
	}
}

func (p *faultProxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate != nil {
		close(p.gate)
		p.gate = nil
	}
}

func (p *faultProxy) wait() {
	p.mu.Lock()
	g := p.gate
	p.mu.Unlock()
	if g != nil {
		<-g
	}
}

// transactions returns the adds of each transaction started, and how many
// End Transactions committed and aborted.
func (p *faultProxy) transactions() (perTxn []int, commits, aborts int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.perTxn...), p.commits, p.aborts
}

func (p *faultProxy) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	go func() {
		defer client.Close()
		for {
			msg, _, err := slapdtest.ReadMessage(server)
			if err != nil {
				return
			}
			p.wait()
			if _, err := client.Write(msg); err != nil {
				return
			}
		}
	}()
	for {
		msg, tag, err := slapdtest.ReadMessage(client)
		if err != nil {
			return
		}
		r := txnRequest{tag: tag}
		p.mu.Lock()
		switch {
		case tag == tagAddRequest:
			p.adds++
			if len(p.perTxn) > 0 {
				p.perTxn[len(p.perTxn)-1]++
			}
		case tag == tagExtendedRequest && bytes.Contains(msg, oidStartTxn):
			r.start = true
			p.starts++
			p.adds = 0
			p.perTxn = append(p.perTxn, 0)
		case tag == tagExtendedRequest && bytes.Contains(msg, oidEndTxn):
			r.end = true
			_, value, _ := bytes.Cut(msg, oidEndTxn)
			r.abort = bytes.Contains(value, berFalse)
			if r.abort {
				p.aborts++
			} else {
				p.commits++
			}
		}
		r.starts, r.adds = p.starts, p.adds
		p.mu.Unlock()
		if p.onRequest != nil {
			p.onRequest(p, r)
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}

// cpactlRun is a cpactl process running, its stderr watched line by line.
type cpactlRun struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	mu     sync.Mutex
	stderr strings.Builder
	lines  chan string // stderr's lines as they come
	done   chan struct{}
}

// startCpactl starts cpactl with args against url (bound as srv's admin account).
func startCpactl(t *testing.T, srv *slapdtest.Server, url string, args ...string) *cpactlRun {
	t.Helper()
	cmd := cpactlCommand(t, srv, args, "CPACTL_URL="+url, "LDAPNOINIT=1")
	r := &cpactlRun{cmd: cmd, lines: make(chan string, 1000), done: make(chan struct{})}
	cmd.Stdout = &r.stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			r.mu.Lock()
			r.stderr.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			select {
			case r.lines <- sc.Text():
			default:
			}
		}
	}()
	return r
}

// wait waits for cpactl to exit and returns its exit code, stdout and
// stderr.
func (r *cpactlRun) wait(t *testing.T) (int, string, string) {
	t.Helper()
	<-r.done
	err := r.cmd.Wait()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return code, r.stdout.String(), r.stderr.String()
}

// releaseOnLine releases the proxy once cpactl printed a line holding
// want (or it exited), so that the fault is in place before cpactl
// reads another answer.
func (r *cpactlRun) releaseOnLine(p *faultProxy, want string) {
	go func() {
		defer p.release()
		for {
			select {
			case line := <-r.lines:
				if strings.Contains(line, want) {
					return
				}
			case <-r.done:
				return
			}
		}
	}()
}

// interrupt sends SIGINT to cpactl, whose answers the proxy then holds
// (releaseOnLine lets them go).
func interrupt(t *testing.T, p *faultProxy, cpactl *os.Process) {
	p.hold()
	if err := cpactl.Signal(os.Interrupt); err != nil {
		t.Errorf("SIGINT: %v", err)
	}
}

// runCpactl runs cpactl to its end.
func runCpactl(t *testing.T, srv *slapdtest.Server, url string, args ...string) (int, string, string) {
	t.Helper()
	return startCpactl(t, srv, url, args...).wait(t)
}

// federationFile writes a generated federation of a little more than
// sessions entries.
func federationFile(t *testing.T, srv *slapdtest.Server, sessions string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "federation.ldif")
	if code, _, stderr := runCpactl(t, srv, srv.URL, "generate", "--seed", "1", "--sessions", sessions, "-O", path); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, stderr)
	}
	return path
}

// entriesUnder counts the entries a change can write under srv's base
// (0 when the base does not exist): all but the base entry and the
// harness's role groups and accounts, read on a connection of its own:
// slapd answers.
func entriesUnder(t *testing.T, srv *slapdtest.Server) int {
	t.Helper()
	n, err := countEntries(srv)
	if err != nil {
		t.Fatalf("slapd does not answer: %v", err)
	}
	return n
}

func countEntries(srv *slapdtest.Server) (int, error) {
	c, err := srv.Dial()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	res, err := c.Search(ldap.NewSearchRequest(srv.Base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", []string{"1.1"}, nil))
	if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	roles := ldapschema.DIT{Base: srv.Base}.Roles()
	n := 0
	for _, e := range res.Entries {
		if !ldapschema.EqualDN(e.DN, srv.Base) && !ldapschema.IsUnder(e.DN, roles) {
			n++
		}
	}
	return n, nil
}

// alive fails the test when slapd exited.
func alive(t *testing.T, srv *slapdtest.Server) {
	t.Helper()
	if exited, err := srv.Exited(); exited {
		t.Fatalf("slapd exited (%v):\n%s", err, srv.Log())
	}
}

// TestInterruptAbortsTheOpenTransaction (issue 22, item 2): SIGINT while a
// transaction of 3,000 adds is being sent. Closing the connection with the
// transaction's writes queued crashes slapd 2.5.13; cpactl aborts the
// transaction (End Transaction, commit FALSE), waits for the answer, and
// says so: exit 130, nothing written, slapd alive and answering. The
// interrupt comes early, half-way and late in the transaction.
func TestInterruptAbortsTheOpenTransaction(t *testing.T) {
	srv := slapdtest.Start(t, slapdtest.Config{Threads: 2})
	file := federationFile(t, srv, "3000")
	for _, at := range []int{100, 1500, 2900} {
		var cpactl atomic.Pointer[os.Process]
		proxy := startFaultProxy(t, srv.URL, func(p *faultProxy, r txnRequest) {
			if r.tag == tagAddRequest && r.adds == at {
				interrupt(t, p, cpactl.Load())
			}
		})
		run := startCpactl(t, srv, proxy.URL(), "apply", file)
		cpactl.Store(run.cmd.Process)
		run.releaseOnLine(proxy, "interrupted")
		code, stdout, stderr := run.wait(t)
		alive(t, srv)
		if code != commands.ExitInterrupted {
			t.Fatalf("SIGINT at add %d: exit %d, want %d:\n%s", at, code, commands.ExitInterrupted, stderr)
		}
		if !strings.Contains(stderr, "transaction in progress was aborted (the server confirmed it)") ||
			!strings.Contains(stderr, "nothing was written") {
			t.Errorf("SIGINT at add %d: stderr does not say the transaction was aborted and nothing written:\n%s", at, stderr)
		}
		if stdout != "" {
			t.Errorf("SIGINT at add %d: stdout %q, want nothing", at, stdout)
		}
		if n := entriesUnder(t, srv); n != 0 {
			t.Errorf("SIGINT at add %d: %d entries written, want none", at, n)
		}
		if txns, commits, aborts := proxy.transactions(); len(txns) != 1 || commits != 0 || aborts != 1 {
			t.Errorf("SIGINT at add %d: %d transactions, %d commits, %d aborts; want 1, 0, 1", at, len(txns), commits, aborts)
		}
	}
}

// exitPartial is the exit code of a change that stopped part way with the
// directory consistent (issue 22, item 7).
const exitPartial = commands.ExitPartial

// TestInterruptInTransaction2Of3 (issue 22, items 2 and 7): SIGINT while
// the second of three transactions is being sent. That transaction is
// aborted, the first stays written: exit 8 ("partly written, consistent,
// run it again"), never 1 or 130; running apply again finishes.
func TestInterruptInTransaction2Of3(t *testing.T) {
	srv := slapdtest.Start(t, slapdtest.Config{Threads: 2})
	file := federationFile(t, srv, "8300")
	var cpactl atomic.Pointer[os.Process]
	proxy := startFaultProxy(t, srv.URL, func(p *faultProxy, r txnRequest) {
		if r.tag == tagAddRequest && r.starts == 2 && r.adds == 500 {
			interrupt(t, p, cpactl.Load())
		}
	})
	run := startCpactl(t, srv, proxy.URL(), "apply", file)
	cpactl.Store(run.cmd.Process)
	run.releaseOnLine(proxy, "interrupted")
	code, _, stderr := run.wait(t)
	alive(t, srv)
	if code != exitPartial {
		t.Fatalf("exit %d, want %d:\n%s", code, exitPartial, stderr)
	}
	for _, want := range []string{"transaction in progress was aborted (the server confirmed it)", "transaction 2 of 3",
		"the one before it is written and the directory is consistent", "hint: run the command again"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	txns, commits, aborts := proxy.transactions()
	if len(txns) != 2 || commits != 1 || aborts != 1 {
		t.Fatalf("%d transactions, %d commits, %d aborts; want 2, 1, 1", len(txns), commits, aborts)
	}
	if n := entriesUnder(t, srv); n != txns[0] {
		t.Errorf("%d entries in the directory, want the %d of the first transaction", n, txns[0])
	}
	finishes(t, srv, file)
}

// finishes runs apply again and checks that the directory then matches
// file.
func finishes(t *testing.T, srv *slapdtest.Server, file string) {
	t.Helper()
	if code, _, stderr := runCpactl(t, srv, srv.URL, "apply", file); code != 0 {
		t.Fatalf("apply again: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := runCpactl(t, srv, srv.URL, "diff", file); code != 0 {
		t.Fatalf("diff after apply again: exit %d: %s%s", code, stdout, stderr)
	}
}

// TestInterruptDuringTheLastCommit (issue 22, item 7): SIGINT while the
// server commits the last transaction. cpactl waits for the answer; the
// change is complete, so it exits 0, with a note that says so.
func TestInterruptDuringTheLastCommit(t *testing.T) {
	srv := slapdtest.Start(t, slapdtest.Config{Threads: 2})
	file := federationFile(t, srv, "3000")
	var cpactl atomic.Pointer[os.Process]
	proxy := startFaultProxy(t, srv.URL, func(p *faultProxy, r txnRequest) {
		if r.end {
			interrupt(t, p, cpactl.Load())
		}
	})
	run := startCpactl(t, srv, proxy.URL(), "apply", file)
	cpactl.Store(run.cmd.Process)
	run.releaseOnLine(proxy, "interrupted")
	code, _, stderr := run.wait(t)
	alive(t, srv)
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "note: interrupted after the change was complete: all of it is written") {
		t.Errorf("stderr lacks the note that the change is complete:\n%s", stderr)
	}
	if _, commits, aborts := proxy.transactions(); commits != 1 || aborts != 0 {
		t.Errorf("%d commits, %d aborts; want 1, 0", commits, aborts)
	}
	if code, stdout, stderr := runCpactl(t, srv, srv.URL, "diff", file); code != 0 {
		t.Fatalf("diff: exit %d: %s%s", code, stdout, stderr)
	}
}

// TestSlapdKilledInTransaction2Of3 (issue 22, item 7): slapd killed (-9)
// while the second of three transactions is being sent. The connection
// broke before the commit, so that transaction was dropped; the first is
// written: exit 8, and the message says the connection broke, not that
// the server refused the transaction. Nothing committed is lost, and
// apply again finishes.
func TestSlapdKilledInTransaction2Of3(t *testing.T) {
	srv := slapdtest.Start(t, slapdtest.Config{Threads: 2})
	file := federationFile(t, srv, "8300")
	pid := srv.PID()
	proxy := startFaultProxy(t, srv.URL, func(p *faultProxy, r txnRequest) {
		if r.tag == tagAddRequest && r.starts == 2 && r.adds == 500 {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Errorf("kill -9 slapd: %v", err)
			}
		}
	})
	code, stdout, stderr := runCpactl(t, srv, proxy.URL(), "apply", file)
	if code != exitPartial {
		t.Fatalf("exit %d, want %d:\n%s", code, exitPartial, stderr)
	}
	for _, want := range []string{"the connection broke before the commit", "transaction 2 of 3",
		"the one before it is written and the directory is consistent", "hint: run the command again"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "refused") || stdout != "" {
		t.Errorf("stdout %q; stderr says the transaction was refused, or more:\n%s", stdout, stderr)
	}
	srv.Halt()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	txns, commits, _ := proxy.transactions()
	if len(txns) != 2 || commits != 1 {
		t.Fatalf("%d transactions, %d commits; want 2, 1", len(txns), commits)
	}
	if n := entriesUnder(t, srv); n != txns[0] {
		t.Errorf("%d entries in the directory, want the %d of the first transaction", n, txns[0])
	}
	finishes(t, srv, file)
}

// TestFaultExperiment repeats a fault at random moments of an apply and
// counts the outcomes; it is the experiment behind the counts in
// docs/topology.md. Set CPACTL_FAULT_EXPERIMENT=MODE,N: MODE interrupt
// sends SIGINT to cpactl at a random add (100-3,000) of an apply of 3,169
// entries in one transaction; MODE held does so and holds slapd's answers
// from cpactl until cpactl printed that it was interrupted (what
// TestInterruptAbortsTheOpenTransaction does); MODE kill kills slapd (-9) at a random add
// (1-3,900) of the second of three transactions (8,500 entries), then
// restarts it; MODE timed sends SIGINT 100-600 ms after cpactl started,
// connected to slapd directly (as the fault probe of issue 22 did).
// MODE,LO-HI,N chooses the adds (milliseconds) between which the fault
// comes:
//
//	CPACTL_FAULT_EXPERIMENT=interrupt,40 go test ./cmd/cpactl -run TestFaultExperiment -v
//	CPACTL_FAULT_EXPERIMENT=interrupt,100-600,42 go test ./cmd/cpactl -run TestFaultExperiment -v
func TestFaultExperiment(t *testing.T) {
	spec := os.Getenv("CPACTL_FAULT_EXPERIMENT")
	if spec == "" {
		t.Skip("set CPACTL_FAULT_EXPERIMENT=MODE,N to run")
	}
	parts := strings.Split(spec, ",")
	mode := parts[0]
	n, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil || len(parts) < 2 || (mode != "interrupt" && mode != "held" && mode != "kill" && mode != "timed") {
		t.Fatalf("CPACTL_FAULT_EXPERIMENT=%q: want interrupt,N, kill,N or timed,N (or MODE,LO-HI,N)", spec)
	}
	sessions, starts, lo, hi := "3000", 1, 100, 3000
	switch mode {
	case "kill":
		sessions, starts, lo, hi = "8300", 2, 1, 3900
	case "timed":
		lo, hi = 100, 600
	}
	if len(parts) == 3 {
		// The adds between which the fault comes.
		l, h, _ := strings.Cut(parts[1], "-")
		lo, err = strconv.Atoi(l)
		if err == nil {
			hi, err = strconv.Atoi(h)
		}
		if err != nil || lo < 1 || hi < lo {
			t.Fatalf("CPACTL_FAULT_EXPERIMENT=%q: bad range %q", spec, parts[1])
		}
	}
	var file string
	outcomes := map[string]int{}
	for i := 0; i < n; i++ {
		srv, err := slapdtest.New(slapdtest.Config{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		if file == "" {
			file = federationFile(t, srv, sessions)
		}
		at := lo + rand.IntN(hi-lo+1)
		pid := srv.PID()
		var cpactl atomic.Pointer[os.Process]
		proxy := startFaultProxy(t, srv.URL, func(p *faultProxy, r txnRequest) {
			if r.tag != tagAddRequest || r.starts != starts || r.adds != at {
				return
			}
			switch mode {
			case "kill":
				_ = syscall.Kill(pid, syscall.SIGKILL)
			case "held":
				interrupt(t, p, cpactl.Load())
			default:
				_ = cpactl.Load().Signal(os.Interrupt)
			}
		})
		url := proxy.URL()
		if mode == "timed" {
			url = srv.URL
		}
		run := startCpactl(t, srv, url, "apply", file)
		cpactl.Store(run.cmd.Process)
		if mode == "held" {
			run.releaseOnLine(proxy, "interrupted")
		}
		if mode == "timed" {
			time.AfterFunc(time.Duration(at)*time.Millisecond, func() { _ = run.cmd.Process.Signal(os.Interrupt) })
		}
		code, _, stderr := run.wait(t)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		crashed, _ := srv.Exited()
		if mode == "kill" {
			srv.Halt()
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			crashed = false
		}
		written, err := countEntries(srv)
		if err != nil {
			written, crashed = -1, true // slapd went down after cpactl exited
		}
		txns, _, _ := proxy.transactions()
		want := 0 // written before the fault
		if mode == "kill" && len(txns) > 0 {
			want = txns[0]
		}
		outcome := fmt.Sprintf("exit %d, slapd crashed %v, written as expected %v", code, crashed, written == want)
		outcomes[outcome]++
		t.Logf("try %d, add %d: %s; %d entries (want %d); %s", i+1, at, outcome, written, want, lines[len(lines)-1])
		_ = srv.Stop()
	}
	for o, k := range outcomes {
		t.Logf("%d of %d: %s", k, n, o)
	}
}
