package horizonpush

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/rules"
)

const base = "dc=vdiglobal,dc=vmware,dc=int"

func dn(rdn, ou string) string { return rdn + ",ou=" + ou + "," + base }

func seed() *Records {
	return &Records{
		Sites: []ldapschema.Site{
			{DN: dn("cn=India", "Sites"), Name: "India", PreferredSites: []string{"UK", "US"}},
			{DN: dn("cn=UK", "Sites"), Name: "UK"}, {DN: dn("cn=US", "Sites"), Name: "US"}},
		Pods: []ldapschema.Pod{{Name: "india-pod-1"}},
		Entitlements: []ldapschema.Entitlement{
			{DN: dn("cn=Sales Desktops", "Entitlements"), Name: "Sales Desktops", Type: ldapschema.TypeDesktop, Scope: ldapschema.ScopeAny,
				UsePreferredSites: true, IgnoreHighLoad: true, LoadDistribution: ldapschema.PolicyLoad, Enabled: true,
				BackupDN: dn("cn=Spare Desktops", "Entitlements")},
			{DN: dn("cn=Spare Desktops", "Entitlements"), Name: "Spare Desktops", Type: ldapschema.TypeDesktop, Scope: ldapschema.ScopeSite, Enabled: true},
			{DN: dn("cn=Office", "Entitlements"), Name: "Office", Type: ldapschema.TypeApplication, Scope: ldapschema.ScopeLocal},
		},
		HomeSites: []ldapschema.HomeSite{
			{DN: dn("cn=h1", "HomeSites"), UserDN: dn("uid=alice", "People"), SiteDN: dn("cn=UK", "Sites")},
			{DN: dn("cn=h2", "HomeSites"), GroupDN: dn("cn=Sales", "Groups"), EntitlementDN: dn("cn=Office", "Entitlements"), SiteDN: dn("cn=US", "Sites")},
			{DN: dn("cn=h3", "HomeSites"), UserDN: dn("uid=ghost", "People"), SiteDN: dn("cn=US", "Sites")},
		},
		Users:  []ldapschema.User{{DN: dn("uid=alice", "People"), UID: "alice", Domain: "CORP"}},
		Groups: []ldapschema.Group{{DN: dn("cn=Sales", "Groups"), Name: "Sales"}},
	}
}

// TestDesired: cpactl's records in the API's terms, by name: scopes
// renamed (ANY ALL_SITES, SITE WITHIN_SITE, LOCAL WITHIN_POD), no policy
// NONE, the backup by name, home-site rows by member and entitlement
// name, a row whose user is missing listed as not pushed.
func TestDesired(t *testing.T) {
	d, err := Desired(seed())
	if err != nil {
		t.Fatal(err)
	}
	if want := []horizon.DesiredSite{{Name: "India", PreferredSites: []string{"UK", "US"}}, {Name: "UK"}, {Name: "US"}}; !reflect.DeepEqual(d.Sites, want) {
		t.Errorf("sites %+v", d.Sites)
	}
	want := []horizon.DesiredEntitlement{
		{Name: "Sales Desktops", Scope: "ALL_SITES", UsePreferredSites: true, IgnoreHighLoad: true, Policy: "LOAD", Enabled: true, Backup: "Spare Desktops"},
		{Name: "Spare Desktops", Scope: "WITHIN_SITE", Policy: "NONE", Enabled: true},
		{Name: "Office", Application: true, Scope: "WITHIN_POD", Policy: "NONE"},
	}
	if !reflect.DeepEqual(d.Entitlements, want) {
		t.Errorf("entitlements\n%+v\nwant\n%+v", d.Entitlements, want)
	}
	wantHomes := []horizon.DesiredHomeSite{
		{Member: horizon.Member{Domain: "CORP", Name: "alice"}, Site: "UK"},
		{Member: horizon.Member{Name: "Sales", Group: true}, Entitlement: "Office", Application: true, Site: "US"},
	}
	if !reflect.DeepEqual(d.HomeSites, wantHomes) {
		t.Errorf("home sites %+v", d.HomeSites)
	}
	if len(d.NotPushed) != 1 || d.NotPushed[0].Object != "home site h3" || !strings.Contains(d.NotPushed[0].Reason, "ghost") {
		t.Errorf("not pushed %+v", d.NotPushed)
	}
	if len(d.Users) != 1 || len(d.Groups) != 1 || !d.Groups[0].Group {
		t.Errorf("members %+v %+v", d.Users, d.Groups)
	}
}

// TestNotPushedThresholds: the four pae-* thresholds are listed when they
// are not at their defaults (federation-wide, and a pod's own), and
// nothing when at their defaults or unset.
func TestNotPushedThresholds(t *testing.T) {
	r := seed()
	r.HomeSites = nil
	d, err := Desired(r)
	if err != nil || len(d.NotPushed) != 0 {
		t.Fatalf("defaults: %+v, %v", d.NotPushed, err)
	}
	r.Settings = ldapschema.SettingsRecord{Stored: map[string]int{
		ldapschema.AttrLoadThresholdForSite:   90,
		ldapschema.AttrRDSLoadIndexThreshold:  20, // its default
		ldapschema.AttrMinRDSServersInLBQueue: 2,
		ldapschema.AttrEnableSiteRedirection:  1,
	}}
	r.Pods[0].RDS = map[string]int{ldapschema.AttrRDSConnectingSessionThreshold: 30}
	d, err = Desired(r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, np := range d.NotPushed {
		got = append(got, np.Object+" "+np.Field+" = "+np.Value)
	}
	want := []string{
		"settings pae-LoadThresholdForSite = 90 (default 98)",
		"settings pae-MinRDSServersInLBQueue = 2 (default 4)",
		"settings pae-EnableSiteRedirection = 1 (default 0)",
		"pod india-pod-1 pae-RDSConnectingSessionThreshold = 30",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("not pushed\n%q\nwant\n%q", got, want)
	}
	if !strings.Contains(d.NotPushed[0].Reason, "no call that writes it") {
		t.Errorf("reason: %q", d.NotPushed[0].Reason)
	}
}

// TestDesiredRefusesBadPreferredSites: a site preferring itself or a site
// twice is refused before anything is read from Horizon.
func TestDesiredRefusesBadPreferredSites(t *testing.T) {
	for _, tc := range []struct {
		list []string
		rule string
	}{{[]string{"UK", "India"}, rules.CheckPreferredSelf}, {[]string{"UK", "uk"}, rules.CheckPreferredDuplicate}} {
		r := seed()
		r.Sites[0].PreferredSites = tc.list
		_, err := Desired(r)
		var re *rules.Error
		if !errors.As(err, &re) || re.Rule != tc.rule || !strings.HasPrefix(re.Message, "site India: ") {
			t.Errorf("%v: err = %v", tc.list, err)
		}
	}
}

// TestCheck: a plan whose entitlement would break cpactl's rules is
// refused (ignore-high-load without a policy, require-home-site without
// use-home-site, preferred sites with a scope other than ALL_SITES), and
// a right one passes.
func TestCheck(t *testing.T) {
	ok := horizon.Entitlement{Name: "Sales Desktops", Scope: "ALL_SITES", UsePreferredSites: true, IgnoreHighLoad: true, Policy: "LOAD", Enabled: true}
	for _, tc := range []struct {
		name string
		edit func(*horizon.Entitlement)
		rule string
	}{
		{"right", func(*horizon.Entitlement) {}, ""},
		{"ignore high load without a policy", func(e *horizon.Entitlement) { e.Policy = "NONE" }, rules.CheckIgnoreHighLoadWithoutPolicy},
		{"require without use home site", func(e *horizon.Entitlement) { e.RequireHomeSite = true }, rules.CheckRequireHomeSiteWithoutUse},
		{"preferred sites within a site", func(e *horizon.Entitlement) { e.Scope = "WITHIN_SITE" }, rules.CheckPreferredSitesScope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ok
			tc.edit(&e)
			p := &horizon.Plan{Changes: []horizon.Change{{Kind: "desktop entitlement", Object: e.Name, Result: &e}}}
			err := Check(p, seed())
			var re *rules.Error
			switch {
			case tc.rule == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.rule != "" && (!errors.As(err, &re) || re.Rule != tc.rule):
				t.Fatalf("err = %v, want rule %s", err, tc.rule)
			case tc.rule != "" && (!strings.HasPrefix(re.Message, `desktop entitlement Sales Desktops: `) || re.Hint == ""):
				t.Errorf("message %q, hint %q", re.Message, re.Hint)
			}
		})
	}
}

// TestScopes: the two spellings of the scopes map both ways.
func TestScopes(t *testing.T) {
	for cp, api := range map[string]string{"ANY": "ALL_SITES", "SITE": "WITHIN_SITE", "LOCAL": "WITHIN_POD"} {
		if ScopeToAPI(cp) != api || ScopeFromAPI(api) != cp {
			t.Errorf("%s <-> %s: %s, %s", cp, api, ScopeToAPI(cp), ScopeFromAPI(api))
		}
	}
	if ScopeFromAPI("ANY") != "" {
		t.Error("ANY is not an API scope")
	}
}
