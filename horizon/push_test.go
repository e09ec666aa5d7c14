package horizon_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/internal/horizontest"
)

// The seed-000 federation's ids (internal/horizontest/testdata/seed-000).
const (
	siteIndia = "51000000-0000-4000-8000-000000000001"
	siteUK    = "51000000-0000-4000-8000-000000000002"
	siteUS    = "51000000-0000-4000-8000-000000000003"
	geSales   = "6de00000-0000-4000-8000-000000000001"
	sidAlice  = "S-1-5-21-1004336348-1177238915-682003330-1101"
	sidSales  = "S-1-5-21-1004336348-1177238915-682003330-1201"
)

// seedDesired is seed-000 as cpactl holds it: Horizon matches it.
func seedDesired() horizon.Desired {
	return horizon.Desired{
		Sites: []horizon.DesiredSite{{Name: "India", PreferredSites: []string{"UK", "US"}}, {Name: "UK"}, {Name: "US"}, {Name: "Japan"}},
		Entitlements: []horizon.DesiredEntitlement{{Name: "Sales Desktops", Scope: "ALL_SITES", UsePreferredSites: true,
			IgnoreHighLoad: true, Policy: "LOAD", Enabled: true}},
		Users:  []horizon.Member{{Domain: "CORP", Name: "alice"}, {Domain: "CORP", Name: "bob"}},
		Groups: []horizon.Member{{Name: "Sales", Group: true}, {Name: "Support", Group: true}},
	}
}

type pushSetup struct {
	*setup
	c     *horizon.Client
	s     *horizon.Session
	notes []string
}

func newPush(t *testing.T) *pushSetup {
	t.Helper()
	base := newSetup(t)
	c, err := horizon.NewClient(base.cfg, base.cred)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Login(context.Background(), base.opts.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Logout(context.Background()) })
	return &pushSetup{setup: base, c: c, s: s}
}

func (p *pushSetup) plan(t *testing.T, d horizon.Desired) *horizon.Plan {
	t.Helper()
	st, err := p.s.ReadState(context.Background(), d.Wanted())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.s.PlanPush(context.Background(), st, d)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func (p *pushSetup) push(plan *horizon.Plan) ([]string, error) {
	var done []string
	err := p.s.Push(context.Background(), plan, horizon.PushOptions{Done: func(c horizon.Change, note string) {
		done = append(done, c.Op())
		if note != "" {
			p.notes = append(p.notes, note)
		}
	}})
	return done, err
}

// writes are the writes the test Horizon received.
func (p *pushSetup) writes() []horizontest.Request { return p.f.Writes() }

// changedDesired is seed-000 after `site preferred India --set US,UK` and
// `entitlement update "Sales Desktops" --use-home-site`.
func changedDesired() horizon.Desired {
	d := seedDesired()
	d.Sites[0].PreferredSites = []string{"US", "UK"}
	d.Entitlements[0].UseHomeSite = true
	return d
}

// TestPushPlanAndWrite: after a preferred-site order and an entitlement
// flag change, the plan holds exactly the two PUTs (method, path, object,
// field before -> after), Push sends exactly them with whole bodies that
// pass the swagger's update specs and differ from the objects as read only
// in the pushed fields, and a second plan is empty (and sends nothing).
func TestPushPlanAndWrite(t *testing.T) {
	p := newPush(t)
	if plan := p.plan(t, seedDesired()); len(plan.Changes) != 0 {
		t.Fatalf("Horizon matches seed-000, yet the plan holds %+v", plan.Changes)
	}
	site := p.f.State("sites.json")[0]
	ge := p.f.State("global-desktop-entitlements.json")[0]
	plan := p.plan(t, changedDesired())
	type row struct {
		Method, Path, Kind, Object string
		Fields                     []horizon.Field
	}
	var got []row
	for _, c := range plan.Changes {
		got = append(got, row{c.Method, c.Path, c.Kind, c.Object, c.Fields})
	}
	want := []row{
		{"PUT", "/federation/v3/sites/" + siteIndia, "site", "India",
			[]horizon.Field{{Field: "preferred_sites", Before: []string{"UK", "US"}, After: []string{"US", "UK"}}}},
		{"PUT", "/inventory/v7/global-desktop-entitlements/" + geSales, "desktop entitlement", "Sales Desktops",
			[]horizon.Field{{Field: "use_home_site", Before: false, After: true}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plan:\n%+v\nwant\n%+v", got, want)
	}
	if len(p.writes()) != 0 {
		t.Fatalf("planning wrote: %+v", p.writes())
	}
	done, err := p.push(plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 2 {
		t.Errorf("done: %v", done)
	}
	ws := p.writes()
	if len(ws) != 2 || ws[0].Method != "PUT" || ws[0].Path != want[0].Path || ws[1].Method != "PUT" || ws[1].Path != want[1].Path {
		t.Fatalf("writes: %+v", ws)
	}
	if inv := p.f.Invalid(); len(inv) != 0 {
		t.Fatalf("bodies refused by the schema check: %v", inv)
	}
	s, err := horizontest.LoadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	for i, spec := range []string{"SiteUpdateSpecV3", "GlobalDesktopEntitlementUpdateSpecV5"} {
		if err := s.Check(spec, false, ws[i].Body); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
	}
	// Whole: every field of the spec the object had, unchanged but the
	// pushed one.
	wholeExcept(t, ws[0].Body, site, s.Properties("SiteUpdateSpecV3"), map[string]any{"preferred_sites": []any{siteUS, siteUK}})
	wholeExcept(t, ws[1].Body, ge, s.Properties("GlobalDesktopEntitlementUpdateSpecV5"), map[string]any{"use_home_site": true})
	if got := p.f.State("sites.json")[0]["preferred_sites"]; !reflect.DeepEqual(got, []any{siteUS, siteUK}) {
		t.Errorf("India's preferred sites after the push: %v", got)
	}
	// A second push right after does nothing.
	if again := p.plan(t, changedDesired()); len(again.Changes) != 0 {
		t.Errorf("second plan: %+v", again.Changes)
	}
	if _, err := p.push(p.plan(t, changedDesired())); err != nil || len(p.writes()) != 2 {
		t.Errorf("second push: %v, writes %d", err, len(p.writes()))
	}
}

// wholeExcept checks that body holds every field of fields that obj holds,
// with obj's value, but the pushed ones, which have their new value.
func wholeExcept(t *testing.T, body []byte, obj map[string]any, fields []string, pushed map[string]any) {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{}
	for _, f := range fields {
		if v, ok := obj[f]; ok {
			want[f] = v
		}
	}
	for k, v := range pushed {
		want[k] = v
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("body\n%v\nwant\n%v", got, want)
	}
}

// TestPushChangedSincePlan: an object another administrator changes
// between the plan and the write is not written (ChangedError naming it
// and the field); the writes before it were made, the ones after not.
func TestPushChangedSincePlan(t *testing.T) {
	p := newPush(t)
	path := "/inventory/v7/global-desktop-entitlements/" + geSales
	// The plan reads the entitlement once; the push's read before the
	// write is the second.
	p.f.SetFaults(horizontest.Faults{ChangeOn: &horizontest.ChangeOn{Path: path, After: 1, Set: map[string]any{"enabled": false}}})
	d := changedDesired()
	d.HomeSites = []horizon.DesiredHomeSite{{Member: horizon.Member{Domain: "CORP", Name: "alice"}, Site: "UK"}}
	plan := p.plan(t, d)
	if len(plan.Changes) != 3 {
		t.Fatalf("plan: %+v", plan.Changes)
	}
	done, err := p.push(plan)
	var ce *horizon.ChangedError
	if !errors.As(err, &ce) || ce.Object != "Sales Desktops" || !slices.Equal(ce.Fields, []string{"enabled"}) {
		t.Fatalf("err = %v, want a ChangedError for Sales Desktops (enabled)", err)
	}
	if len(done) != 1 || len(p.writes()) != 1 || p.writes()[0].Path != "/federation/v3/sites/"+siteIndia {
		t.Errorf("done %v, writes %+v: only the site before it", done, p.writes())
	}
	if got := p.f.State("global-desktop-entitlements.json")[0]; got["use_home_site"] != false || got["enabled"] != false {
		t.Errorf("the entitlement: %v", got)
	}
	if rows := p.f.State("home-sites.json"); len(rows) != 0 {
		t.Errorf("a write after the refused one was made: %v", rows)
	}
}

// TestPushLostAnswer: a write whose connection drops with no answer is
// read back, never sent again: applied, it is written with a note; not
// applied, a NotWrittenError; with the server gone after the drop, an
// OutcomeUnknownError.
func TestPushLostAnswer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		faults  horizontest.Faults
		applied bool
		check   func(error) bool
	}{
		{"applied", horizontest.Faults{DropWrite: horizontest.DropApplied}, true, func(err error) bool { return err == nil }},
		{"not applied", horizontest.Faults{DropWrite: horizontest.DropNotApplied}, false,
			func(err error) bool { var e *horizon.NotWrittenError; return errors.As(err, &e) }},
		{"applied, then the server is gone", horizontest.Faults{DropWrite: horizontest.DropApplied, DropThenDown: true}, true,
			func(err error) bool { var e *horizon.OutcomeUnknownError; return errors.As(err, &e) && e.Lost }},
		{"not applied, then the server is gone", horizontest.Faults{DropWrite: horizontest.DropNotApplied, DropThenDown: true}, false,
			func(err error) bool { var e *horizon.OutcomeUnknownError; return errors.As(err, &e) && e.Lost }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPush(t)
			d := seedDesired()
			d.Entitlements[0].Enabled = false
			plan := p.plan(t, d)
			p.f.SetFaults(tc.faults)
			done, err := p.push(plan)
			if !tc.check(err) {
				t.Fatalf("err = %v", err)
			}
			if err != nil && strings.Contains(err.Error(), horizontest.Password) {
				t.Errorf("the password is in the error: %v", err)
			}
			for _, w := range p.writes() {
				if strings.Contains(string(w.Body), horizontest.Password) {
					t.Errorf("the password is in a write: %s", w.Body)
				}
			}
			puts := 0
			for _, w := range p.writes() {
				if w.Method == "PUT" {
					puts++
				}
			}
			if puts != 1 {
				t.Errorf("the write was sent %d times", puts)
			}
			if got := p.f.State("global-desktop-entitlements.json")[0]["enabled"]; got != !tc.applied {
				t.Errorf("enabled = %v", got)
			}
			if tc.applied && err == nil && (len(done) != 1 || len(p.notes) != 1 || !strings.Contains(p.notes[0], "a read back shows it was written")) {
				t.Errorf("done %v, notes %v", done, p.notes)
			}
			if err != nil && len(done) != 0 {
				t.Errorf("reported as done: %v", done)
			}
		})
	}
}

// TestPushThrottledAndLagging: a 429 on a write is waited out and the
// write sent again (the server refused it); a read that lags behind the
// write is read again until it shows it.
func TestPushThrottledAndLagging(t *testing.T) {
	p := newPush(t)
	plan := p.plan(t, changedDesired())
	p.f.SetFaults(horizontest.Faults{ThrottleWrites: 2, ReadLag: 3})
	if _, err := p.push(plan); err != nil {
		t.Fatal(err)
	}
	var statuses []int
	for _, w := range p.writes() {
		statuses = append(statuses, w.Status)
	}
	if !slices.Equal(statuses, []int{429, 429, 204, 204}) {
		t.Errorf("write statuses %v", statuses)
	}
	if len(p.waits.d) < 3 {
		t.Errorf("waits %v: the read back did not wait for the lag", p.waits.d)
	}
	if got := p.plan(t, changedDesired()); len(got.Changes) != 0 {
		t.Errorf("after the push: %+v", got.Changes)
	}
}

// TestPushReadBackDoesNotShow: a write Horizon accepts but that never
// shows when read back (within SettleWait) is an OutcomeUnknownError, not
// a success.
func TestPushReadBackDoesNotShow(t *testing.T) {
	p := newPush(t)
	plan := p.plan(t, changedDesired())
	p.f.SetFaults(horizontest.Faults{ReadLag: 1000})
	_, err := p.push(plan)
	var e *horizon.OutcomeUnknownError
	if !errors.As(err, &e) || e.Lost || !strings.Contains(err.Error(), "does not show") {
		t.Fatalf("err = %v", err)
	}
}

// TestPushHomeSites: home-site rows cpactl has are created (POST), moved
// (PUT) and, once cpactl no longer has them, removed (DELETE); a row of a
// user cpactl does not hold is left alone and listed as not pushed.
func TestPushHomeSites(t *testing.T) {
	p := newPush(t)
	d := seedDesired()
	alice := horizon.Member{Domain: "CORP", Name: "alice"}
	sales := horizon.Member{Name: "Sales", Group: true}
	d.HomeSites = []horizon.DesiredHomeSite{{Member: alice, Site: "UK"}, {Member: sales, Entitlement: "Sales Desktops", Site: "US"}}
	plan := p.plan(t, d)
	var ops []string
	for _, c := range plan.Changes {
		ops = append(ops, c.Method+" "+c.Path+" "+c.Object)
	}
	if want := []string{"POST /federation/v2/home-sites user CORP\\alice (global)",
		"POST /federation/v2/home-sites group CORP\\Sales for Sales Desktops"}; !slices.Equal(ops, want) {
		t.Fatalf("plan %q, want %q", ops, want)
	}
	if _, err := p.push(plan); err != nil {
		t.Fatal(err)
	}
	rows := p.f.State("home-sites.json")
	if len(rows) != 2 || rows[0]["ad_user_or_group_id"] != sidAlice || rows[0]["site_id"] != siteUK ||
		rows[1]["ad_user_or_group_id"] != sidSales || rows[1]["global_desktop_entitlement_id"] != geSales || rows[1]["site_id"] != siteUS {
		t.Fatalf("rows: %v", rows)
	}
	if got := p.plan(t, d); len(got.Changes) != 0 {
		t.Fatalf("second plan: %+v", got.Changes)
	}
	// alice moves to US; the Sales row goes.
	d.HomeSites = []horizon.DesiredHomeSite{{Member: alice, Site: "US"}}
	plan = p.plan(t, d)
	ops = nil
	for _, c := range plan.Changes {
		ops = append(ops, c.Method+" "+c.Path+" "+c.Object)
	}
	if want := []string{"DELETE /federation/v2/home-sites group CORP\\Sales for Sales Desktops",
		"PUT /federation/v2/home-sites/" + rows[0]["id"].(string) + " user CORP\\alice (global)"}; !slices.Equal(ops, want) {
		t.Fatalf("plan %q, want %q", ops, want)
	}
	if _, err := p.push(plan); err != nil {
		t.Fatal(err)
	}
	rows = p.f.State("home-sites.json")
	if len(rows) != 1 || rows[0]["site_id"] != siteUS {
		t.Fatalf("rows: %v", rows)
	}
	if inv := p.f.Invalid(); len(inv) != 0 {
		t.Fatalf("bodies refused by the schema check: %v", inv)
	}
	// cpactl without alice: her row is left alone.
	d.HomeSites, d.Users = nil, []horizon.Member{{Domain: "CORP", Name: "bob"}}
	plan = p.plan(t, d)
	if len(plan.Changes) != 0 || len(plan.NotPushed) != 1 || !strings.Contains(plan.NotPushed[0].Reason, "left alone") {
		t.Errorf("plan %+v, not pushed %+v", plan.Changes, plan.NotPushed)
	}
}

// TestPushNotPushed: what Horizon does not have (a site, an entitlement,
// a user) is listed as not pushed with the reason, and nothing is planned
// for it.
func TestPushNotPushed(t *testing.T) {
	p := newPush(t)
	d := seedDesired()
	d.Sites = append(d.Sites, horizon.DesiredSite{Name: "Mars"})
	d.Sites[0].PreferredSites = []string{"UK", "Mars"}
	d.Entitlements = append(d.Entitlements, horizon.DesiredEntitlement{Name: "Nowhere", Scope: "ALL_SITES", Policy: "NONE"})
	d.HomeSites = []horizon.DesiredHomeSite{{Member: horizon.Member{Domain: "CORP", Name: "carol"}, Site: "UK"}}
	plan := p.plan(t, d)
	if len(plan.Changes) != 0 {
		t.Errorf("changes: %+v", plan.Changes)
	}
	var objects []string
	for _, np := range plan.NotPushed {
		objects = append(objects, np.Object+": "+np.Reason)
	}
	want := []string{
		"site India: Horizon has no site Mars to rank",
		"site Mars: Horizon has no site of this name: push does not create sites (create it in Horizon first)",
		"desktop entitlement Nowhere: Horizon has no global entitlement of this name: push does not create entitlements (create it in Horizon first)",
		"home site of user CORP\\carol (global): no user CORP\\carol in Horizon's AD",
	}
	if !slices.Equal(objects, want) {
		t.Errorf("not pushed:\n%q\nwant\n%q", objects, want)
	}
}
