package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// Replicated directories (docs/replication.md), against real slapd
// processes: a syncprov provider and syncrepl consumers that refer writes
// to it.

func replicated(t *testing.T, opts slapdtest.ReplicaOptions, debug string) *slapdtest.Replicated {
	t.Helper()
	demo, err := os.ReadFile("../../fixtures/demo.ldif")
	if err != nil {
		t.Fatal(err)
	}
	return slapdtest.StartReplicated(t, slapdtest.Config{LDIF: string(demo), Debug: debug}, opts)
}

// adminEnv binds as the admin account, with -H given as a flag.
func adminEnv(srv *slapdtest.Server) map[string]string {
	return map[string]string{"CPACTL_BIND_DN": srv.AdminDN(), "CPACTL_BIND_PASSWORD": slapdtest.AdminPassword}
}

// hasSite reports whether the server holds site name (read as the admin).
func hasSite(t *testing.T, srv *slapdtest.Server, name string) bool {
	t.Helper()
	c, err := srv.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dn := ldapschema.DIT{Base: srv.Base}.Site(name)
	_, err = c.Search(ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false, "(objectClass=*)", []string{"1.1"}, nil))
	if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// TestWriteThroughConsumer: a write sent to the consumer is referred to
// the provider, followed (it is in -H), lands there and replicates back;
// the note names both.
func TestWriteThroughConsumer(t *testing.T) {
	r := replicated(t, slapdtest.ReplicaOptions{}, "")
	p, c := r.Provider, r.Consumers[0]
	env := adminEnv(p)
	code, out, errOut := cpactlMain([]string{"-H", c.URL + "," + p.URL, "site", "create", "Mars"}, env)
	if code != 0 {
		t.Fatalf("site create through the consumer: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "note: "+c.URL+" is a read-only replica: writing to the provider "+p.URL) {
		t.Errorf("no note of the move to the provider: %q", errOut)
	}
	if !hasSite(t, p, "Mars") {
		t.Fatal("the site is not on the provider")
	}
	if err := r.WaitReplicated(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !hasSite(t, c, "Mars") {
		t.Fatal("the site did not replicate to the consumer")
	}
	// With --write-url, the consumer alone in -H.
	code, _, errOut = cpactlMain([]string{"-H", c.URL, "--write-url", p.URL, "site", "update", "Mars", "--description", "red"}, env)
	if code != 0 {
		t.Fatalf("site update with --write-url: exit %d %s", code, errOut)
	}
	// The update read the entry (and its entryCSN) from the consumer; the
	// provider checked the assertion. The next command reads the consumer
	// once it caught up.
	if err := r.WaitReplicated(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	code, out, _ = cpactlMain([]string{"-H", c.URL, "site", "show", "Mars", "-o", "json"}, env)
	if code != 0 || !strings.Contains(out, `"red"`) {
		t.Fatalf("site show from the consumer: exit %d %s", code, out)
	}
}

// TestApplyThroughConsumer: apply through the consumer's URI is one
// transaction, run on the provider (the consumer sees no Start
// Transaction) and replicated back.
func TestApplyThroughConsumer(t *testing.T) {
	r := replicated(t, slapdtest.ReplicaOptions{}, "256") // stats: one line per operation
	p, c := r.Provider, r.Consumers[0]
	env := adminEnv(p)
	hosts := c.URL + "," + p.URL
	desired := filepath.Join(t.TempDir(), "desired.ldif")
	if code, _, errOut := cpactlMain([]string{"-H", hosts, "export", "-O", desired}, env); code != 0 {
		t.Fatalf("export from the consumer: %d %s", code, errOut)
	}
	text, _ := os.ReadFile(desired)
	for _, name := range []string{"Mars", "Venus", "Io"} {
		text = append(text, []byte("\ndn: "+ldapschema.DIT{Base: p.Base}.Site(name)+"\nobjectClass: top\nobjectClass: pae-Site\ncn: "+name+"\n")...)
	}
	if err := os.WriteFile(desired, text, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cpactlMain([]string{"-H", hosts, "apply", desired}, env)
	if code != 0 {
		t.Fatalf("apply through the consumer: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "writing to the provider "+p.URL) || strings.Contains(errOut, "warning") {
		t.Errorf("apply's stderr: %q", errOut)
	}
	const startTxn = "oid=1.3.6.1.1.21.1"
	if n := strings.Count(p.Log(), startTxn); n != 1 {
		t.Errorf("the provider started %d transactions, want 1", n)
	}
	if n := strings.Count(c.Log(), startTxn); n != 0 {
		t.Errorf("the consumer started %d transactions, want 0", n)
	}
	if err := r.WaitReplicated(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Mars", "Venus", "Io"} {
		if !hasSite(t, c, name) {
			t.Errorf("site %s did not replicate", name)
		}
	}
}

// TestUntrustedReferral: a referral to a URI given neither in -H nor in
// --write-url is refused, and nothing is written anywhere.
func TestUntrustedReferral(t *testing.T) {
	r := replicated(t, slapdtest.ReplicaOptions{}, "")
	p, c := r.Provider, r.Consumers[0]
	code, _, errOut := cpactlMain([]string{"-H", c.URL, "site", "create", "Mars"}, adminEnv(p))
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errOut)
	}
	want := c.URL + " is a read-only replica and referred the write to " + p.URL + ", which is not in -H or --write-url: refused"
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, "hint: if "+p.URL+" is your provider, pass --write-url "+p.URL) {
		t.Errorf("stderr: %q", errOut)
	}
	if hasSite(t, p, "Mars") {
		t.Error("the site was written")
	}
	// A --write-url that names another server does not make the referral
	// trusted.
	code, _, _ = cpactlMain([]string{"-H", c.URL, "--write-url", "ldap://127.0.0.1:1", "site", "create", "Mars"}, adminEnv(p))
	if code != 1 || hasSite(t, p, "Mars") {
		t.Errorf("with another --write-url: exit %d", code)
	}
}

// TestConsumerWithoutUpdateRef: a consumer that names no provider (53)
// fails with the fix; --write-url sends the write to the provider.
func TestConsumerWithoutUpdateRef(t *testing.T) {
	r := replicated(t, slapdtest.ReplicaOptions{NoUpdateRef: true}, "")
	p, c := r.Provider, r.Consumers[0]
	code, _, errOut := cpactlMain([]string{"-H", c.URL + "," + p.URL, "site", "create", "Mars"}, adminEnv(p))
	if code != 1 || !strings.Contains(errOut, c.URL+" is a read-only replica and names no provider") || !strings.Contains(errOut, "hint: pass the provider with --write-url") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, _, errOut = cpactlMain([]string{"-H", c.URL, "--write-url", p.URL, "site", "create", "Mars"}, adminEnv(p))
	if code != 0 || !hasSite(t, p, "Mars") {
		t.Fatalf("with --write-url: exit %d %s", code, errOut)
	}
}

// statusJSON runs `cpactl GLOBAL... status -o json FLAGS...` and decodes
// its output.
func statusJSON(t *testing.T, env map[string]string, global []string, flags ...string) (int, map[string]any, string) {
	t.Helper()
	args := append(append(append([]string{}, global...), "status", "-o", "json"), flags...)
	code, out, errOut := cpactlMain(args, env)
	var report map[string]any
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("status -o json: %v\n%s%s", err, out, errOut)
	}
	return code, report, errOut
}

func server(t *testing.T, report map[string]any, i int) map[string]any {
	t.Helper()
	servers, _ := report["servers"].([]any)
	if len(servers) <= i {
		t.Fatalf("status lists %d servers: %v", len(servers), report)
	}
	return servers[i].(map[string]any)
}

// TestStatusHealthy pins status's JSON fields on a healthy pair; an
// account that may read but not write sees the same roles (the write
// probe is refused, 50, on the provider and referred on the consumer).
func TestStatusHealthy(t *testing.T) {
	demo, err := os.ReadFile("../../fixtures/demo.ldif")
	if err != nil {
		t.Fatal(err)
	}
	r := slapdtest.StartReplicated(t, slapdtest.Config{LDIF: string(demo)}, slapdtest.ReplicaOptions{})
	p, c := r.Provider, r.Consumers[0]
	helpdesk := p.Account(slapdtest.Helpdesk)
	reader := map[string]string{"CPACTL_BIND_DN": helpdesk.DN, "CPACTL_BIND_PASSWORD": helpdesk.Password}
	code, report, errOut := statusJSON(t, reader, []string{"-H", c.URL + "," + p.URL})
	if code != 0 || server(t, report, 0)["role"] != "consumer" || server(t, report, 1)["role"] != "provider" {
		t.Errorf("status as a read-only account: exit %d %s %v", code, errOut, report)
	}
	code, report, errOut = statusJSON(t, adminEnv(p), []string{"-H", c.URL + "," + p.URL})
	if code != 0 {
		t.Fatalf("exit %d: %s %v", code, errOut, report)
	}
	for _, k := range []string{"servers", "max_lag_seconds", "healthy", "problems"} {
		if _, ok := report[k]; !ok {
			t.Errorf("no %q in %v", k, report)
		}
	}
	cons, prov := server(t, report, 0), server(t, report, 1)
	for _, k := range []string{"url", "reachable", "bound", "role", "refers_writes_to", "context_csn", "lag_seconds", "caught_up",
		"entries", "containers", "content_matches"} {
		if _, ok := cons[k]; !ok {
			t.Errorf("no %q in %v", k, cons)
		}
	}
	if cons["content_matches"] != true || cons["entries"] != prov["entries"] || prov["content_matches"] != nil {
		t.Errorf("content: consumer %v, provider %v", cons, prov)
	}
	if containers, _ := prov["containers"].([]any); len(containers) == 0 || containers[0].(map[string]any)["digest"] == "" {
		t.Errorf("provider's containers: %v", prov["containers"])
	}
	if cons["role"] != "consumer" || prov["role"] != "provider" || cons["refers_writes_to"] != p.URL {
		t.Errorf("roles: %v %v", cons, prov)
	}
	if cons["caught_up"] != true || cons["lag_seconds"] != 0.0 {
		t.Errorf("consumer: %v", cons)
	}
	csns, _ := prov["context_csn"].([]any)
	if len(csns) != 1 || csns[0].(map[string]any)["server_id"] != 1.0 {
		t.Errorf("provider's contextCSN: %v", prov["context_csn"])
	}
	code, out, _ := cpactlMain([]string{"-H", c.URL + "," + p.URL, "status"}, adminEnv(p))
	if code != 0 || !strings.HasPrefix(out, "URL") || !strings.Contains(out, "consumer") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

// TestProviderDown: with the provider stopped, reads through -H
// provider,consumer come from the consumer, writes exit 1 naming the
// provider, status exits 2; once it is back, status shows the consumer
// caught up with a write made after the restart.
func TestProviderDown(t *testing.T) {
	r := replicated(t, slapdtest.ReplicaOptions{}, "")
	p, c := r.Provider, r.Consumers[0]
	env := adminEnv(p)
	hosts := []string{"-H", p.URL + "," + c.URL, "--timeout", "2s"}
	// Each read, first from the provider while it is up: with it down,
	// the consumer must give the same answer, exit code and output.
	reads := [][]string{{"lint"}, {"export"}, {"resolve", "--user", "carol", "--entitlement", "Desktops", "--connection-server", "cs-nyc-1"}}
	type answer struct {
		code int
		out  string
	}
	before := make([]answer, len(reads))
	for i, read := range reads {
		code, out, errOut := cpactlMain(append([]string{"-H", p.URL}, read...), env)
		if code > 2 || out == "" {
			t.Fatalf("%s with the provider up: exit %d %s", read[0], code, errOut)
		}
		before[i] = answer{code, out}
	}
	p.Halt()
	code, out, errOut := cpactlMain(append(hosts, "site", "list", "-o", "json"), env)
	if code != 0 || !strings.Contains(out, `"UK"`) {
		t.Fatalf("site list with the provider down: exit %d %s%s", code, out, errOut)
	}
	for i, read := range reads {
		code, out, errOut := cpactlMain(append(hosts, read...), env)
		if code != before[i].code || out != before[i].out {
			t.Errorf("%s with the provider down: exit %d (up: %d), the same output: %v; %s", read[0], code, before[i].code, out == before[i].out, errOut)
		}
	}
	code, _, errOut = cpactlMain(append(hosts, "site", "create", "Mars"), env)
	if code != 1 || !strings.Contains(errOut, "the write must go to the provider "+p.URL) || strings.Count(errOut, "\n") != 2 {
		t.Fatalf("site create with the provider down: exit %d %q", code, errOut)
	}
	code, _, errOut = statusJSON(t, env, hosts)
	if code != 2 || !strings.Contains(errOut, p.URL+" is unreachable") {
		t.Errorf("status with the provider down: exit %d %s", code, errOut)
	}
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cpactlMain(append(hosts, "site", "create", "Mars"), env); code != 0 {
		t.Fatalf("site create after the restart: exit %d %s", code, errOut)
	}
	if err := r.WaitReplicated(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	code, report, errOut := statusJSON(t, env, hosts)
	if cons := server(t, report, 1); code != 0 || cons["caught_up"] != true || cons["role"] != "consumer" {
		t.Errorf("status after the restart: exit %d %s %v", code, errOut, report)
	}
}

// TestConsumerFrozen: a consumer that stops answering makes status exit 2
// naming it, within about the timeout; reads fail over to the provider.
func TestConsumerFrozen(t *testing.T) {
	r := replicated(t, slapdtest.ReplicaOptions{}, "")
	p, c := r.Provider, r.Consumers[0]
	env := adminEnv(p)
	hosts := []string{"-H", c.URL + "," + p.URL, "--timeout", "1s"}
	if err := c.Freeze(); err != nil {
		t.Fatal(err)
	}
	defer c.Thaw()
	start := time.Now()
	code, report, errOut := statusJSON(t, env, hosts)
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("status took %s with --timeout 1s", d)
	}
	if code != 2 || !strings.Contains(errOut, "cpactl: "+c.URL+" is unreachable: "+c.URL+" did not answer within 1s (bind)") {
		t.Errorf("status: exit %d %q", code, errOut)
	}
	if cons := server(t, report, 0); cons["reachable"] != false || report["healthy"] != false {
		t.Errorf("status: %v", report)
	}
	code, out, errOut := cpactlMain(append(hosts, "site", "list", "-o", "json"), env)
	if code != 0 || !strings.Contains(out, `"UK"`) {
		t.Errorf("site list with the consumer frozen: exit %d %s%s", code, out, errOut)
	}
}

// TestStatusMirror: two providers in mirror mode are both "mirror", and
// a write to either lands and replicates.
func TestStatusMirror(t *testing.T) {
	demo, err := os.ReadFile("../../fixtures/demo.ldif")
	if err != nil {
		t.Fatal(err)
	}
	r := slapdtest.StartMirror(t, slapdtest.Config{LDIF: string(demo)})
	a, b := r.Provider, r.Consumers[0]
	env := adminEnv(a)
	if code, _, errOut := cpactlMain([]string{"-H", b.URL, "site", "create", "Mars"}, env); code != 0 || strings.Contains(errOut, "replica") {
		t.Fatalf("site create on the second mirror: exit %d %s", code, errOut)
	}
	if err := r.WaitReplicated(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !hasSite(t, a, "Mars") {
		t.Error("the write did not replicate to the first mirror")
	}
	code, report, errOut := statusJSON(t, env, []string{"-H", a.URL + "," + b.URL})
	if code != 0 || server(t, report, 0)["role"] != "mirror" || server(t, report, 1)["role"] != "mirror" {
		t.Errorf("status: exit %d %s %v", code, errOut, report)
	}
	// Alone in -H, a mirror that holds the other's changes is still one.
	if _, report, _ := statusJSON(t, env, []string{"-H", a.URL}); server(t, report, 0)["role"] != "mirror" {
		t.Errorf("status of one mirror: %v", report)
	}
}

// syncProxy stands between a consumer's syncrepl and its provider, so that
// a test can cut replication while both servers answer cpactl.
type syncProxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
}

func newSyncProxy(t *testing.T, providerURL string) *syncProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &syncProxy{l: l, target: strings.TrimPrefix(providerURL, "ldap://")}
	t.Cleanup(func() { l.Close(); p.Cut() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			cut := p.cut
			p.mu.Unlock()
			out, err := net.Dial("tcp", p.target)
			if cut || err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	return p
}

func (p *syncProxy) URL() string { return "ldap://" + p.l.Addr().String() }

// Cut closes the replication connections and refuses new ones.
func (p *syncProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Mend lets syncrepl connect again.
func (p *syncProxy) Mend() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// TestStatusLag: a consumer cut off from its provider while the provider
// takes a write lags by the time between the provider's newest change and
// its own: status exits 2 past --max-lag, 0 within it (not caught up),
// and shows it caught up once replication is back.
func TestStatusLag(t *testing.T) {
	var proxy *syncProxy
	r := replicated(t, slapdtest.ReplicaOptions{SyncVia: func(provider string) string {
		proxy = newSyncProxy(t, provider)
		return proxy.URL()
	}}, "")
	p, c := r.Provider, r.Consumers[0]
	env := adminEnv(p)
	hosts := []string{"-H", c.URL + "," + p.URL}
	if code, _, errOut := statusJSON(t, env, hosts); code != 0 {
		t.Fatalf("status before the cut: exit %d %s", code, errOut)
	}
	proxy.Cut()
	time.Sleep(1500 * time.Millisecond) // the provider's next CSN is later than the consumer's newest
	if err := p.Load("dn: " + ldapschema.DIT{Base: p.Base}.Site("Mars") + "\nobjectClass: top\nobjectClass: pae-Site\ncn: Mars\n"); err != nil {
		t.Fatal(err)
	}
	code, report, errOut := statusJSON(t, env, hosts, "--max-lag", "500ms")
	cons := server(t, report, 0)
	lag, _ := cons["lag_seconds"].(float64)
	if code != 2 || !strings.Contains(errOut, "cpactl: "+c.URL+" lags ") || cons["caught_up"] != false || lag < 1 {
		t.Errorf("status --max-lag 500ms: exit %d %q %v", code, errOut, cons)
	}
	code, report, errOut = statusJSON(t, env, hosts)
	if code != 0 || server(t, report, 0)["caught_up"] != false {
		t.Errorf("status with the default --max-lag: exit %d %s %v", code, errOut, report)
	}
	proxy.Mend()
	if err := r.WaitReplicated(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	code, report, errOut = statusJSON(t, env, hosts, "--max-lag", "500ms")
	if code != 0 || server(t, report, 0)["caught_up"] != true || server(t, report, 0)["lag_seconds"] != 0.0 {
		t.Errorf("status after the mend: exit %d %s %v", code, errOut, report)
	}
}

// restartDuringCommit restarts consumer c while the provider p commits
// the transaction that apply (run in the background) sends, so that the
// consumer's refresh starts between two writes of the commit: slapd 2.5
// then gives the consumer the provider's contextCSN without the writes
// already executed (docs/replication.md, "a consumer short of a
// transaction"). It needs p started with Debug "256" (the TXN END line).
// The provider is frozen while the consumer starts and thawed once the
// consumer's refresh waits on it, so that the refresh lands in the
// commit however long the consumer takes to start. It returns apply's
// exit code, stdout and stderr.
func restartDuringCommit(t *testing.T, p, c *slapdtest.Server, apply func() (int, string, string)) (int, string, string) {
	t.Helper()
	before, err := p.ContextCSN()
	if err != nil {
		t.Fatal(err)
	}
	c.Halt()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := apply()
		done <- result{code, out, errOut}
	}()
	deadline := time.Now().Add(30 * time.Second)
	// The commit has begun, and its first writes are executed: the
	// provider's contextCSN moved, its entries are not visible yet.
	for {
		if time.Now().After(deadline) {
			t.Fatal("the provider did not start committing within 30s")
		}
		if strings.Contains(p.Log(), "TXN END") {
			if now, err := p.ContextCSN(); err == nil && strings.Join(now, " ") != strings.Join(before, " ") {
				break
			}
		}
		select {
		case r := <-done:
			t.Fatalf("apply ended before its commit was seen: exit %d %s", r.code, r.err)
		default:
		}
		time.Sleep(time.Millisecond)
	}
	if err := p.Freeze(); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(); err != nil {
		_ = p.Thaw()
		t.Fatal(err)
	}
	// The consumer's syncrepl connects and sends its bind, which waits,
	// unread, on the frozen provider: thawed after that, the provider
	// answers it and the refresh while the commit goes on. A loaded
	// machine may take longer than any fixed pause to get there.
	waitQueued(t, p.URL, 10*time.Second)
	time.Sleep(20 * time.Millisecond)
	if err := p.Thaw(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	return r.code, r.out, r.err
}

// waitQueued waits (at most limit) until a connection to the server of
// url holds bytes the server has not read (its rx queue in
// /proc/net/tcp): a request sent to a frozen server. It returns at once
// where /proc/net/tcp cannot be read.
func waitQueued(t *testing.T, url string, limit time.Duration) {
	t.Helper()
	_, portText, _ := strings.Cut(strings.TrimPrefix(url, "ldap://127.0.0.1"), ":")
	port, err := strconv.Atoi(strings.TrimSuffix(portText, "/"))
	if err != nil {
		t.Fatalf("waitQueued: no port in %s", url)
	}
	local := fmt.Sprintf("0100007F:%04X", port)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/net/tcp")
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// sl local rem st tx_queue:rx_queue ...; 01 is ESTABLISHED.
			if len(f) > 4 && f[1] == local && f[3] == "01" && !strings.HasSuffix(f[4], ":00000000") {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("waitQueued: nothing queued on %s within %v", url, limit)
}

// entryCount counts the entries under the server's base (as the admin).
func entryCount(t *testing.T, s *slapdtest.Server) int {
	t.Helper()
	c, err := s.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.SearchWithPaging(ldap.NewSearchRequest(s.Base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", []string{"1.1"}, nil), 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Entries)
}

// TestStatusSeesShortConsumer: the probe's fault, reproduced. A consumer
// restarted while the provider commits `apply --atomic` ends with the
// provider's contextCSN and only part of its entries, for good; status
// compares content, not only contextCSNs: exit 2 naming the containers
// that differ. Re-initialised as docs/replication.md says, the consumer
// holds everything and status exits 0.
func TestStatusSeesShortConsumer(t *testing.T) {
	r := slapdtest.StartReplicated(t, slapdtest.Config{WithBase: true, Debug: "256"}, slapdtest.ReplicaOptions{})
	p, c := r.Provider, r.Consumers[0]
	env := adminEnv(p)
	file := filepath.Join(t.TempDir(), "federation.ldif")
	if err := os.WriteFile(file, []byte(federationLDIF(2000)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := restartDuringCommit(t, p, c, func() (int, string, string) {
		return cpactlMain([]string{"-H", p.URL, "apply", "--atomic", file}, env)
	})
	if code != 0 {
		t.Fatalf("apply --atomic: exit %d %s", code, errOut)
	}
	if err := r.WaitReplicated(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	want, got := entryCount(t, p), entryCount(t, c)
	if got >= want {
		t.Fatalf("the reproduction left the consumer with %d entries, the provider %d: not short", got, want)
	}
	hosts := []string{"-H", c.URL + "," + p.URL}
	code, report, errOut := statusJSON(t, env, hosts)
	cons := server(t, report, 0)
	if code != 2 || report["healthy"] != false || cons["content_matches"] != false || cons["caught_up"] != true {
		t.Errorf("status of a short consumer: exit %d %s %v", code, errOut, cons)
	}
	if cons["entries"] != float64(got) || server(t, report, 1)["entries"] != float64(want) {
		t.Errorf("entries: consumer %v (holds %d), provider %v (holds %d)", cons["entries"], got, server(t, report, 1)["entries"], want)
	}
	differs, _ := cons["differs"].([]any)
	people := ldapschema.DIT{Base: p.Base}.People()
	found := false
	for _, d := range differs {
		if strings.EqualFold(d.(map[string]any)["dn"].(string), people) {
			found = true
		}
	}
	if !found || !strings.Contains(errOut, "cpactl: "+c.URL+" holds other entries than the provider "+p.URL+", with the same contextCSN, in ") ||
		!strings.Contains(errOut, "ou=People (") || !strings.Contains(errOut, "re-initialise it") {
		t.Errorf("status names no container: %s %v", errOut, differs)
	}
	// Restarting does not help: its cookie says it holds everything.
	c.Halt()
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if n := entryCount(t, c); n != got {
		t.Errorf("after a restart the consumer holds %d entries, before %d", n, got)
	}
	// Re-initialised (stopped, database moved away, started), it refreshes
	// everything.
	c.Halt()
	if err := c.Reinitialize(); err != nil {
		t.Fatal(err)
	}
	if err := r.WaitReplicated(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	if n := entryCount(t, c); n != want {
		t.Errorf("re-initialised, the consumer holds %d entries, the provider %d", n, want)
	}
	code, report, errOut = statusJSON(t, env, hosts)
	if code != 0 || server(t, report, 0)["content_matches"] != true {
		t.Errorf("status after re-initialising: exit %d %s %v", code, errOut, server(t, report, 0))
	}
}

// TestWaitReplicasCompletesShortConsumer: the same fault with `apply
// --wait-replicas`: apply waits until the consumer holds the provider's
// contextCSN, finds it short by content, has the provider send the
// entries it lacks again, and exits 0 once it holds them all.
func TestWaitReplicasCompletesShortConsumer(t *testing.T) {
	r := slapdtest.StartReplicated(t, slapdtest.Config{WithBase: true, Debug: "256"}, slapdtest.ReplicaOptions{})
	p, c := r.Provider, r.Consumers[0]
	env := adminEnv(p)
	file := filepath.Join(t.TempDir(), "federation.ldif")
	if err := os.WriteFile(file, []byte(federationLDIF(2000)), 0o600); err != nil {
		t.Fatal(err)
	}
	hosts := []string{"-H", c.URL + "," + p.URL}
	code, _, errOut := restartDuringCommit(t, p, c, func() (int, string, string) {
		return cpactlMain(append(hosts, "apply", "--atomic", "--wait-replicas=30s", file), env)
	})
	want := entryCount(t, p)
	if code != 0 || !strings.Contains(errOut, "replicas: "+c.URL+" lacked ") ||
		!strings.Contains(errOut, fmt.Sprintf("it holds the provider's %d entries", want)) {
		t.Fatalf("apply --wait-replicas: exit %d %s", code, errOut)
	}
	if got := entryCount(t, c); got != want {
		t.Fatalf("after apply --wait-replicas the consumer holds %d entries, the provider %d", got, want)
	}
	if code, report, errOut := statusJSON(t, env, hosts); code != 0 || server(t, report, 0)["content_matches"] != true {
		t.Errorf("status: exit %d %s %v", code, errOut, server(t, report, 0))
	}
	// Nothing to write: it only checks.
	code, _, errOut = cpactlMain(append(hosts, "apply", "--wait-replicas", file), env)
	if code != 0 || !strings.Contains(errOut, fmt.Sprintf("replicas: %s holds the provider's %d entries", c.URL, want)) {
		t.Errorf("apply --wait-replicas, unchanged: exit %d %s", code, errOut)
	}
}

// TestWaitReplicasBounded: a replica that does not catch up within the
// wait (stopped) makes apply --wait-replicas exit 2 naming it, with the
// change written on the provider; --wait-replicas with one server in -H
// is refused before anything is written.
func TestWaitReplicasBounded(t *testing.T) {
	r := replicated(t, slapdtest.ReplicaOptions{}, "")
	p, c := r.Provider, r.Consumers[0]
	env := adminEnv(p)
	hosts := []string{"-H", c.URL + "," + p.URL, "--timeout", "1s"}
	file := filepath.Join(t.TempDir(), "desired.ldif")
	if code, _, errOut := cpactlMain(append(hosts, "export", "-O", file), env); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	text, _ := os.ReadFile(file)
	text = append(text, []byte("\ndn: "+ldapschema.DIT{Base: p.Base}.Site("Mars")+"\nobjectClass: top\nobjectClass: pae-Site\ncn: Mars\n")...)
	if err := os.WriteFile(file, text, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cpactlMain([]string{"-H", p.URL, "apply", "--wait-replicas", file}, env)
	if code != 1 || !strings.Contains(errOut, "--wait-replicas waits for the other servers of -H, and -H names 1") || hasSite(t, p, "Mars") {
		t.Fatalf("--wait-replicas with one server: exit %d %s", code, errOut)
	}
	c.Halt()
	start := time.Now()
	code, _, errOut = cpactlMain(append(hosts, "apply", "--wait-replicas=1s", file), env)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("apply --wait-replicas=1s took %s", d)
	}
	if code != 2 || !strings.Contains(errOut, "the change is written on the provider, but after 1s: "+c.URL+": ") ||
		!strings.Contains(errOut, "hint: check with `cpactl status`") {
		t.Errorf("apply with the replica stopped: exit %d %s", code, errOut)
	}
	if !hasSite(t, p, "Mars") {
		t.Error("the change was not written")
	}
}

// TestStatusSeesRefusedTransaction: slapd 2.5's syncprov sends a
// consumer each write of a transaction as the commit executes it, so a
// transaction the provider refuses at its last write (the site exists)
// leaves its first writes on the consumer, with the provider's
// contextCSN. status sees the extra entries; apply --wait-replicas
// cannot send a delete for them and says to re-initialise.
func TestStatusSeesRefusedTransaction(t *testing.T) {
	r := replicated(t, slapdtest.ReplicaOptions{}, "")
	p, c := r.Provider, r.Consumers[0]
	env := adminEnv(p)
	conn, err := ldapconn.Dial(ldapconn.Options{URLs: []string{p.URL}, BindDN: p.AdminDN(), Password: slapdtest.AdminPassword, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dit := ldapschema.DIT{Base: p.Base}
	site := func(name string) *ldap.AddRequest {
		req := ldap.NewAddRequest(dit.Site(name), nil)
		req.Attribute("objectClass", []string{"top", "pae-Site"})
		req.Attribute("cn", []string{name})
		return req
	}
	err = conn.Transaction(func(w ldapclient.Writer) error {
		for i := range 20 {
			if err := w.Add(site(fmt.Sprintf("phantom-%02d", i))); err != nil {
				return err
			}
		}
		return w.Add(site("UK"))
	})
	if !ldap.IsErrorWithCode(err, ldap.LDAPResultEntryAlreadyExists) {
		t.Fatalf("the transaction: %v, want entry already exists", err)
	}
	if hasSite(t, p, "phantom-00") {
		t.Fatal("the refused transaction was written on the provider")
	}
	time.Sleep(time.Second) // the consumer receives what syncprov sent
	if err := r.WaitReplicated(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !hasSite(t, c, "phantom-00") {
		t.Fatal("the refused transaction's writes did not reach the consumer: slapd no longer sends them (update docs/replication.md)")
	}
	hosts := []string{"-H", c.URL + "," + p.URL}
	code, report, errOut := statusJSON(t, env, hosts)
	if cons := server(t, report, 0); code != 2 || cons["content_matches"] != false ||
		!strings.Contains(errOut, c.URL+" holds other entries than the provider "+p.URL+", with the same contextCSN, in ou=Sites (") {
		t.Errorf("status: exit %d %s %v", code, errOut, cons)
	}
	// Nothing to write, and the extra entries cannot be sent away.
	file := filepath.Join(t.TempDir(), "current.ldif")
	if code, _, errOut := cpactlMain([]string{"-H", p.URL, "export", "-O", file}, env); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	code, _, errOut = cpactlMain(append(hosts, "--timeout", "2s", "apply", "--wait-replicas=5s", file), env)
	if code != 2 || !strings.Contains(errOut, c.URL+" holds entries the provider does not ("+dit.Site("phantom-00")+"; "+dit.Site("phantom-01")+"; ") ||
		!strings.Contains(errOut, "; and 10 more)") {
		t.Errorf("apply --wait-replicas: exit %d %s", code, errOut)
	}
}

// TestConflictFromALaggingReplica: a write whose reads came from a
// consumer that has not caught up (replication cut while the provider
// took a change of the pod it refers to) is refused at the provider as a
// conflict (exit 5: what it checked is not what the provider holds), and
// the hint says the replica it read may lag, not that someone else
// changed the pod.
func TestConflictFromALaggingReplica(t *testing.T) {
	var proxy *syncProxy
	r := replicated(t, slapdtest.ReplicaOptions{SyncVia: func(provider string) string {
		proxy = newSyncProxy(t, provider)
		return proxy.URL()
	}}, "")
	p, c := r.Provider, r.Consumers[0]
	env := adminEnv(p)
	proxy.Cut()
	admin, err := p.DialAs(p.Account(slapdtest.Admin))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	pod := ldapschema.DIT{Base: p.Base}.Pod("London-1")
	mod := ldap.NewModifyRequest(pod, nil)
	mod.Replace("description", []string{"changed on the provider"})
	if err := admin.Modify(mod); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cpactlMain([]string{"-H", c.URL, "--write-url", p.URL, "session", "record", "--user", "bob", "--entitlement", "Desktops",
		"--pod", "London-1", "--pool", "lon-desktops", "--brokering-pod", "London-1", "--id", "lagged"}, env)
	if code != 5 || !strings.Contains(errOut, "hint: this command read from the replica "+c.URL+", which may not have caught up with the provider yet") {
		t.Errorf("a write read from a lagging replica: exit %d %s", code, errOut)
	}
	proxy.Mend()
	if err := r.WaitReplicated(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cpactlMain([]string{"-H", c.URL, "--write-url", p.URL, "session", "record", "--user", "bob", "--entitlement", "Desktops",
		"--pod", "London-1", "--pool", "lon-desktops", "--brokering-pod", "London-1", "--id", "lagged"}, env); code != 0 {
		t.Errorf("the same write once the replica caught up: exit %d %s", code, errOut)
	}
}
