package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/cpactl/cpactl/ldapschema"
)

// TestDockerCompose checks what can be checked without a Docker engine:
// every file the service mounts exists, and the schema it loads is
// byte-identical to `cpactl schema print`.
func TestDockerCompose(t *testing.T) {
	root := "../.."
	raw, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Volumes     []string          `json:"volumes"`
			Environment map[string]string `json:"environment"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	svc, ok := compose.Services["openldap"]
	if !ok {
		t.Fatal("no openldap service")
	}
	mounted := map[string]string{}
	for _, v := range svc.Volumes {
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
}
