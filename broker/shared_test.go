package broker

import (
	"strings"
	"testing"
)

// withApps makes Sales Desktop an application GE ("Sales Apps" in words)
// whose pool uk-app is served by farm uk-farm (hosts uk-h1, uk-h2), with a
// second farm us-farm for us-app, and adds the application GE Calculator
// with its own pool calc on uk-farm.
func withApps(f *Federation) {
	g := ge(f)
	g.Type, g.Pools = TypeApplication, nil
	addFarmPool(f, "uk-app", "uk-pod1", "uk-farm", KindApplication, 0, host("uk-h1", 5, 0, 0), host("uk-h2", 5, 0, 0))
	addFarmPool(f, "us-app", "us-pod1", "us-farm", KindApplication, 0, host("us-h1", 5, 0, 0))
	f.Pools = append(f.Pools, Pool{Name: "calc", Pod: "uk-pod1", Kind: KindApplication, Farm: "uk-farm", Enabled: true})
	f.Entitlements = append(f.Entitlements, Entitlement{Name: "Calculator", Type: TypeApplication, Enabled: true,
		Members: []Member{{Kind: MemberGroup, Name: "Sales"}}, Pools: []string{"calc"}})
}

// calcSession is alice's session of Calculator on host h of pod.
func calcSession(id, pod, h string, state SessionState) Session {
	return Session{ID: id, User: "alice", Entitlement: "Calculator", Pod: pod, Pool: "calc", Host: h, State: state}
}

func wantShared(t *testing.T, d *Decision, session, hostName string) {
	t.Helper()
	wantOutcome(t, d, OutcomeReconnect)
	if d.SharedSession == nil || d.SharedSession.Entitlement != "Calculator" || d.SharedSession.Session != session {
		t.Fatalf("shared_session %+v", d.SharedSession)
	}
	if p := d.Placement; p == nil || p.Pool != "uk-app" || p.Farm != "uk-farm" || p.Host != hostName || p.Pod != "uk-pod1" || p.Site != "UK" || p.Session != session {
		t.Fatalf("placement %+v", d.Placement)
	}
}

func wantNotShared(t *testing.T, d *Decision, why string) {
	t.Helper()
	if d.SharedSession != nil || d.Outcome == OutcomeReconnect {
		t.Fatalf("%s with shared_session %+v", d.Outcome, d.SharedSession)
	}
	wantTrace(t, d, why)
}

func TestResolveSharedApplicationSession(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			name: "reused on a farm serving one of the GE's pools",
			mutate: func(f *Federation) {
				withApps(f)
				f.Sessions = []Session{calcSession("r1", "uk-pod1", "uk-h2", StateDisconnected)}
			},
			check: func(t *testing.T, d *Decision) {
				wantShared(t, d, "r1", "uk-h2")
				wantTrace(t, d, "the application opens in it")
			},
		},
		{
			name: "not reused across farms",
			mutate: func(f *Federation) {
				withApps(f)
				f.Hosts = append(f.Hosts, Host{Name: "other-h1", Farm: "other-farm", Features: AllFeatures(), Enabled: true})
				f.Farms = append(f.Farms, Farm{Name: "other-farm", Pod: "uk-pod1"})
				f.Sessions = []Session{calcSession("r1", "uk-pod1", "other-h1", StateConnected)}
			},
			check: func(t *testing.T, d *Decision) { wantNotShared(t, d, "host other-h1 is on another farm") },
		},
		{
			name: "not reused on an offline pod",
			mutate: func(f *Federation) {
				withApps(f)
				podNamed(f, "uk-pod1").Online = false
				f.Sessions = []Session{calcSession("r1", "uk-pod1", "uk-h1", StateConnected)}
			},
			check: func(t *testing.T, d *Decision) { wantNotShared(t, d, "pod uk-pod1 is offline") },
		},
		{
			name: "not reused outside the scope",
			mutate: func(f *Federation) {
				withApps(f)
				ge(f).Scope = ScopeSite
				f.Sessions = []Session{calcSession("r1", "uk-pod1", "uk-h1", StateConnected)}
			},
			check: func(t *testing.T, d *Decision) { wantNotShared(t, d, "pod uk-pod1 is outside the scope") },
		},
		{
			name: "not reused when the host does not support the protocol",
			mutate: func(f *Federation) {
				withApps(f)
				for i := range f.Hosts {
					if f.Hosts[i].Name == "uk-h1" {
						f.Hosts[i].Features.RDP = false
					}
				}
				f.Sessions = []Session{calcSession("r1", "uk-pod1", "uk-h1", StateConnected)}
			},
			req:   Request{Protocol: ProtocolRDP},
			check: func(t *testing.T, d *Decision) { wantNotShared(t, d, "host uk-h1 does not support protocol RDP") },
		},
		{
			name: "a desktop GE never shares a session",
			mutate: func(f *Federation) {
				withApps(f)
				ge(f).Type = TypeDesktop
				ge(f).Pools = []string{"uk-desk"}
				f.Sessions = []Session{calcSession("r1", "uk-pod1", "uk-h1", StateConnected)}
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				if d.SharedSession != nil || strings.Contains(traceText(d), "shared_session") {
					t.Fatalf("shared %+v", d.SharedSession)
				}
			},
		},
		{
			name: "an RDS desktop session does not serve an application",
			mutate: func(f *Federation) {
				withApps(f)
				f.Entitlements[1].Type = TypeDesktop
				f.Sessions = []Session{calcSession("r1", "uk-pod1", "uk-h1", StateConnected)}
			},
			check: func(t *testing.T, d *Decision) { wantNotShared(t, d, "Calculator is a desktop entitlement") },
		},
		{
			name: "CONNECTED before DISCONNECTED, then by session ID",
			mutate: func(f *Federation) {
				withApps(f)
				f.Sessions = []Session{
					calcSession("a-disc", "uk-pod1", "uk-h1", StateDisconnected),
					calcSession("z-conn", "uk-pod1", "uk-h2", StateConnected),
					calcSession("b-conn", "uk-pod1", "uk-h1", StateConnected),
				}
			},
			check: func(t *testing.T, d *Decision) { wantShared(t, d, "b-conn", "uk-h1") },
		},
		{
			name: "a session of the GE itself comes first (step 2)",
			mutate: func(f *Federation) {
				withApps(f)
				f.Sessions = []Session{
					calcSession("r1", "uk-pod1", "uk-h1", StateConnected),
					{ID: "own", User: "alice", Entitlement: "Sales Desktop", Pod: "us-pod1", Pool: "us-app", Host: "us-h1", State: StateDisconnected},
				}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeReconnect)
				if d.SharedSession != nil || d.Placement.Session != "own" {
					t.Fatalf("shared %+v placement %+v", d.SharedSession, d.Placement)
				}
			},
		},
	})
}
