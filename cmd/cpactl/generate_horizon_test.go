package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/commands"
	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/internal/horizontest"
)

// runInProcess runs cpactl's main in this process and fails the test on a
// non-zero exit.
func runInProcess(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := commands.Main(args, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("cpactl %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return out.String()
}

// records returns the records of every (endpoint, pod) of a pull, in
// order, compacted.
func pullRecords(t *testing.T, dir string) (*horizon.Manifest, map[string][]string) {
	t.Helper()
	m, err := horizon.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, f := range m.Files {
		k := f.Endpoint + " " + f.Pod
		err := horizon.EachRecord(dir, f, func(raw json.RawMessage) error {
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return err
			}
			out[k] = append(out[k], b.String())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return m, out
}

// withoutEndpoints drops the pods' endpoints reads: a pull given
// --pod-url for a pod (as the test Horizon's servers, on ports of
// 127.0.0.1, must be reached) does not read where the pod is.
func withoutEndpoints(files []horizon.File) []horizon.File {
	var out []horizon.File
	for _, f := range files {
		if f.Endpoint != "pod-endpoints" {
			out = append(out, f)
		}
	}
	return out
}

// TestGenerateHorizonPull: a federation generated as a pull directory,
// served by the test Horizon and pulled with `cpactl horizon pull`, gives
// the same pull: the same files byte for byte (pages of the same size),
// with the request count the generated manifest predicts (less the
// endpoints reads --pod-url saves); and with another page size, the same
// records.
func TestGenerateHorizonPull(t *testing.T) {
	for _, gen := range [][]string{
		{"--seed", "1"},
		{"--seed", "4", "--page-size", "7"},
		{"--seed", "2", "--sites", "5", "--pods", "12", "--offline-pods", "2", "--connection-servers", "30", "--farms", "15",
			"--hosts", "150", "--pools", "120", "--entitlements", "50", "--users", "800", "--groups", "120", "--computers", "60",
			"--home-sites", "200", "--assignments", "250", "--sessions", "2500"},
	} {
		t.Run(strings.Join(gen, " "), func(t *testing.T) {
			tmp := t.TempDir()
			generated := filepath.Join(tmp, "generated")
			runInProcess(t, append([]string{"generate", "--format", "horizon", "-O", generated}, gen...)...)
			f := horizontest.StartPull(t, generated)
			t.Setenv("CPACTL_HORIZON_PASSWORD", horizontest.Password)
			gm, want := pullRecords(t, generated)
			pull := func(dir string, extra ...string) {
				args := append([]string{"horizon", "pull", "--url", f.URL(f.MainPod()), "--ca-file", f.CAFile,
					"--domain", horizontest.Domain, "--user", horizontest.User, "-o", dir}, f.PodURLFlags()...)
				out := runInProcess(t, append(args, extra...)...)
				if !strings.HasPrefix(out, fmt.Sprintf("pulled %d pods", len(gm.Pods))) {
					t.Errorf("pull said %q", out)
				}
			}
			same := filepath.Join(tmp, "same")
			pull(same, "--page-size", fmt.Sprint(gm.PageSize))
			pm, got := pullRecords(t, same)
			gfiles := withoutEndpoints(gm.Files)
			if len(pm.Files) != len(gfiles) {
				t.Fatalf("the pull has %d files, the generated directory %d (less its endpoints reads)", len(pm.Files), len(gfiles))
			}
			for i, g := range gfiles {
				p := pm.Files[i]
				if p.Name != g.Name || p.Endpoint != g.Endpoint || p.Path != g.Path || p.Query != g.Query || p.Pod != g.Pod ||
					p.Page != g.Page || p.Records != g.Records || p.SHA256 != g.SHA256 {
					t.Errorf("file %d: pulled %+v, generated %+v", i, p, g)
				}
			}
			endpoints := 0
			for _, g := range gm.Files {
				if g.Endpoint == "pod-endpoints" {
					endpoints++
				}
			}
			if endpoints != len(gm.Pods)-1 || pm.Requests != gm.Requests-int64(endpoints) {
				t.Errorf("the pull took %d requests, the generated manifest says %d with %d endpoints reads", pm.Requests, gm.Requests, endpoints)
			}
			for k := range want {
				if strings.HasPrefix(k, "pod-endpoints ") {
					delete(want, k)
				}
			}
			gcounts := gm.Counts
			delete(gcounts, "pod-endpoints")
			if fmt.Sprint(pm.Counts) != fmt.Sprint(gcounts) || len(pm.Pods) != len(gm.Pods) || !pm.PreferredSites {
				t.Errorf("pulled counts %v, generated %v", pm.Counts, gcounts)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("the pull's records differ from the generated ones")
			}
			// Another page size: other pages, the same records.
			other := filepath.Join(tmp, "other")
			pull(other, "--page-size", "3")
			om, got := pullRecords(t, other)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				for k := range want {
					if fmt.Sprint(got[k]) != fmt.Sprint(want[k]) {
						t.Errorf("%s: with pages of 3, %d records differ from the %d generated", k, len(got[k]), len(want[k]))
					}
				}
			}
			if om.Requests <= gm.Requests && gm.Counts["global-sessions"] > 3*len(gm.Pods) {
				t.Errorf("pages of 3 took %d requests, no more than pages of %d (%d)", om.Requests, gm.PageSize, gm.Requests)
			}
		})
	}
}
