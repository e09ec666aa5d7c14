package dirtest

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/ldif"
)

// A Synthetic federation shaped like a CPA maximum for benchmarks: for
// 250,000 sessions, 50,000 users, 20,000 RDS hosts and about 358,000
// entries in all (172 MB of LDIF), written as `cpactl export` writes it.

// Synthetic sizes a federation by its number of sessions.
type Synthetic struct{ Sessions int }

func (s Synthetic) Users() int      { return max(10, s.Sessions/5) }
func (s Synthetic) Groups() int     { return max(2, s.Users()/10) }
func (s Synthetic) Computers() int  { return max(2, s.Users()/5) }
func (s Synthetic) Hosts() int      { return max(4, s.Sessions*2/25) }
func (s Synthetic) Farms() int      { return max(2, s.Hosts()/20) }
func (s Synthetic) Desktops() int   { return max(2, s.Sessions/250) }
func (s Synthetic) GEs() int        { return max(2, s.Sessions/500) }
func (s Synthetic) HomeSites() int  { return max(2, s.Users()/5) }
func (s Synthetic) Assigned() int   { return max(2, s.Users()/5) }
func (Synthetic) Sites() int        { return 15 }
func (Synthetic) Pods() int         { return 50 }
func (Synthetic) UID(i int) string  { return fmt.Sprintf("user%06d", i) }
func (Synthetic) GE(i int) string   { return fmt.Sprintf("GE %04d", i) }
func (Synthetic) Pod(i int) string  { return fmt.Sprintf("pod-%03d", i) }
func (Synthetic) Farm(i int) string { return fmt.Sprintf("farm-%04d", i) }

// write writes the federation as LDIF; it returns the number of entries.
func (s Synthetic) Write(out io.Writer) (int, error) {
	w := bufio.NewWriterSize(out, 1<<20)
	n := 0
	add := func(dn string, a ldapschema.Attrs) {
		n++
		writeEntry(w, dn, a)
	}
	add(DIT.Base, ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", "domain"}, ldapschema.AttrDC: {"vdiglobal"}})
	for _, c := range DIT.Containers() {
		add(c, ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", ldapschema.ClassOrganizationalUnit},
			ldapschema.AttrOU: {ldapschema.NameOf(c)}})
	}
	add(DIT.Settings(), ldapschema.Attrs{ldapschema.AttrObjectClass: {"top", ldapschema.ClassGlobalSettings},
		ldapschema.AttrCN: {"Common"}})
	site := func(i int) string { return fmt.Sprintf("Site %02d", i) }
	for i := 0; i < s.Sites(); i++ {
		add(DIT.Site(site(i)), ldapschema.Site{Name: site(i), Description: "a site of the federation",
			PreferredSites: []string{site((i + 1) % s.Sites()), site((i + 2) % s.Sites())}}.Attrs())
	}
	for p := 0; p < s.Pods(); p++ {
		add(DIT.Pod(s.Pod(p)), ldapschema.Pod{Name: s.Pod(p), SiteDN: DIT.Site(site(p % s.Sites())), Online: true}.Attrs())
		for c := 1; c <= 2; c++ {
			name := fmt.Sprintf("%s-cs%d", s.Pod(p), c)
			add(DIT.ConnectionServer(s.Pod(p), name), ldapschema.ConnectionServer{Name: name}.Attrs())
		}
	}
	// Farms with their hosts and a farm-backed pool each; desktop pools.
	farmPod := func(f int) int { return f % s.Pods() }
	for f := 0; f < s.Farms(); f++ {
		pod := s.Pod(farmPod(f))
		add(DIT.Farm(pod, s.Farm(f)), ldapschema.Farm{Name: s.Farm(f), MaxSessionsPerHost: 50}.Attrs())
		for h := 0; h < s.Hosts()/s.Farms(); h++ {
			name := fmt.Sprintf("%s-h%02d", s.Farm(f), h)
			add(DIT.Host(pod, s.Farm(f), name), ldapschema.Host{Name: name, LoadIndex: (f + h) % 100, Sessions: h,
				Features: ldapschema.AllFeatures, Enabled: true}.Attrs())
		}
		add(DIT.Pool(pod, s.Farm(f)+"-rds"), ldapschema.Pool{Name: s.Farm(f) + "-rds", Kind: ldapschema.KindRDSDesktop,
			FarmDN: DIT.Farm(pod, s.Farm(f)), Enabled: true}.Attrs())
	}
	desktopPool := func(d int) (pod, name string) { return s.Pod(d % s.Pods()), fmt.Sprintf("desktops-%04d", d) }
	for d := 0; d < s.Desktops(); d++ {
		pod, name := desktopPool(d)
		add(DIT.Pool(pod, name), ldapschema.Pool{Name: name, Kind: ldapschema.KindDesktop, Capacity: 500,
			Sessions: d % 500, Enabled: true}.Attrs())
	}
	// Each GE: the desktop pools and farm-backed pools numbered like it
	// (modulo the GE count), its groups as members.
	for g := 0; g < s.GEs(); g++ {
		var pools, members []string
		for d := g; d < s.Desktops(); d += s.GEs() {
			pod, name := desktopPool(d)
			pools = append(pools, DIT.Pool(pod, name))
		}
		for f := g; f < s.Farms(); f += s.GEs() {
			pools = append(pools, DIT.Pool(s.Pod(farmPod(f)), s.Farm(f)+"-rds"))
		}
		for gr := g; gr < s.Groups(); gr += s.GEs() {
			members = append(members, DIT.Group(fmt.Sprintf("Group %05d", gr)))
		}
		add(DIT.Entitlement(s.GE(g)), ldapschema.Entitlement{Name: s.GE(g), Type: ldapschema.TypeDesktop,
			Scope: ldapschema.ScopeAny, UseHomeSite: true, UsePreferredSites: true, LoadDistribution: ldapschema.PolicyLoad,
			Enabled: true, DefaultProtocol: ldapschema.ProtocolBlast, Members: members, PoolDNs: pools}.Attrs())
	}
	for u := 0; u < s.Users(); u++ {
		add(DIT.User(s.UID(u)), ldapschema.User{UID: s.UID(u), Domain: "CORP", FullName: "User " + s.UID(u)}.Attrs())
	}
	for c := 0; c < s.Computers(); c++ {
		name := fmt.Sprintf("pc-%05d", c)
		add(DIT.Computer(name), ldapschema.Computer{Name: name}.Attrs())
	}
	// Group gr holds users 10*gr .. 10*gr+9 (so user u is in group u/10,
	// entitled to GE (u/10) % ges).
	for gr := 0; gr < s.Groups(); gr++ {
		var members []string
		for u := gr * 10; u < gr*10+10 && u < s.Users(); u++ {
			members = append(members, DIT.User(s.UID(u)))
		}
		if gr < s.Computers() {
			members = append(members, DIT.Computer(fmt.Sprintf("pc-%05d", gr)))
		}
		add(DIT.Group(fmt.Sprintf("Group %05d", gr)), ldapschema.Group{Name: fmt.Sprintf("Group %05d", gr),
			Members: members}.Attrs())
	}
	for h := 0; h < s.HomeSites(); h++ {
		u := h * s.Users() / s.HomeSites()
		row := ldapschema.HomeSite{DN: DIT.HomeSite(DIT.User(s.UID(u)), ""), UserDN: DIT.User(s.UID(u)),
			SiteDN: DIT.Site(site(u % s.Sites()))}
		add(row.DN, row.Attrs())
	}
	for a := 0; a < s.Assigned(); a++ {
		u := a * s.Users() / s.Assigned()
		ge := DIT.Entitlement(s.GE(s.UserGE(u)))
		as := ldapschema.Assignment{DN: DIT.Assignment(DIT.User(s.UID(u)), ge), UserDN: DIT.User(s.UID(u)),
			EntitlementDN: ge, PodDN: DIT.Pod(s.Pod(u % s.Pods()))}
		add(as.DN, as.Attrs())
	}
	hostsPerFarm := s.Hosts() / s.Farms()
	for i := 0; i < s.Sessions; i++ {
		u := i % s.Users()
		f := i % s.Farms()
		pod := s.Pod(farmPod(f))
		host := fmt.Sprintf("%s-h%02d", s.Farm(f), i%hostsPerFarm)
		state := ldapschema.StateConnected
		if i%4 == 0 {
			state = ldapschema.StateDisconnected
		}
		add(DIT.Session(fmt.Sprintf("s-%07d", i)), ldapschema.Session{ID: fmt.Sprintf("s-%07d", i),
			UserDN: DIT.User(s.UID(u)), EntitlementDN: DIT.Entitlement(s.GE(s.UserGE(u))), PodDN: DIT.Pod(pod),
			BrokeringPodDN: DIT.Pod(s.Pod((f + 1) % s.Pods())), PoolDN: DIT.Pool(pod, s.Farm(f)+"-rds"),
			HostDN: DIT.Host(pod, s.Farm(f), host), ClientDN: DIT.Computer(fmt.Sprintf("pc-%05d", u%s.Computers())),
			State: state}.Attrs())
	}
	return n, w.Flush()
}

func (s Synthetic) Text() (string, int) {
	var b strings.Builder
	n, _ := s.Write(&b)
	return b.String(), n
}

// writeEntry writes one entry as WriteLDIF does: objectClass
// first, then the other attributes by name.
func writeEntry(w *bufio.Writer, dn string, a ldapschema.Attrs) {
	line := func(name, v string) {
		if ldif.SafeString(v) {
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

// UserGE is the GE user u is entitled to, through its group.
func (s Synthetic) UserGE(u int) int { return (u / 10) % s.GEs() }
