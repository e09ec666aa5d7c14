package commands

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/broker"
)

// tableFederation: bob, in groups Zulu and alpha (whose global home sites
// conflict), asks for "Desk" through a pod of Paris. Desk uses home sites
// and preferred sites, ignores overloaded ones (policy LOAD). Paris ranks
// Oslo; Oslo's only pod is offline; Rome's farm has no host for RDP.
func tableFederation() *broker.Federation {
	h := func(name string, f broker.Features) broker.Host {
		return broker.Host{Name: name, Farm: "rome-farm", LoadIndex: 5, Features: f, Enabled: true}
	}
	return &broker.Federation{
		Settings: broker.DefaultSettings(),
		Sites: []broker.Site{
			{Name: "Paris", PreferredSites: []string{"Oslo", "Rome"}},
			{Name: "Oslo"}, {Name: "Rome"}, {Name: "Madrid"},
		},
		Pods: []broker.Pod{
			{Name: "paris-1", Site: "Paris", Online: true},
			{Name: "oslo-1", Site: "Oslo", Online: false},
			{Name: "rome-1", Site: "Rome", Online: true},
			{Name: "madrid-1", Site: "Madrid", Online: true},
		},
		Entitlements: []broker.Entitlement{{
			Name: "Desk", Type: broker.TypeDesktop, Scope: broker.ScopeAny, UseHomeSite: true,
			UsePreferredSites: true, IgnoreHighLoad: true, Policy: broker.PolicyLoad, Enabled: true,
			Members: []broker.Member{{Kind: broker.MemberGroup, Name: "Zulu"}},
			Pools:   []string{"paris-desk", "oslo-desk", "rome-rds", "madrid-desk"},
		}},
		Pools: []broker.Pool{
			{Name: "paris-desk", Pod: "paris-1", Kind: broker.KindDesktop, Capacity: 4, Sessions: 4, Enabled: true},
			{Name: "oslo-desk", Pod: "oslo-1", Kind: broker.KindDesktop, Capacity: 4, Enabled: true},
			{Name: "rome-rds", Pod: "rome-1", Kind: broker.KindRDSDesktop, Farm: "rome-farm", Enabled: true},
			{Name: "madrid-desk", Pod: "madrid-1", Kind: broker.KindDesktop, Capacity: 10, Sessions: 10, Enabled: true},
		},
		Farms: []broker.Farm{{Name: "rome-farm", Pod: "rome-1"}},
		Hosts: []broker.Host{
			h("rome-h1", broker.Features{MultiSession: true, Blast: true}),
			h("rome-h2", broker.Features{MultiSession: true, PCoIP: true}),
		},
		Users:  []broker.User{{Name: "bob", Groups: []string{"Zulu", "alpha"}}},
		Groups: []broker.Group{{Name: "Zulu"}, {Name: "alpha"}},
		HomeSites: []broker.HomeSite{
			{Group: "Zulu", Site: "Madrid"},
			{Group: "alpha", Site: "Paris"},
		},
	}
}

// TestResolveTableReadsTopDown: the table gives the outcome first, then the
// request and checks, the home site with every row and the conflict, the
// site order with what happened at each site and the load against the
// threshold, the pools, the RDS hosts of the farm tried, and the trace.
func TestResolveTableReadsTopDown(t *testing.T) {
	d, err := broker.Resolve(tableFederation(), broker.Request{User: "bob", Entitlement: "Desk", Pod: "paris-1",
		Protocol: broker.ProtocolRDP})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != broker.OutcomeNoCapacity {
		t.Fatalf("%s: %s", d.Outcome, d.Reason)
	}
	var b bytes.Buffer
	if err := writeDecision(&b, d); err != nil {
		t.Fatal(err)
	}
	out := squeeze(b.String())
	want := []string{
		"NO_CAPACITY: nothing in scope can take the session",
		"\nrequest: bob -> Desk (floating desktop, scope ANY, policy LOAD) via pod paris-1, site Paris, protocol RDP, seed 0\n",
		"\nchecks passed: enabled, membership, connection_server_tags\n",
		"\nHOME SITE\n  Paris (GROUP_DEFAULT): the search starts there\n",
		"\n  wins:  group alpha -> Paris (global, GROUP_DEFAULT)\n",
		"\n  loses: group Zulu -> Madrid (global, GROUP_DEFAULT): conflict at GROUP_DEFAULT: group alpha sorts first (case-insensitive), so its site Paris wins\n",
		"\n  conflict at GROUP_DEFAULT: alpha -> Paris, Zulu -> Madrid; alpha wins (first by name): this decides the home site\n",
		"\nSITE ORDER (preferred sites above pae-LoadThresholdForSite 98 are skipped)\n",
		"\n1  starting   Paris   100.00  searched: no room (1 pool full)\n",
		"\n2  preferred  Oslo    -       skipped: no online pod in scope with an available pool of Desk\n",
		"\n3  preferred  Rome    5.00 <= 98  searched: no room (1 pool with no host)\n",
		"\n4  remaining  Madrid  100.00  searched: no room (1 pool full)\n",
		"\nPODS AND POOLS CONSIDERED\n",
		"\nOslo oslo-1 oslo-desk DESKTOP - unavailable pod oslo-1 is offline\n",
		"\nRome rome-1 rome-rds RDS_DESKTOP 5.00 no_host farm rome-farm yields no host for the request",
		"\nRDS HOSTS OF FARM rome-farm (pool rome-rds): no host can take the session;",
		"\nrome-h1 - 5 0 0 refused: does not support protocol RDP\n",
		"\nTRACE\n   1. [request] ",
	}
	pos := 0
	for _, w := range want {
		// In order; a line's newline may begin the next expectation.
		w = strings.TrimSuffix(squeeze(w), "\n")
		i := strings.Index(out[pos:], w)
		if i < 0 {
			t.Fatalf("after byte %d, the table lacks %q:\n%s", pos, w, out)
		}
		pos += i + len(w)
	}
}

// TestResolveTableChooseSession: several sessions are listed with what
// resolve made of each, and the table says what becomes of the others.
func TestResolveTableChooseSession(t *testing.T) {
	f := tableFederation()
	f.Entitlements[0].AutoClean = true
	f.Sessions = []broker.Session{
		{ID: "s2", User: "bob", Entitlement: "Desk", Pod: "rome-1", Pool: "rome-rds", Host: "rome-h1", State: broker.StateConnected},
		{ID: "s1", User: "bob", Entitlement: "Desk", Pod: "madrid-1", Pool: "madrid-desk", State: broker.StateDisconnected},
		{ID: "s3", User: "bob", Entitlement: "Desk", Pod: "oslo-1", Pool: "oslo-desk", State: broker.StateConnected},
	}
	d, err := broker.Resolve(f, broker.Request{User: "bob", Entitlement: "Desk", Pod: "paris-1"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeDecision(&b, d); err != nil {
		t.Fatal(err)
	}
	out := squeeze(b.String())
	for _, w := range []string{
		"CHOOSE_SESSION: bob has 2 sessions of Desk in scope (s1, s2)",
		"\n  the sessions not chosen are logged off automatically\n",
		"\nEXISTING SESSIONS\nSESSION  SITE    POD       POOL         HOST     STATE         CLIENT  WHAT RESOLVE MADE OF IT\n",
		"\ns1       Madrid  madrid-1  madrid-desk  -        DISCONNECTED  -       in scope; offered\n",
		"\ns2       Rome    rome-1    rome-rds     rome-h1  CONNECTED     -       in scope; offered\n",
		"\ns3       Oslo    oslo-1    oslo-desk    -        CONNECTED     -       pod oslo-1 is offline; ignored\n",
	} {
		if w = squeeze(w); !strings.Contains(out, w) {
			t.Errorf("the table lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "SITE ORDER") {
		t.Errorf("no site is searched for CHOOSE_SESSION, yet the table has a site order:\n%s", out)
	}
}

// squeeze collapses runs of spaces, so that expectations do not depend on
// column widths.
func squeeze(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return s
}

// TestResolveWalkthroughIsCurrent: the walk-through in docs/resolve.md
// ("Why did my user land there?") shows the real output of its command on
// the bundled fixture; a change to resolve's output must update it.
func TestResolveWalkthroughIsCurrent(t *testing.T) {
	code, out, errOut := run(t, "resolve", "--from", "../fixtures/resolve-seed-000-scenario-2.ldif",
		"--user", "alice", "--entitlement", "Sales Desktops", "--connection-server", "india-cs-1")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	const prompt = "$ cpactl resolve --from fixtures/resolve-seed-000-scenario-2.ldif \\\n" +
		"    --user alice --entitlement \"Sales Desktops\" --connection-server india-cs-1\n"
	// The README carries the same walk-through.
	for _, path := range []string{"../docs/resolve.md", "../README.md"} {
		doc, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(doc), prompt)
		if !ok {
			t.Fatalf("%s has no console block starting %q", path, prompt)
		}
		shown, _, ok := strings.Cut(rest, "```")
		if !ok {
			t.Fatalf("%s: the console block does not end", path)
		}
		if out != shown {
			t.Errorf("%s shows:\n%s\nresolve prints:\n%s", path, shown, out)
		}
	}
}
