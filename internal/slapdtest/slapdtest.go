// Package slapdtest starts a real, throwaway OpenLDAP slapd for tests: a
// child process on 127.0.0.1 with a free port, a temporary directory,
// back-mdb, the cpactl base DN, a root DN and password, an ldapi socket,
// cn=config writable by the root DN (and by SASL EXTERNAL over ldapi), and
// the project's schema rendered from package ldapschema. It can also serve
// ldaps and StartTLS with a CA and server certificate generated in the test.
//
// Every server enforces cpactl's roles with the ACLs package ldapschema
// generates (`cpactl schema print --format acl`), and holds, unless Bare,
// the base entry, the role groups and one account per role (Account):
// tests act as those accounts (Dial, Env: the admin), never as the root
// DN, except for what only the root DN can do (DialRoot, RootEnv: loading
// fixtures as slapadd would, creating the base of a bare server, reading
// a password back).
//
// When /usr/sbin/slapd is missing, Start skips the test with a message
// saying how to install it, except when CI=true, where it fails.
package slapdtest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// Binary is the slapd the harness runs.
var Binary = "/usr/sbin/slapd"

// Credentials of every harness server.
const (
	RootPassword   = "cpactl-test-secret"
	ConfigDN       = "cn=admin,cn=config"
	ConfigPassword = "cpactl-config-secret"
)

// Config chooses what the server starts with.
type Config struct {
	// Base is the suffix of the database (default ldapschema.DefaultBase).
	Base string
	// Schema is the text of the cpactl schema file to include; nil means the
	// project's schema, a pointer to "" means none (to test schema install).
	Schema *string
	// TLS serves ldaps on a second port and StartTLS on the ldap port.
	TLS bool
	// LDIF is loaded into the database (as the root DN) once slapd answers.
	LDIF string
	// WithBase adds the base entry (dc=...) before LDIF. Every server that
	// is not Bare has it (the accounts live under it); LDIF may hold it.
	WithBase bool
	// Bare leaves the database empty: no base entry, no role groups, no
	// accounts; only the root DN can write (`cpactl init` of a new server
	// creates the base).
	Bare bool
	// Durable makes back-mdb sync every commit to disk, as a production
	// server does (default: dbnosync, for speed).
	Durable bool
	// Threads is slapd's worker thread count (`threads`); 0 keeps slapd's
	// default of 16.
	Threads int
	// Debug is slapd's -d level (default 0: no logging); Server.Log returns
	// what it printed. Level 32 ("filter") reports unindexed searches.
	Debug string
	// Log also receives slapd's standard output and error.
	Log io.Writer
	// NoIndexes leaves out the indexes cpactl's searches need
	// (ldapschema.Indexes), which every server has by default.
	NoIndexes bool
	// AccessLog adds the history's accesslog overlay and its log database
	// (ldapschema.AccessLogConf, in Dir/log): what `cpactl history` and
	// --at read. Only the tests that need it pay for it.
	AccessLog bool
	// Limits replaces the database's limits line (default: "limits users
	// size=unlimited"); "sizelimit 500" alone is slapd's own default.
	Limits string

	// replication is what StartReplicated adds to the configuration
	// (serverID, syncprov or syncrepl): see replication.go.
	replication *replicaRole
	// replica: the server gets its entries from another by syncrepl, so
	// the harness loads nothing into it.
	replica bool
	// port is the ldap port to listen on (0: a free one); a mirror's peer
	// must know it before it starts.
	port int
}

// Server is a running slapd.
type Server struct {
	URL         string // ldap://127.0.0.1:PORT
	LDAPSURL    string // ldaps://127.0.0.1:PORT2 when TLS
	LDAPIURL    string // ldapi://<socket>
	Base        string
	RootDN      string
	CAFile      string // the CA that signed the server certificate (TLS)
	OtherCAFile string // a CA that did not (TLS)
	Dir         string

	cmd  *exec.Cmd
	done chan error
	log  *syncBuffer

	args []string  // slapd's command line, for Restart
	out  io.Writer // where slapd's output goes
}

// syncBuffer collects slapd's output while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Log returns what slapd has printed so far (see Config.Debug).
func (s *Server) Log() string { return s.log.String() }

// Available reports why slapd cannot run here, or nil.
func Available() error {
	if _, err := os.Stat(Binary); err != nil {
		return fmt.Errorf("%s not found: install it with `apt-get install -y slapd ldap-utils` (see README)", Binary)
	}
	return nil
}

// Start starts a server for the test and stops it when the test ends.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and slapd is missing: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("slapdtest: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// New starts a server; the caller must Stop it.
func New(cfg Config) (*Server, error) {
	if cfg.Base == "" {
		cfg.Base = ldapschema.DefaultBase
	}
	var lastErr error
	// Another process may grab the port between our probe and slapd's bind:
	// try a few ports.
	for attempt := 0; attempt < 5; attempt++ {
		s, err := start(cfg)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func start(cfg Config) (s *Server, err error) {
	// ldapi socket paths must stay under 108 bytes: a short temp dir.
	dir, err := os.MkdirTemp("", "slapd")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	port := cfg.port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	s = &Server{Dir: dir, Base: cfg.Base, RootDN: "cn=admin," + cfg.Base,
		URL: fmt.Sprintf("ldap://127.0.0.1:%d", port)}
	socket := filepath.Join(dir, "ldapi")
	s.LDAPIURL = "ldapi://" + url.PathEscape(socket)
	listen := []string{s.URL + "/", s.LDAPIURL}
	if cfg.TLS {
		tlsPort, err := freePort()
		if err != nil {
			return nil, err
		}
		s.LDAPSURL = fmt.Sprintf("ldaps://127.0.0.1:%d", tlsPort)
		listen = append(listen, s.LDAPSURL+"/")
		if err := writeCertificates(s); err != nil {
			return nil, err
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "db"), 0o700); err != nil {
		return nil, err
	}
	if cfg.AccessLog {
		if err := os.Mkdir(filepath.Join(dir, "log"), 0o700); err != nil {
			return nil, err
		}
	}
	schema := ldapschema.SchemaFile()
	if cfg.Schema != nil {
		schema = *cfg.Schema
	}
	if err := os.WriteFile(filepath.Join(dir, "cpactl.schema"), []byte(schema), 0o600); err != nil {
		return nil, err
	}
	conf := s.config(schema != "", cfg.TLS, cfg)
	confPath := filepath.Join(dir, "slapd.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	debug := cfg.Debug
	if debug == "" {
		debug = "0"
	}
	s.args = []string{"-d", debug, "-h", strings.Join(listen, " "), "-f", confPath}
	stderr := &syncBuffer{}
	s.log = stderr
	s.out = stderr
	if cfg.Log != nil {
		s.out = io.MultiWriter(stderr, cfg.Log)
	}
	if err := s.launch(); err != nil {
		return nil, err
	}
	if cfg.Bare || cfg.replica {
		return s, nil
	}
	if err := s.Load(baseEntry(cfg.Base) + "\n" + cfg.LDIF + "\n" + Accounts(cfg.Base)); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// launch runs slapd with s.args and waits until it answers.
func (s *Server) launch() error {
	cmd := exec.Command(Binary, s.args...)
	cmd.Dir = s.Dir // where a core dump lands
	cmd.Stderr = s.out
	cmd.Stdout = s.out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting slapd: %v", err)
	}
	s.cmd = cmd
	s.done = make(chan error, 1)
	go func() { s.done <- cmd.Wait() }()
	if err := s.waitReady(); err != nil {
		s.halt()
		return fmt.Errorf("%v; slapd said: %s", err, strings.TrimSpace(s.log.String()))
	}
	return nil
}

func baseEntry(base string) string {
	dn, _ := ldap.ParseDN(base)
	first := dn.RDNs[0].Attributes[0]
	return fmt.Sprintf("dn: %s\nobjectClass: top\nobjectClass: domain\n%s: %s\n", base, first.Type, first.Value)
}

func (s *Server) config(withSchema, withTLS bool, cfg Config) string {
	var b strings.Builder
	for _, name := range []string{"core", "cosine", "nis", "inetorgperson"} {
		fmt.Fprintf(&b, "include /etc/ldap/schema/%s.schema\n", name)
	}
	if withSchema {
		fmt.Fprintf(&b, "include %s\n", filepath.Join(s.Dir, "cpactl.schema"))
	}
	fmt.Fprintf(&b, "pidfile %s\nargsfile %s\n", filepath.Join(s.Dir, "slapd.pid"), filepath.Join(s.Dir, "slapd.args"))
	if cfg.Threads > 0 {
		fmt.Fprintf(&b, "threads %d\n", cfg.Threads)
	}
	// No syslog: slapd's default loglevel (stats) sends two lines per
	// operation to syslog, and without a syslog daemon each costs a socket,
	// a failed connect and a close.
	b.WriteString("loglevel 0\n")
	b.WriteString("modulepath /usr/lib/ldap\nmoduleload back_mdb.so\n")
	if cfg.AccessLog {
		b.WriteString("moduleload accesslog.so\n")
	}
	cfg.replication.global(&b)
	if withTLS {
		fmt.Fprintf(&b, "TLSCACertificateFile %s\nTLSCertificateFile %s\nTLSCertificateKeyFile %s\n",
			s.CAFile, filepath.Join(s.Dir, "server.pem"), filepath.Join(s.Dir, "server.key"))
	}
	// cn=config: the config root DN, and SASL EXTERNAL as this process's own
	// uid over ldapi, may manage it (what `cpactl schema install` uses).
	dit := ldapschema.DIT{Base: s.Base}
	acl := ldapschema.ACLOptions{Replicator: Replicator.DN(s.Base), WithoutCpactlSchema: !withSchema}
	b.WriteString(dit.ACLConfSection(ldapschema.ACLFrontend, acl))
	fmt.Fprintf(&b, "database config\nrootdn %q\nrootpw %s\n", ConfigDN, ConfigPassword)
	fmt.Fprintf(&b, "access to * by dn.exact=\"gidNumber=%d+uidNumber=%d,cn=peercred,cn=external,cn=auth\" manage by * break\n",
		os.Getgid(), os.Getuid())
	b.WriteString(dit.ACLConfSection(ldapschema.ACLConfig, acl))
	b.WriteString("database mdb\nmaxsize 1073741824\n")
	if !cfg.Durable {
		b.WriteString("dbnosync\n")
	}
	fmt.Fprintf(&b, "suffix %q\nrootdn %q\nrootpw %s\ndirectory %s\n", s.Base, s.RootDN, RootPassword, filepath.Join(s.Dir, "db"))
	if withSchema && !cfg.NoIndexes {
		b.WriteString(ldapschema.IndexesConf())
	}
	limits := cfg.Limits
	if limits == "" {
		limits = "limits users size=unlimited"
	}
	b.WriteString(limits + "\n")
	cfg.replication.database(&b, s.Base)
	b.WriteString(dit.ACLConfSection(ldapschema.ACLFederation, acl))
	if cfg.AccessLog {
		logOpts := ldapschema.AccessLogOptions{Directory: filepath.Join(s.Dir, "log")}
		b.WriteString(ldapschema.AccessLogOverlayConf(logOpts))
		b.WriteString(dit.AccessLogDatabaseConf(logOpts))
		if !cfg.Durable {
			b.WriteString("dbnosync\n")
		}
	}
	return b.String()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) waitReady() error {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("slapd exited early (%v)", err)
		default:
		}
		c, err := ldap.DialURL(s.URL, ldap.DialWithDialer(&net.Dialer{Timeout: time.Second}))
		if err == nil {
			c.SetTimeout(2 * time.Second)
			_, err = c.Search(ldap.NewSearchRequest("", ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false,
				"(objectClass=*)", []string{"namingContexts"}, nil))
			c.Close()
			if err == nil {
				// Our own child must be the one answering, not a stranger
				// that holds the port.
				select {
				case err := <-s.done:
					s.done <- err
					return fmt.Errorf("slapd exited early (%v)", err)
				default:
					return nil
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.New("slapd did not answer within 15s")
}

// Freeze stops the server process (SIGSTOP, by its own PID): it keeps its
// port, the kernel still accepts connections, and nothing answers until
// Thaw. A test that freezes must thaw before it ends (Stop does).
//
// It returns once every thread of the process is stopped
// (/proc/PID/task/*/stat say "T"): a signal takes effect when a thread is
// next scheduled, and on a loaded machine a thread could otherwise still
// answer a request sent right after.
func (s *Server) Freeze() error {
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	deadline := time.Now().Add(5 * time.Second)
	for !s.allStopped() {
		if time.Now().After(deadline) {
			return errors.New("slapd did not stop within 5s of SIGSTOP")
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// allStopped reports whether every thread of slapd is stopped; true where
// /proc cannot tell.
func (s *Server) allStopped() bool {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", s.cmd.Process.Pid))
	if err != nil || len(stats) == 0 {
		return true
	}
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the thread ended
		}
		// "pid (comm) state ...": comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) {
			continue
		}
		if st := b[i+2]; st != 'T' && st != 't' {
			return false
		}
	}
	return true
}

// Thaw resumes a frozen server (SIGCONT).
func (s *Server) Thaw() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Exited reports whether slapd has exited (crashed, as nothing but Stop
// stops it), and how.
func (s *Server) Exited() (bool, error) {
	if s.cmd == nil {
		return true, nil
	}
	select {
	case err := <-s.done:
		s.done <- err
		return true, err
	default:
		return false, nil
	}
}

// PID is slapd's process ID (0 once stopped).
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Stop stops the server by its own PID and removes its directory. A core
// dump slapd left there (it runs in that directory) is kept in the
// directory SLAPDTEST_CORES names, when set.
func (s *Server) Stop() error {
	if dir := os.Getenv("SLAPDTEST_CORES"); dir != "" {
		if data, err := os.ReadFile(filepath.Join(s.Dir, "core")); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "core-"+filepath.Base(s.Dir)), data, 0o600)
		}
	}
	s.halt()
	return os.RemoveAll(s.Dir)
}

// halt stops the process by its own PID (SIGTERM, after SIGCONT for a
// frozen one; SIGKILL after 5s) and keeps its directory.
func (s *Server) halt() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a frozen server cannot take SIGTERM
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// Halt stops the server as Stop does but keeps its directory, database and
// port, for Restart: a server that went down.
func (s *Server) Halt() { s.halt() }

// Restart starts a halted server again on the same port with the same
// database and configuration (a syncrepl consumer resumes from its
// cookie). It retries for a few seconds while the port is still held.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("slapdtest: Restart of a running server (Halt it first)")
	}
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		if err = s.launch(); err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return err
}

// Reinitialize empties a halted server's database and starts it again:
// a syncrepl consumer then refreshes everything from its provider, as
// docs/replication.md says to re-initialise a replica (stop slapd, move
// its database files away, start it).
func (s *Server) Reinitialize() error {
	if s.cmd != nil {
		return errors.New("slapdtest: Reinitialize of a running server (Halt it first)")
	}
	files, err := filepath.Glob(filepath.Join(s.Dir, "db", "*.mdb"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	return s.Restart()
}

// Dial returns a connection bound as the admin account (Account(Admin)).
func (s *Server) Dial() (*ldap.Conn, error) { return s.DialAs(s.Account(Admin)) }

// DialRoot returns a connection bound as the root DN, which no ACL
// limits: for what only the root DN can do (a bare server's base, a
// password read back).
func (s *Server) DialRoot() (*ldap.Conn, error) {
	return s.DialAs(Account{DN: s.RootDN, Password: RootPassword})
}

// DialAs returns a connection bound as a.
func (s *Server) DialAs(a Account) (*ldap.Conn, error) {
	c, err := ldap.DialURL(s.URL)
	if err != nil {
		return nil, err
	}
	c.SetTimeout(10 * time.Second)
	if err := c.Bind(a.DN, a.Password); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Load adds the entries (and add records) of an LDIF text as the root DN,
// as slapadd would load them (which needs no bind at all); the base entry
// is skipped when the server has it already.
func (s *Server) Load(text string) error {
	return s.LoadAs(Account{DN: s.RootDN, Password: RootPassword}, text)
}

// LoadAs is Load as the account a (a test's own writes: the admin).
func (s *Server) LoadAs(a Account, text string) error {
	entries, err := ReadEntries(text)
	if errors.Is(err, errNotEntry) {
		return fmt.Errorf("slapdtest: only entries can be loaded (%v)", err)
	}
	if err != nil {
		return fmt.Errorf("slapdtest: parsing LDIF: %v", err)
	}
	c, err := s.DialAs(a)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, e := range entries {
		req := ldap.NewAddRequest(e.DN, nil)
		for _, a := range e.Attributes {
			req.Attribute(a.Name, a.Values)
		}
		err := c.Add(req)
		if ldap.IsErrorWithCode(err, ldap.LDAPResultEntryAlreadyExists) && strings.EqualFold(e.DN, s.Base) {
			continue
		}
		if err != nil {
			return fmt.Errorf("slapdtest: adding %s: %v", req.DN, err)
		}
	}
	return nil
}

// Env returns the environment that points cpactl at this server as the
// admin account (for testscript).
func (s *Server) Env() []string { return s.EnvAs(s.Account(Admin)) }

// RootEnv is Env as the root DN.
func (s *Server) RootEnv() []string {
	return s.EnvAs(Account{DN: s.RootDN, Password: RootPassword})
}

// EnvAs is Env as a.
func (s *Server) EnvAs(a Account) []string {
	return []string{
		"CPACTL_URL=" + s.URL,
		"CPACTL_BASE=" + s.Base,
		"CPACTL_BIND_DN=" + a.DN,
		"CPACTL_BIND_PASSWORD=" + a.Password,
	}
}

// Wipe deletes, as the account a, every entry under the base but the base
// itself and ou=Roles (the role groups and the harness's accounts): an
// empty federation, as a test that reloads one needs it (deleting the
// base would delete the accounts it binds as).
func (s *Server) Wipe(a Account) error {
	c, err := s.DialAs(a)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.SearchWithPaging(ldap.NewSearchRequest(s.Base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", []string{"1.1"}, nil), 500)
	if err != nil {
		return fmt.Errorf("slapdtest: wipe: %v", err)
	}
	roles := ldapschema.NormalizeDN(ldapschema.DIT{Base: s.Base}.Roles())
	base := ldapschema.NormalizeDN(s.Base)
	var dns []string
	for _, e := range res.Entries {
		k := ldapschema.NormalizeDN(e.DN)
		if k == base || ldapschema.IsUnder(k, roles) {
			continue
		}
		dns = append(dns, e.DN)
	}
	// Deepest first: a parent goes after its children.
	sort.SliceStable(dns, func(i, j int) bool { return strings.Count(dns[i], ",") > strings.Count(dns[j], ",") })
	for _, dn := range dns {
		if err := c.Del(ldap.NewDelRequest(dn, nil)); err != nil {
			return fmt.Errorf("slapdtest: wipe: deleting %s: %v", dn, err)
		}
	}
	return nil
}
