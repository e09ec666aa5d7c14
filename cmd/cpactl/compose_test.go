package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
	checkReplication(t, root, string(conf), compose.Services["openldap-consumer"])
}

// checkReplication: the provider's slapd.conf and the consumer's carry the
// replication lines package slapdtest generates (and tests against real
// slapd processes), the consumer loads the same schema and no fixture, is
// published on 3390, and both files pass slaptest.
func checkReplication(t *testing.T, root, providerConf string, consumer composeService) {
	t.Helper()
	for _, want := range []string{slapdtest.ReplicationGlobal(1, true), slapdtest.ProviderDatabase()} {
		if !strings.Contains(providerConf, want) {
			t.Errorf("docker/slapd.conf lacks the provider's replication lines:\n%s", want)
		}
	}
	if consumer.Volumes == nil {
		t.Fatal("no openldap-consumer service")
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
		return
	}
	dir := t.TempDir()
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
