package rules

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
)

// ruleError returns err as a *Error, failing the test when it is another
// error.
func ruleError(t *testing.T, err error) *Error {
	t.Helper()
	if err == nil {
		return nil
	}
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("got %T %v, want a *rules.Error", err, err)
	}
	return re
}

// checkError compares a rule's error with the rule and message wanted
// ("" for none) and checks that a refusal carries a hint.
func checkError(t *testing.T, err error, rule, message string) {
	t.Helper()
	re := ruleError(t, err)
	switch {
	case rule == "" && re != nil:
		t.Fatalf("want no error, got %q", re.Message)
	case rule == "":
	case re == nil:
		t.Fatalf("want %s saying %q, got nil", rule, message)
	case re.Rule != rule || re.Message != message:
		t.Fatalf("got %s %q, want %s %q", re.Rule, re.Message, rule, message)
	case re.Hint == "":
		t.Fatalf("%s has no hint", re.Rule)
	}
}

func TestPreferredSites(t *testing.T) {
	tests := []struct {
		name      string
		preferred []string
		rule      string
		message   string
	}{
		{"other sites, each once, are fine", []string{"UK", "US"}, "", ""},
		{"a site cannot be its own preferred site", []string{"UK", "india"}, CheckPreferredSelf,
			"site india cannot be its own preferred site"},
		{"a site is given once", []string{"UK", "US", "uk"}, CheckPreferredDuplicate, "site uk is given twice in --set"},
		{"a site given twice is named before the site itself", []string{"India", "UK", "UK"}, CheckPreferredDuplicate,
			"site UK is given twice in --set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkError(t, PreferredSites("India", tt.preferred), tt.rule, tt.message)
		})
	}
}

func TestPreferredSiteProblems(t *testing.T) {
	tests := []struct {
		name      string
		preferred []string
		want      []PreferredProblem
	}{
		{"other sites, each once, have no problem", []string{"UK", "US"}, nil},
		{"every entry naming the site itself is a problem", []string{"INDIA", "UK", "india"},
			[]PreferredProblem{{CheckPreferredSelf, 0}, {CheckPreferredSelf, 2}, {CheckPreferredDuplicate, 2}}},
		{"every repeat is a problem, the first listing is not", []string{"UK", "uk", "UK"},
			[]PreferredProblem{{CheckPreferredDuplicate, 1}, {CheckPreferredDuplicate, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PreferredSiteProblems("India", tt.preferred)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %+v, want %+v", got, tt.want)
				}
			}
		})
	}
}

func TestPreferredSite(t *testing.T) {
	india := ldapschema.Site{Name: "India", DN: "cn=India,ou=Sites,dc=example,dc=com"}
	tests := []struct {
		name      string
		preferred ldapschema.Site
		given     string
		rule      string
		message   string
	}{
		{"another site is fine", ldapschema.Site{Name: "UK", DN: "cn=UK,ou=Sites,dc=example,dc=com"}, "UK", "", ""},
		{"the same entry, however spelled, is the site itself",
			ldapschema.Site{Name: "India", DN: "CN=india, OU=Sites,dc=example,dc=com"}, "IN-DIA", CheckPreferredSelf,
			"site IN-DIA cannot be its own preferred site"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkError(t, PreferredSite(india, tt.preferred, tt.given), tt.rule, tt.message)
		})
	}
}

func TestPoolKind(t *testing.T) {
	desktop := ldapschema.Pool{Name: "p", Pod: "uk pod", Kind: ldapschema.KindDesktop}
	app := ldapschema.Pool{Name: "p", Pod: "uk pod", Kind: ldapschema.KindApplication}
	rds := ldapschema.Pool{Name: "p", Pod: "uk pod", Kind: ldapschema.KindRDSDesktop}
	tests := []struct {
		name                        string
		pool                        ldapschema.Pool
		dedicated, floating, farmed bool
		message                     string
	}{
		{"a dedicated desktop pool is fine", desktop, true, false, false, ""},
		{"a floating desktop pool is fine", desktop, false, true, false, ""},
		{"a farm-backed pool with a farm is fine", app, false, false, true, ""},
		{"dedicated and floating contradict each other", desktop, true, true, false,
			"--dedicated and --floating contradict each other"},
		{"a desktop pool is dedicated or floating", desktop, false, false, false,
			`desktop pool p needs --dedicated or --floating`},
		{"a farm-backed pool is never dedicated", rds, true, false, true, `--dedicated is for desktop pools; pool p is rds-desktop`},
		{"a farm-backed pool needs a farm", app, false, false, false, `application pool p needs --farm`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := RulePoolKind
			if tt.message == "" {
				rule = ""
			}
			checkError(t, PoolKind(tt.pool, tt.dedicated, tt.floating, tt.farmed), rule, tt.message)
		})
	}
	if re := ruleError(t, PoolKind(app, false, false, false)); re.Hint != "pass --farm FARM, a farm of pod 'uk pod'" {
		t.Fatalf("hint %q does not quote the pod for the shell", re.Hint)
	}
}

func TestPoolOwners(t *testing.T) {
	tests := []struct {
		name    string
		owners  []string
		message string
	}{
		{"a pool in no entitlement is fine", nil, ""},
		{"a pool in one entitlement is fine", []string{"A"}, ""},
		{"a pool belongs to at most one entitlement", []string{"A", "B"},
			`pool p is in 2 entitlements (A, B): a pool belongs to at most one`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := PoolOwners("p", tt.owners)
			switch {
			case tt.message == "" && v != nil:
				t.Fatalf("want no violation, got %+v", v)
			case tt.message != "" && (v == nil || v.Check != CheckPoolInTwoEntitlements || v.Message != tt.message):
				t.Fatalf("got %+v, want %q", v, tt.message)
			}
		})
	}
}

func TestAddPool(t *testing.T) {
	ge := ldapschema.Entitlement{Name: "Sales", DN: "cn=Sales,ou=GEs", Type: ldapschema.TypeDesktop}
	other := ldapschema.Entitlement{Name: "Old Sales", DN: "cn=Old Sales,ou=GEs", Type: ldapschema.TypeDesktop}
	pool := ldapschema.Pool{Name: "desk", Kind: ldapschema.KindDesktop}
	tests := []struct {
		name    string
		pool    ldapschema.Pool
		holders []ldapschema.Entitlement
		rule    string
		message string
	}{
		{"a free pool that fits joins", pool, nil, "", ""},
		{"a pool already in the entitlement joins again", pool, []ldapschema.Entitlement{ge}, "", ""},
		{"a pool of another entitlement does not join", pool, []ldapschema.Entitlement{other}, CheckPoolInTwoEntitlements,
			`cannot add pool desk to entitlement Sales: it belongs to entitlement Old Sales, and a pool belongs to at most one`},
		{"a pool that does not fit does not join", ldapschema.Pool{Name: "apps", Kind: ldapschema.KindApplication}, nil,
			CheckPoolTypeMismatch, `cannot add pool apps to entitlement Sales: pool apps is an application pool, entitlement Sales is a desktop entitlement: desktop and rds-desktop pools serve desktop entitlements, application pools serve application entitlements`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := AddPoolFits(ge, tt.pool)
			if err == nil {
				err = AddPoolOwner(ge, tt.pool, tt.holders)
			}
			checkError(t, err, tt.rule, tt.message)
		})
	}
	re := ruleError(t, AddPoolOwner(ge, pool, []ldapschema.Entitlement{other}))
	if re.Hint != "remove it there first: cpactl entitlement remove-pool 'Old Sales' desk" {
		t.Fatalf("hint %q", re.Hint)
	}
}

func TestCapacity(t *testing.T) {
	full := ldapschema.Pool{Name: "desk", Kind: ldapschema.KindDesktop, Capacity: 10, Sessions: 12}
	farm := ldapschema.Farm{Name: "f", MaxSessionsPerHost: 5}
	busy := ldapschema.Host{Name: "rds1", Sessions: 6}
	tests := []struct {
		name    string
		check   func(allow bool) (*Violation, error)
		allow   bool
		warning bool
		message string
	}{
		{"a pool within its capacity is fine",
			func(a bool) (*Violation, error) {
				return PoolCapacity(ldapschema.Pool{Kind: ldapschema.KindDesktop, Capacity: 1}, a)
			},
			false, false, ""},
		{"a pool above its capacity is refused", func(a bool) (*Violation, error) { return PoolCapacity(full, a) }, false, false,
			`pool desk: 12 sessions are above the pool's capacity of 10 (resolve treats the pool as full)`},
		{"a pool above its capacity is a warning with allow-overcommit",
			func(a bool) (*Violation, error) { return PoolCapacity(full, a) }, true, true, ""},
		{"a host within its farm's limit is fine",
			func(a bool) (*Violation, error) { return HostCapacity(ldapschema.Host{Sessions: 5}, farm, a) }, false, false, ""},
		{"a host above its farm's limit is refused", func(a bool) (*Violation, error) { return HostCapacity(busy, farm, a) }, false, false,
			`rds host rds1: 6 sessions are above farm f's limit of 5 per host (the host takes no new session)`},
		{"a host above its farm's limit is a warning with allow-overcommit",
			func(a bool) (*Violation, error) { return HostCapacity(busy, farm, a) }, true, true, ""},
		{"a farm without a limit takes any number of sessions",
			func(a bool) (*Violation, error) { return HostCapacity(busy, ldapschema.Farm{}, a) }, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.check(tt.allow)
			if (v != nil) != tt.warning || (v != nil && v.Check != CheckOverCapacity) {
				t.Fatalf("warning %+v, want one: %v", v, tt.warning)
			}
			rule := CheckOverCapacity
			if tt.message == "" {
				rule = ""
			}
			checkError(t, err, rule, tt.message)
		})
	}
}

func TestRepeatedCreate(t *testing.T) {
	pool := func(capacity, sessions int, description string) ldapschema.Attrs {
		p := ldapschema.Pool{Name: "desk", Kind: ldapschema.KindDesktop, Capacity: capacity, Sessions: sessions,
			Description: description, Enabled: true}
		return p.Attrs()
	}
	tests := []struct {
		name           string
		want, existing ldapschema.Attrs
		different      []string
		countersDiffer bool
	}{
		{"the same configuration and counters are unchanged", pool(10, 2, "d"), pool(10, 2, "d"), nil, false},
		{"live counters do not decide", pool(10, 2, "d"), pool(10, 7, "d"), nil, true},
		{"the configuration decides", pool(20, 2, "e"), pool(10, 2, "d"),
			[]string{ldapschema.AttrDescription, ldapschema.AttrCapacity}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := RepeatedCreate(tt.want, tt.existing, ldapschema.PoolManaged, ldapschema.PoolCounters)
			if strings.Join(r.Different, ",") != strings.Join(tt.different, ",") || r.CountersDiffer != tt.countersDiffer ||
				r.Unchanged() != (len(tt.different) == 0) {
				t.Fatalf("got %+v, want different %v, counters differ %v", r, tt.different, tt.countersDiffer)
			}
		})
	}
}

func TestRefusal(t *testing.T) {
	tests := []struct {
		name    string
		vs      []Violation
		message string
		hint    string
	}{
		{"no violation, no refusal", nil, "", ""},
		{"warnings are no refusal", []Violation{{Check: CheckPreferredSitesScope, Message: "w", Warning: true}}, "", ""},
		{"errors are refused in one line, the first one's fix the hint", []Violation{
			{Check: CheckOutOfRange, Message: "a", Fixes: []string{"--x", "--y"}},
			{Check: CheckPreferredSitesScope, Message: "w", Warning: true},
			{Check: CheckOptionNotAllowed, Message: "b", Hint: "do b"}}, `pool p: a; b`, "pass --x, or --y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			re := ruleError(t, Refusal("pool", "p", tt.vs))
			switch {
			case tt.message == "" && re != nil:
				t.Fatalf("want no refusal, got %+v", re)
			case tt.message != "" && (re == nil || re.Message != tt.message || re.Hint != tt.hint || re.Rule != tt.vs[0].Check):
				t.Fatalf("got %+v, want %q with hint %q", re, tt.message, tt.hint)
			}
		})
	}
}

func TestPoolFigures(t *testing.T) {
	floating := ldapschema.Pool{Name: "p", Kind: ldapschema.KindDesktop}
	dedicated := ldapschema.Pool{Name: "p", Kind: ldapschema.KindDesktop, Dedicated: true}
	app := ldapschema.Pool{Name: "p", Kind: ldapschema.KindApplication}
	tests := []struct {
		name    string
		pool    ldapschema.Pool
		given   []string
		message string
	}{
		{"a desktop pool takes capacity and sessions", floating, []string{"capacity", "sessions"}, ""},
		{"a dedicated desktop pool takes assigned", dedicated, []string{"assigned"}, ""},
		{"a farm-backed pool takes a farm", app, []string{"farm"}, ""},
		{"a desktop pool has no farm", dedicated, []string{"farm"}, `--farm is for rds-desktop and application pools; pool p is a desktop pool`},
		{"a floating desktop pool assigns no machines", floating, []string{"assigned"}, `--assigned is for dedicated desktop pools; pool p is floating`},
		{"a farm-backed pool's figures come from its hosts", app, []string{"sessions"}, `--sessions is for desktop pools; pool p is application`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			given := func(f string) bool { return slices.Contains(tt.given, f) }
			rule := RulePoolKind
			if tt.message == "" {
				rule = ""
			}
			checkError(t, PoolFigures(tt.pool, given), rule, tt.message)
		})
	}
}

func TestSession(t *testing.T) {
	pool := ldapschema.Pool{Name: "apps", DN: "cn=apps,cn=uk-pod", Pod: "uk-pod", Kind: ldapschema.KindApplication,
		Farm: "farm1", FarmDN: "cn=farm1,cn=uk-pod"}
	desk := ldapschema.Pool{Name: "desk", DN: "cn=desk,cn=uk-pod", Pod: "uk-pod", Kind: ldapschema.KindDesktop}
	ge := ldapschema.Entitlement{Name: "Office", PoolDNs: []string{"CN=apps,cn=uk-pod"}}
	ukPod, usPod := ldapschema.Pod{Name: "UK-POD"}, ldapschema.Pod{Name: "us-pod"}
	host := ldapschema.Host{Name: "rds1", DN: "cn=rds1,cn=farm1,cn=uk-pod", Farm: "farm1"}
	other := ldapschema.Host{Name: "rds9", DN: "cn=rds9,cn=farm2,cn=uk-pod", Farm: "farm2"}
	tests := []struct {
		name    string
		err     error
		rule    string
		message string
	}{
		{"a pool of the pod and the entitlement is fine", SessionPool(ge, ukPod, pool), "", ""},
		{"a session's pool is in its pod", SessionPool(ge, usPod, pool), RuleSessionPool, `pool apps is in pod uk-pod, not us-pod`},
		{"a session's pool is one of its entitlement's", SessionPool(ge, ukPod, desk), RuleSessionPool,
			`pool desk is not associated with entitlement Office`},
		{"a host of the pool's farm is fine", SessionHost(pool, host), "", ""},
		{"a desktop pool's session has no host", SessionHost(desk, host), RuleSessionHost,
			`pool desk is a desktop pool: a session there has no RDS host`},
		{"a session's host serves its pool", SessionHost(pool, other), RuleSessionHost,
			`rds host rds9 is in farm farm2, but pool apps is served by farm farm1`},
		{"a dedicated desktop entitlement has pod assignments",
			AssignmentEntitlement(ldapschema.Entitlement{Type: ldapschema.TypeDesktop, Dedicated: true}), "", ""},
		{"pod assignments are for dedicated desktop entitlements only",
			AssignmentEntitlement(ldapschema.Entitlement{Name: "Office", Type: ldapschema.TypeApplication}), RuleAssignmentType,
			`entitlement Office is not a dedicated desktop entitlement`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkError(t, tt.err, tt.rule, tt.message) })
	}
}

func TestEntitlementKind(t *testing.T) {
	stored := ldapschema.Entitlement{Name: "Sales", Type: ldapschema.TypeDesktop, Dedicated: true}
	app := ldapschema.Entitlement{Name: "Office", Type: ldapschema.TypeApplication}
	building := ldapschema.Entitlement{Name: "New"}
	desktop, application := ldapschema.TypeDesktop, ldapschema.TypeApplication
	tests := []struct {
		name                string
		ge                  ldapschema.Entitlement
		creating            bool
		newType             string
		dedicated, floating bool
		message             string
	}{
		{"a floating desktop entitlement is created", building, true, desktop, false, true, ""},
		{"an application entitlement is created without an assignment", building, true, application, false, false, ""},
		{"an entitlement is created with a type", building, true, "", false, false, `entitlement New needs --type`},
		{"a desktop entitlement is created dedicated or floating", building, true, desktop, false, false,
			`desktop entitlement New needs --dedicated or --floating`},
		{"an application entitlement has no user assignment", building, true, application, true, false,
			"--dedicated and --floating are for desktop entitlements only"},
		{"an update may repeat the type and assignment", stored, false, desktop, true, false, ""},
		{"an update leaves both alone", stored, false, "", false, false, ""},
		{"the type is fixed at creation", stored, false, application, false, false,
			`entitlement Sales is a desktop entitlement: its type is fixed at creation`},
		{"dedicated or floating is fixed at creation", stored, false, "", false, true,
			`entitlement Sales is dedicated: dedicated or floating is fixed at creation`},
		{"an application entitlement never gets an assignment", app, false, "", true, false,
			"--dedicated and --floating are for desktop entitlements only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := RuleEntitlementKind
			if tt.message == "" {
				rule = ""
			}
			checkError(t, EntitlementKind(tt.ge, tt.creating, tt.newType, tt.dedicated, tt.floating), rule, tt.message)
		})
	}
}

func TestGroupMembers(t *testing.T) {
	const dn = "cn=Sales,ou=Groups,dc=x"
	alice := GroupMember{Kind: "user", Name: "alice", DN: "uid=alice,ou=People,dc=x"}
	for _, tc := range []struct {
		name, group, groupDN string
		members              []GroupMember
		want                 string // "" when every member passes
	}{
		{"distinct members pass", "Sales", dn, []GroupMember{alice, {Kind: "group", Name: "Eng", DN: "cn=Eng,ou=Groups,dc=x"}}, ""},
		{"the group itself, by DN", "Sales", dn, []GroupMember{{Kind: "group", Name: "sales", DN: "CN=Sales, ou=Groups,dc=x"}}, "group Sales cannot be a member of itself"},
		{"the group itself, by name before it exists", "Sales", "", []GroupMember{{Kind: "group", Name: "SALES", DN: "cn=SALES,ou=Groups,dc=x"}}, "group Sales cannot be a member of itself"},
		{"a user named like the group is not the group", "Sales", dn, []GroupMember{{Kind: "user", Name: "Sales", DN: "uid=Sales,ou=People,dc=x"}}, ""},
		{"a member given twice, spelled differently", "Sales", dn, []GroupMember{alice, {Kind: "user", Name: "alice", DN: "UID=alice,ou=people,dc=x"}}, "user alice is given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := NewGroupMembers(tc.group, tc.groupDN)
			var got string
			for _, m := range tc.members {
				if err := check.Add(m); err != nil {
					got = err.Error()
					break
				}
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
