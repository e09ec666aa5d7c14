package directory

import (
	"bufio"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
)

// A synthetic federation shaped like a CPA maximum for benchmarks: for
// 250,000 sessions, 50,000 users, 20,000 RDS hosts and about 358,000
// entries in all (172 MB of LDIF), written as `cpactl export` writes it.

// synthetic sizes a federation by its number of sessions.
type synthetic struct{ sessions int }

func (s synthetic) users() int      { return max(10, s.sessions/5) }
func (s synthetic) groups() int     { return max(2, s.users()/10) }
func (s synthetic) computers() int  { return max(2, s.users()/5) }
func (s synthetic) hosts() int      { return max(4, s.sessions*2/25) }
func (s synthetic) farms() int      { return max(2, s.hosts()/20) }
func (s synthetic) desktops() int   { return max(2, s.sessions/250) }
func (s synthetic) ges() int        { return max(2, s.sessions/500) }
func (s synthetic) homeSites() int  { return max(2, s.users()/5) }
func (s synthetic) assigned() int   { return max(2, s.users()/5) }
func (synthetic) sites() int        { return 15 }
func (synthetic) pods() int         { return 50 }
func (synthetic) uid(i int) string  { return fmt.Sprintf("user%06d", i) }
func (synthetic) ge(i int) string   { return fmt.Sprintf("GE %04d", i) }
func (synthetic) pod(i int) string  { return fmt.Sprintf("pod-%03d", i) }
func (synthetic) farm(i int) string { return fmt.Sprintf("farm-%04d", i) }

// query is the request a resolve-style read asks: a user in the middle.
func (s synthetic) query() ResolveQuery {
	u := s.users() / 2
	return ResolveQuery{User: `CORP\` + s.uid(u), Entitlement: s.ge(s.userGE(u)), ConnectionServer: s.pod(1) + "-cs1",
		Client: fmt.Sprintf("pc-%05d", 1)}
}

// userGE is the GE user u is entitled to, through its group.
func (s synthetic) userGE(u int) int { return (u / 10) % s.ges() }

// write writes the federation as LDIF; it returns the number of entries.
func (s synthetic) write(out io.Writer) (int, error) {
	w := bufio.NewWriterSize(out, 1<<20)
	n := 0
	add := func(dn string, a ldapschema.Attrs) {
		n++
		writeSyntheticEntry(w, dn, a)
	}
	add(dit.Base, ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", "domain"}, ldapschema.AttrDC: {"vdiglobal"}})
	for _, c := range dit.Containers() {
		add(c, ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", ldapschema.ClassOrganizationalUnit},
			ldapschema.AttrOU: {ldapschema.NameOf(c)}})
	}
	add(dit.Settings(), ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", ldapschema.ClassGlobalSettings},
		ldapschema.AttrCN: {"Common"}})
	site := func(i int) string { return fmt.Sprintf("Site %02d", i) }
	for i := 0; i < s.sites(); i++ {
		add(dit.Site(site(i)), ldapschema.Site{Name: site(i), Description: "a site of the federation",
			PreferredSites: []string{site((i + 1) % s.sites()), site((i + 2) % s.sites())}}.Attrs())
	}
	for p := 0; p < s.pods(); p++ {
		add(dit.Pod(s.pod(p)), ldapschema.Pod{Name: s.pod(p), SiteDN: dit.Site(site(p % s.sites())), Online: true}.Attrs())
		for c := 1; c <= 2; c++ {
			name := fmt.Sprintf("%s-cs%d", s.pod(p), c)
			add(dit.ConnectionServer(s.pod(p), name), ldapschema.ConnectionServer{Name: name}.Attrs())
		}
	}
	// Farms with their hosts and a farm-backed pool each; desktop pools.
	farmPod := func(f int) int { return f % s.pods() }
	for f := 0; f < s.farms(); f++ {
		pod := s.pod(farmPod(f))
		add(dit.Farm(pod, s.farm(f)), ldapschema.Farm{Name: s.farm(f), MaxSessionsPerHost: 50}.Attrs())
		for h := 0; h < s.hosts()/s.farms(); h++ {
			name := fmt.Sprintf("%s-h%02d", s.farm(f), h)
			add(dit.Host(pod, s.farm(f), name), ldapschema.Host{Name: name, LoadIndex: (f + h) % 100, Sessions: h,
				Features: ldapschema.AllFeatures, Enabled: true}.Attrs())
		}
		add(dit.Pool(pod, s.farm(f)+"-rds"), ldapschema.Pool{Name: s.farm(f) + "-rds", Kind: ldapschema.KindRDSDesktop,
			FarmDN: dit.Farm(pod, s.farm(f)), Enabled: true}.Attrs())
	}
	desktopPool := func(d int) (pod, name string) { return s.pod(d % s.pods()), fmt.Sprintf("desktops-%04d", d) }
	for d := 0; d < s.desktops(); d++ {
		pod, name := desktopPool(d)
		add(dit.Pool(pod, name), ldapschema.Pool{Name: name, Kind: ldapschema.KindDesktop, Capacity: 500,
			Sessions: d % 500, Enabled: true}.Attrs())
	}
	// Each GE: the desktop pools and farm-backed pools numbered like it
	// (modulo the GE count), its groups as members.
	for g := 0; g < s.ges(); g++ {
		var pools, members []string
		for d := g; d < s.desktops(); d += s.ges() {
			pod, name := desktopPool(d)
			pools = append(pools, dit.Pool(pod, name))
		}
		for f := g; f < s.farms(); f += s.ges() {
			pools = append(pools, dit.Pool(s.pod(farmPod(f)), s.farm(f)+"-rds"))
		}
		for gr := g; gr < s.groups(); gr += s.ges() {
			members = append(members, dit.Group(fmt.Sprintf("Group %05d", gr)))
		}
		add(dit.Entitlement(s.ge(g)), ldapschema.Entitlement{Name: s.ge(g), Type: ldapschema.TypeDesktop,
			Scope: ldapschema.ScopeAny, UseHomeSite: true, UsePreferredSites: true, LoadDistribution: ldapschema.PolicyLoad,
			Enabled: true, DefaultProtocol: ldapschema.ProtocolBlast, Members: members, PoolDNs: pools}.Attrs())
	}
	for u := 0; u < s.users(); u++ {
		add(dit.User(s.uid(u)), ldapschema.User{UID: s.uid(u), Domain: "CORP", FullName: "User " + s.uid(u)}.Attrs())
	}
	for c := 0; c < s.computers(); c++ {
		name := fmt.Sprintf("pc-%05d", c)
		add(dit.Computer(name), ldapschema.Computer{Name: name}.Attrs())
	}
	// Group gr holds users 10*gr .. 10*gr+9 (so user u is in group u/10,
	// entitled to GE (u/10) % ges).
	for gr := 0; gr < s.groups(); gr++ {
		var members []string
		for u := gr * 10; u < gr*10+10 && u < s.users(); u++ {
			members = append(members, dit.User(s.uid(u)))
		}
		if gr < s.computers() {
			members = append(members, dit.Computer(fmt.Sprintf("pc-%05d", gr)))
		}
		add(dit.Group(fmt.Sprintf("Group %05d", gr)), ldapschema.Group{Name: fmt.Sprintf("Group %05d", gr),
			Members: members}.Attrs())
	}
	for h := 0; h < s.homeSites(); h++ {
		u := h * s.users() / s.homeSites()
		row := ldapschema.HomeSite{DN: dit.HomeSite(dit.User(s.uid(u)), ""), UserDN: dit.User(s.uid(u)),
			SiteDN: dit.Site(site(u % s.sites()))}
		add(row.DN, row.Attrs())
	}
	for a := 0; a < s.assigned(); a++ {
		u := a * s.users() / s.assigned()
		ge := dit.Entitlement(s.ge(s.userGE(u)))
		as := ldapschema.Assignment{DN: dit.Assignment(dit.User(s.uid(u)), ge), UserDN: dit.User(s.uid(u)),
			EntitlementDN: ge, PodDN: dit.Pod(s.pod(u % s.pods()))}
		add(as.DN, as.Attrs())
	}
	hostsPerFarm := s.hosts() / s.farms()
	for i := 0; i < s.sessions; i++ {
		u := i % s.users()
		f := i % s.farms()
		pod := s.pod(farmPod(f))
		host := fmt.Sprintf("%s-h%02d", s.farm(f), i%hostsPerFarm)
		state := ldapschema.StateConnected
		if i%4 == 0 {
			state = ldapschema.StateDisconnected
		}
		add(dit.Session(fmt.Sprintf("s-%07d", i)), ldapschema.Session{ID: fmt.Sprintf("s-%07d", i),
			UserDN: dit.User(s.uid(u)), EntitlementDN: dit.Entitlement(s.ge(s.userGE(u))), PodDN: dit.Pod(pod),
			BrokeringPodDN: dit.Pod(s.pod((f + 1) % s.pods())), PoolDN: dit.Pool(pod, s.farm(f)+"-rds"),
			HostDN: dit.Host(pod, s.farm(f), host), ClientDN: dit.Computer(fmt.Sprintf("pc-%05d", u%s.computers())),
			State: state}.Attrs())
	}
	return n, w.Flush()
}

func (s synthetic) text() (string, int) {
	var b strings.Builder
	n, _ := s.write(&b)
	return b.String(), n
}

// writeSyntheticEntry writes one entry as WriteLDIF does: objectClass
// first, then the other attributes by name.
func writeSyntheticEntry(w *bufio.Writer, dn string, a ldapschema.Attrs) {
	line := func(name, v string) {
		if safeString(v) {
			w.WriteString(name + ": " + v + "\n")
		} else {
			w.WriteString(name + ":: " + base64.StdEncoding.EncodeToString([]byte(v)) + "\n")
		}
	}
	line("dn", dn)
	names := make([]string, 0, len(a))
	for name := range a {
		if name != ldapschema.AttrObjectClass {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, v := range a[ldapschema.AttrObjectClass] {
		line(ldapschema.AttrObjectClass, v)
	}
	for _, name := range names {
		for _, v := range a[name] {
			line(name, v)
		}
	}
	w.WriteString("\n")
}

var syntheticOut = flag.String("synthetic-ldif", "",
	"write the synthetic federation of -synthetic-sessions sessions to this file (to compare with slapadd -u or run cpactl on it)")
var syntheticSessions = flag.Int("synthetic-sessions", 250000, "sessions of the federation -synthetic-ldif writes")

// TestWriteSyntheticLDIF writes the benchmarks' federation to a file when
// asked: go test ./directory -run TestWriteSyntheticLDIF -synthetic-ldif=/tmp/cpa.ldif
func TestWriteSyntheticLDIF(t *testing.T) {
	if *syntheticOut == "" {
		t.Skip("no -synthetic-ldif")
	}
	f, err := os.Create(*syntheticOut)
	if err != nil {
		t.Fatal(err)
	}
	s := synthetic{sessions: *syntheticSessions}
	n, err := s.write(f)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	q := s.query()
	t.Logf("%d entries; a request: cpactl resolve --from %s --user '%s' --entitlement '%s' --cs %s --client %s",
		n, *syntheticOut, q.User, q.Entitlement, q.ConnectionServer, q.Client)
}
