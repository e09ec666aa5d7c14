package commands

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// needDot returns the path of Graphviz's dot; without it the test is
// skipped, or fails under CI (scripts/test installs graphviz).
func needDot(t *testing.T) string {
	t.Helper()
	dot, err := exec.LookPath("dot")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and Graphviz's dot is missing: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	return dot
}

// parseDOT renders src with dot -Tsvg and fails on any complaint.
func parseDOT(t *testing.T, dot, src string) {
	t.Helper()
	cmd := exec.Command(dot, "-Tsvg")
	cmd.Stdin = strings.NewReader(src)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil || errOut.Len() > 0 || !strings.Contains(out.String(), "<svg") {
		t.Fatalf("dot -Tsvg: %v\n%s\n%s", err, errOut.String(), src)
	}
}

var dotEdge = regexp.MustCompile(`^  "site/((?:[^"\\]|\\.)*)" -> "site/((?:[^"\\]|\\.)*)" \[taillabel="([0-9]+)(?:: skipped)?"`)

func dotUnquote(s string) string { return strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(s) }

// TestSiteGraphEdges: on every fixture, `site graph -o dot` parses with
// dot and holds exactly the preferred-site edges `site list` reports,
// each with its rank (1 first), in rank order.
func TestSiteGraphEdges(t *testing.T) {
	dot := needDot(t)
	for _, fixture := range []string{"demo.ldif", "seed-000.ldif", "resolve-seed-000-scenario-2.ldif", "broker-complete.ldif"} {
		t.Run(fixture, func(t *testing.T) {
			from := "../fixtures/" + fixture
			code, list, stderr := run(t, "site", "list", "--from", from, "-o", "json")
			if code != 0 {
				t.Fatalf("site list: exit %d: %s", code, stderr)
			}
			var sites []SiteView
			if err := json.Unmarshal([]byte(list), &sites); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, s := range sites {
				for i, p := range s.PreferredSites {
					want = append(want, fmt.Sprintf("%s -> %s rank %d", s.Name, p, i+1))
				}
			}
			if len(want) == 0 {
				t.Fatalf("%s has no preferred sites: nothing is checked", fixture)
			}
			code, graph, stderr := run(t, "site", "graph", "--from", from)
			if code != 0 {
				t.Fatalf("site graph: exit %d: %s", code, stderr)
			}
			parseDOT(t, dot, graph)
			var got []string
			for _, line := range strings.Split(graph, "\n") {
				if m := dotEdge.FindStringSubmatch(line); m != nil {
					got = append(got, fmt.Sprintf("%s -> %s rank %s", dotUnquote(m[1]), dotUnquote(m[2]), m[3]))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("edges:\n%s\nsite list says:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for _, s := range sites {
				for _, p := range s.Pods {
					if !strings.Contains(graph, "\"pod/"+p+"\"") {
						t.Errorf("pod %s of %s is not drawn", p, s.Name)
					}
				}
			}
		})
	}
}

// TestResolveDOTParses: resolve -o dot parses with dot for a placement
// through a preferred site, a backup entitlement and a refusal.
func TestResolveDOTParses(t *testing.T) {
	dot := needDot(t)
	for _, args := range [][]string{
		{"--from", "../fixtures/resolve-seed-000.ldif", "--user", "alice", "--entitlement", "Sales Desktops", "--connection-server", "india-cs-1"},
		{"--from", "../fixtures/broker-complete.ldif", "--user", "alice", "--entitlement", "Sales Desktop", "--connection-server", "cs-lon-1"},
		{"--from", "../fixtures/broker-complete.ldif", "--user", "alice", "--entitlement", "Sales Desktop", "--connection-server", "cs-lon-1", "--offline-pod", "NewYork-1"},
		{"--from", "../fixtures/demo.ldif", "--user", "carol", "--entitlement", "Desktops", "--connection-server", "cs-nyc-1"},
	} {
		code, out, stderr := run(t, append(append([]string{"resolve"}, args...), "-o", "dot")...)
		if code != 0 && code != ExitNoSession {
			t.Fatalf("resolve %v: exit %d: %s", args, code, stderr)
		}
		parseDOT(t, dot, out)
		if !strings.Contains(out, `"outcome" [label=`) {
			t.Errorf("resolve %v: no outcome node:\n%s", args, out)
		}
	}
}

// TestPicturesAreCurrent: the picture the README shows is current.
// docs/pictures/demo-sites.dot is what `site graph --from
// fixtures/demo.ldif` draws now, and demo-sites.svg was drawn by dot from
// that very file: scripts/pictures writes the DOT's sha256 into the SVG.
func TestPicturesAreCurrent(t *testing.T) {
	code, graph, stderr := run(t, "site", "graph", "--from", "../fixtures/demo.ldif")
	if code != 0 {
		t.Fatalf("site graph: exit %d: %s", code, stderr)
	}
	dotFile, err := os.ReadFile("../docs/pictures/demo-sites.dot")
	if err != nil {
		t.Fatal(err)
	}
	if string(dotFile) != graph {
		t.Fatalf("docs/pictures/demo-sites.dot is stale: run scripts/pictures")
	}
	svg, err := os.ReadFile("../docs/pictures/demo-sites.svg")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(dotFile)
	if !bytes.Contains(svg, []byte("sha256 "+hex.EncodeToString(sum[:]))) {
		t.Fatalf("docs/pictures/demo-sites.svg was not drawn from the current demo-sites.dot: run scripts/pictures")
	}
	// Every site, pod and rank of the DOT is in the SVG's text.
	for _, m := range regexp.MustCompile(`label="([^"\\]+)`).FindAllStringSubmatch(graph, -1) {
		first := strings.SplitN(m[1], `\n`, 2)[0]
		if _, err := strconv.Atoi(first); err == nil || !strings.Contains(first, " ") {
			if !bytes.Contains(svg, []byte(">"+strings.ReplaceAll(first, "-", "&#45;")+"<")) {
				t.Errorf("the SVG does not show %q", first)
			}
		}
	}
}
