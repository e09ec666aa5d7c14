package broker

import (
	"strings"
	"testing"
)

// homeFederation: carol is in groups "Zulu", "alpha" and "Mid"; "alpha" is
// nested in "Parent". Sites UK, US, India, Japan.
func homeFederation(rows ...HomeSite) *Federation {
	return &Federation{
		Sites:        []Site{{Name: "UK"}, {Name: "US"}, {Name: "India"}, {Name: "Japan"}},
		Users:        []User{{Name: "carol", Groups: []string{"Zulu", "alpha", "Mid"}}},
		Groups:       []Group{{Name: "Zulu"}, {Name: "alpha", Groups: []string{"Parent"}}, {Name: "Mid"}, {Name: "Parent"}},
		Entitlements: []Entitlement{{Name: "Sales Desktop"}, {Name: "Other"}},
		HomeSites:    rows,
	}
}

func TestResolveHomeSite(t *testing.T) {
	cases := []struct {
		name        string
		rows        []HomeSite
		user, ge    string
		site        string // "" for none
		source      HomeSiteSource
		conflicts   int
		decisive    bool
		rowsWant    int
		lostContain string // a lost_because that must appear
	}{
		{
			name: "user override beats every other row",
			rows: []HomeSite{
				{User: "carol", Entitlement: "Sales Desktop", Site: "UK"},
				{Group: "Mid", Entitlement: "Sales Desktop", Site: "US"},
				{User: "carol", Site: "India"},
				{Group: "Mid", Site: "Japan"},
			},
			user: "carol", ge: "Sales Desktop", site: "UK", source: SourceUserOverride, rowsWant: 4,
			lostContain: "the USER_OVERRIDE row of user carol (site UK) takes precedence",
		},
		{
			name: "group override beats the user's global home site",
			rows: []HomeSite{
				{Group: "mid", Entitlement: "sales desktop", Site: "US"},
				{User: "carol", Site: "India"},
			},
			user: "CAROL", ge: "Sales Desktop", site: "US", source: SourceGroupOverride, rowsWant: 2,
		},
		{
			name: "user global home site beats a group's",
			rows: []HomeSite{
				{User: "carol", Site: "India"},
				{Group: "Mid", Site: "Japan"},
			},
			user: "carol", ge: "Sales Desktop", site: "India", source: SourceUserDefault, rowsWant: 2,
		},
		{
			name: "a group's global home site",
			rows: []HomeSite{{Group: "Mid", Site: "japan"}},
			user: "carol", ge: "Sales Desktop", site: "Japan", source: SourceGroupDefault, rowsWant: 1,
		},
		{
			name: "group conflict: the name sorting first case-insensitively wins",
			rows: []HomeSite{
				{Group: "Zulu", Site: "UK"},
				{Group: "alpha", Site: "US"},
			},
			// Byte order would put "Zulu" first; case-insensitive order puts "alpha" first.
			user: "carol", ge: "Sales Desktop", site: "US", source: SourceGroupDefault, conflicts: 1, decisive: true, rowsWant: 2,
			lostContain: "conflict at GROUP_DEFAULT: group alpha sorts first (case-insensitive), so its site US wins",
		},
		{
			name: "groups naming the same site are no conflict",
			rows: []HomeSite{
				{Group: "Zulu", Site: "UK"},
				{Group: "alpha", Site: "uk"},
			},
			user: "carol", ge: "Sales Desktop", site: "UK", source: SourceGroupDefault, rowsWant: 2,
			lostContain: "names the same site",
		},
		{
			name: "a conflict at an outranked level is listed but not decisive",
			rows: []HomeSite{
				{User: "carol", Site: "India"},
				{Group: "Zulu", Site: "UK"},
				{Group: "alpha", Site: "US"},
			},
			user: "carol", ge: "Sales Desktop", site: "India", source: SourceUserDefault, conflicts: 1, decisive: false, rowsWant: 3,
		},
		{
			name: "group override conflict",
			rows: []HomeSite{
				{Group: "Zulu", Entitlement: "Sales Desktop", Site: "UK"},
				{Group: "Mid", Entitlement: "Sales Desktop", Site: "US"},
			},
			user: "carol", ge: "Sales Desktop", site: "US", source: SourceGroupOverride, conflicts: 1, decisive: true, rowsWant: 2,
		},
		{
			name: "another GE's override plays no part",
			rows: []HomeSite{{User: "carol", Entitlement: "Other", Site: "UK"}},
			user: "carol", ge: "Sales Desktop", source: SourceNone, rowsWant: 0,
		},
		{
			name: "without a GE only global rows count",
			rows: []HomeSite{{User: "carol", Entitlement: "Sales Desktop", Site: "UK"}, {Group: "Mid", Site: "US"}},
			user: "carol", ge: "", site: "US", source: SourceGroupDefault, rowsWant: 1,
		},
		{
			name: "only immediate groups count",
			rows: []HomeSite{{Group: "Parent", Site: "UK"}},
			user: "carol", ge: "Sales Desktop", source: SourceNone, rowsWant: 0,
		},
		{
			name: "a row naming a site that does not exist loses",
			rows: []HomeSite{{User: "carol", Site: "Atlantis"}, {Group: "Mid", Site: "US"}},
			user: "carol", ge: "Sales Desktop", site: "US", source: SourceGroupDefault, rowsWant: 2,
			lostContain: `site "Atlantis" does not exist`,
		},
		{
			name: "a duplicate row for the same member loses",
			rows: []HomeSite{{User: "carol", Site: "US"}, {User: "Carol", Site: "India"}},
			user: "carol", ge: "Sales Desktop", site: "India", source: SourceUserDefault, rowsWant: 2,
			lostContain: "duplicate row",
		},
		{
			name: "an unknown user has no groups but its own rows count",
			rows: []HomeSite{{User: "dave", Site: "UK"}, {Group: "Mid", Site: "US"}},
			user: "dave", ge: "Sales Desktop", site: "UK", source: SourceUserDefault, rowsWant: 1,
		},
		{
			name: "no row at all",
			user: "carol", ge: "Sales Desktop", source: SourceNone, rowsWant: 0,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := ResolveHomeSite(homeFederation(tc.rows...), tc.user, tc.ge)
			switch {
			case tc.site == "" && res.Site != nil:
				t.Fatalf("site %s, want none", *res.Site)
			case tc.site != "" && (res.Site == nil || *res.Site != tc.site):
				t.Fatalf("site %v, want %s (rows %+v)", res.Site, tc.site, res.Rows)
			}
			if res.Source != tc.source {
				t.Fatalf("source %s, want %s", res.Source, tc.source)
			}
			if len(res.Conflicts) != tc.conflicts {
				t.Fatalf("conflicts %+v", res.Conflicts)
			}
			if tc.conflicts > 0 && res.Conflicts[0].Decisive != tc.decisive {
				t.Fatalf("conflict %+v, decisive want %t", res.Conflicts[0], tc.decisive)
			}
			if len(res.Rows) != tc.rowsWant {
				t.Fatalf("rows %+v, want %d", res.Rows, tc.rowsWant)
			}
			won := 0
			var lost []string
			for _, r := range res.Rows {
				if r.Won {
					won++
					continue
				}
				if r.LostBecause == "" {
					t.Fatalf("row %+v lost without a reason", r)
				}
				lost = append(lost, r.LostBecause)
			}
			if want := map[bool]int{true: 1, false: 0}[tc.site != ""]; won != want {
				t.Fatalf("%d winning rows", won)
			}
			if tc.lostContain != "" && !strings.Contains(strings.Join(lost, "\n"), tc.lostContain) {
				t.Fatalf("no lost_because with %q in %q", tc.lostContain, lost)
			}
		})
	}
}

func TestResolveHomeSiteConflictDetails(t *testing.T) {
	res := ResolveHomeSite(homeFederation(HomeSite{Group: "Zulu", Site: "UK"}, HomeSite{Group: "alpha", Site: "US"}, HomeSite{Group: "Mid", Site: "US"}), "carol", "")
	c := res.Conflicts[0]
	if c.Level != SourceGroupDefault || c.WinningGroup != "alpha" || c.Site != "US" || len(c.Groups) != 3 ||
		c.Groups[0].Group != "alpha" || c.Groups[1].Group != "Mid" || c.Groups[2].Group != "Zulu" {
		t.Fatalf("conflict %+v", c)
	}
	if res.Entitlement != nil || res.User != "carol" || strings.Join(res.Groups, ",") != "alpha,Mid,Zulu" {
		t.Fatalf("resolution %+v", res)
	}
}

func TestResolveGroupConflictDrivesTheSearch(t *testing.T) {
	f := seedFederation()
	ge(f).UseHomeSite = true
	f.Users[0].Groups = []string{"Sales", "Support"}
	ge(f).Members = append(ge(f).Members, Member{Kind: MemberGroup, Name: "Support"})
	f.HomeSites = []HomeSite{{Group: "Support", Site: "Japan"}, {Group: "sales", Site: "US"}}
	d, err := Resolve(f, fillDefaults(Request{}))
	if err != nil {
		t.Fatal(err)
	}
	wantPlaced(t, d, "US", "us-pod1", "us-desk")
	if len(d.HomeSite.Conflicts) != 1 || d.HomeSite.Source != SourceGroupDefault {
		t.Fatalf("home site %+v", d.HomeSite)
	}
	wantTrace(t, d, "conflict at GROUP_DEFAULT: Sales → US, Support → Japan; group Sales sorts first, site US (decides the home site)")
}
