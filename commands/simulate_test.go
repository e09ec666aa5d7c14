package commands

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/ldapschema"
)

// identicalFarm is a farm of n identical default-feature hosts with no
// limits: the buckets share a storm evenly, the naive placement piles it on
// the first host by name.
func identicalFarm(n int) (broker.Farm, []broker.Host) {
	farm := broker.Farm{Name: "F"}
	hosts := make([]broker.Host, n)
	for i := range hosts {
		hosts[i] = broker.Host{Name: fmt.Sprintf("rdsh-%d", i+1), Farm: "F", LoadIndex: 10,
			Features: broker.AllFeatures(), Enabled: true}
	}
	return farm, hosts
}

func defaultStormThresholds() [3]stormThreshold {
	return [3]stormThreshold{
		{Label: "LIT", Flag: "--lit", Value: 20, Stored: 20, Source: broker.SourceDefault},
		{Label: "CST", Flag: "--cst", Value: 20, Stored: 20, Source: broker.SourceDefault},
		{Label: "MIN", Flag: "--min", Value: 4, Stored: 4, Source: broker.SourceDefault},
	}
}

// chartOf returns the bar in a table line: its run of block characters.
func chartOf(line string) string {
	start := strings.IndexFunc(line, isBlock)
	if start < 0 {
		return ""
	}
	rest := line[start:]
	if end := strings.IndexFunc(rest, func(r rune) bool { return !isBlock(r) }); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

func isBlock(r rune) bool { return r == '█' || strings.ContainsRune(string(stormChartEighths), r) }

// section returns the lines of the table section whose heading starts
// with title, up to the next blank line.
func section(t *testing.T, out, title string) []string {
	t.Helper()
	_, after, ok := strings.Cut(out, "\n"+title)
	if !ok {
		t.Fatalf("no section %q in:\n%s", title, out)
	}
	body, _, _ := strings.Cut(after, "\n\n")
	lines := strings.Split(body, "\n")
	return lines[1:] // drop the rest of the heading line
}

func TestStormTableBarsAreProportional(t *testing.T) {
	farm, hosts := identicalFarm(8)
	t3 := defaultStormThresholds()
	rep := broker.SimulateStorm(farm, hosts, broker.HostRequest{}, broker.Thresholds{LIT: 20, CST: 20, MIN: 4}, 400)
	var buf bytes.Buffer
	if err := writeStorm(&buf, stormView{Report: rep, Farm: farm, Thresholds: t3}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()

	// Buckets: 50 each, so 8 equal bars of an eighth of the chart (the
	// scale is the naive placement's 400).
	bars := 0
	for _, line := range section(t, out, "HOSTS") {
		if !strings.HasPrefix(line, "rdsh-") {
			continue
		}
		bars++
		if got, want := chartOf(line), strings.Repeat("█", stormChartWidth/8); got != want {
			t.Errorf("bucketed bar %q, want %q (50 of 400 requests):\n%s", got, want, line)
		}
		if !strings.Contains(line, " 50 ") || !strings.Contains(line, "12.50%") {
			t.Errorf("host line lacks 50 placed / 12.50%%: %s", line)
		}
	}
	if bars != 8 {
		t.Errorf("%d host lines with a bar, want 8:\n%s", bars, out)
	}

	// Naive: one host takes everything, one full bar; the others are
	// summed up in one line.
	naive := section(t, out, "NAIVE COMPARISON")
	var rows []string
	for _, line := range naive {
		if strings.HasPrefix(line, "rdsh-") {
			rows = append(rows, line)
		}
	}
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "rdsh-1 ") {
		t.Fatalf("naive rows %q, want only rdsh-1:\n%s", rows, out)
	}
	if got, want := chartOf(rows[0]), strings.Repeat("█", stormChartWidth); got != want {
		t.Errorf("naive bar %q, want a full bar %q", got, want)
	}
	if !strings.Contains(strings.Join(naive, "\n"), "7 other hosts took none") {
		t.Errorf("naive section does not say the other hosts took none:\n%s", out)
	}
	for _, want := range []string{
		"storm on farm F: 400 requests, 400 placed, 0 found no host",
		"thresholds: LIT 20 (default), CST 20 (default), MIN 4 (default)",
		"busiest host: rdsh-1 took 50 (12.50%), 8 hosts took requests; naively: rdsh-1 took 400 (100.00%), 1 host took requests",
		"none: every request found a host",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestStormTableListsBucketChangesAndUnplacedRequests(t *testing.T) {
	// Two hosts, each refusing logons at 3 connecting sessions: 6 of 10
	// requests are placed; with CST 2 both leave bucket 1 after 2 each.
	farm := broker.Farm{Name: "F", ConnectingSessionThreshold: 3}
	hosts := []broker.Host{
		{Name: "b", Farm: "F", Features: broker.AllFeatures(), Enabled: true},
		{Name: "a", Farm: "F", Features: broker.AllFeatures(), Enabled: true},
	}
	th := defaultStormThresholds()
	th[1] = stormThreshold{Label: "CST", Flag: "--cst", Value: 2, Stored: 20, Source: broker.SourceFederation, Overridden: true}
	rep := broker.SimulateStorm(farm, hosts, broker.HostRequest{}, broker.Thresholds{LIT: 20, CST: 2, MIN: 4}, 10)
	var buf bytes.Buffer
	if err := writeStorm(&buf, stormView{Report: rep, Farm: farm, Thresholds: th}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"CST 2 (what-if --cst; cn=Common: 20)",
		"what-if: the flags override cn=Common for this simulation only; nothing is written",
		"connecting session threshold 3",
		"requests 7-10 (4 of 10) found no host",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	changes := section(t, out, "BUCKET CHANGES")
	// a then b after requests 3 and 4 (1 → 3), after 5 and 6 (3 → -).
	want := []struct{ request, host, move string }{
		{"3", "a", "1 → 3"}, {"4", "b", "1 → 3"}, {"5", "a", "3 → -"}, {"6", "b", "3 → -"},
	}
	if len(changes) != len(want)+1 {
		t.Fatalf("bucket changes:\n%s", strings.Join(changes, "\n"))
	}
	for i, w := range want {
		f := strings.Fields(changes[i+1])
		if len(f) < 5 || f[0] != w.request || f[1] != w.host || strings.Join(f[2:5], " ") != w.move {
			t.Errorf("change %d: %q, want request %s host %s move %s", i, changes[i+1], w.request, w.host, w.move)
		}
	}
	// The bucket column shows every move of a host.
	for _, line := range section(t, out, "HOSTS") {
		if strings.HasPrefix(line, "a ") && !strings.Contains(line, "1 → 3 → -") {
			t.Errorf("host a's bucket path is not 1 → 3 → -: %s", line)
		}
	}
}

func TestStormBar(t *testing.T) {
	for _, c := range []struct {
		n, scale int
		want     string
	}{
		{n: 0, scale: 10, want: ""},
		{n: 10, scale: 10, want: strings.Repeat("█", 40)},
		{n: 5, scale: 10, want: strings.Repeat("█", 20)},
		{n: 1, scale: 320, want: "▏"},
		{n: 1, scale: 100000, want: "▏"}, // any placement shows
		{n: 1, scale: 3, want: strings.Repeat("█", 13) + "▍"},
		{n: 7, scale: 8, want: strings.Repeat("█", 35)},
	} {
		if got := stormBar(c.n, c.scale); got != c.want {
			t.Errorf("stormBar(%d, %d) = %q, want %q", c.n, c.scale, got, c.want)
		}
	}
}

func TestSimulateStormValidatesBeforeAnyIO(t *testing.T) {
	// An unreachable server: a message about it would mean the command
	// read before it validated.
	base := []string{"simulate", "storm", "-H", "ldap://127.0.0.1:1", "--farm", "F"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"requests missing", nil, "--requests 0 is out of range: it takes an integer 1..1000000"},
		{"requests too many", []string{"--requests", "1000001"}, "--requests 1000001 is out of range"},
		{"lit above 100", []string{"--requests", "5", "--lit", "101"}, "--lit 101 is out of range: it takes an integer 0..100 (like pae-RDSLoadIndexThreshold)"},
		{"lit negative", []string{"--requests", "5", "--lit", "-1"}, "--lit -1 is out of range: it takes an integer 0..100"},
		{"cst above 150", []string{"--requests", "5", "--cst", "151"}, "--cst 151 is out of range: it takes an integer 0..150"},
		{"min above 1000", []string{"--requests", "5", "--min", "1001"}, "--min 1001 is out of range: it takes an integer 0..1000"},
		{"lit not a number", []string{"--requests", "5", "--lit", "high"}, `invalid argument "high" for "--lit" flag`},
		{"unknown protocol", []string{"--requests", "5", "--protocol", "ica"}, `--protocol "ica": use blast, pcoip or rdp`},
		{"unknown format", []string{"--requests", "5", "-o", "xml"}, `unknown output format "xml"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := run(t, append(base, c.args...)...)
			if code != ExitError {
				t.Fatalf("exit %d, want %d; stderr %q", code, ExitError, errOut)
			}
			assertOneLineError(t, errOut, c.want)
		})
	}
	code, _, errOut := run(t, "simulate", "storm", "-H", "ldap://127.0.0.1:1", "--requests", "5")
	if code != ExitError {
		t.Fatalf("no --farm: exit %d, want %d", code, ExitError)
	}
	assertOneLineError(t, errOut, "--farm is required")
}

// stormSnapshot writes an LDIF snapshot with one farm of two hosts and
// cn=Common storing CST 15.
func stormSnapshot(t *testing.T) string {
	t.Helper()
	d := ldapschema.DIT{Base: ldapschema.DefaultBase}
	ldif := fmt.Sprintf(`dn: %s
objectClass: organizationalUnit
ou: Sites

dn: %s
objectClass: organizationalUnit
ou: Pods

dn: %s
objectClass: pae-GlobalSettings
cn: Common
pae-RDSConnectingSessionThreshold: 15

dn: %s
objectClass: pae-Pod
cn: p1
pae-SiteDN: cn=s1,%s

dn: %s
objectClass: pae-RDSFarm
cn: F

dn: %s
objectClass: pae-RDSHost
cn: h1
pae-LoadIndex: 10

dn: %s
objectClass: pae-RDSHost
cn: h2
pae-LoadIndex: 30
`, d.Sites(), d.Pods(), d.Settings(), d.Pod("p1"), d.Sites(), d.Farm("p1", "F"),
		d.Host("p1", "F", "h1"), d.Host("p1", "F", "h2"))
	path := filepath.Join(t.TempDir(), "snap.ldif")
	if err := os.WriteFile(path, []byte(ldif), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSimulateStormUnknownFarmExits3(t *testing.T) {
	snap := stormSnapshot(t)
	code, _, errOut := run(t, "simulate", "storm", "--from", snap, "--farm", "nope", "--requests", "5")
	if code != ExitNotFound {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitNotFound, errOut)
	}
	if !strings.HasPrefix(errOut, `cpactl: farm "nope" does not exist`+"\n") {
		t.Errorf("stderr %q", errOut)
	}
}

func TestSimulateStormThresholdsFromCommonUnlessOverridden(t *testing.T) {
	snap := stormSnapshot(t)
	code, out, errOut := run(t, "simulate", "storm", "--from", snap, "--farm", "f", "--requests", "5")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %q", code, errOut)
	}
	if want := "thresholds: LIT 20 (default), CST 15 (cn=Common), MIN 4 (default)\n"; !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	code, out, errOut = run(t, "simulate", "storm", "--from", snap, "--farm", "F", "--requests", "5", "--cst", "0", "--lit", "20")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %q", code, errOut)
	}
	want := "thresholds: LIT 20 (what-if --lit; default: 20), CST 0 (what-if --cst; cn=Common: 15), MIN 4 (default)\n"
	if !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	// CST 0 leaves bucket 1 empty: every request goes to bucket 3.
	if !strings.Contains(out, "served by bucket 1: 0, bucket 2: 0, bucket 3: 5") {
		t.Errorf("the what-if CST did not reach the simulation:\n%s", out)
	}
}

func TestStormTableFarmWithoutCandidates(t *testing.T) {
	for _, c := range []struct {
		name  string
		hosts []broker.Host
		want  string
	}{
		{"no hosts", nil, "requests 1-3 (3 of 3) found no host: the farm has no hosts"},
		{"every host disabled", []broker.Host{{Name: "h", Farm: "F", Features: broker.AllFeatures()}},
			`requests 1-3 (3 of 3) found no host: no host was a candidate (see "refused" above)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			farm := broker.Farm{Name: "F"}
			rep := broker.SimulateStorm(farm, c.hosts, broker.HostRequest{}, broker.Thresholds{LIT: 20, CST: 20, MIN: 4}, 3)
			var buf bytes.Buffer
			if err := writeStorm(&buf, stormView{Report: rep, Farm: farm, Thresholds: defaultStormThresholds()}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if !strings.Contains(out, "\n  "+c.want+"\n") {
				t.Errorf("table lacks %q:\n%s", c.want, out)
			}
			if strings.Contains(out, "chart:") || strings.Contains(out, "█") {
				t.Errorf("a chart with nothing placed:\n%s", out)
			}
		})
	}
}
