package generate_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/generate"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/lint"
)

// tool returns the path of an OpenLDAP program, skipping the test (failing
// it under CI=true) when it is missing, as the slapd harness does.
func tool(t *testing.T, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s is missing: install slapd and ldap-utils", path)
		}
		t.Skipf("skipping: %s not found: install it with `apt-get install -y slapd ldap-utils`", path)
	}
	return path
}

func writeFile(t *testing.T, cfg generate.Config) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "federation.ldif")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generate.Write(f, cfg); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadsWithLdapadd: the output loads with ldapadd into an empty slapd
// that has cpactl's schema, and the live directory lints clean.
func TestLoadsWithLdapadd(t *testing.T) {
	ldapadd := tool(t, "/usr/bin/ldapadd")
	cfg := midSize(5)
	file := writeFile(t, cfg)
	// A bare server and the root DN: the file holds the base entry, which
	// only the root DN can add to a database that has none.
	s := slapdtest.Start(t, slapdtest.Config{Bare: true})
	cmd := exec.Command(ldapadd, "-x", "-H", s.URL, "-D", s.RootDN, "-w", slapdtest.RootPassword, "-f", file)
	cmd.Env = append(os.Environ(), "LDAPNOINIT=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ldapadd: %v\n%s", err, lastLines(string(out), 5))
	}
	conn, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.RootDN, Password: slapdtest.RootPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	res, err := conn.Search(ldap.NewSearchRequest(cfg.Base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", []string{"1.1"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != cfg.Entries() {
		t.Errorf("the server holds %d entries, want %d", len(res.Entries), cfg.Entries())
	}
	inv, err := directory.NewStore(conn, cfg.Base).Inventory()
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Sessions) != cfg.Sessions || len(inv.Users) != cfg.Users {
		t.Errorf("read back %d sessions and %d users, want %d and %d", len(inv.Sessions), len(inv.Users), cfg.Sessions, cfg.Users)
	}
	for _, f := range lint.Run(*inv) {
		t.Errorf("live: %s %s: %s: %s", f.Kind, f.Object, f.Check, f.Message)
	}
}

// TestLoadsWithSlapadd: the output loads offline with slapadd (schema
// checks on) into an empty back-mdb database configured like the test
// harness's, and slapcat reads every entry back.
func TestLoadsWithSlapadd(t *testing.T) {
	dir := filepath.Dir(slapdtest.Binary)
	slapadd := tool(t, filepath.Join(dir, "slapadd"))
	slapcat := tool(t, filepath.Join(dir, "slapcat"))
	for _, cfg := range []generate.Config{demo(t, 1), midSize(6)} {
		file := writeFile(t, cfg)
		conf := offlineDatabase(t, cfg.Base)
		if out, err := exec.Command(slapadd, "-f", conf, "-l", file).CombinedOutput(); err != nil {
			t.Fatalf("slapadd: %v\n%s", err, lastLines(string(out), 5))
		}
		out, err := exec.Command(slapcat, "-f", conf).Output()
		if err != nil {
			t.Fatalf("slapcat: %v", err)
		}
		n := 0
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "dn:") {
				n++
			}
		}
		if n != cfg.Entries() {
			t.Errorf("slapcat reads %d entries back, want %d", n, cfg.Entries())
		}
	}
}

// offlineDatabase writes a slapd.conf for an empty back-mdb database under
// base with cpactl's schema (the harness's configuration, without a
// listener) and returns its path.
func offlineDatabase(t *testing.T, base string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	schema := filepath.Join(dir, "cpactl.schema")
	if err := os.WriteFile(schema, []byte(ldapschema.SchemaFile()), 0o600); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, name := range []string{"core", "cosine", "nis", "inetorgperson"} {
		fmt.Fprintf(&b, "include /etc/ldap/schema/%s.schema\n", name)
	}
	fmt.Fprintf(&b, "include %s\n", schema)
	b.WriteString("modulepath /usr/lib/ldap\nmoduleload back_mdb.so\n")
	fmt.Fprintf(&b, "database mdb\nmaxsize 1073741824\nsuffix %q\nrootdn %q\ndirectory %s\n",
		base, "cn=admin,"+base, filepath.Join(dir, "db"))
	conf := filepath.Join(dir, "slapd.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
