package reconcile

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/ldapschema"
)

// outcome is everything a comparison shows: both states' problems, the
// report as JSON, and the plan (or its problems) with and without pruning.
type outcome struct {
	DesiredProblems, DesiredForeign, CurrentProblems, CurrentForeign []Problem
	Report                                                           string
	Plans                                                            [2]planOutcome
}

type planOutcome struct {
	Writes                 any // the directory.Plan, compared deeply
	Adds, Updates, Deletes int
	Kept                   []string
	Problems               []Problem
}

func newOutcome(desired, current []*ldap.Entry, streamed bool) outcome {
	d := NewState(dit, desired)
	var c *State
	if streamed {
		c = NewCurrentState(d)
		for _, e := range current {
			c.Add(e)
		}
	} else {
		c = NewState(dit, current)
	}
	r := Compare(d, c)
	js, _ := json.Marshal(r)
	o := outcome{DesiredProblems: d.Problems, DesiredForeign: d.Foreign, CurrentProblems: c.Problems,
		CurrentForeign: c.Foreign, Report: string(js)}
	for i, prune := range []bool{false, true} {
		p, problems := PlanApply(d, c, r, prune)
		po := planOutcome{Problems: problems}
		if p != nil {
			po.Writes, po.Adds, po.Updates, po.Deletes = p.Plan, p.Adds, p.Updates, p.Deletes
			for _, k := range p.Kept {
				po.Kept = append(po.Kept, k.Object()+" "+k.DN)
			}
		}
		o.Plans[i] = po
	}
	return o
}

func referenceOutcome(desired, current []*ldap.Entry) outcome {
	d, c := refNewState(dit, desired), refNewState(dit, current)
	r := refCompare(d, c)
	js, _ := json.Marshal(r)
	o := outcome{DesiredProblems: d.Problems, DesiredForeign: d.Foreign, CurrentProblems: c.Problems,
		CurrentForeign: c.Foreign, Report: string(js)}
	for i, prune := range []bool{false, true} {
		p, problems := refPlanApply(d, c, r, prune)
		po := planOutcome{Problems: problems}
		if p != nil {
			po.Writes, po.Adds, po.Updates, po.Deletes = p.Plan, p.Adds, p.Updates, p.Deletes
			for _, k := range p.Kept {
				po.Kept = append(po.Kept, k.Object()+" "+k.DN)
			}
		}
		o.Plans[i] = po
	}
	return o
}

func checkSameOutcome(t *testing.T, what string, desired, current []*ldap.Entry) {
	t.Helper()
	want := referenceOutcome(desired, current)
	for _, streamed := range []bool{false, true} {
		got := newOutcome(desired, current, streamed)
		if !streamed {
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: outcomes differ:\n%s\nwant\n%s", what, describeOutcome(got), describeOutcome(want))
			}
			continue
		}
		// A streamed current state keeps no attributes of the entries that
		// match: its report and plans are the same. It does not check its
		// entries against the schema (the server did): its problems are
		// those of the layout and unknown attributes, some of the
		// reference's.
		for _, p := range got.CurrentProblems {
			if !slices.Contains(want.CurrentProblems, p) {
				t.Fatalf("%s (streamed): current problem %v, not the reference's %v", what, p, want.CurrentProblems)
			}
		}
		got.CurrentProblems = want.CurrentProblems
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s (streamed): outcomes differ:\n%s\nwant\n%s", what, describeOutcome(got), describeOutcome(want))
		}
	}
}

func describeOutcome(o outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "desired problems %v\ndesired foreign %v\ncurrent problems %v\ncurrent foreign %v\nreport %s\n",
		o.DesiredProblems, o.DesiredForeign, o.CurrentProblems, o.CurrentForeign, o.Report)
	for i, p := range o.Plans {
		fmt.Fprintf(&b, "plan %d: %d adds %d updates %d deletes, kept %v, problems %v\n  %#v\n", i, p.Adds, p.Updates, p.Deletes,
			p.Kept, p.Problems, p.Writes)
	}
	return b.String()
}

// TestSameOutcomeAsBefore compares random desired and current federations
// with the states as they were (the reference) and with the lean ones, read
// whole and streamed: the same problems, reports and plans.
func TestSameOutcomeAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	for round := range rounds {
		desired, current := randomEntries(r), randomEntries(r)
		if r.IntN(3) == 0 { // mostly alike, as in a real diff
			current = mutate(r, desired)
		}
		checkSameOutcome(t, fmt.Sprintf("round %d", round), desired, current)
	}
}

func TestSameOutcomeAsBeforeOnAGeneratedFederation(t *testing.T) {
	if testing.Short() {
		t.Skip("two federations of 10,000 entries")
	}
	desired, current := diffPair(10_000)
	checkSameOutcome(t, "generated", desired, current)
}

// randomEntries builds entries under the base full of traps: attribute
// names in other cases or as aliases, values repeated or in other cases,
// DNs spelled otherwise, unknown classes and attributes, operational
// attributes, missing parents, references in cycles, foreign and
// transient entries.
func randomEntries(r *rand.Rand) []*ldap.Entry {
	pick := func(list ...string) string { return list[r.IntN(len(list))] }
	spell := func(dn string) string {
		switch r.IntN(5) {
		case 0:
			return strings.ToUpper(dn)
		case 1:
			return strings.ReplaceAll(dn, ",", ", ")
		}
		return dn
	}
	var out []*ldap.Entry
	add := func(dn string, attrs ...string) { // attrs: name, value, name, value...
		e := &ldap.Entry{DN: dn}
		for i := 0; i+1 < len(attrs); i += 2 {
			e.Attributes = append(e.Attributes, &ldap.EntryAttribute{Name: attrs[i], Values: []string{attrs[i+1]}})
		}
		out = append(out, e)
	}
	if r.IntN(5) > 0 {
		add(spell(base), "objectClass", "top", "objectClass", "domain", "dc", "example")
	}
	for _, c := range dit.Containers() {
		if r.IntN(6) > 0 {
			add(spell(c), "objectClass", pick("organizationalUnit", "organizationalunit"), "ou", ldapschema.NameOf(c))
		}
	}
	if r.IntN(3) == 0 {
		add(dit.Settings(), "objectClass", ldapschema.ClassGlobalSettings, "cn", "Common", ldapschema.AttrLoadThresholdForSite,
			pick("98", "098", "50"))
	}
	sites := []string{"UK", "US", "R&D, West"}
	for range r.IntN(4) {
		name := pick(sites...)
		add(spell(dit.Site(name)), pick("objectClass", "objectclass"), ldapschema.ClassSite, pick("cn", "CN", "commonName"),
			pick(name, strings.ToLower(name), "Other"), ldapschema.AttrPreferredSite, pick("{0}UK", "{0}uk", "{1}US", "bad"),
			ldapschema.AttrPreferredSite, pick("{1}US", "{0}US", "{1}R&D, West"), pick("description", "DESCRIPTION"),
			pick("a  b", "A B", "x"))
	}
	pods := []string{"P1", "p2"}
	for range r.IntN(3) {
		name := pick(pods...)
		add(spell(dit.Pod(name)), "objectClass", ldapschema.ClassPod, "cn", name, ldapschema.AttrSiteDN,
			spell(dit.Site(pick(sites...))), pick(ldapschema.AttrPodStatus, "x-unknown"), pick("ONLINE", "online", "OFFLINE"))
	}
	for range r.IntN(4) {
		pod := pick(pods...)
		name := pick("f1", "pool1", "cs1")
		switch r.IntN(4) {
		case 0:
			add(spell(dit.Farm(pod, name)), "objectClass", ldapschema.ClassRDSFarm, "cn", name,
				ldapschema.AttrMaxSessionsPerHost, pick("5", "05", "+5", "6"))
		case 1:
			add(spell(dit.Pool(pod, name)), "objectClass", ldapschema.ClassFarmPool, "cn", name, ldapschema.AttrPoolKind,
				pick("APPLICATION", "application"), ldapschema.AttrFarmDN, spell(dit.Farm(pod, "f1")))
		case 2:
			add(spell(dit.Pool(pod, name)), "objectClass", ldapschema.ClassDesktopPool, "cn", name, ldapschema.AttrCapacity,
				pick("1", "2"), ldapschema.AttrEnabled, pick("TRUE", "true", "FALSE"))
		default:
			add(spell(dit.Host(pod, "f1", "h1")), "objectClass", ldapschema.ClassRDSHost, "cn", "h1")
		}
	}
	groups := []string{"A", "B", "c"}
	for range r.IntN(4) {
		name := pick(groups...)
		attrs := []string{"objectClass", ldapschema.ClassGroup, "cn", name}
		for range r.IntN(4) {
			attrs = append(attrs, pick("member", "MEMBER"), spell(pick(dit.Group(pick(groups...)), dit.User("u1"))))
		}
		add(spell(dit.Group(name)), attrs...)
	}
	for range r.IntN(3) {
		uid := pick("u1", "u2")
		add(spell(dit.User(uid)), "objectClass", "inetOrgPerson", "objectClass", pick("person", "top"), "uid", uid, "cn", pick(uid, "U1"),
			"sn", "x", pick("userPassword", "entryUUID", "createTimestamp"), pick("secret", "Secret"))
	}
	if r.IntN(3) == 0 {
		add(dit.Entitlement("GE"), "objectClass", ldapschema.ClassGlobalEntitlement, "cn", "GE", ldapschema.AttrEntitlementType,
			"APPLICATION", "member", spell(dit.Group(pick(groups...))), ldapschema.AttrEntitlementPoolDN, spell(dit.Pool("P1", "pool1")))
	}
	switch r.IntN(8) {
	case 0:
		add("cn=x,dc=elsewhere", "objectClass", "device", "cn", "x")
	case 1:
		add("cn=odd,"+base, "objectClass", "device", "cn", "odd")
	case 2:
		add("cn=cpactl-txn-1,"+dit.Groups(), "objectClass", ldapschema.ClassGroup, "cn", "cpactl-txn-1")
	case 3:
		add(dit.Session("s1"), "objectClass", pick(ldapschema.ClassSession, "posixAccount"), "cn", "s1")
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// mutate copies entries with a few changes: values changed, spelled
// otherwise or reordered, entries dropped.
func mutate(r *rand.Rand, entries []*ldap.Entry) []*ldap.Entry {
	var out []*ldap.Entry
	for _, e := range entries {
		if r.IntN(8) == 0 {
			continue
		}
		c := &ldap.Entry{DN: e.DN}
		for _, a := range e.Attributes {
			values := append([]string(nil), a.Values...)
			switch r.IntN(10) {
			case 0:
				values = append(values, "changed")
			case 1:
				for i := range values {
					values[i] = strings.ToUpper(values[i])
				}
			}
			c.Attributes = append(c.Attributes, &ldap.EntryAttribute{Name: a.Name, Values: values})
		}
		if r.IntN(2) == 0 {
			r.Shuffle(len(c.Attributes), func(i, j int) { c.Attributes[i], c.Attributes[j] = c.Attributes[j], c.Attributes[i] })
		}
		out = append(out, c)
	}
	return out
}
