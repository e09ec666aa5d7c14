package lint_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/benchfed"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/lint"
)

// generated is a benchfed federation with the faults the rules look for
// laid in (some entitlements require home sites, some restrict clients;
// some of each with what lets their users through), read back as a
// snapshot: lint's records and resolve's federation of the same entries.
func generated(t *testing.T) (*directory.Inventory, *broker.Federation) {
	t.Helper()
	dit := ldapschema.DIT{Base: ldapschema.DefaultBase}
	d := benchfed.Federation(dit, 6_000)
	users := func(ge *ldapschema.Entitlement) []string {
		var out []string
		for _, m := range ge.Members {
			if strings.HasPrefix(m, ldapschema.AttrUID+"=") {
				out = append(out, m)
			}
		}
		return out
	}
	for j := range d.Entitlements {
		ge := &d.Entitlements[j]
		switch j % 8 {
		case 1, 3: // requires home sites; the rows benchfed made cover some users
			ge.UseHomeSite, ge.RequireHomeSite = true, true
		case 5: // requires home sites, and each member (users only) has an override
			ge.UseHomeSite, ge.RequireHomeSite = true, true
			ge.Members = users(ge)
			for _, u := range ge.Members {
				d.HomeSites = append(d.HomeSites, ldapschema.HomeSite{DN: dit.HomeSite(u, ge.DN), UserDN: u, EntitlementDN: ge.DN,
					SiteDN: d.Sites[0].DN})
			}
		case 2: // client restrictions; computers sit in the groups it reaches
			ge.ClientRestrictions = true
		case 6: // client restrictions, users only as members: no computer reaches it
			ge.ClientRestrictions = true
			ge.Members = users(ge)
		}
	}
	var buf bytes.Buffer
	w := directory.NewLDIFWriter(&buf)
	for _, e := range benchfed.Entries(dit, d) {
		a := ldapschema.Attrs{}
		for _, at := range e.Attributes {
			a[at.Name] = at.Values
		}
		if err := w.WriteEntry(e.DN, a); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	st := directory.NewStore(snap, dit.Base)
	inv, err := st.Inventory()
	if err != nil {
		t.Fatal(err)
	}
	whole, err := st.Federation()
	if err != nil {
		t.Fatal(err)
	}
	return inv, whole.Federation
}

var counted = regexp.MustCompile(`^(\d+) entitled user\(s\) .*\(([^()]*)\)$`)

// flagged returns, for each entitlement a finding of check names, the
// number of users it counts and the first it names.
func flagged(t *testing.T, findings []lint.Finding, check string) map[string][2]string {
	out := map[string][2]string{}
	for _, f := range findings {
		if f.Check != check {
			continue
		}
		m := counted.FindStringSubmatch(f.Message)
		if m == nil {
			t.Fatalf("%s finding %q does not count users", check, f.Message)
		}
		out[f.Object] = [2]string{m[1], m[2]}
	}
	return out
}

// names renders users as lint lists them: the first five, and how many more.
func names(users []string) string {
	if len(users) <= 5 {
		return strings.Join(users, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(users[:5], ", "), len(users)-5)
}

// check returns the outcome of the named step-1 check of a decision.
func check(d *broker.Decision, name string) (passed, ran bool) {
	for _, c := range d.Checks {
		if c.Check == name {
			return c.Passed, true
		}
	}
	return false, false
}

// TestLintPredictsRequireHomeSiteDenials: the users
// entitled-users-without-home-site counts for an entitlement are exactly
// those resolve DENIES on its require_home_site check, on a generated
// federation.
func TestLintPredictsRequireHomeSiteDenials(t *testing.T) {
	inv, f := generated(t)
	got := flagged(t, lint.Run(*inv), lint.CheckEntitledUsersWithoutHome)
	pod := onlinePod(t, f)
	reported, clean := 0, 0
	for _, ge := range inv.Entitlements {
		if !ge.Enabled || !ge.RequireHomeSite || !ge.UseHomeSite {
			continue
		}
		var denied []string
		for _, u := range inv.Users {
			d, err := broker.Resolve(f, broker.Request{User: u.UID, Entitlement: ge.Name, Pod: pod})
			if err != nil {
				t.Fatal(err)
			}
			member, _ := check(d, "membership")
			home, ran := check(d, "require_home_site")
			if !ran {
				t.Fatalf("%s: resolve did not check require_home_site", ge.Name)
			}
			if member && !home {
				denied = append(denied, u.UID)
			}
		}
		want := [2]string{strconv.Itoa(len(denied)), names(denied)}
		if len(denied) == 0 {
			clean++
			if g, ok := got[ge.Name]; ok {
				t.Errorf("%s: lint counts %s users without a home site (%s); resolve denies none", ge.Name, g[0], g[1])
			}
			continue
		}
		reported++
		if got[ge.Name] != want {
			t.Errorf("%s: lint says %q, resolve denies %q", ge.Name, got[ge.Name], want)
		}
	}
	if reported == 0 || clean == 0 {
		t.Fatalf("the federation has %d entitlements lint reports and %d it does not: both are needed", reported, clean)
	}
}

// TestLintPredictsClientRestrictionDenials: an entitlement
// client-restrictions-without-computer reports refuses its entitled users on
// every client computer, and one it does not report lets them in on one.
func TestLintPredictsClientRestrictionDenials(t *testing.T) {
	inv, f := generated(t)
	got := flagged(t, lint.Run(*inv), lint.CheckClientRestrictionsNoClient)
	pod := onlinePod(t, f)
	reported, clean := 0, 0
	for _, ge := range inv.Entitlements {
		applies := (ge.Type == ldapschema.TypeDesktop && !ge.Dedicated) || ge.Type == ldapschema.TypeApplication
		if !ge.Enabled || !ge.ClientRestrictions || !applies {
			continue
		}
		var entitled []string
		admitted := false
		for _, u := range inv.Users {
			for _, c := range inv.Computers {
				d, err := broker.Resolve(f, broker.Request{User: u.UID, Entitlement: ge.Name, Pod: pod, Client: c.Name})
				if err != nil {
					t.Fatal(err)
				}
				if member, _ := check(d, "membership"); !member {
					break
				}
				if c.Name == inv.Computers[0].Name {
					entitled = append(entitled, u.UID)
				}
				if ok, _ := check(d, "client_restrictions"); ok {
					admitted = true
				}
			}
			if admitted {
				break // one is enough to tell
			}
		}
		g, isReported := got[ge.Name]
		switch {
		case len(entitled) == 0:
			if isReported {
				t.Errorf("%s: reported, with no entitled user", ge.Name)
			}
		case admitted:
			clean++
			if isReported {
				t.Errorf("%s: lint reports it, resolve admits a client", ge.Name)
			}
		default:
			reported++
			if want := [2]string{strconv.Itoa(len(entitled)), names(entitled)}; g != want {
				t.Errorf("%s: lint says %q, resolve refuses %q on every client", ge.Name, g, want)
			}
		}
	}
	if reported == 0 || clean == 0 {
		t.Fatalf("the federation has %d entitlements lint reports and %d it does not: both are needed", reported, clean)
	}
}

func onlinePod(t *testing.T, f *broker.Federation) string {
	for _, p := range f.Pods {
		if p.Online {
			return p.Name
		}
	}
	t.Fatal("no pod online")
	return ""
}
