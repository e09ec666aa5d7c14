package broker

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// resolveCase is one rule of docs/resolve.md, shown on the seed federation.
type resolveCase struct {
	name   string
	mutate func(f *Federation)
	req    Request // fillDefaults completes it
	check  func(t *testing.T, d *Decision)
}

func runResolveCases(t *testing.T, cases []resolveCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := seedFederation()
			if tc.mutate != nil {
				tc.mutate(f)
			}
			d, err := Resolve(f, fillDefaults(tc.req))
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			tc.check(t, d)
			samePlaces(t, f, fillDefaults(tc.req), d)
		})
	}
}

// samePlaces checks that ResolveWith decides as Resolve did (d), with the
// prepared indexes of f's very sites, pods and hosts, and with ones that do
// not fit f (other slices, every pod of them offline and every host
// disabled; other offline pods), which it must not use.
func samePlaces(t *testing.T, f *Federation, r Request, d *Decision) {
	t.Helper()
	pods := append([]Pod(nil), f.Pods...)
	var names []string
	for i := range pods {
		pods[i].Online = false
		names = append(names, pods[i].Name)
	}
	hosts := append([]Host(nil), f.Hosts...)
	for i := range hosts {
		hosts[i].Enabled = false
	}
	fitting := Prepared{Places: NewPlaces(f.Sites, f.Pods, r.OfflinePods), Hosts: NewHosts(f.Hosts)}
	remembering := fitting
	remembering.Searches = NewSearches()
	lazy := func(p Prepared) Prepared { p.LazyTrace = true; return p }
	// Searches remembered lazily then replayed eagerly, and the other way.
	lazyFirst, eagerFirst := fitting, fitting
	lazyFirst.Searches, eagerFirst.Searches = NewSearches(), NewSearches()
	for _, c := range []struct {
		name string
		pre  Prepared
	}{
		{"fitting", fitting},
		{"fitting hosts", Prepared{Hosts: NewHosts(f.Hosts)}},
		{"other slices", Prepared{Places: NewPlaces(append([]Site(nil), f.Sites...), pods, r.OfflinePods), Hosts: NewHosts(hosts)}},
		{"other offline", Prepared{Places: NewPlaces(f.Sites, f.Pods, append(append([]string(nil), r.OfflinePods...), names...))}},
		// The search remembered, then given again from the memory.
		{"searches, first", remembering},
		{"searches, remembered", remembering},
		// Searches with indexes that do not fit: not used.
		{"searches, other slices", Prepared{Places: NewPlaces(append([]Site(nil), f.Sites...), pods, r.OfflinePods), Hosts: NewHosts(hosts), Searches: remembering.Searches}},
		{"searches, no hosts", Prepared{Places: fitting.Places, Searches: remembering.Searches}},
		// The trace formatted as read: the same texts.
		{"lazy", lazy(Prepared{})},
		{"lazy, fitting", lazy(fitting)},
		{"lazy, searches remembered", lazy(remembering)},
		{"lazy, searches, first", lazy(lazyFirst)},
		{"lazy, searches, remembered", lazy(lazyFirst)},
		{"eager, searches remembered lazily", lazyFirst},
		{"eager, searches, first", eagerFirst},
		{"lazy, searches remembered eagerly", lazy(eagerFirst)},
	} {
		got, err := ResolveWith(f, r, c.pre)
		if err != nil {
			t.Fatalf("ResolveWith (%s): %v", c.name, err)
		}
		if (got.traceArgs != nil) != c.pre.LazyTrace {
			t.Errorf("ResolveWith (%s): lazy trace %t, trace args %v", c.name, c.pre.LazyTrace, got.traceArgs)
		}
		if got.traceArgs != nil {
			got = formatTrace(t, got, d)
		}
		if !reflect.DeepEqual(got, d) {
			t.Errorf("ResolveWith (%s) decides\n%+v\nResolve\n%+v", c.name, got, d)
		}
	}
}

// formatTrace returns a copy of the lazily traced decision got with its
// trace formatted (Decision.TraceMessage). It checks that every argument
// kept is a value that cannot change once traced (a string, a number or
// a flag), and that SameTraceStep finds got's steps the same as the
// eagerly traced want's, and different from its other steps.
func formatTrace(t *testing.T, got, want *Decision) *Decision {
	t.Helper()
	if len(got.traceArgs) != len(got.Trace) {
		t.Fatalf("%d trace steps, %d argument lists", len(got.Trace), len(got.traceArgs))
	}
	for i, args := range got.traceArgs {
		for _, a := range args {
			switch k := reflect.TypeOf(a).Kind(); k {
			case reflect.String, reflect.Int, reflect.Int64, reflect.Bool, reflect.Float64:
			default:
				t.Errorf("step %d (%s %q) keeps an argument of kind %s: %#v", i, got.Trace[i].Step, got.Trace[i].Message, k, a)
			}
		}
	}
	out := *got
	out.traceArgs = nil
	out.Trace = make([]TraceStep, len(got.Trace))
	for i := range got.Trace {
		out.Trace[i] = TraceStep{Step: got.Trace[i].Step, Message: got.TraceMessage(i)}
	}
	if len(want.Trace) == len(got.Trace) {
		for i := range got.Trace {
			for j := range want.Trace {
				if same, w := SameTraceStep(got, i, want, j), want.Trace[i] == want.Trace[j]; same != w {
					t.Errorf("SameTraceStep(step %d, step %d) = %t, the texts say %t", i, j, same, w)
				}
				if same, w := SameTraceStep(got, i, got, j), want.Trace[i] == want.Trace[j]; same != w {
					t.Errorf("SameTraceStep(step %d, step %d) of the lazy trace = %t, the texts say %t", i, j, same, w)
				}
			}
		}
	}
	return &out
}

func TestResolveErrors(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(f *Federation)
		req      Request
		notFound string // NotFoundError kind, or "" for a RequestError
		msg      string
	}{
		{name: "both connection server and pod", req: Request{ConnectionServer: "in-cs1", Pod: "in-pod1"}, msg: "exactly one"},
		{name: "neither connection server nor pod", req: Request{User: "alice", Entitlement: "Sales Desktop"}, msg: "exactly one"},
		{name: "unknown user", req: Request{User: "mallory"}, notFound: "user", msg: `user "mallory" does not exist`},
		{name: "unknown entitlement", req: Request{Entitlement: "Nope"}, notFound: "entitlement"},
		{name: "unknown connection server", req: Request{ConnectionServer: "cs-x"}, notFound: "connection server"},
		{name: "unknown pod", req: Request{Pod: "pod-x"}, notFound: "pod"},
		{name: "unknown client computer", req: Request{Client: "pc-x"}, notFound: "computer"},
		{name: "unknown offline pod", req: Request{OfflinePods: []string{"pod-x"}}, notFound: "pod", msg: `pod "pod-x" does not exist`},
		{name: "connecting through a what-if offline pod", req: Request{OfflinePods: []string{"IN-POD1"}}, msg: "offline"},
		{name: "connecting through a stored offline pod", mutate: func(f *Federation) { podNamed(f, "in-pod1").Online = false }, req: Request{Pod: "in-pod1"}, msg: "offline"},
		{name: "the connecting pod's site is missing from the data (not a name the request gave)",
			mutate: func(f *Federation) { podNamed(f, "in-pod1").Site = "Atlantis" }, req: Request{Pod: "in-pod1"},
			msg: `the connecting pod in-pod1 names site "Atlantis", which does not exist`},
		{name: "unknown protocol", req: Request{Protocol: "VNC"}, msg: "unknown protocol"},
		{name: "unauthenticated on a desktop entitlement", req: Request{Unauthenticated: true}, msg: "application entitlements only"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := seedFederation()
			if tc.mutate != nil {
				tc.mutate(f)
			}
			req := tc.req
			if tc.name != "neither connection server nor pod" {
				req = fillDefaults(req)
			}
			d, err := Resolve(f, req)
			if err == nil {
				t.Fatalf("no error; outcome %s", d.Outcome)
			}
			var nf *NotFoundError
			var re *RequestError
			switch {
			case tc.notFound != "":
				if !errors.As(err, &nf) || nf.Kind != tc.notFound {
					t.Fatalf("error %T %v, want NotFoundError kind %s", err, err, tc.notFound)
				}
			default:
				if !errors.As(err, &re) {
					t.Fatalf("error %T %v, want RequestError", err, err)
				}
			}
			if tc.msg != "" && !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %q lacks %q", err, tc.msg)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || msg != strings.ToLower(msg[:1])+msg[1:] {
				t.Fatalf("error %q is not one lower-case line", msg)
			}
			if re != nil && strings.Contains(tc.name, "offline pod") && !strings.Contains(re.Hint, "connection server of an online pod") {
				t.Fatalf("hint %q", re.Hint)
			}
		})
	}
}

func TestResolveStep1Entitlement(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			name:   "disabled entitlement is denied",
			mutate: func(f *Federation) { ge(f).Enabled = false },
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeDenied)
				if d.Placement != nil || !strings.Contains(d.Reason, "disabled") {
					t.Fatalf("placement %v reason %q", d.Placement, d.Reason)
				}
			},
		},
		{
			name: "user not a member is denied",
			req:  Request{User: "bob"},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeDenied)
				if c := checkOf(t, d, "membership"); c.Passed {
					t.Fatal("membership passed")
				}
			},
		},
		{
			name: "direct user member is entitled",
			req:  Request{User: "bob"},
			mutate: func(f *Federation) {
				ge(f).Members = append(ge(f).Members, Member{Kind: MemberUser, Name: "BOB"})
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomePlaced)
				wantTrace(t, d, "bob is a direct member")
			},
		},
		{
			name: "nested groups with a cycle entitle",
			req:  Request{User: "bob"},
			mutate: func(f *Federation) {
				// Support → Helpdesk → Staff → Support (cycle); Staff is entitled.
				f.Groups = append(f.Groups, Group{Name: "Helpdesk", Groups: []string{"Staff"}}, Group{Name: "Staff", Groups: []string{"Support"}})
				f.Groups[1].Groups = []string{"Helpdesk"}
				ge(f).Members = []Member{{Kind: MemberGroup, Name: "staff"}}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomePlaced)
				wantTrace(t, d, "through group Support → Helpdesk → Staff")
			},
		},
		{
			name: "a group cycle without membership terminates and denies",
			req:  Request{User: "bob"},
			mutate: func(f *Federation) {
				f.Groups = append(f.Groups, Group{Name: "Loop", Groups: []string{"Support"}})
				f.Groups[1].Groups = []string{"Loop"}
			},
			check: func(t *testing.T, d *Decision) { wantOutcome(t, d, OutcomeDenied) },
		},
		{
			name:  "untagged GE, untagged connection server: allowed",
			req:   Request{ConnectionServer: "in-cs1"},
			check: func(t *testing.T, d *Decision) { wantOutcome(t, d, OutcomePlaced) },
		},
		{
			name: "untagged GE, tagged connection server: allowed",
			req:  Request{ConnectionServer: "in-cs-internal"},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomePlaced)
				if !checkOf(t, d, "connection_server_tags").Passed {
					t.Fatal("tags check failed")
				}
			},
		},
		{
			name:   "tagged GE, connection server sharing a tag: allowed",
			mutate: func(f *Federation) { ge(f).Tags = []string{"Guest", "vip"} },
			req:    Request{ConnectionServer: "in-cs-dmz"},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomePlaced)
				wantTrace(t, d, "shares tag(s) guest")
			},
		},
		{
			name:   "tagged GE, untagged connection server: denied",
			mutate: func(f *Federation) { ge(f).Tags = []string{"internal"} },
			req:    Request{ConnectionServer: "in-cs1"},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeDenied)
				if !strings.Contains(d.Reason, "has no tags") {
					t.Fatalf("reason %q", d.Reason)
				}
			},
		},
		{
			name:   "tagged GE, connection server with other tags: denied",
			mutate: func(f *Federation) { ge(f).Tags = []string{"internal"} },
			req:    Request{ConnectionServer: "in-cs-dmz"},
			check:  func(t *testing.T, d *Decision) { wantOutcome(t, d, OutcomeDenied) },
		},
		{
			name:   "tagged GE through a pod counts as an untagged server: denied",
			mutate: func(f *Federation) { ge(f).Tags = []string{"internal"} },
			req:    Request{Pod: "in-pod1"},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeDenied)
				wantTrace(t, d, "counts as a connection server without tags")
			},
		},
		{
			name: "client restrictions without a client: denied",
			mutate: func(f *Federation) {
				ge(f).ClientRestrictions = true
				ge(f).Members = append(ge(f).Members, Member{Kind: MemberGroup, Name: "Laptops"})
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeDenied)
				if checkOf(t, d, "client_restrictions").Passed {
					t.Fatal("client check passed")
				}
			},
		},
		{
			name: "client restrictions with a client in an entitled group: allowed",
			mutate: func(f *Federation) {
				ge(f).ClientRestrictions = true
				ge(f).Members = append(ge(f).Members, Member{Kind: MemberGroup, Name: "Laptops"})
			},
			req: Request{Client: "LAPTOP-1"},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomePlaced)
				if d.Request.Client != "laptop-1" {
					t.Fatalf("client echoed as %q, want the stored spelling", d.Request.Client)
				}
			},
		},
		{
			name: "client restrictions with a client outside the entitled groups: denied",
			mutate: func(f *Federation) {
				ge(f).ClientRestrictions = true
				ge(f).Members = append(ge(f).Members, Member{Kind: MemberGroup, Name: "Laptops"})
			},
			req:   Request{Client: "kiosk-1"},
			check: func(t *testing.T, d *Decision) { wantOutcome(t, d, OutcomeDenied) },
		},
		{
			name: "client restrictions on a dedicated GE are ignored with a warning",
			mutate: func(f *Federation) {
				ge(f).ClientRestrictions, ge(f).Dedicated = true, true
				for i := range f.Pools {
					f.Pools[i].Dedicated = true
				}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomePlaced)
				wantWarning(t, d, "client restrictions")
			},
		},
		{
			name:   "require home site with none: denied",
			mutate: func(f *Federation) { ge(f).UseHomeSite, ge(f).RequireHomeSite = true, true },
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeDenied)
				if !strings.Contains(d.Reason, "requires a home site") || d.HomeSite.Site != nil {
					t.Fatalf("reason %q home site %v", d.Reason, d.HomeSite.Site)
				}
			},
		},
		{
			name: "require home site with one: allowed",
			mutate: func(f *Federation) {
				ge(f).UseHomeSite, ge(f).RequireHomeSite = true, true
				f.HomeSites = []HomeSite{{Group: "Sales", Site: "US"}}
			},
			check: func(t *testing.T, d *Decision) { wantPlaced(t, d, "US", "us-pod1", "us-desk") },
		},
		{
			name:   "require home site without use home site is ignored with a warning",
			mutate: func(f *Federation) { ge(f).RequireHomeSite = true },
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomePlaced)
				wantWarning(t, d, "Require Home Site without Use Home Site")
			},
		},
		{
			name: "denied even with a session and the trace lists it",
			mutate: func(f *Federation) {
				ge(f).Enabled = false
				f.Sessions = []Session{{ID: "s1", User: "alice", Entitlement: "Sales Desktop", Pod: "uk-pod1", Pool: "uk-desk", State: StateDisconnected}}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeDenied)
				if len(d.Sessions) != 1 || d.Sessions[0].Status != SessionDenied {
					t.Fatalf("sessions %+v", d.Sessions)
				}
				wantTrace(t, d, "session s1")
			},
		},
		{
			name: "denied even with a pod assignment and the trace lists it",
			mutate: func(f *Federation) {
				ge(f).Enabled, ge(f).Dedicated = false, true
				f.Assignments = []Assignment{{User: "alice", Entitlement: "Sales Desktop", Pod: "uk-pod1", Machine: "uk-vm7"}}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeDenied)
				wantTrace(t, d, "assigned to pod uk-pod1, machine uk-vm7, but is denied")
			},
		},
		{
			name: "every failed check is traced, the first one is the reason",
			mutate: func(f *Federation) {
				ge(f).Enabled = false
				ge(f).Tags = []string{"internal"}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeDenied)
				if !strings.Contains(d.Reason, "disabled") {
					t.Fatalf("reason %q", d.Reason)
				}
				wantTrace(t, d, "connection_server_tags FAILED")
			},
		},
	})
}

func TestResolveStep2Sessions(t *testing.T) {
	sess := func(id, pod, pool, client string) Session {
		return Session{ID: id, User: "alice", Entitlement: "Sales Desktop", Pod: pod, BrokeringPod: "in-pod1", Pool: pool, State: StateDisconnected, Client: client}
	}
	runResolveCases(t, []resolveCase{
		{
			name:   "one session in scope: RECONNECT to it",
			mutate: func(f *Federation) { f.Sessions = []Session{sess("s1", "uk-pod1", "uk-desk", "")} },
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeReconnect)
				p := d.Placement
				if p == nil || p.Site != "UK" || p.Pod != "uk-pod1" || p.Pool != "uk-desk" || p.Session != "s1" {
					t.Fatalf("placement %+v", p)
				}
			},
		},
		{
			name: "session on an RDS host: RECONNECT names pool, farm and host",
			mutate: func(f *Federation) {
				addFarmPool(f, "uk-rds", "uk-pod1", "uk-farm", KindRDSDesktop, 0, host("uk-h1", 10, 0, 0))
				f.Sessions = []Session{sess("s1", "uk-pod1", "uk-rds", "")}
				f.Sessions[0].Host = "uk-h1"
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeReconnect)
				if p := d.Placement; p.Farm != "uk-farm" || p.Host != "uk-h1" {
					t.Fatalf("placement %+v", p)
				}
			},
		},
		{
			name: "session on an offline pod is ignored",
			mutate: func(f *Federation) {
				f.Sessions = []Session{sess("s1", "uk-pod1", "uk-desk", "")}
			},
			req: Request{OfflinePods: []string{"uk-pod1"}},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "US", "us-pod1", "us-desk")
				if d.Sessions[0].Status != SessionIgnoredOffline {
					t.Fatalf("session status %s", d.Sessions[0].Status)
				}
			},
		},
		{
			name: "session outside the scope is not offered",
			mutate: func(f *Federation) {
				ge(f).Scope = ScopeSite
				poolNamed(f, "in-desk2").Sessions = 3
				f.Sessions = []Session{sess("s1", "uk-pod1", "uk-desk", "")}
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "India", "in-pod2", "in-desk2")
				if d.Sessions[0].Status != SessionOutOfScope {
					t.Fatalf("session status %s", d.Sessions[0].Status)
				}
			},
		},
		{
			name: "two sessions: CHOOSE_SESSION with automatic clean-up",
			mutate: func(f *Federation) {
				ge(f).AutoClean = true
				f.Sessions = []Session{sess("s2", "us-pod1", "us-desk", ""), sess("s1", "uk-pod1", "uk-desk", "")}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeChooseSession)
				if d.AutoClean == nil || !*d.AutoClean || d.Placement != nil {
					t.Fatalf("auto_clean %v placement %v", d.AutoClean, d.Placement)
				}
				if d.Sessions[0].ID != "s1" || !strings.Contains(d.Reason, "logged off automatically") {
					t.Fatalf("sessions %+v reason %q", d.Sessions, d.Reason)
				}
			},
		},
		{
			name: "two sessions: CHOOSE_SESSION left for manual logoff",
			mutate: func(f *Federation) {
				f.Sessions = []Session{sess("s1", "uk-pod1", "uk-desk", ""), sess("s2", "us-pod1", "us-desk", "")}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeChooseSession)
				if d.AutoClean == nil || *d.AutoClean || !strings.Contains(d.Reason, "manual logoff") {
					t.Fatalf("auto_clean %v reason %q", d.AutoClean, d.Reason)
				}
			},
		},
		{
			name: "two sessions, one on an offline pod: RECONNECT to the other",
			mutate: func(f *Federation) {
				f.Sessions = []Session{sess("s1", "uk-pod1", "uk-desk", ""), sess("s2", "us-pod1", "us-desk", "")}
			},
			req: Request{OfflinePods: []string{"us-pod1"}},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeReconnect)
				if d.Placement.Session != "s1" {
					t.Fatalf("placement %+v", d.Placement)
				}
			},
		},
		{
			name: "multiple sessions per user: only the request's client counts",
			mutate: func(f *Federation) {
				ge(f).MultipleSessionsPerUser = true
				f.Sessions = []Session{sess("s1", "uk-pod1", "uk-desk", "laptop-1"), sess("s2", "us-pod1", "us-desk", "kiosk-1")}
			},
			req: Request{Client: "Laptop-1"},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeReconnect)
				if d.Placement.Session != "s1" || d.Sessions[1].Status != SessionOtherClient {
					t.Fatalf("placement %+v sessions %+v", d.Placement, d.Sessions)
				}
			},
		},
		{
			name: "multiple sessions per user without a client: a new device, no session counts",
			mutate: func(f *Federation) {
				ge(f).MultipleSessionsPerUser = true
				f.Sessions = []Session{sess("s1", "uk-pod1", "uk-desk", "laptop-1")}
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				if d.Sessions[0].Status != SessionOtherClient {
					t.Fatalf("sessions %+v", d.Sessions)
				}
			},
		},
		{
			name: "another GE's session is not this GE's",
			mutate: func(f *Federation) {
				f.Sessions = []Session{{ID: "s9", User: "alice", Entitlement: "Other", Pod: "uk-pod1"}}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomePlaced)
				if len(d.Sessions) != 0 {
					t.Fatalf("sessions %+v", d.Sessions)
				}
			},
		},
	})
}

// dedicate turns the seed GE and its pools dedicated.
func dedicate(f *Federation) {
	ge(f).Dedicated = true
	for i := range f.Pools {
		f.Pools[i].Dedicated = true
		f.Pools[i].Assigned = f.Pools[i].Sessions
	}
}

func TestResolveStep3Assignment(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			name: "dedicated assignment: ASSIGNED to its pod and machine",
			mutate: func(f *Federation) {
				dedicate(f)
				f.Assignments = []Assignment{{User: "alice", Entitlement: "sales desktop", Pod: "UK-POD1", Machine: "uk-vm7"}}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeAssigned)
				if p := d.Placement; p == nil || p.Site != "UK" || p.Pod != "uk-pod1" || p.Machine != "uk-vm7" {
					t.Fatalf("placement %+v", p)
				}
			},
		},
		{
			name: "dedicated assignment on an offline pod: UNAVAILABLE",
			mutate: func(f *Federation) {
				dedicate(f)
				f.Assignments = []Assignment{{User: "alice", Entitlement: "Sales Desktop", Pod: "uk-pod1"}}
			},
			req: Request{OfflinePods: []string{"uk-pod1"}},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeUnavailable)
				if d.Placement != nil || !strings.Contains(d.Reason, "no second assignment") {
					t.Fatalf("placement %v reason %q", d.Placement, d.Reason)
				}
			},
		},
		{
			name: "dedicated assignment ignores scope",
			mutate: func(f *Federation) {
				dedicate(f)
				ge(f).Scope = ScopeLocal
				f.Assignments = []Assignment{{User: "alice", Entitlement: "Sales Desktop", Pod: "us-pod1"}}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeAssigned)
				if d.Placement.Pod != "us-pod1" {
					t.Fatalf("placement %+v", d.Placement)
				}
			},
		},
		{
			name:   "dedicated without an assignment: PLACED becomes the assignment",
			mutate: dedicate,
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				if !d.Placement.BecomesAssignment || !strings.Contains(d.Reason, "pod assignment") {
					t.Fatalf("placement %+v reason %q", d.Placement, d.Reason)
				}
			},
		},
		{
			name: "dedicated capacity counts assigned machines, not sessions",
			mutate: func(f *Federation) {
				dedicate(f)
				uk := poolNamed(f, "uk-desk")
				uk.Sessions, uk.Assigned = 0, 10
			},
			check: func(t *testing.T, d *Decision) { wantPlaced(t, d, "US", "us-pod1", "us-desk") },
		},
		{
			name: "floating capacity counts sessions, not assigned machines",
			mutate: func(f *Federation) {
				uk := poolNamed(f, "uk-desk")
				uk.Sessions, uk.Assigned = 9, 10
			},
			check: func(t *testing.T, d *Decision) { wantPlaced(t, d, "UK", "uk-pod1", "uk-desk") },
		},
		{
			name: "an assignment on a floating GE is ignored",
			mutate: func(f *Federation) {
				f.Assignments = []Assignment{{User: "alice", Entitlement: "Sales Desktop", Pod: "us-pod1"}}
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				wantTrace(t, d, "is not dedicated; ignored")
			},
		},
		{
			name: "a session beats the assignment (step 2 before step 3)",
			mutate: func(f *Federation) {
				dedicate(f)
				f.Assignments = []Assignment{{User: "alice", Entitlement: "Sales Desktop", Pod: "uk-pod1"}}
				f.Sessions = []Session{{ID: "s1", User: "alice", Entitlement: "Sales Desktop", Pod: "uk-pod1", Pool: "uk-desk"}}
			},
			check: func(t *testing.T, d *Decision) { wantOutcome(t, d, OutcomeReconnect) },
		},
	})
}

func TestResolveTiers(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			name: "seed 000 scenario 1: India has no capacity, first preferred site UK takes the session",
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				wantSiteOrder(t, d, "India/starting/searched", "UK/preferred/searched")
				if !strings.Contains(d.Reason, "preferred site 1 of India") {
					t.Fatalf("reason %q", d.Reason)
				}
			},
		},
		{
			name: "seed 000 scenario 2: UK's load is above the threshold and skipped, US takes the session",
			mutate: func(f *Federation) {
				ge(f).Policy, ge(f).IgnoreHighLoad = PolicyLoad, true
				poolNamed(f, "uk-desk").Sessions = 10 // load 100 > 98
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "US", "us-pod1", "us-desk")
				wantSiteOrder(t, d, "India/starting/searched", "UK/preferred/skipped", "US/preferred/searched")
				uk := d.SiteOrder[1]
				if uk.Load == nil || *uk.Load != 100 || uk.Threshold == nil || *uk.Threshold != 98 || !strings.Contains(uk.SkipReason, "above pae-LoadThresholdForSite 98") {
					t.Fatalf("UK visit %+v", uk)
				}
			},
		},
		{
			name: "preferred site load above the threshold but with room: still skipped",
			mutate: func(f *Federation) {
				ge(f).Policy, ge(f).IgnoreHighLoad = PolicySession, true
				f.Settings.LoadThresholdForSite = 40 // UK at 50
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "US", "us-pod1", "us-desk")
			},
		},
		{
			name: "load equal to the threshold is not skipped",
			mutate: func(f *Federation) {
				ge(f).Policy, ge(f).IgnoreHighLoad = PolicyLoad, true
				f.Settings.LoadThresholdForSite = 50 // UK at exactly 50
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				wantTrace(t, d, "load 50.00 is not above pae-LoadThresholdForSite 50")
			},
		},
		{
			name: "a load just above the threshold that rounds to it is skipped (exact comparison)",
			mutate: func(f *Federation) {
				ge(f).Policy, ge(f).IgnoreHighLoad = PolicySession, true
				uk := poolNamed(f, "uk-desk")
				uk.Capacity, uk.Sessions = 100000, 98001 // 98.001 shows as 98.00
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "US", "us-pod1", "us-desk")
				if l := d.SiteOrder[1].Load; l == nil || *l != 98 {
					t.Fatalf("UK load shown as %v", l)
				}
				wantTrace(t, d, "exactly 98001/1000")
			},
		},
		{
			name: "ignore high load without a policy is ignored with a warning",
			mutate: func(f *Federation) {
				ge(f).IgnoreHighLoad = true
				poolNamed(f, "uk-desk").Sessions = 9 // 90% is above a threshold of 10, yet UK is searched
				f.Settings.LoadThresholdForSite = 10
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				wantWarning(t, d, "Ignore Preferred Sites with High Load but no session load distribution policy")
				if d.SiteOrder[1].Threshold != nil {
					t.Fatalf("threshold compared: %+v", d.SiteOrder[1])
				}
			},
		},
		{
			name: "a site skipped for load comes back among the remaining sites",
			mutate: func(f *Federation) {
				ge(f).Policy, ge(f).IgnoreHighLoad = PolicyLoad, true
				f.Settings.LoadThresholdForSite = 10 // UK 50, US 20 skipped
				poolNamed(f, "jp-desk").Sessions = 10
			},
			check: func(t *testing.T, d *Decision) {
				// Remaining, least loaded first: US (20), UK (50), Japan (100 → full).
				wantPlaced(t, d, "US", "us-pod1", "us-desk")
				wantSiteOrder(t, d, "India/starting/searched", "UK/preferred/skipped", "US/preferred/skipped", "US/remaining/searched")
			},
		},
		{
			name: "a site listed twice among the preferred sites is considered once: skipped, then remaining",
			mutate: func(f *Federation) {
				ge(f).Policy, ge(f).IgnoreHighLoad = PolicyLoad, true
				f.Settings.LoadThresholdForSite = 40 // UK at 50 is skipped
				// A duplicate that lint reports, and a snapshot may hold.
				siteNamed(f, "India").PreferredSites = []string{"UK", "uk"}
				poolNamed(f, "us-desk").Sessions = 10
				poolNamed(f, "jp-desk").Sessions = 10
			},
			check: func(t *testing.T, d *Decision) {
				// Remaining, least loaded first: UK (50), then Japan and US (full).
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				wantSiteOrder(t, d, "India/starting/searched", "UK/preferred/skipped", "UK/remaining/searched")
				wantTrace(t, d, "preferred site uk (rank 2) is listed again: already considered at rank 1")
			},
		},
		{
			name: "no preferred site qualifies: the search falls back to the remaining sites",
			mutate: func(f *Federation) {
				poolNamed(f, "uk-desk").Sessions = 10
				poolNamed(f, "us-desk").Sessions = 10
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "Japan", "jp-pod1", "jp-desk")
				wantSiteOrder(t, d, "India/starting/searched", "UK/preferred/searched", "US/preferred/searched", "Japan/remaining/searched")
			},
		},
		{
			name:   "without Use Preferred Sites the preferred list plays no part",
			mutate: func(f *Federation) { ge(f).UsePreferredSites, ge(f).Policy = false, PolicyLoad },
			check: func(t *testing.T, d *Decision) {
				// Remaining by load: Japan 0, US 20, UK 50.
				wantPlaced(t, d, "Japan", "jp-pod1", "jp-desk")
				wantSiteOrder(t, d, "India/starting/searched", "Japan/remaining/searched")
			},
		},
		{
			name: "use preferred sites with scope SITE has no effect",
			mutate: func(f *Federation) {
				ge(f).Scope = ScopeSite
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				wantSiteOrder(t, d, "India/starting/searched")
				wantTrace(t, d, "Use Preferred Sites has no effect")
			},
		},
		{
			name: "home site first, then the connecting site",
			mutate: func(f *Federation) {
				ge(f).UseHomeSite = true
				f.HomeSites = []HomeSite{{User: "alice", Site: "US"}}
				poolNamed(f, "us-desk").Sessions = 10
				poolNamed(f, "in-desk2").Sessions = 1
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "India", "in-pod2", "in-desk2")
				wantSiteOrder(t, d, "US/starting/searched", "India/connecting/searched")
				if d.HomeSite.Site == nil || *d.HomeSite.Site != "US" || d.HomeSite.Source != SourceUserDefault {
					t.Fatalf("home site %+v", d.HomeSite)
				}
			},
		},
		{
			name: "preferred sites are the connecting site's even when starting at the home site",
			mutate: func(f *Federation) {
				ge(f).UseHomeSite = true
				f.HomeSites = []HomeSite{{User: "alice", Site: "Japan"}}
				siteNamed(f, "Japan").PreferredSites = []string{"US"}
				poolNamed(f, "jp-desk").Sessions = 10
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				wantSiteOrder(t, d, "Japan/starting/searched", "India/connecting/searched", "UK/preferred/searched")
			},
		},
		{
			name: "a preferred site already searched as the home site is not searched twice",
			mutate: func(f *Federation) {
				ge(f).UseHomeSite = true
				f.HomeSites = []HomeSite{{User: "alice", Site: "UK"}}
				poolNamed(f, "uk-desk").Sessions = 10
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "US", "us-pod1", "us-desk")
				wantSiteOrder(t, d, "UK/starting/searched", "India/connecting/searched", "US/preferred/searched")
				wantTrace(t, d, "preferred site UK (rank 1) already searched")
			},
		},
		{
			name: "LOCAL with a home site elsewhere: reported outside the scope, only the connecting pod searched",
			mutate: func(f *Federation) {
				ge(f).Scope, ge(f).UseHomeSite = ScopeLocal, true
				f.HomeSites = []HomeSite{{User: "alice", Site: "UK"}}
				poolNamed(f, "in-desk2").Sessions = 0 // room, but in another pod
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				wantSiteOrder(t, d, "UK/starting/skipped", "India/connecting/searched")
				if !d.HomeSite.OutsideScope || !strings.Contains(d.SiteOrder[0].SkipReason, "outside the scope") {
					t.Fatalf("home site %+v visit %+v", d.HomeSite, d.SiteOrder[0])
				}
				pods := d.SiteOrder[1].Pods
				if pods[0].Pod != "in-pod1" || pods[0].Status != StatusSearched || pods[1].Status != StatusSkipped {
					t.Fatalf("pods %+v", pods)
				}
			},
		},
		{
			name: "LOCAL with a home site elsewhere still satisfies Require Home Site",
			mutate: func(f *Federation) {
				ge(f).Scope, ge(f).UseHomeSite, ge(f).RequireHomeSite = ScopeLocal, true, true
				f.HomeSites = []HomeSite{{User: "alice", Site: "UK"}}
				poolNamed(f, "in-desk1").Sessions = 0
			},
			check: func(t *testing.T, d *Decision) { wantPlaced(t, d, "India", "in-pod1", "in-desk1") },
		},
		{
			name: "SITE searches every pod of the connecting site",
			mutate: func(f *Federation) {
				ge(f).Scope = ScopeSite
				poolNamed(f, "in-desk2").Sessions = 0
			},
			check: func(t *testing.T, d *Decision) { wantPlaced(t, d, "India", "in-pod2", "in-desk2") },
		},
		{
			name: "home site in the connecting site under SITE: the starting site",
			mutate: func(f *Federation) {
				ge(f).Scope, ge(f).UseHomeSite = ScopeSite, true
				f.HomeSites = []HomeSite{{User: "alice", Site: "india"}}
				poolNamed(f, "in-desk2").Sessions = 0
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "India", "in-pod2", "in-desk2")
				wantSiteOrder(t, d, "India/starting/searched")
				if d.HomeSite.OutsideScope {
					t.Fatal("outside scope")
				}
			},
		},
		{
			name: "GE without Use Home Site: home sites play no part",
			mutate: func(f *Federation) {
				f.HomeSites = []HomeSite{{User: "alice", Site: "US"}}
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				if d.HomeSite.Site != nil || d.HomeSite.Source != SourceConnectingSite || d.HomeSite.UseHomeSite {
					t.Fatalf("home site %+v", d.HomeSite)
				}
				wantTrace(t, d, "does not use home sites")
			},
		},
		{
			name: "no home site: the connecting site serves",
			mutate: func(f *Federation) {
				ge(f).UseHomeSite = true
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				if d.HomeSite.Site != nil || d.HomeSite.Source != SourceConnectingSite {
					t.Fatalf("home site %+v", d.HomeSite)
				}
			},
		},
		{
			name: "a site with no available pool is skipped and not a remaining candidate",
			mutate: func(f *Federation) {
				poolNamed(f, "uk-desk").Enabled = false
				poolNamed(f, "us-desk").Sessions = 10
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "Japan", "jp-pod1", "jp-desk")
				wantSiteOrder(t, d, "India/starting/searched", "UK/preferred/skipped", "US/preferred/searched", "Japan/remaining/searched")
			},
		},
		{
			name: "remaining sites under LOAD: least loaded first, ties by name",
			mutate: func(f *Federation) {
				ge(f).UsePreferredSites, ge(f).Policy = false, PolicyLoad
				f.Sites = append(f.Sites, Site{Name: "Brazil"})
				f.Pods = append(f.Pods, Pod{Name: "br-pod1", Site: "Brazil", Online: true})
				f.Pools = append(f.Pools, Pool{Name: "br-desk", Pod: "br-pod1", Kind: KindDesktop, Capacity: 5, Sessions: 1, Enabled: true})
				ge(f).Pools = append(ge(f).Pools, "br-desk")
				poolNamed(f, "jp-desk").Sessions = 2 // Japan 20 = US 20 = Brazil 20; Brazil sorts first
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "Brazil", "br-pod1", "br-desk")
				wantTrace(t, d, "remaining sites, least loaded first (LOAD): Brazil 20.00, Japan 20.00, US 20.00, UK 50.00")
				wantTrace(t, d, "sites Brazil and Japan tie at exactly 20")
			},
		},
		{
			name: "NO_CAPACITY lists what was full or skipped",
			mutate: func(f *Federation) {
				ge(f).Policy, ge(f).IgnoreHighLoad = PolicyLoad, true
				for i := range f.Pools {
					f.Pools[i].Sessions = f.Pools[i].Capacity
				}
			},
			req: Request{OfflinePods: []string{"in-pod2"}},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				if d.Placement != nil {
					t.Fatalf("placement %+v", d.Placement)
				}
				for _, want := range []string{"pool in-desk1 full", "pod in-pod2 skipped (pod is offline)", "site UK skipped (load 100.00 above", "pool jp-desk full"} {
					if !strings.Contains(d.Reason, want) {
						t.Fatalf("reason %q lacks %q", d.Reason, want)
					}
				}
			},
		},
		{
			name: "GE with no pool at all: NO_CAPACITY with a warning",
			mutate: func(f *Federation) {
				ge(f).Pools = nil
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				wantWarning(t, d, "has no associated pool")
			},
		},
	})
}

func TestResolveWithinSite(t *testing.T) {
	// twoPods gives UK a second pod and pool.
	twoPods := func(f *Federation) {
		f.Pods = append(f.Pods, Pod{Name: "uk-pod2", Site: "UK", Online: true})
		f.ConnectionServers = append(f.ConnectionServers, ConnectionServer{Name: "uk-cs2", Pod: "uk-pod2"})
		f.Pools = append(f.Pools, Pool{Name: "uk-desk2", Pod: "uk-pod2", Kind: KindDesktop, Capacity: 10, Sessions: 1, Enabled: true})
		ge(f).Pools = append(ge(f).Pools, "uk-desk2")
	}
	runResolveCases(t, []resolveCase{
		{
			name: "offline pods are skipped within a site",
			mutate: func(f *Federation) {
				ge(f).Scope = ScopeSite
				poolNamed(f, "in-desk2").Sessions = 0
			},
			req: Request{ConnectionServer: "in-cs1", OfflinePods: []string{"in-pod2"}},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeNoCapacity)
				wantTrace(t, d, "pod in-pod2 skipped: pod is offline")
			},
		},
		{
			name: "NONE: the connecting pod first",
			mutate: func(f *Federation) {
				twoPods(f)
				ge(f).UseHomeSite = true
				f.HomeSites = []HomeSite{{User: "alice", Site: "UK"}}
			},
			req: Request{ConnectionServer: "uk-cs1"},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				wantTrace(t, d, "pods in order uk-pod1, uk-pod2")
			},
		},
		{
			name:   "LOAD: least loaded pod first, even before the connecting pod",
			mutate: func(f *Federation) { twoPods(f); ge(f).Policy = PolicyLoad },
			req:    Request{ConnectionServer: "uk-cs1"},
			check:  func(t *testing.T, d *Decision) { wantPlaced(t, d, "UK", "uk-pod2", "uk-desk2") },
		},
		{
			name: "LOAD: exact tie between pods goes to the connecting pod",
			mutate: func(f *Federation) {
				twoPods(f)
				ge(f).Policy = PolicyLoad
				// 1/3 and 2/6 are the same load exactly.
				uk1 := poolNamed(f, "uk-desk")
				uk1.Capacity, uk1.Sessions = 3, 1
				uk2 := poolNamed(f, "uk-desk2")
				uk2.Capacity, uk2.Sessions = 6, 2
			},
			req: Request{ConnectionServer: "uk-cs2"},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod2", "uk-desk2")
				wantTrace(t, d, "pods uk-pod2 and uk-pod1 tie at exactly 100/3: uk-pod2 goes first (the connecting pod first)")
			},
		},
		{
			name: "LOAD: exact tie between pods away from the connecting pod goes by name",
			mutate: func(f *Federation) {
				twoPods(f)
				ge(f).Policy = PolicyLoad
				uk1 := poolNamed(f, "uk-desk")
				uk1.Capacity, uk1.Sessions = 3, 1
				uk2 := poolNamed(f, "uk-desk2")
				uk2.Capacity, uk2.Sessions = 6, 2
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
			},
		},
		{
			name: "LOAD: least loaded pool first within a pod, ties by name",
			mutate: func(f *Federation) {
				ge(f).Policy = PolicyLoad
				f.Pools = append(f.Pools,
					Pool{Name: "uk-b", Pod: "uk-pod1", Kind: KindDesktop, Capacity: 10, Sessions: 1, Enabled: true},
					Pool{Name: "uk-a", Pod: "uk-pod1", Kind: KindDesktop, Capacity: 20, Sessions: 2, Enabled: true})
				ge(f).Pools = append(ge(f).Pools, "uk-b", "uk-a")
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-a")
				wantTrace(t, d, "pools least loaded first (LOAD): uk-a 10.00, uk-b 10.00, uk-desk 50.00")
			},
		},
		{
			name: "NONE: pools in name order",
			mutate: func(f *Federation) {
				f.Pools = append(f.Pools, Pool{Name: "uk-a", Pod: "uk-pod1", Kind: KindDesktop, Capacity: 20, Sessions: 19, Enabled: true})
				ge(f).Pools = append(ge(f).Pools, "uk-a")
			},
			check: func(t *testing.T, d *Decision) { wantPlaced(t, d, "UK", "uk-pod1", "uk-a") },
		},
		{
			name: "a full pool is passed over for the next one",
			mutate: func(f *Federation) {
				f.Pools = append(f.Pools, Pool{Name: "uk-a", Pod: "uk-pod1", Kind: KindDesktop, Capacity: 20, Sessions: 20, Enabled: true})
				ge(f).Pools = append(ge(f).Pools, "uk-a")
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				pools := d.SiteOrder[1].Pods[0].Pools
				if pools[0].Pool != "uk-a" || pools[0].Status != StatusFull || pools[1].Status != StatusPlaced {
					t.Fatalf("pools %+v", pools)
				}
			},
		},
		{
			name: "disabled and zero-capacity pools are unavailable",
			mutate: func(f *Federation) {
				poolNamed(f, "uk-desk").Enabled = false
				poolNamed(f, "us-desk").Capacity = 0
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "Japan", "jp-pod1", "jp-desk")
				uk := d.SiteOrder[1]
				if !uk.Skipped || uk.Pods[0].Pools[0].Status != StatusUnavailable || uk.Pods[0].Pools[0].Detail != "pool is disabled" {
					t.Fatalf("UK visit %+v", uk)
				}
			},
		},
		{
			name: "a pool of the wrong kind is left out with a warning",
			mutate: func(f *Federation) {
				poolNamed(f, "uk-desk").Kind = KindApplication
				poolNamed(f, "uk-desk").Farm = "x"
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "US", "us-pod1", "us-desk")
				wantWarning(t, d, "an application pool cannot serve a desktop entitlement")
			},
		},
	})
}

// loadVsSession gives UK two pods whose order differs between LOAD and
// SESSION: uk-pod1 holds a full 1-machine pool and an empty 99-machine one
// (LOAD: mean 50; SESSION: 1/100 = 1), uk-pod2 one pool at 20/100 (20 either
// way).
func loadVsSession(policy Policy) func(f *Federation) {
	return func(f *Federation) {
		ge(f).Policy = policy
		f.Pods = append(f.Pods, Pod{Name: "uk-pod2", Site: "UK", Online: true})
		uk := poolNamed(f, "uk-desk")
		uk.Capacity, uk.Sessions = 1, 1
		f.Pools = append(f.Pools,
			Pool{Name: "uk-big", Pod: "uk-pod1", Kind: KindDesktop, Capacity: 99, Sessions: 0, Enabled: true},
			Pool{Name: "uk2-desk", Pod: "uk-pod2", Kind: KindDesktop, Capacity: 100, Sessions: 20, Enabled: true})
		ge(f).Pools = append(ge(f).Pools, "uk-big", "uk2-desk")
	}
}

// farmVsDesktop gives UK a farm-backed pod whose hosts report a low load
// index but hold many sessions: LOAD ranks it first, SESSION last.
func farmVsDesktop(policy Policy) func(f *Federation) {
	return func(f *Federation) {
		ge(f).Policy = policy
		f.Pods = append(f.Pods, Pod{Name: "uk-pod2", Site: "UK", Online: true})
		addFarmPool(f, "uk-rds", "uk-pod2", "uk-farm", KindRDSDesktop, 100,
			host("uk-h1", 10, 90, 0), host("uk-h2", 10, 90, 0)) // LOAD 10, SESSION 90
		poolNamed(f, "uk-desk").Sessions = 3 // 30 either way
	}
}

func TestResolveLoadVersusSession(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			name:   "LOAD: a pod's load is the mean pool load",
			mutate: loadVsSession(PolicyLoad),
			check:  func(t *testing.T, d *Decision) { wantPlaced(t, d, "UK", "uk-pod2", "uk2-desk") },
		},
		{
			name:   "SESSION: a pod's load is total sessions over total capacity",
			mutate: loadVsSession(PolicySession),
			check:  func(t *testing.T, d *Decision) { wantPlaced(t, d, "UK", "uk-pod1", "uk-big") },
		},
		{
			name:   "LOAD: a farm's load is its hosts' mean load index",
			mutate: farmVsDesktop(PolicyLoad),
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod2", "uk-rds")
				if p := d.Placement; p.Farm != "uk-farm" || p.Host != "uk-h1" || !reflect.DeepEqual(p.EligibleHosts, []string{"uk-h1", "uk-h2"}) || p.HostSelection == nil {
					t.Fatalf("placement %+v", p)
				}
				wantTrace(t, d, "any of uk-h1, uk-h2 may serve")
				wantTrace(t, d, "farm uk-farm of pod uk-pod2: LIT 20 (default), CST 20 (default), MIN 4 (default)")
			},
		},
		{
			name:   "SESSION: a farm's load is its sessions over hosts times max sessions",
			mutate: farmVsDesktop(PolicySession),
			check:  func(t *testing.T, d *Decision) { wantPlaced(t, d, "UK", "uk-pod1", "uk-desk") },
		},
	})
}

func TestResolveFarmBackedPools(t *testing.T) {
	rdsOnly := func(hosts ...Host) func(f *Federation) {
		return func(f *Federation) {
			poolNamed(f, "uk-desk").Enabled = false
			addFarmPool(f, "uk-rds", "uk-pod1", "uk-farm", KindRDSDesktop, 0, hosts...)
		}
	}
	noRDP := host("uk-h1", 5, 0, 0)
	noRDP.Features.RDP = false
	runResolveCases(t, []resolveCase{
		{
			name:   "the farm yields a host from bucket 1",
			mutate: rdsOnly(host("uk-h2", 5, 0, 0), host("uk-h1", 50, 0, 0)),
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-rds")
				if d.Placement.Host != "uk-h1" {
					// MIN 4 raises the threshold so both hosts are in bucket 1; rotation starts by name.
					t.Fatalf("host %s", d.Placement.Host)
				}
			},
		},
		{
			name:   "RDS hosts must support the protocol",
			mutate: rdsOnly(noRDP),
			req:    Request{Protocol: "rdp"},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "US", "us-pod1", "us-desk")
				pool := d.SiteOrder[1].Pods[0].Pools[0]
				if pool.Status != StatusNoHost || !strings.Contains(pool.Detail, "does not support protocol RDP") {
					t.Fatalf("pool %+v", pool)
				}
			},
		},
		{
			name:   "desktop pools accept any protocol",
			req:    Request{Protocol: "RDP"},
			check:  func(t *testing.T, d *Decision) { wantPlaced(t, d, "UK", "uk-pod1", "uk-desk") },
			mutate: func(f *Federation) {},
		},
		{
			name: "the GE's default protocol is used when none is asked",
			mutate: func(f *Federation) {
				rdsOnly(noRDP)(f)
				ge(f).DefaultProtocol = ProtocolRDP
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "US", "us-pod1", "us-desk")
				if d.Request.Protocol != ProtocolRDP {
					t.Fatalf("protocol %s", d.Request.Protocol)
				}
			},
		},
		{
			name: "a farm with no enabled host is unavailable",
			mutate: func(f *Federation) {
				h := host("uk-h1", 5, 0, 0)
				h.Enabled = false
				rdsOnly(h)(f)
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "US", "us-pod1", "us-desk")
				if v := d.SiteOrder[1]; !v.Skipped {
					t.Fatalf("UK visit %+v", v)
				}
			},
		},
	})
}

func TestResolveApplicationUnauthenticated(t *testing.T) {
	mk := func(unauthOK bool) func(f *Federation) {
		return func(f *Federation) {
			g := ge(f)
			g.Type, g.Pools = TypeApplication, nil
			h := host("uk-h1", 5, 0, 0)
			h.Features.Unauthenticated = unauthOK
			addFarmPool(f, "uk-app", "uk-pod1", "uk-farm", KindApplication, 0, h)
			addFarmPool(f, "us-app", "us-pod1", "us-farm", KindApplication, 0, host("us-h1", 5, 0, 0))
		}
	}
	runResolveCases(t, []resolveCase{
		{
			name:   "unauthenticated: hosts must support unauthenticated access",
			mutate: mk(false),
			req:    Request{Entitlement: "Sales Desktop", Unauthenticated: true},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "US", "us-pod1", "us-app")
				if p := d.SiteOrder[1].Pods[0].Pools[0]; p.Status != StatusNoHost || !strings.Contains(p.Detail, "unauthenticated") {
					t.Fatalf("UK pool %+v", p)
				}
			},
		},
		{
			name:   "unauthenticated: a host supporting it serves",
			mutate: mk(true),
			req:    Request{Unauthenticated: true},
			check:  func(t *testing.T, d *Decision) { wantPlaced(t, d, "UK", "uk-pod1", "uk-app") },
		},
		{
			name:   "authenticated: a host without unauthenticated access serves",
			mutate: mk(false),
			check:  func(t *testing.T, d *Decision) { wantPlaced(t, d, "UK", "uk-pod1", "uk-app") },
		},
	})
}

func TestResolveMisc(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			name: "names match case-insensitively and output keeps the stored spelling",
			req:  Request{User: "ALICE", Entitlement: "sales DESKTOP", ConnectionServer: "IN-CS1"},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk")
				if r := d.Request; r.User != "alice" || r.Entitlement != "Sales Desktop" || r.ConnectionServer != "in-cs1" {
					t.Fatalf("request %+v", r)
				}
			},
		},
		{
			name: "home site redirection is reported when enabled",
			mutate: func(f *Federation) {
				f.Settings.EnableSiteRedirection = true
				f.HomeSites = []HomeSite{{User: "alice", Site: "US"}}
			},
			check: func(t *testing.T, d *Decision) {
				r := d.HomeSiteRedirection
				if r == nil || !r.WouldRedirect || r.ToSite == nil || *r.ToSite != "US" {
					t.Fatalf("redirection %+v", r)
				}
				wantPlaced(t, d, "UK", "uk-pod1", "uk-desk") // the search stays the original one
			},
		},
		{
			name: "home site redirection: no redirect at the home site",
			mutate: func(f *Federation) {
				f.Settings.EnableSiteRedirection = true
				f.HomeSites = []HomeSite{{User: "alice", Site: "India"}}
			},
			check: func(t *testing.T, d *Decision) {
				if r := d.HomeSiteRedirection; r == nil || r.WouldRedirect || r.ToSite != nil {
					t.Fatalf("redirection %+v", r)
				}
			},
		},
		{
			name:   "home site redirection is not reported when disabled",
			mutate: func(f *Federation) { f.HomeSites = []HomeSite{{User: "alice", Site: "US"}} },
			check: func(t *testing.T, d *Decision) {
				if d.HomeSiteRedirection != nil {
					t.Fatalf("redirection %+v", d.HomeSiteRedirection)
				}
			},
		},
		{
			name: "connecting through a pod: that pod is the connecting pod",
			req:  Request{Pod: "in-pod2", OfflinePods: []string{"jp-pod1"}},
			mutate: func(f *Federation) {
				ge(f).Scope = ScopeLocal
				poolNamed(f, "in-desk2").Sessions = 0
				podNamed(f, "us-pod1").Online = false
			},
			check: func(t *testing.T, d *Decision) {
				wantPlaced(t, d, "India", "in-pod2", "in-desk2")
				if r := d.Request; r.ConnectingPod != "in-pod2" || r.ConnectionServer != "" || !reflect.DeepEqual(r.OfflinePods, []string{"jp-pod1", "us-pod1"}) {
					t.Fatalf("request %+v", r)
				}
				wantTrace(t, d, "offline pods: us-pod1 stored offline; jp-pod1 offline by request (what-if)")
			},
		},
		{
			name: "two pod assignments: the first by pod name is used, with a warning",
			mutate: func(f *Federation) {
				dedicate(f)
				f.Assignments = []Assignment{{User: "alice", Entitlement: "Sales Desktop", Pod: "us-pod1"}, {User: "alice", Entitlement: "Sales Desktop", Pod: "uk-pod1"}}
			},
			check: func(t *testing.T, d *Decision) {
				wantOutcome(t, d, OutcomeAssigned)
				if d.Placement.Pod != "uk-pod1" || d.Assignment == nil || d.Assignment.Pod != "uk-pod1" {
					t.Fatalf("placement %+v assignment %+v", d.Placement, d.Assignment)
				}
				wantWarning(t, d, "2 pod assignments")
			},
		},
		{
			name: "the seed is echoed",
			req:  Request{Seed: 42},
			check: func(t *testing.T, d *Decision) {
				if d.Seed != 42 {
					t.Fatalf("seed %d", d.Seed)
				}
				wantTrace(t, d, "seed 42")
			},
		},
	})
}

func TestOutcomeGetsSession(t *testing.T) {
	for o, want := range map[Outcome]bool{
		OutcomePlaced: true, OutcomeReconnect: true, OutcomeChooseSession: true, OutcomeAssigned: true,
		OutcomeDenied: false, OutcomeUnavailable: false, OutcomeNoCapacity: false,
	} {
		if o.GetsSession() != want {
			t.Errorf("%s.GetsSession() = %t", o, !want)
		}
	}
}
