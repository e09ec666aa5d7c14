package commands

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionReadsTheBuildInfo(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/cpactl/cpactl", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		name, output, want string
	}{
		{"table", "table", "version:  v1.2.3\ncommit:   0123abcd (modified)\ngo:       go1.99.1\n"},
		{"json", "json", "{\n  \"version\": \"v1.2.3\",\n  \"commit\": \"0123abcd\",\n  \"modified\": true,\n  \"go_version\": \"go1.99.1\"\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			o := &versionOptions{g: &Globals{IO: IOStreams{Out: &out}}, buildInfo: func() (*debug.BuildInfo, bool) { return info, true }}
			o.Output = tc.output
			if err := o.run(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tc.want)
			}
		})
	}
}

func TestVersionWithoutVCSInfo(t *testing.T) {
	v := versionOf(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true)
	if v.Commit != "unknown" || v.Modified || v.Version != "(devel)" || v.GoVersion != runtime.Version() {
		t.Errorf("%+v", v)
	}
	if v := versionOf(nil, false); v.Version != "unknown" {
		t.Errorf("no build info: %+v", v)
	}
}

// TestVersionCommand runs the real command: the test binary's own build
// info, as JSON with the contract's fields.
func TestVersionCommand(t *testing.T) {
	code, out, errOut := run(t, "version", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "commit", "modified", "go_version"} {
		if _, ok := v[k]; !ok {
			t.Errorf("no %q in %s", k, out)
		}
	}
	if v["go_version"] != runtime.Version() {
		t.Errorf("go_version %v, want %s", v["go_version"], runtime.Version())
	}
	if code, out, _ := run(t, "version"); code != 0 || !strings.HasPrefix(out, "version:") {
		t.Errorf("table: exit %d, %q", code, out)
	}
}

// TestVersionSaysAnUnknownCommitPlainly: with no VCS information and no
// stamp, the table says so and how to get one; a stamp fills the gap.
func TestVersionSaysAnUnknownCommitPlainly(t *testing.T) {
	info := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	var out bytes.Buffer
	o := &versionOptions{g: &Globals{IO: IOStreams{Out: &out}}, buildInfo: func() (*debug.BuildInfo, bool) { return info, true }}
	o.Output = "table"
	if err := o.run(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "commit:   unknown (built without VCS information and not stamped: see the README's build command)\n") {
		t.Errorf("got\n%s", out.String())
	}
	defer func(c string) { commit = c }(commit)
	commit = "feedc0de"
	if v := versionOf(info, true); v.Commit != "feedc0de" {
		t.Errorf("a stamped build: %+v", v)
	}
	info.Settings = []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}}
	if v := versionOf(info, true); v.Commit != "0123abcd" {
		t.Errorf("Go's record wins over the stamp: %+v", v)
	}
}
