package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"sigs.k8s.io/yaml"

	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestDockerCompose checks what can be checked without a Docker engine:
// every file the services mount exists, the schema they load is
// byte-identical to `cpactl schema print`, and the replication
// configuration is the one the tests run (checkReplication).
func TestDockerCompose(t *testing.T) {
	root := "../.."
	raw, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]composeService `json:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	svc, ok := compose.Services["openldap"]
	if !ok {
		t.Fatal("no openldap service")
	}
	mounted := mounts(t, root, svc.Volumes)
	schemaPath, ok := mounted["/cpactl/cpactl.schema"]
	if !ok {
		t.Fatal("the schema file is not mounted at /cpactl/cpactl.schema")
	}
	got, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != ldapschema.SchemaFile() {
		t.Error("docker/cpactl.schema differs from `cpactl schema print`: run `go run ./cmd/cpactl schema print -O docker/cpactl.schema`")
	}
	conf, err := os.ReadFile(mounted["/cpactl/slapd.conf"])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), "include /cpactl/cpactl.schema") {
		t.Error("slapd.conf does not include the mounted schema")
	}
	if !strings.Contains(string(conf), ldapschema.IndexesConf()) {
		t.Error("docker/slapd.conf lacks the indexes of `cpactl schema print --format indexes`: paste them into its database section")
	}
	fixture := svc.Environment["CPACTL_FIXTURE"]
	if _, err := os.Stat(filepath.Join(mounted["/cpactl/fixtures"], fixture)); err != nil {
		t.Errorf("fixture %q loaded by the service: %v", fixture, err)
	}
	accounts, ok := mounted[svc.Environment["CPACTL_ACCOUNTS"]]
	if !ok {
		t.Fatalf("the accounts file CPACTL_ACCOUNTS %q is not a mounted file", svc.Environment["CPACTL_ACCOUNTS"])
	}
	checkACL(t, "docker/slapd.conf", string(conf))
	checkAccessLog(t, string(conf))
	if strings.Contains(string(conf), "rootpw") {
		t.Error("docker/slapd.conf gives the root DN a password: no fixed password but the demo accounts'")
	}
	consumerConf := checkReplication(t, root, string(conf), compose.Services["openldap-consumer"])
	checkACL(t, "docker/slapd-consumer.conf", consumerConf)
	runDockerProvider(t, string(conf), mounted["/cpactl/cpactl.schema"],
		filepath.Join(mounted["/cpactl/fixtures"], fixture), accounts)
}

// checkACL: a compose slapd.conf carries the access lines `cpactl schema
// print --format acl --replicator ...` generates, the global ones before
// the first database.
func checkACL(t *testing.T, name, conf string) {
	t.Helper()
	dit := ldapschema.DIT{Base: ldapschema.DefaultBase}
	opts := ldapschema.ACLOptions{Replicator: slapdtest.DockerReplicator}
	frontend := dit.ACLConfSection(ldapschema.ACLFrontend, opts)
	if i := strings.Index(conf, frontend); i < 0 || i > strings.Index(conf, "\ndatabase ") {
		t.Errorf("%s lacks, before its first database, the global access lines of `cpactl schema print --format acl`:\n%s", name, frontend)
	}
	if federation := dit.ACLConfSection(ldapschema.ACLFederation, opts); !strings.Contains(conf, federation) {
		t.Errorf("%s lacks the federation's access lines of `cpactl schema print --format acl --replicator %s`", name, slapdtest.DockerReplicator)
	}
	if strings.Contains(conf, "by * read\naccess to *") || strings.Contains(conf, "access to * by * read") {
		t.Errorf("%s lets anyone read everything", name)
	}
}

// checkAccessLog: the provider's slapd.conf carries the history's log as
// `cpactl schema print --format accesslog` prints it: the module, the
// overlay at the end of the federation's database, then the log database.
func checkAccessLog(t *testing.T, conf string) {
	t.Helper()
	dit := ldapschema.DIT{Base: ldapschema.DefaultBase}
	opts := ldapschema.AccessLogOptions{Directory: "/var/lib/ldap/accesslog"}
	overlay, db := ldapschema.AccessLogOverlayConf(opts), dit.AccessLogDatabaseConf(opts)
	i, j := strings.Index(conf, overlay), strings.Index(conf, db)
	if !strings.Contains(conf, "\nmoduleload accesslog.so\n") || i < 0 || j < i {
		t.Errorf("docker/slapd.conf lacks the history's log of `cpactl schema print --format accesslog` (module, overlay, then the log database in /var/lib/ldap/accesslog)")
	}
}

// runDockerProvider runs slapd with the compose provider's slapd.conf
// (paths mapped to a temporary directory), loads the fixture and the demo
// accounts with slapadd as the entrypoint does, and checks the roles
// through it: anonymous reads nothing, the help desk (through a nested
// group) reads, an account with no role is refused, and no role reads a
// password (the replication account does).
func runDockerProvider(t *testing.T, conf, schema, fixture, accounts string) {
	t.Helper()
	for _, tool := range []string{"/usr/sbin/slapadd", slapdtest.Binary} {
		if _, err := os.Stat(tool); err != nil {
			t.Logf("no %s here: the compose provider is not run", tool)
			return
		}
	}
	dir, err := os.MkdirTemp("", "compose")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	conf = strings.ReplaceAll(conf, "/cpactl/cpactl.schema", schema)
	conf = strings.ReplaceAll(conf, "/var/run/slapd/", dir+"/")
	conf = strings.ReplaceAll(conf, "/var/lib/ldap", dir)
	path := filepath.Join(dir, "slapd.conf")
	if err := os.Mkdir(filepath.Join(dir, "accesslog"), 0o700); err != nil { // entrypoint.sh makes each directory
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ldif := range []string{fixture, accounts} {
		if out, err := exec.Command("/usr/sbin/slapadd", "-w", "-f", path, "-l", ldif).CombinedOutput(); err != nil {
			t.Fatalf("slapadd %s: %v\n%s", ldif, err, out)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ldap://" + l.Addr().String()
	l.Close()
	cmd := exec.Command(slapdtest.Binary, "-d", "0", "-h", url+"/", "-f", path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }() // our own child, by its PID
	var c *ldap.Conn
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err = ldap.DialURL(url); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the compose provider does not answer: %v", err)
		}
	}
	defer c.Close()
	base := ldapschema.DefaultBase
	search := func(attrs ...string) (*ldap.SearchResult, error) {
		return c.Search(ldap.NewSearchRequest(base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
			"(objectClass=*)", attrs, nil))
	}
	if res, err := search(); entries(res) != 0 || !ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		t.Errorf("compose provider, anonymous search of the base: %d entries, %v; want none", entries(res), err)
	}
	bind := func(uid, pw string) {
		t.Helper()
		if err := c.Bind("uid="+uid+",ou=Accounts,"+base, pw); err != nil {
			t.Fatalf("bind as %s: %v", uid, err)
		}
	}
	bind("hedy", "demo-hedy")
	res, err := search("userPassword")
	if err != nil || entries(res) < 100 {
		t.Errorf("compose provider, the help desk (through cn=helpdesk-tier1): %d entries, %v", entries(res), err)
	}
	for _, e := range res.Entries {
		if len(e.GetAttributeValues("userPassword")) > 0 {
			t.Errorf("the help desk reads the password of %s", e.DN)
		}
	}
	bind("nora", "demo-nora")
	if _, err := search(); !ldap.IsErrorWithCode(err, ldap.LDAPResultInsufficientAccessRights) {
		t.Errorf("compose provider, an account with no role: %v, want insufficient access", err)
	}
	// The history: an admin's write is logged, the help desk reads it,
	// an account with no role does not.
	bind("ann", "demo-ann")
	mod := ldap.NewModifyRequest(base, nil)
	mod.Replace("description", []string{"logged"})
	if err := c.Modify(mod); err != nil {
		t.Fatalf("compose provider, the admin's write: %v", err)
	}
	logged := func() (*ldap.SearchResult, error) {
		return c.Search(ldap.NewSearchRequest(ldapschema.AccessLogBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
			"(reqType=modify)", []string{"reqMod"}, nil))
	}
	bind("nora", "demo-nora")
	if _, err := logged(); !ldap.IsErrorWithCode(err, ldap.LDAPResultInsufficientAccessRights) {
		t.Errorf("compose provider, an account with no role reading the log: %v, want insufficient access", err)
	}
	bind("hedy", "demo-hedy")
	if res, err := logged(); err != nil || entries(res) != 1 {
		t.Errorf("compose provider, the help desk reading the log: %d records, %v; want the admin's write", entries(res), err)
	}
	bind("replicator", "demo-replicator")
	res, err = search("userPassword")
	if err != nil {
		t.Errorf("compose provider, the replication account: %v", err)
	}
	passwords := 0
	for _, e := range entries2(res) {
		passwords += len(e.GetAttributeValues("userPassword"))
	}
	if passwords < 5 {
		t.Errorf("the replication account reads %d passwords, want the demo accounts' (it replicates them)", passwords)
	}
}

// checkReplication: the provider's slapd.conf and the consumer's carry the
// replication lines package slapdtest generates (and tests against real
// slapd processes), the consumer loads the same schema and no fixture, is
// published on 3390, and both files pass slaptest.
func checkReplication(t *testing.T, root, providerConf string, consumer composeService) string {
	t.Helper()
	for _, want := range []string{slapdtest.ReplicationGlobal(1, true), slapdtest.ProviderDatabase()} {
		if !strings.Contains(providerConf, want) {
			t.Errorf("docker/slapd.conf lacks the provider's replication lines:\n%s", want)
		}
	}
	if consumer.Volumes == nil {
		t.Fatal("no openldap-consumer service")
	}
	if _, ok := consumer.Environment["CPACTL_ACCOUNTS"]; ok {
		t.Error("the consumer loads accounts: it must start empty, syncrepl fills it")
	}
	mounted := mounts(t, root, consumer.Volumes)
	confPath, ok := mounted[consumer.Environment["CPACTL_SLAPD_CONF"]]
	if !ok {
		t.Fatalf("the consumer's CPACTL_SLAPD_CONF %q is not a mounted file", consumer.Environment["CPACTL_SLAPD_CONF"])
	}
	raw, err := os.ReadFile(confPath)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(raw)
	for _, want := range []string{slapdtest.ReplicationGlobal(2, false), slapdtest.DockerConsumer().Database(),
		"include /cpactl/cpactl.schema", ldapschema.IndexesConf(), "threads 2"} {
		if !strings.Contains(conf, want) {
			t.Errorf("%s lacks:\n%s", confPath, want)
		}
	}
	if schema, err := os.ReadFile(mounted["/cpactl/cpactl.schema"]); err != nil || string(schema) != ldapschema.SchemaFile() {
		t.Errorf("the consumer does not mount docker/cpactl.schema at /cpactl/cpactl.schema (%v)", err)
	}
	if f, ok := consumer.Environment["CPACTL_FIXTURE"]; !ok || f != "" {
		t.Errorf("the consumer loads fixture %q: it must start empty (CPACTL_FIXTURE: \"\"), syncrepl fills it", f)
	}
	if len(consumer.Ports) != 1 || !strings.HasPrefix(consumer.Ports[0], "127.0.0.1:3390:") {
		t.Errorf("the consumer's ports: %v, want 127.0.0.1:3390:389", consumer.Ports)
	}
	if !strings.Contains(conf, "updateref ldap://127.0.0.1:3389\n") {
		t.Error("the consumer must refer writes to the provider as cpactl reaches it, ldap://127.0.0.1:3389")
	}
	// slaptest checks the syntax (and that the modules and overlays load),
	// with the container's paths mapped to the repository's.
	if _, err := os.Stat("/usr/sbin/slaptest"); err != nil {
		t.Log("no slaptest here: the slapd.conf files are not checked by slapd")
		return conf
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "accesslog"), 0o700); err != nil { // the provider's log (entrypoint.sh)
		t.Fatal(err)
	}
	for name, text := range map[string]string{"provider": providerConf, "consumer": conf} {
		text = strings.ReplaceAll(text, "/cpactl/cpactl.schema", mounted["/cpactl/cpactl.schema"])
		text = strings.ReplaceAll(text, "/var/run/slapd/", dir+"/")
		text = strings.ReplaceAll(text, "/var/lib/ldap", dir)
		path := filepath.Join(dir, name+".conf")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("/usr/sbin/slaptest", "-u", "-f", path).CombinedOutput(); err != nil {
			t.Errorf("slaptest of the %s's slapd.conf: %v\n%s", name, err, out)
		}
	}
	return conf
}

type composeService struct {
	Volumes     []string          `json:"volumes"`
	Environment map[string]string `json:"environment"`
	Ports       []string          `json:"ports"`
}

// mounts maps each file a service mounts from the repository to its path
// here, and checks it exists.
func mounts(t *testing.T, root string, volumes []string) map[string]string {
	t.Helper()
	mounted := map[string]string{}
	for _, v := range volumes {
		parts := strings.Split(v, ":")
		if !strings.HasPrefix(parts[0], "./") {
			continue // a named volume
		}
		src := filepath.Join(root, parts[0])
		if _, err := os.Stat(src); err != nil {
			t.Errorf("volume %q: %v", v, err)
		}
		mounted[parts[1]] = src
	}
	return mounted
}

func entries2(res *ldap.SearchResult) []*ldap.Entry {
	if res == nil {
		return nil
	}
	return res.Entries
}
