// Package dirtest holds the test data that the tests of directory and of
// its packages share: a small directory with awkward names (Sample), the
// searches that cover the filter language (Searches), and the synthetic
// federation of the benchmarks (Synthetic). Tests only.
package dirtest

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// DIT is the layout of the test data, under the default base.
var DIT = ldapschema.DIT{Base: ldapschema.DefaultBase}

// Sample is a small directory with awkward names, integers and DNs.
func Sample() string {
	weird := `R&D, "West" <1>+;=*()\ Zürich`
	var b strings.Builder
	add := func(dn string, a ldapschema.Attrs) {
		b.WriteString("dn: " + dn + "\n")
		for _, name := range []string{ldapschema.AttrObjectClass} {
			for _, v := range a[name] {
				b.WriteString(name + ": " + v + "\n")
			}
		}
		for name, vals := range a {
			if name == ldapschema.AttrObjectClass {
				continue
			}
			for _, v := range vals {
				b.WriteString(name + ":: " + B64(v) + "\n")
			}
		}
		b.WriteString("\n")
	}
	add(DIT.Base, ldapschema.Attrs{"objectClass": {"top", "domain"}, "dc": {"vdiglobal"}})
	for _, c := range DIT.Containers() {
		add(c, ldapschema.Attrs{"objectClass": {"top", "organizationalUnit"}, "ou": {ldapschema.NameOf(c)}})
	}
	add(DIT.Site("UK"), ldapschema.Site{Name: "UK", PreferredSites: []string{"US", weird}}.Attrs())
	add(DIT.Site("US"), ldapschema.Site{Name: "US", Description: "East coast"}.Attrs())
	add(DIT.Site(weird), ldapschema.Site{Name: weird}.Attrs())
	add(DIT.Pod("pod-uk"), ldapschema.Pod{Name: "pod-uk", SiteDN: DIT.Site("UK"), Online: true}.Attrs())
	add(DIT.Pod("pod-w"), ldapschema.Pod{Name: "pod-w", SiteDN: DIT.Site(weird)}.Attrs())
	add(DIT.Pool("pod-uk", "pool-a"), ldapschema.Pool{Name: "pool-a", Kind: ldapschema.KindDesktop, Capacity: 10, Sessions: 9, Enabled: true}.Attrs())
	add(DIT.Pool("pod-uk", "pool-b"), ldapschema.Pool{Name: "pool-b", Kind: ldapschema.KindDesktop, Capacity: 100, Sessions: 20, Enabled: true}.Attrs())
	add(DIT.User("*)(uid=*"), ldapschema.User{UID: "*)(uid=*"}.Attrs())
	add(DIT.User("alice"), ldapschema.User{UID: "alice", Domain: "CORP", FullName: "Alice Martin"}.Attrs())
	add(DIT.User("bob"), ldapschema.User{UID: "bob", FullName: "Bob  Smith"}.Attrs())
	// For the snapshot's indexes: a farm and its hosts, groups and
	// sessions whose DN values are written in other cases and spacings,
	// and an entry whose name holds ",ou=Sites" (it is not below ou=Sites).
	add(DIT.Farm("pod-uk", "farm-1"), ldapschema.Farm{Name: "farm-1", MaxSessionsPerHost: 5}.Attrs())
	for _, h := range []string{"h1", "h2", weird} {
		add(DIT.Host("pod-uk", "farm-1", h), ldapschema.Host{Name: h, LoadIndex: 3, Enabled: true}.Attrs())
	}
	spaced := func(dn string) string { return strings.ToUpper(strings.ReplaceAll(dn, ",", ", ")) }
	add(DIT.Group("staff"), ldapschema.Group{Name: "staff", Members: []string{spaced(DIT.User("alice")), DIT.User("bob")}}.Attrs())
	add(DIT.Group("all"), ldapschema.Group{Name: "all", Members: []string{DIT.Group("STAFF"), DIT.User("*)(uid=*")}}.Attrs())
	for i, u := range []string{"alice", "alice", "bob"} {
		add(DIT.Session(fmt.Sprintf("s-%d", i)), ldapschema.Session{ID: fmt.Sprintf("s-%d", i), UserDN: spaced(DIT.User(u)),
			EntitlementDN: DIT.Entitlement(fmt.Sprintf("GE %d", i%2)), PodDN: DIT.Pod("pod-uk"), State: ldapschema.StateConnected}.Attrs())
	}
	add("cn=x\\,ou=Sites,"+DIT.Base, ldapschema.Attrs{"objectClass": {"top", "device"}, "cn": {"x,ou=Sites"}})
	return b.String()
}

// Searches cover scopes, escaping, integer ordering, DN equality,
// substrings, presence, and, or, not.
func Searches() []*ldap.SearchRequest {
	weird := `R&D, "West" <1>+;=*()\ Zürich`
	req := func(base string, scope int, filter string) *ldap.SearchRequest {
		return ldap.NewSearchRequest(base, scope, ldap.NeverDerefAliases, 0, 0, false, filter, []string{"*"}, nil)
	}
	return []*ldap.SearchRequest{
		req(DIT.Base, ldap.ScopeWholeSubtree, "(objectClass=*)"),
		req(DIT.Sites(), ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassSite)),
		req(DIT.Sites(), ldap.ScopeBaseObject, "(objectClass=*)"),
		req(DIT.Sites(), ldap.ScopeSingleLevel, ldapclient.Filter(ldapschema.AttrCN, weird)),
		req(DIT.Sites(), ldap.ScopeSingleLevel, ldapclient.Filter(ldapschema.AttrCN, "uk")),
		req(DIT.Sites(), ldap.ScopeSingleLevel, ldapclient.Filter(ldapschema.AttrPreferredSite, "{1}"+weird)),
		req(DIT.Sites(), ldap.ScopeSingleLevel, "(pae-PreferredSite={0}*)"),
		req(DIT.Sites(), ldap.ScopeSingleLevel, "(description=*coast)"),
		req(DIT.Sites(), ldap.ScopeSingleLevel, "(!(pae-PreferredSite=*))"),
		req(DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.Filter(ldapschema.AttrSiteDN, DIT.Site(weird))),
		req(DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.Filter(ldapschema.AttrSiteDN, strings.ToUpper(DIT.Site("uk")))),
		req(DIT.Pods(), ldap.ScopeWholeSubtree, "(&(objectClass=pae-DesktopPool)(pae-Sessions>=10))"),
		req(DIT.Pods(), ldap.ScopeWholeSubtree, "(&(objectClass=pae-DesktopPool)(pae-Sessions<=9))"),
		req(DIT.Pods(), ldap.ScopeWholeSubtree, "(|(cn=pool-a)(cn=pod-w))"),
		req(DIT.Pods(), ldap.ScopeSingleLevel, "(objectClass=*)"),
		req(DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.Or(ldapclient.ChildrenFilter(DIT.Pod("pod-uk")), ldapclient.ChildrenFilter(strings.ToUpper(DIT.Pod("pod-w"))))),
		req(DIT.Base, ldap.ScopeWholeSubtree, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassDesktopPool), ldapclient.ChildrenFilter(DIT.Pod("POD-UK")))),
		req(DIT.Base, ldap.ScopeWholeSubtree, ldapclient.ChildrenFilter(DIT.Base)),
		req(DIT.People(), ldap.ScopeSingleLevel, ldapclient.Filter(ldapschema.AttrUID, "*)(uid=*")),
		req(DIT.People(), ldap.ScopeSingleLevel, "(uid=*)"),
		req(DIT.People(), ldap.ScopeSingleLevel, "(cn=alice martin)"),
		// What the snapshot's indexes serve: equality in and, or; DNs in
		// other spellings; integers; space folding; several scopes.
		req(DIT.People(), ldap.ScopeSingleLevel, "(cn=  BOB   smith )"),
		req(DIT.People(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassInetOrgPerson), ldapclient.Or(ldapclient.Filter(ldapschema.AttrUID, "ALICE"), ldapclient.Filter(ldapschema.AttrUID, "bob")))),
		req(DIT.Sessions(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassSession), ldapclient.Filter(ldapschema.AttrUserDN, DIT.User("alice")))),
		req(DIT.Sessions(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassSession), ldapclient.Filter(ldapschema.AttrUserDN, strings.ToUpper(DIT.User("Alice"))),
			ldapclient.Filter(ldapschema.AttrEntitlementDN, DIT.Entitlement("ge 1")))),
		req(DIT.Base, ldap.ScopeWholeSubtree, ldapclient.Filter(ldapschema.AttrUserDN, DIT.User("bob"))),
		req(DIT.Groups(), ldap.ScopeSingleLevel, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassGroup), ldapclient.Or(ldapclient.Filter(ldapschema.AttrMember, DIT.User("alice")), ldapclient.Filter(ldapschema.AttrMember, DIT.Group("staff"))))),
		req(DIT.Pods(), ldap.ScopeWholeSubtree, "(pae-Sessions=20)"),
		req(DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassRDSHost), ldapclient.Filter(ldapschema.AttrCN, weird))),
		req(DIT.Farm("pod-uk", "farm-1"), ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassRDSHost)),
		req(DIT.Pods(), ldap.ScopeWholeSubtree, ldapclient.And(ldapclient.ClassFilter(ldapschema.ClassRDSHost), ldapclient.ChildrenFilter(DIT.Farm("pod-uk", "FARM-1")))),
		req(DIT.Pod("pod-uk"), ldap.ScopeSingleLevel, "(|(objectClass=pae-RDSFarm)(cn=pool-a))"),
		req(DIT.Base, ldap.ScopeWholeSubtree, "(|(objectClass=pae-Site)(cn=h1))"),
		req(DIT.Sites(), ldap.ScopeWholeSubtree, "(objectClass=*)"),
		req(DIT.Base, ldap.ScopeSingleLevel, ldapclient.Filter(ldapschema.AttrCN, "x,ou=Sites")),
		req(DIT.Sites(), ldap.ScopeWholeSubtree, ldapclient.Filter(ldapschema.AttrCN, "x,ou=Sites")),
	}
}

// B64 is s base64-encoded, as an LDIF value after "::".
func B64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// Flatten renders entries as sorted "dn|attribute|value" lines.
func Flatten(entries []*ldap.Entry) string {
	var lines []string
	for _, e := range entries {
		for _, a := range e.Attributes {
			for _, v := range a.Values {
				lines = append(lines, e.DN+"|"+strings.ToLower(a.Name)+"|"+v)
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// ManyUsers is the sample directory with n more users, one of them
// ("reader", a user like the others).
func ManyUsers(n int) string {
	var b strings.Builder
	b.WriteString(Sample())
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\ndn: %s\nobjectClass: inetOrgPerson\nuid: u%05d\ncn: User %d\nsn: %d\n", DIT.User(fmt.Sprintf("u%05d", i)), i, i, i)
	}
	fmt.Fprintf(&b, "\ndn: %s\nobjectClass: inetOrgPerson\nuid: reader\ncn: Reader\nsn: Reader\nuserPassword: reader-secret\n", DIT.User("reader"))
	return b.String()
}
