package reconcile

import (
	"strings"
	"testing"

	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/ldapschema"
)

const base = "dc=example,dc=com"

var dit = ldapschema.DIT{Base: base}

// layout is the base entry and containers, as `cpactl init` writes them.
const layout = `dn: dc=example,dc=com
objectClass: top
objectClass: domain
dc: example

dn: ou=Properties,dc=example,dc=com
objectClass: organizationalUnit
ou: Properties

dn: ou=Global,ou=Properties,dc=example,dc=com
objectClass: organizationalUnit
ou: Global

dn: ou=Sites,dc=example,dc=com
objectClass: organizationalUnit
ou: Sites

dn: ou=Pods,dc=example,dc=com
objectClass: organizationalUnit
ou: Pods

dn: ou=Groups,dc=example,dc=com
objectClass: organizationalUnit
ou: Groups

dn: ou=People,dc=example,dc=com
objectClass: organizationalUnit
ou: People

dn: ou=Entitlements,dc=example,dc=com
objectClass: organizationalUnit
ou: Entitlements
`

func state(t *testing.T, ldif string) *State {
	t.Helper()
	snap, err := snapshot.ReadSnapshot(strings.NewReader(ldif))
	if err != nil {
		t.Fatalf("bad LDIF: %v\n%s", err, ldif)
	}
	return NewState(dit, snap.Entries())
}

// site renders a site entry with extra attribute lines.
func site(name string, lines ...string) string {
	return "dn: " + dit.Site(name) + "\nobjectClass: top\nobjectClass: pae-Site\ncn: " + name + "\n" +
		strings.Join(lines, "\n") + "\n"
}

func pod(name, siteDN string, lines ...string) string {
	return "dn: cn=" + name + ",ou=Pods," + base + "\nobjectClass: top\nobjectClass: pae-Pod\ncn: " + name +
		"\npae-SiteDN: " + siteDN + "\n" + strings.Join(lines, "\n") + "\n"
}

func join(entries ...string) string { return strings.Join(entries, "\n") }

// changedAttributes renders a report's changed attributes as
// "object: attr1, attr2".
func changedAttributes(r *Report) []string {
	var out []string
	for _, e := range r.Entries {
		var names []string
		for _, a := range e.Attributes {
			names = append(names, a.Attribute)
		}
		out = append(out, e.Change+" "+e.Object()+": "+strings.Join(names, ", "))
	}
	return out
}

func TestCompareUsesTheSchemaMatching(t *testing.T) {
	tests := []struct {
		name             string
		current, desired string
		want             []string // "change object: attributes"
	}{
		{"identical", site("UK", "description: London"), site("UK", "description: London"), nil},
		{"strings ignore case and spaces", site("UK", "description: London  and Manchester"),
			site("UK", "description: london and manchester"), nil},
		{"a string that differs", site("UK", "description: London"), site("UK", "description: Leeds"),
			[]string{"changed site UK: description"}},
		{"an attribute only in the file", site("UK"), site("UK", "pae-SiteURL: https://uk"),
			[]string{"changed site UK: pae-SiteURL"}},
		{"an attribute only in the directory", site("UK", "pae-SiteURL: https://uk"), site("UK"),
			[]string{"changed site UK: pae-SiteURL"}},
		{"DNs as DNs", pod("P1", "cn=UK,ou=Sites,"+base), pod("P1", "CN=uk, OU=Sites,DC=Example,DC=Com"), nil},
		{"a DN naming another entry", pod("P1", "cn=UK,ou=Sites,"+base), pod("P1", "cn=US,ou=Sites,"+base),
			[]string{"changed pod P1: pae-SiteDN"}},
		{"enumerations ignore case", pod("P1", "cn=UK,ou=Sites,"+base, "pae-PodStatus: OFFLINE"),
			pod("P1", "cn=UK,ou=Sites,"+base, "pae-PodStatus: offline"), nil},
		{"preferred sites in rank order", site("UK", "pae-PreferredSite: {1}US", "pae-PreferredSite: {0}India"),
			site("UK", "pae-PreferredSite: {0}india", "pae-PreferredSite: {1}US"), nil},
		{"preferred sites reordered", site("UK", "pae-PreferredSite: {0}US", "pae-PreferredSite: {1}India"),
			site("UK", "pae-PreferredSite: {0}India", "pae-PreferredSite: {1}US"), []string{"changed site UK: pae-PreferredSite"}},
		{"objectClass without top", site("UK"), strings.Replace(site("UK"), "objectClass: top\n", "", 1), nil},
		{"operational attributes are ignored", site("UK", "modifyTimestamp: 20240101000000Z", "entryUUID: 1"),
			site("UK", "createTimestamp: 20250101000000Z"), nil},
		{"attribute names in any case or alias", site("UK", "description: x"),
			"dn: cn=UK,ou=Sites," + base + "\nOBJECTCLASS: pae-Site\ncommonName: UK\nDescription: X\n", nil},
		{"added and removed objects", site("UK"), site("US"), []string{
			"removed site UK: objectClass, cn", "added site US: objectClass, cn"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Compare(state(t, join(layout, tt.desired)), state(t, join(layout, tt.current)))
			got := changedAttributes(r)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if r.Identical != (len(tt.want) == 0) {
				t.Errorf("identical = %v", r.Identical)
			}
		})
	}
}

func TestCompareIntegersNumerically(t *testing.T) {
	pool := func(capacity string) string {
		return "dn: cn=D1,cn=P1,ou=Pods," + base + "\nobjectClass: pae-DesktopPool\ncn: D1\npae-Dedicated: false\npae-Capacity: " + capacity + "\n"
	}
	p1 := pod("P1", "cn=UK,ou=Sites,"+base)
	if r := Compare(state(t, join(layout, p1, pool("050"))), state(t, join(layout, p1, pool("50")))); !r.Identical {
		t.Errorf("050 and 50 are the same integer: %v", changedAttributes(r))
	}
	r := Compare(state(t, join(layout, p1, pool("60"))), state(t, join(layout, p1, pool("50"))))
	if len(r.Entries) != 1 || r.Entries[0].Attributes[0].Attribute != ldapschema.AttrCapacity {
		t.Fatalf("got %v", changedAttributes(r))
	}
	a := r.Entries[0].Attributes[0]
	if strings.Join(a.Current, ",") != "50" || strings.Join(a.Desired, ",") != "60" ||
		strings.Join(a.Removed, ",") != "50" || strings.Join(a.Added, ",") != "60" {
		t.Errorf("change %+v", a)
	}
}

func TestCompareStructure(t *testing.T) {
	current := state(t, join(layout, site("UK"),
		"dn: cn=Common,ou=Global,ou=Properties,"+base+"\nobjectClass: pae-GlobalSettings\ncn: Common\n",
		"dn: ou=Extra,"+base+"\nobjectClass: organizationalUnit\nou: Extra\n",
		"dn: ou=Trash,"+base+"\nobjectClass: organizationalUnit\nou: Trash\n",
		"dn: ou=cpactl-txn-0123,ou=Sites,"+base+"\nobjectClass: organizationalUnit\nou: cpactl-txn-0123\n"))
	desired := state(t, join(strings.Replace(layout, "ou: Sites\n", "ou: Sites\ndescription: other\n", 1), site("UK"),
		"dn: ou=Sessions,"+base+"\nobjectClass: organizationalUnit\nou: Sessions\n"))
	r := Compare(desired, current)
	got := strings.Join(changedAttributes(r), "\n")
	// A missing container is added; a container's values are not compared;
	// cn=Common missing from the file is kept; foreign and transient
	// entries take no part.
	if got != "added container ou=Sessions: objectClass, ou" {
		t.Errorf("got %s", got)
	}
	if len(current.Foreign) != 1 || !strings.HasPrefix(current.Foreign[0].DN, "ou=Extra") {
		t.Errorf("foreign: %v", current.Foreign)
	}
}

func TestCompareHidesPasswords(t *testing.T) {
	user := func(pw string) string {
		return "dn: uid=alice,ou=People," + base + "\nobjectClass: inetOrgPerson\nuid: alice\ncn: alice\nsn: alice\nuserPassword: " + pw + "\n"
	}
	r := Compare(state(t, join(layout, user("new"))), state(t, join(layout, user("old"))))
	if len(r.Entries) != 1 {
		t.Fatalf("got %v", changedAttributes(r))
	}
	a := r.Entries[0].Attributes[0]
	for _, v := range append(append(append(a.Current, a.Desired...), a.Added...), a.Removed...) {
		if v != HiddenValue {
			t.Errorf("password value %q shown", v)
		}
	}
}

// An attribute export leaves out (a password) is compared only when the
// desired entry carries it: an export applied back keeps every password.
func TestCompareLeavesAloneWhatExportLeavesOut(t *testing.T) {
	user := func(name string, lines ...string) string {
		return "dn: uid=" + name + ",ou=People," + base + "\nobjectClass: inetOrgPerson\nuid: " + name +
			"\ncn: " + name + "\nsn: " + name + "\n" + strings.Join(lines, "\n") + "\n"
	}
	tests := []struct {
		name             string
		current, desired string
		want             []string // changedAttributes
		plan             []string // planLines, with --prune
	}{
		{"a password the file lacks is no change",
			user("alice", "userPassword: old"), user("alice"), nil, nil},
		{"an edit beside it changes only what it edits",
			user("alice", "userPassword: old"), user("alice", "description: edited"),
			[]string{"changed user alice: description"}, []string{"would update user alice (description)"}},
		{"a password the file carries is set",
			user("alice"), user("alice", "userPassword: new"),
			[]string{"changed user alice: userPassword"}, []string{"would update user alice (userPassword)"}},
		{"a password the file carries replaces another",
			user("alice", "userPassword: old"), user("alice", "userPassword: new"),
			[]string{"changed user alice: userPassword"}, []string{"would update user alice (userPassword)"}},
		{"the same password is no change",
			user("alice", "userPassword: old"), user("alice", "userPassword: old"), nil, nil},
		{"an object the file lacks is removed, password and all",
			join(user("alice"), user("bob", "userPassword: old")), user("alice"),
			[]string{"removed user bob: objectClass, cn, sn, uid, userPassword"}, []string{"would delete user bob"}},
	}
	for _, tt := range tests {
		for _, streamed := range []bool{false, true} {
			desired := state(t, join(layout, tt.desired))
			current := state(t, join(layout, tt.current))
			if streamed {
				// The current state as diff and apply read a directory:
				// entries that match their desired entry are not kept.
				c := NewCurrentState(desired)
				snap, err := snapshot.ReadSnapshot(strings.NewReader(join(layout, tt.current)))
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range snap.Entries() {
					c.Add(e)
				}
				current = c
			}
			r := Compare(desired, current)
			if got := changedAttributes(r); strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("%s (streamed %v): report %q, want %q", tt.name, streamed, got, tt.want)
			}
			p, problems := PlanApply(desired, current, r, true)
			if len(problems) > 0 {
				t.Fatalf("%s: %v", tt.name, problems)
			}
			if got := planLines(p); strings.Join(got, "|") != strings.Join(tt.plan, "|") {
				t.Errorf("%s (streamed %v): plan %q, want %q", tt.name, streamed, got, tt.plan)
			}
		}
	}
}

func TestStateProblems(t *testing.T) {
	tests := []struct {
		name, ldif, want string
	}{
		{"unknown object class", site("UK", "objectClass: posixAccount"), "object class posixAccount is not defined"},
		{"attribute the classes do not allow", site("UK", "pae-Capacity: 3"), "attribute pae-Capacity is not allowed by its object classes"},
		{"attribute no schema defines", site("UK", "x-color: red"), "attribute x-color is not defined by cpactl's schema"},
		{"missing required attribute", "dn: cn=P1,ou=Pods," + base + "\nobjectClass: pae-Pod\ncn: P1\n", "required attribute pae-SiteDN is missing"},
		{"two values of a single-valued attribute", site("UK", "pae-SiteURL: a", "pae-SiteURL: b"), "attribute pae-SiteURL takes one value, not 2"},
		{"a value twice", site("UK", "description: a", "description: A"), `attribute description holds the value "A" twice`},
		{"the name missing from the attributes", strings.Replace(site("UK"), "cn: UK", "cn: United Kingdom", 1),
			"its name cn=UK is missing from its attribute cn"},
		{"outside the base", "dn: cn=UK,ou=Sites,dc=other\nobjectClass: pae-Site\ncn: UK\n", "is not under the base dc=example,dc=com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := state(t, join(layout, tt.ldif))
			var msgs []string
			for _, p := range s.Problems {
				msgs = append(msgs, p.Message)
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tt.want) {
				t.Errorf("problems %q, want one containing %q", msgs, tt.want)
			}
		})
	}
	s := state(t, join(layout, "dn: cn=UK,ou=Pods,"+base+"\nobjectClass: pae-Site\ncn: UK\n"))
	if len(s.Foreign) != 1 {
		t.Errorf("a site among the pods is not a cpactl object: %v", s.Foreign)
	}
	if s := state(t, join(layout, site("R&D, \"West\" <1>+;=*()\\ Zürich"))); len(s.Problems) > 0 {
		t.Errorf("special characters: %v", s.Problems)
	}
}

func planLines(p *Plan) []string {
	var out []string
	for _, w := range p.Writes {
		out = append(out, w.Planned())
	}
	return out
}

func index(lines []string, line string) int {
	for i, l := range lines {
		if l == line {
			return i
		}
	}
	return -1
}

// federation is a small federation whose entries refer to each other:
// sites preferring each other (a cycle), a pod with a Connection Server, a
// farm-backed pool, groups nested in each other (a cycle), an entitlement.
func federation() string {
	return join(
		site("UK", "pae-PreferredSite: {0}US"),
		site("US", "pae-PreferredSite: {0}UK"),
		pod("P1", "cn=UK,ou=Sites,"+base),
		"dn: cn=cs1,cn=P1,ou=Pods,"+base+"\nobjectClass: pae-ConnectionServer\ncn: cs1\n",
		"dn: cn=apps,cn=P1,ou=Pods,"+base+"\nobjectClass: pae-FarmPool\ncn: apps\npae-PoolKind: APPLICATION\npae-FarmDN: cn=zfarm,cn=P1,ou=Pods,"+base+"\n",
		"dn: cn=zfarm,cn=P1,ou=Pods,"+base+"\nobjectClass: pae-RDSFarm\ncn: zfarm\n",
		"dn: cn=A,ou=Groups,"+base+"\nobjectClass: pae-Group\ncn: A\nmember: cn=B,ou=Groups,"+base+"\n",
		"dn: cn=B,ou=Groups,"+base+"\nobjectClass: pae-Group\ncn: B\nmember: cn=A,ou=Groups,"+base+"\n",
		"dn: cn=GE,ou=Entitlements,"+base+"\nobjectClass: pae-GlobalEntitlement\ncn: GE\npae-EntitlementType: APPLICATION\nmember: cn=A,ou=Groups,"+base+"\npae-EntitlementPoolDN: cn=apps,cn=P1,ou=Pods,"+base+"\n",
	)
}

func TestPlanOrdersAddsParentsAndReferentsFirst(t *testing.T) {
	desired := state(t, join(layout, federation()))
	current := state(t, "")
	p, problems := PlanApply(desired, current, Compare(desired, current), false)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	lines := planLines(p)
	before := [][2]string{
		{"would add base entry " + base, "would add container ou=Sites"},
		{"would add container ou=Properties", "would add container ou=Global"},
		{"would add site UK", "would add pod P1"},
		{"would add pod P1", "would add connection server cs1"},
		{"would add farm zfarm", "would add pool apps"},
		{"would add pool apps", "would add entitlement GE"},
		{"would add group A", "would add entitlement GE"},
	}
	for _, b := range before {
		i, j := index(lines, b[0]), index(lines, b[1])
		if i < 0 || j < 0 || i > j {
			t.Errorf("%q should come before %q:\n%s", b[0], b[1], strings.Join(lines, "\n"))
		}
	}
	if p.Adds != len(lines) || p.Updates != 0 || p.Deletes != 0 {
		t.Errorf("counts %d %d %d for %d writes", p.Adds, p.Updates, p.Deletes, len(lines))
	}
}

func TestPlanOrdersDeletesChildrenAndReferrersFirst(t *testing.T) {
	desired := state(t, layout)
	current := state(t, join(layout, federation()))
	p, problems := PlanApply(desired, current, Compare(desired, current), true)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	lines := planLines(p)
	before := [][2]string{
		{"would delete connection server cs1", "would delete pod P1"},
		{"would delete pool apps", "would delete farm zfarm"},
		{"would delete entitlement GE", "would delete pool apps"},
		{"would delete entitlement GE", "would delete group A"},
		{"would delete pod P1", "would delete site UK"},
	}
	for _, b := range before {
		i, j := index(lines, b[0]), index(lines, b[1])
		if i < 0 || j < 0 || i > j {
			t.Errorf("%q should come before %q:\n%s", b[0], b[1], strings.Join(lines, "\n"))
		}
	}
	// The cycles (A and B; UK and US) are cut by removing the reference to
	// the first deleted from the other, before any delete.
	for _, w := range []string{"would remove group A from group B (member)", "would remove site UK from site US (pae-PreferredSite)"} {
		if i, j := index(lines, w), index(lines, "would delete entitlement GE"); i < 0 || i > j {
			t.Errorf("%q should come before the deletes:\n%s", w, strings.Join(lines, "\n"))
		}
	}
	if p.Deletes != 9 || p.Adds != 0 {
		t.Errorf("counts: %d deletes, %d adds", p.Deletes, p.Adds)
	}
	// Without --prune nothing is deleted, and the objects are kept.
	p, _ = PlanApply(desired, current, Compare(desired, current), false)
	if !p.Empty() || len(p.Kept) != 9 {
		t.Errorf("without prune: %v, kept %d", planLines(p), len(p.Kept))
	}
}

func TestPlanUpdatesAssertWhatTheyRead(t *testing.T) {
	current := state(t, join(layout, site("UK", "description: London", "pae-PreferredSite: {0}US"), site("US")))
	desired := state(t, join(layout, site("UK", "pae-PreferredSite: {0}US"), site("US", "description: New York")))
	p, problems := PlanApply(desired, current, Compare(desired, current), false)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if got := strings.Join(planLines(p), "\n"); got != "would update site UK (description)\nwould update site US (description)" {
		t.Errorf("plan:\n%s", got)
	}
	tests := []struct {
		attr   string
		values []string
		want   string
	}{
		{ldapschema.AttrDescription, []string{"London (*)"}, `(&(description=London \28\2a\29))`},
		{ldapschema.AttrDescription, nil, "(!(description=*))"},
		{ldapschema.AttrPreferredSite, []string{"{0}US"}, "(&(pae-PreferredSite={0}US)(!(pae-PreferredSite={1}*)))"},
		{"userPassword", []string{"secret"}, "(userPassword=*)"},
		{"jpegPhoto", []string{"\x00\x01"}, "(jpegPhoto=*)"},
	}
	for _, tt := range tests {
		if got := Assertion(tt.attr, tt.values); got != tt.want {
			t.Errorf("Assertion(%s, %q) = %s, want %s", tt.attr, tt.values, got, tt.want)
		}
	}
}

func TestPlanRefusals(t *testing.T) {
	pool := func(class string) string {
		extra := "pae-Dedicated: FALSE"
		if class == "pae-FarmPool" {
			extra = "pae-PoolKind: APPLICATION\npae-FarmDN: cn=F,cn=P1,ou=Pods," + base
		}
		return "dn: cn=D1,cn=P1,ou=Pods," + base + "\nobjectClass: " + class + "\ncn: D1\n" + extra + "\n"
	}
	p1 := pod("P1", "cn=UK,ou=Sites,"+base)
	tests := []struct {
		name, current, desired, want string
	}{
		{"a structural class cannot change in place", join(layout, p1, pool("pae-DesktopPool")), join(layout, p1, pool("pae-FarmPool")),
			"pool D1: its structural object class changes from pae-DesktopPool to pae-FarmPool"},
		{"a parent nowhere", layout, join(layout, "dn: cn=cs1,cn=P9,ou=Pods,"+base+"\nobjectClass: pae-ConnectionServer\ncn: cs1\n"),
			"its parent cn=P9,ou=Pods,dc=example,dc=com is neither in the directory nor in the file"},
		{"a parent object missing from the file", join(layout, p1), join(layout, "dn: cn=cs1,cn=P1,ou=Pods,"+base+"\nobjectClass: pae-ConnectionServer\ncn: cs1\n"),
			"its parent pod P1 is not in the file"},
		{"a foreign entry in the way", join(layout, "dn: cn=UK,ou=Sites,"+base+"\nobjectClass: device\ncn: UK\n"), join(layout, site("UK")),
			"exists in the directory but is not a cpactl site there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			desired, current := state(t, tt.desired), state(t, tt.current)
			p, problems := PlanApply(desired, current, Compare(desired, current), true)
			var msgs []string
			for _, pr := range problems {
				msgs = append(msgs, pr.Message)
			}
			if p != nil || !strings.Contains(strings.Join(msgs, "\n"), tt.want) {
				t.Errorf("problems %q, want %q", msgs, tt.want)
			}
		})
	}
}

// FuzzCompareAndPlan: whatever two LDIF files hold, comparing them and
// planning never panics, a state compared with itself is identical, and
// the outcome is the reference's (the states before they were lean).
func FuzzCompareAndPlan(f *testing.F) {
	f.Add(join(layout, federation()), layout)
	f.Add(join(layout, site("UK", "pae-PreferredSite: {0}UK", "pae-PreferredSite: {0}US")), join(layout, site("UK", "pae-PreferredSite: bad")))
	f.Add("dn: cn=x,ou=Pods,"+base+"\nobjectClass: pae-RDSHost\ncn: x\n", "dn: "+base+"\nobjectClass: domain\ndc: example\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		sa, err := snapshot.ReadSnapshot(strings.NewReader(a))
		if err != nil {
			return
		}
		sb, err := snapshot.ReadSnapshot(strings.NewReader(b))
		if err != nil {
			return
		}
		desired, current := NewState(dit, sa.Entries()), NewState(dit, sb.Entries())
		r := Compare(desired, current)
		_, _ = PlanApply(desired, current, r, true)
		if self := Compare(desired, desired); !self.Identical {
			t.Errorf("a state differs from itself: %v", changedAttributes(self))
		}
		checkSameOutcome(t, "fuzzed", sa.Entries(), sb.Entries())
	})
}
