package horizonimport

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/progress"
)

// Emit receives one entry: its DN and attributes. The import calls it from
// several goroutines at once.
type Emit func(dn string, attrs ldapschema.Attrs) error

// Options say where the federation goes and what fills what the API does
// not carry.
type Options struct {
	// DIT is the layout to write under (its base DN).
	DIT ldapschema.DIT
	// Base holds what the API does not carry; nil: cpactl's defaults.
	Base *Base
	// Records counts the records read (progress); nil counts nothing.
	Records *progress.Counter
	// Workers decode sessions in parallel; 0 is one per processor.
	Workers int
}

// WriteLDIF imports the pull in dir and writes the federation to w as
// `cpactl export` writes it (directory.SortedLDIF). Nothing is written to w
// when the import fails.
func WriteLDIF(dir string, opts Options, w io.Writer) (*Report, error) {
	out := directory.NewSortedLDIF()
	defer out.Close()
	rep, err := run(dir, opts, ldifSink{out})
	if err != nil {
		return nil, err
	}
	n, err := out.Flush(w)
	if err != nil {
		return nil, err
	}
	rep.Entries = n
	if out.Duplicates > 0 {
		rep.Findings = append(rep.Findings, Finding{Key: keyDuplicate, What: findingWhat[keyDuplicate],
			Count: out.Duplicates, Names: []string{out.FirstDuplicate}})
		sort.Slice(rep.Findings, func(i, j int) bool { return rep.Findings[i].Key < rep.Findings[j].Key })
	}
	return rep, nil
}

// Import reads the pull in dir and hands every entry of the federation to
// emit, in no particular order: the layout (base entry, containers,
// cn=Common), sites, pods with their Connection Servers, farms, hosts and
// pools, entitlements, users, groups, computers (from the base), home
// sites, pod assignments and sessions.
func Import(dir string, opts Options, emit Emit) (*Report, error) {
	return run(dir, opts, emitSink(emit))
}

// A sink takes the entries of the import: any entry as its attributes,
// and sessions (most of a federation) as their records, which WriteLDIF
// encodes with no map of attributes.
type sink interface {
	entry(dn string, attrs ldapschema.Attrs) error
	session(dn string, rec *ldapschema.Session) error
}

// emitSink hands every entry, sessions too, to an Emit.
type emitSink Emit

func (e emitSink) entry(dn string, attrs ldapschema.Attrs) error { return e(dn, attrs) }
func (e emitSink) session(dn string, rec *ldapschema.Session) error {
	return e(dn, rec.Attrs())
}

// ldifSink encodes the entries into export's writer; a session's lines
// are written in export's order (objectClass, then the attributes by
// name) straight from the record: the same bytes as its Attrs
// (TestSessionLinesAreAttrs).
type ldifSink struct{ out *directory.SortedLDIF }

func (l ldifSink) entry(dn string, attrs ldapschema.Attrs) error { return l.out.Add(dn, attrs) }
func (l ldifSink) session(dn string, rec *ldapschema.Session) error {
	var buf [11]directory.Line
	return l.out.AddOrdered(dn, sessionLines(buf[:0], rec))
}

// sessionLines appends the lines of a session's entry, in export's order.
func sessionLines(dst []directory.Line, s *ldapschema.Session) []directory.Line {
	return append(dst,
		directory.Line{Name: ldapschema.AttrObjectClass, Value: ldapschema.ClassSession},
		directory.Line{Name: ldapschema.AttrObjectClass, Value: ldapschema.ClassTop},
		directory.Line{Name: ldapschema.AttrCN, Value: s.ID},
		directory.Line{Name: ldapschema.AttrBrokeringPodDN, Value: s.BrokeringPodDN},
		directory.Line{Name: ldapschema.AttrClientDN, Value: s.ClientDN},
		directory.Line{Name: ldapschema.AttrEntitlementDN, Value: s.EntitlementDN},
		directory.Line{Name: ldapschema.AttrHostDN, Value: s.HostDN},
		directory.Line{Name: ldapschema.AttrPodDN, Value: s.PodDN},
		directory.Line{Name: ldapschema.AttrPoolDN, Value: s.PoolDN},
		directory.Line{Name: ldapschema.AttrSessionState, Value: s.State},
		directory.Line{Name: ldapschema.AttrUserDN, Value: s.UserDN})
}

func run(dir string, opts Options, out sink) (*Report, error) {
	m, err := horizon.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	base := opts.Base
	if base == nil {
		base = &Base{Source: DefaultsSource}
	}
	im := &importer{dir: dir, m: m, dit: opts.DIT, base: base, out: out, rep: newReporter(), opts: opts,
		sessionSuffix: "," + opts.DIT.Sessions(),
		sites:         map[string]string{}, pods: map[string]*podState{}, podNames: map[string]string{},
		principals: map[string]principal{}, uids: map[string]string{}, groupNames: map[string]string{},
		ges: map[string]*geState{}, geNames: map[string]string{},
		pools: map[inPod]string{}, poolGE: map[inPod]string{}, farms: map[inPod]string{},
		hosts: map[inPod]string{}, appPools: map[appPoolKey]string{}, appPoolNamed: map[appPoolName]string{}, machines: map[machineKey]string{},
		computers: map[string]string{}, counts: map[string]*atomic.Int64{}}
	for _, k := range Kinds {
		im.counts[k] = &atomic.Int64{}
	}
	if err := im.run(); err != nil {
		return nil, err
	}
	rep := &Report{Source: base.Source, Counts: map[string]int{}}
	for k, c := range im.counts {
		rep.Counts[k] = int(c.Load())
	}
	rep.Findings, rep.Notes = im.rep.result()
	return rep, nil
}

// principal is a user or group by SID.
type principal struct {
	dn    string
	group bool
}

type podState struct {
	id, name, siteID, description string
	dn                            string
	online                        *bool
	missing                       bool
}

type geState struct {
	rec    ldapschema.Entitlement
	dn     string
	backup string // the backup GE's id
}

type importer struct {
	dir  string
	m    *horizon.Manifest
	dit  ldapschema.DIT
	base *Base
	out  sink
	rep  *reporter
	opts Options
	// sessionSuffix is what follows a session's RDN in its DN.
	sessionSuffix string
	// page is the buffer of the file eachOf reads (one at a time).
	page []byte

	sites      map[string]string // site id -> name
	pods       map[string]*podState
	podNames   map[string]string    // fold(name) -> id
	principals map[string]principal // SID -> DN
	uids       map[string]string    // fold(uid) -> SID
	groupNames map[string]string    // fold(name) -> SID
	groups     []*groupState
	ges        map[string]*geState   // id -> entitlement
	geNames    map[string]string     // fold(name) -> id
	pools      map[inPod]string      // pool DN (desktop pools)
	poolGE     map[inPod]string      // pool -> GE id
	farms      map[inPod]string      // farm name
	hosts      map[inPod]string      // host DN
	appPools   map[appPoolKey]string // the pool DN of the first such pool
	// appPoolNamed: the pool DN of the pool of that name (folded), for a
	// session whose application_names name its pool.
	appPoolNamed map[appPoolName]string
	machines     map[machineKey]string // machine name
	computers    map[string]string     // fold(name) -> DN (from the base)

	counts map[string]*atomic.Int64
}

// Map keys of what is named by a pod and an id (Horizon's ids are a
// pod's own), built with no allocation per look-up.
type (
	inPod       struct{ pod, id string }
	appPoolKey  struct{ pod, gae, farm string } // an application entitlement's pools on a farm
	appPoolName struct {
		appPoolKey
		name string // folded
	}
	machineKey struct{ pod, sid, ge string } // a user's machine of an entitlement
)

type groupState struct {
	sid string
	rec ldapschema.Group
}

func (im *importer) count(kind string) { im.counts[kind].Add(1) }

// emit hands one entry to the sink.
func (im *importer) emit(dn string, attrs ldapschema.Attrs) error { return im.out.entry(dn, attrs) }

// eachOf decodes the records of an endpoint (one pod's, or the
// federation-wide ones with pod "") into T, page after page, in one pass
// (fastjson.go).
func eachOf[T any](im *importer, endpoint, pod string, fn func(T) error) error {
	var v T // decoded into in place (one allocation), reset for each record
	for _, f := range im.m.FilesOf(endpoint, pod) {
		i := 0
		err := eachRecordIn(im.dir, f, &im.page, func(sc *scanner) error {
			im.opts.Records.Add(1)
			i++
			v = *new(T)
			if err := sc.record(&v); err != nil {
				return fmt.Errorf("%s: record %d of %s is not what the endpoint answers: %w", endpoint, i, f.Name, err)
			}
			return fn(v)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) run() error {
	steps := []func() error{im.layout, im.sitesAndPods, im.identities, im.entitlements, im.podLocal,
		im.missingPods, im.homeSites, im.assignments, im.sessions, im.finish}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// layout writes the base entry, the containers and cn=Common.
func (im *importer) layout() error {
	entries, err := directory.Layout(im.dit)
	if err != nil {
		return err
	}
	for _, e := range entries[:len(entries)-1] {
		if err := im.emit(e.DN, e.Attrs); err != nil {
			return err
		}
	}
	settings := entries[len(entries)-1]
	attrs := settings.Attrs
	stored := im.base.Settings.Stored
	for _, s := range ldapschema.Settings {
		if v, ok := stored[s.Attr]; ok {
			attrs.SetInt(s.Attr, v)
		}
	}
	var cpa *cpaJSON
	err = eachOf(im, "cpa", "", func(c cpaJSON) error {
		cpa = &c
		return nil
	})
	if err != nil {
		return err
	}
	if cpa != nil && cpa.SiteRedirection != nil {
		v := 0
		if cpa.SiteRedirection.Enabled {
			v = 1
		}
		attrs.SetInt(ldapschema.AttrEnableSiteRedirection, v)
	} else {
		im.rep.note("the pull has no site redirection settings (a server before 2512): pae-EnableSiteRedirection comes from %s", im.base.Source)
	}
	return im.emit(settings.DN, attrs)
}

func (im *importer) sitesAndPods() error {
	var sites []siteJSON
	err := eachOf(im, "sites", "", func(s siteJSON) error {
		if s.Name == "" || s.ID == "" {
			im.rep.loss(keyNoName, "site "+s.ID)
			return nil
		}
		if _, dup := im.sites[s.ID]; dup || slices.ContainsFunc(sites, func(o siteJSON) bool { return strings.EqualFold(o.Name, s.Name) }) {
			im.rep.loss(keyNameClash, "site "+s.Name)
			return nil
		}
		im.sites[s.ID] = s.Name
		sites = append(sites, s)
		return nil
	})
	if err != nil {
		return err
	}
	if !im.m.PreferredSites {
		im.rep.note("the server had no preferred sites (before 2512): they come from %s", im.base.Source)
	}
	for _, s := range sites {
		rec := ldapschema.Site{Name: s.Name, Description: s.Description, URL: s.URL}
		if im.m.PreferredSites {
			for _, id := range s.PreferredSites {
				name, ok := im.sites[id]
				if !ok {
					im.rep.loss(keyDangling, fmt.Sprintf("site %s: preferred site %s", s.Name, id))
					continue
				}
				rec.PreferredSites = append(rec.PreferredSites, name)
			}
		} else if b, ok := im.base.Sites[key(s.Name)]; ok {
			for _, p := range b.PreferredSites {
				if im.hasSite(p) {
					rec.PreferredSites = append(rec.PreferredSites, p)
				}
			}
		}
		im.count("sites")
		if err := im.emit(im.dit.Site(s.Name), rec.Attrs()); err != nil {
			return err
		}
	}
	// Pods: the federation's list, their status from the monitor (the
	// answering pod is not in it: it answered).
	err = eachOf(im, "pods", "", func(p podJSON) error {
		if p.Name == "" || p.ID == "" {
			im.rep.loss(keyNoName, "pod "+p.ID)
			return nil
		}
		if _, dup := im.podNames[fold.Key(p.Name)]; dup || im.pods[p.ID] != nil {
			im.rep.loss(keyNameClash, "pod "+p.Name)
			return nil
		}
		if _, ok := im.sites[p.SiteID]; !ok {
			im.rep.loss(keyDangling, fmt.Sprintf("pod %s: site %s", p.Name, p.SiteID))
			return nil
		}
		im.pods[p.ID] = &podState{id: p.ID, name: p.Name, siteID: p.SiteID, description: p.Description, dn: im.dit.Pod(p.Name)}
		im.podNames[fold.Key(p.Name)] = p.ID
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range im.m.Pods {
		if st := im.pods[p.ID]; st != nil && p.Missing {
			st.missing = true
		}
	}
	monitored := len(im.m.FilesOf("monitor-pods", "")) > 0
	err = eachOf(im, "monitor-pods", "", func(mp podMonitorJSON) error {
		st := im.pods[mp.ID]
		if st == nil {
			return nil
		}
		online, unknown := podOnline(mp)
		for _, u := range unknown {
			im.rep.loss(keyUnknownEnum, fmt.Sprintf("pod %s: endpoint status %s", st.name, u))
		}
		st.online = &online
		return nil
	})
	if err != nil {
		return err
	}
	if !monitored {
		im.rep.note("the pull has no pod monitor (/monitor/v2/pods): pod status comes from %s", im.base.Source)
	}
	for _, id := range im.podOrder() {
		st := im.pods[id]
		rec := ldapschema.Pod{Name: st.name, Description: st.description, SiteDN: im.dit.Site(im.sites[st.siteID]), Online: true}
		b, inBase := im.base.Pods[key(st.name)]
		switch {
		case st.online != nil:
			rec.Online = *st.online
		case !monitored && inBase:
			rec.Online = b.Online
		}
		if inBase {
			rec.RDS = b.RDS
		}
		im.count("pods")
		if err := im.emit(im.dit.Pod(st.name), rec.Attrs()); err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) hasSite(name string) bool {
	for _, n := range im.sites {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// podOrder is the pods' ids in the manifest's order.
func (im *importer) podOrder() []string {
	var ids []string
	seen := map[string]bool{}
	for _, p := range im.m.Pods {
		if im.pods[p.ID] != nil && !seen[p.ID] {
			ids = append(ids, p.ID)
			seen[p.ID] = true
		}
	}
	var rest []string
	for id := range im.pods {
		if !seen[id] {
			rest = append(rest, id)
		}
	}
	sort.Strings(rest)
	return append(ids, rest...)
}

// identities reads the AD users and groups: users are written at once,
// groups once every membership is known (the API gives member -> groups).
func (im *importer) identities() error {
	type pending struct {
		dn       string
		name     string
		memberOf []string
	}
	var memberships []pending
	err := eachOf(im, "ad-users-or-groups", "", func(a adJSON) error {
		if a.ID == "" || a.LoginName == "" {
			im.rep.loss(keyNoName, "user or group "+a.ID)
			return nil
		}
		if _, dup := im.principals[a.ID]; dup {
			im.rep.loss(keyNameClash, qualified(domainOf(a), a.LoginName))
			return nil
		}
		if a.Group {
			if _, dup := im.groupNames[fold.Key(a.LoginName)]; dup {
				im.rep.loss(keyNameClash, "group "+qualified(domainOf(a), a.LoginName))
				return nil
			}
			g := &groupState{sid: a.ID, rec: ldapschema.Group{Name: a.LoginName, Description: a.Description}}
			g.rec.DN = im.dit.Group(a.LoginName)
			im.groupNames[fold.Key(a.LoginName)] = a.ID
			im.groups = append(im.groups, g)
			im.principals[a.ID] = principal{dn: g.rec.DN, group: true}
			if len(a.MemberOf) > 0 {
				memberships = append(memberships, pending{dn: g.rec.DN, name: "group " + a.LoginName, memberOf: a.MemberOf})
			}
			return nil
		}
		if _, dup := im.uids[fold.Key(a.LoginName)]; dup {
			im.rep.loss(keyNameClash, "user "+qualified(domainOf(a), a.LoginName))
			return nil
		}
		u := ldapschema.User{UID: a.LoginName, Domain: domainOf(a), FullName: fullName(a)}
		dn := im.dit.User(u.UID)
		im.uids[fold.Key(a.LoginName)] = a.ID
		im.principals[a.ID] = principal{dn: dn}
		if len(a.MemberOf) > 0 {
			memberships = append(memberships, pending{dn: dn, name: "user " + qualified(u.Domain, u.UID), memberOf: a.MemberOf})
		}
		im.count("users")
		return im.emit(dn, u.Attrs())
	})
	if err != nil {
		return err
	}
	bySID := make(map[string]*groupState, len(im.groups))
	for _, g := range im.groups {
		bySID[g.sid] = g
	}
	for _, p := range memberships {
		for _, sid := range p.memberOf {
			g := bySID[sid]
			if g == nil {
				// A group the list does not hold (Domain Users, a group of
				// another domain): nothing in the federation names it.
				continue
			}
			g.rec.Members = append(g.rec.Members, p.dn)
		}
	}
	// Client computers come from the base, with their groups.
	for _, c := range im.base.Computers {
		dn := im.dit.Computer(c.Name)
		im.computers[fold.Key(c.Name)] = dn
		im.count("computers")
		if err := im.emit(dn, ldapschema.Computer{Name: c.Name, Description: c.Description}.Attrs()); err != nil {
			return err
		}
	}
	return nil
}

// entitlements reads the global entitlements and their members; their
// pools come with the pods' pools, and they are written at the end.
func (im *importer) entitlements() error {
	for _, kind := range []struct{ endpoint, members, typ string }{
		{"global-desktop-entitlements", "desktop-entitlement-members", ldapschema.TypeDesktop},
		{"global-application-entitlements", "application-entitlement-members", ldapschema.TypeApplication},
	} {
		err := eachOf(im, kind.endpoint, "", func(g entitlementJSON) error {
			if g.ID == "" || g.Name == "" {
				im.rep.loss(keyNoName, "entitlement "+g.ID)
				return nil
			}
			if _, dup := im.geNames[fold.Key(g.Name)]; dup || im.ges[g.ID] != nil {
				im.rep.loss(keyNameClash, "entitlement "+g.Name)
				return nil
			}
			st := &geState{rec: im.entitlement(g, kind.typ), dn: im.dit.Entitlement(g.Name)}
			if kind.typ == ldapschema.TypeDesktop {
				st.backup = g.BackupGDE
			} else if g.BackupGAE != "" {
				im.rep.loss(keyBackupApp, fmt.Sprintf("%s (backup %s)", g.Name, g.BackupGAE))
			}
			im.ges[g.ID] = st
			im.geNames[fold.Key(g.Name)] = g.ID
			return nil
		})
		if err != nil {
			return err
		}
		err = eachOf(im, kind.members, "", func(mb membersJSON) error {
			st := im.ges[mb.ID]
			if st == nil || st.rec.Type != kind.typ {
				im.rep.loss(keyDangling, "members of entitlement "+mb.ID)
				return nil
			}
			for _, sid := range mb.Members {
				p, ok := im.principals[sid]
				if !ok {
					im.rep.loss(keyDangling, fmt.Sprintf("entitlement %s: member %s", st.rec.Name, sid))
					continue
				}
				st.rec.Members = append(st.rec.Members, p.dn)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// entitlement maps one global entitlement's policy (docs/horizon.md).
func (im *importer) entitlement(g entitlementJSON, typ string) ldapschema.Entitlement {
	b, inBase := im.base.Entitlements[key(g.Name)]
	rec := ldapschema.Entitlement{Name: g.Name, Description: g.Description, Type: typ,
		UseHomeSite: g.UseHomeSite, RequireHomeSite: g.RequireHomeSite, AutoClean: g.AutoClean,
		ClientRestrictions: g.ClientRestrictions, Enabled: g.Enabled == nil || *g.Enabled,
		Scope: ldapschema.ScopeAny, LoadDistribution: ldapschema.PolicyNone, DefaultProtocol: ldapschema.ProtocolBlast}
	if inBase {
		rec.Scope, rec.LoadDistribution, rec.DefaultProtocol = b.Scope, b.LoadDistribution, b.DefaultProtocol
		rec.MultipleSessionsPerUser = b.MultipleSessionsPerUser
		rec.UsePreferredSites, rec.IgnoreHighLoad = b.UsePreferredSites, b.IgnoreHighLoad
	}
	if len(g.Tags) > 0 {
		rec.Tags = slices.Sorted(slices.Values(g.Tags))
	}
	if g.Dedicated != nil {
		rec.Dedicated = *g.Dedicated
	}
	if g.MultipleSessions != nil {
		rec.MultipleSessionsPerUser = *g.MultipleSessions
	}
	if g.UsePreferredSites != nil {
		rec.UsePreferredSites = *g.UsePreferredSites
	}
	if g.IgnoreHighLoad != nil {
		rec.IgnoreHighLoad = *g.IgnoreHighLoad
	}
	name := "entitlement " + g.Name
	im.mapEnum(scopeEnum, g.Scope, name, &rec.Scope)
	im.mapEnum(policyEnum, g.Policy, name, &rec.LoadDistribution)
	im.mapEnum(protocolEnum, g.DefaultProtocol, name, &rec.DefaultProtocol)
	return rec
}

// mapEnum sets *into to cpactl's value of v; an unsupported or unknown
// value (or none) leaves it and is reported.
func (im *importer) mapEnum(e enum, v, name string, into *string) bool {
	if v == "" {
		return false
	}
	m, ok, unsupported := e.Map(v)
	switch {
	case ok:
		*into = m
		return true
	case unsupported && e.Field == protocolEnum.Field:
		im.rep.loss(keyUltra, fmt.Sprintf("%s (%s)", name, v))
	case unsupported && e.Field == sessionStateEnum.Field:
		im.rep.loss(keyPending, name)
	default:
		im.rep.loss(keyUnknownEnum, fmt.Sprintf("%s: %s %s", name, e.Field, v))
	}
	return false
}

// podLocal reads each pod's Connection Servers, farms, hosts, pools and
// machines from the pod's own files.
func (im *importer) podLocal() error {
	for _, id := range im.podOrder() {
		st := im.pods[id]
		if st.missing {
			continue
		}
		if err := im.podObjects(st); err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) podObjects(pod *podState) error {
	names := map[string]bool{} // cn below the pod: servers, pools and farms share it
	claim := func(kind, name string) bool {
		if name == "" {
			im.rep.loss(keyNoName, fmt.Sprintf("%s in pod %s", kind, pod.name))
			return false
		}
		if names[fold.Key(name)] {
			im.rep.loss(keyNameClash, fmt.Sprintf("%s %s in pod %s", kind, name, pod.name))
			return false
		}
		names[fold.Key(name)] = true
		return true
	}
	err := eachOf(im, "connection-servers", pod.id, func(c connectionServerJSON) error {
		if !claim("Connection Server", c.Name) {
			return nil
		}
		rec := ldapschema.ConnectionServer{Name: c.Name}
		if len(c.Tags) > 0 {
			rec.Tags = slices.Sorted(slices.Values(c.Tags))
		}
		if b, ok := im.base.ConnectionServers[key(pod.name, c.Name)]; ok {
			rec.Description = b.Description
		}
		im.count("connection servers")
		return im.emit(im.dit.ConnectionServer(pod.name, c.Name), rec.Attrs())
	})
	if err != nil {
		return err
	}
	err = eachOf(im, "farms", pod.id, func(f farmJSON) error {
		if !claim("farm", f.Name) {
			return nil
		}
		im.farms[inPod{pod.id, f.ID}] = f.Name
		rec := im.farm(pod.name, f)
		im.count("farms")
		return im.emit(im.dit.Farm(pod.name, f.Name), rec.Attrs())
	})
	if err != nil {
		return err
	}
	hostNames := map[string]bool{}
	err = eachOf(im, "rds-servers", pod.id, func(h rdsServerJSON) error {
		farm, ok := im.farms[inPod{pod.id, h.FarmID}]
		if !ok {
			im.rep.loss(keyDangling, fmt.Sprintf("RDS host %s in pod %s: farm %s", h.Name, pod.name, h.FarmID))
			return nil
		}
		if h.Name == "" || hostNames[key(farm, h.Name)] {
			im.rep.loss(keyNameClash, fmt.Sprintf("RDS host %s in farm %s", h.Name, farm))
			return nil
		}
		hostNames[key(farm, h.Name)] = true
		rec := im.host(pod.name, farm, h)
		dn := im.dit.Host(pod.name, farm, h.Name)
		im.hosts[inPod{pod.id, h.ID}] = dn
		im.count("hosts")
		return im.emit(dn, rec.Attrs())
	})
	if err != nil {
		return err
	}
	metrics := map[string]poolMetricsJSON{}
	err = eachOf(im, "desktop-pool-metrics", pod.id, func(mt poolMetricsJSON) error {
		metrics[mt.ID] = mt
		return nil
	})
	if err != nil {
		return err
	}
	err = eachOf(im, "desktop-pools", pod.id, func(p desktopPoolJSON) error {
		if !claim("pool", p.Name) {
			return nil
		}
		rec, ok := im.desktopPool(pod.name, p, metrics)
		if !ok {
			return nil
		}
		dn := im.dit.Pool(pod.name, p.Name)
		im.pools[inPod{pod.id, p.ID}] = dn
		if p.GDE != "" {
			im.poolGE[inPod{pod.id, p.ID}] = p.GDE
			im.linkPool(p.GDE, ldapschema.TypeDesktop, dn, "pool "+p.Name)
		}
		im.count("pools")
		return im.emit(dn, rec.Attrs())
	})
	if err != nil {
		return err
	}
	err = eachOf(im, "application-pools", pod.id, func(p appPoolJSON) error {
		if p.FarmID == "" {
			im.rep.loss(keyAppOnDesktop, fmt.Sprintf("%s in pod %s", p.Name, pod.name))
			return nil
		}
		farm, ok := im.farms[inPod{pod.id, p.FarmID}]
		if !ok {
			im.rep.loss(keyDangling, fmt.Sprintf("application pool %s in pod %s: farm %s", p.Name, pod.name, p.FarmID))
			return nil
		}
		if !claim("pool", p.Name) {
			return nil
		}
		rec := ldapschema.Pool{Name: p.Name, Kind: ldapschema.KindApplication, Description: p.Description,
			Enabled: p.Enabled == nil || *p.Enabled, FarmDN: im.dit.Farm(pod.name, farm)}
		dn := im.dit.Pool(pod.name, p.Name)
		if p.GAE != "" {
			k := appPoolKey{pod.id, p.GAE, p.FarmID}
			if _, ok := im.appPools[k]; !ok {
				im.appPools[k] = dn
			}
			im.appPoolNamed[appPoolName{k, fold.Key(p.Name)}] = dn
			im.linkPool(p.GAE, ldapschema.TypeApplication, dn, "application pool "+p.Name)
		}
		im.count("pools")
		return im.emit(dn, rec.Attrs())
	})
	if err != nil {
		return err
	}
	// Machines: who is assigned which machine of a dedicated pool, for
	// the pod assignments.
	return eachOf(im, "machines", pod.id, func(mc machineJSON) error {
		ge := im.poolGE[inPod{pod.id, mc.DesktopPoolID}]
		if ge == "" || mc.Name == "" {
			return nil
		}
		for _, sid := range mc.UserIDs {
			im.machines[machineKey{pod.id, sid, ge}] = mc.Name
		}
		return nil
	})
}

// linkPool adds a pool to its entitlement's pools.
func (im *importer) linkPool(geID, typ, dn, name string) {
	st := im.ges[geID]
	if st == nil || st.rec.Type != typ {
		im.rep.loss(keyDangling, fmt.Sprintf("%s: entitlement %s", name, geID))
		return
	}
	st.rec.PoolDNs = append(st.rec.PoolDNs, dn)
}

// farm maps an RDS farm: the session limit and the host-side thresholds.
func (im *importer) farm(pod string, f farmJSON) ldapschema.Farm {
	rec := ldapschema.Farm{Name: f.Name, Description: f.Description}
	name := fmt.Sprintf("farm %s in pod %s", f.Name, pod)
	var limit string
	if im.mapEnum(maxSessionEnum, f.MaxSessionType, name, &limit) && limit == "LIMITED" && f.MaxPerHost != nil {
		rec.MaxSessionsPerHost = im.inRange(*f.MaxPerHost, 0, 1<<20, name+": max_sessions_per_rds_server", 0)
	}
	if lb := f.LoadBalancer; lb != nil {
		if lb.LoadIndexThreshold != nil {
			rec.LoadIndexThreshold = im.inRange(*lb.LoadIndexThreshold, 0, 100, name+": load_index_threshold", 0)
		}
		if lb.ConnectingSessionThreshold != nil {
			rec.ConnectingSessionThreshold = im.inRange(*lb.ConnectingSessionThreshold, 0, 150, name+": connecting_session_threshold", 0)
		}
	}
	return rec
}

// inRange returns v when it is in [lo, hi], else def (reported).
func (im *importer) inRange(v, lo, hi int, name string, def int) int {
	if v < lo || v > hi {
		im.rep.loss(keyOutOfRange, fmt.Sprintf("%s %d", name, v))
		return def
	}
	return v
}

// host maps an RDS host: what the API carries, the rest from the base.
func (im *importer) host(pod, farm string, h rdsServerJSON) ldapschema.Host {
	rec := ldapschema.Host{Name: h.Name, Farm: farm, Pod: pod, Description: h.Description, Enabled: h.Enabled == nil || *h.Enabled}
	b, inBase := im.base.Hosts[key(pod, farm, h.Name)]
	if inBase {
		rec.Connecting = b.Connecting
		if !b.FeaturesDefault { // unset in the base stays unset: every feature
			rec.Features = b.Features
		}
		rec.PolicyLoadIndexThreshold, rec.PolicyConnectingSessionThreshold = b.PolicyLoadIndexThreshold, b.PolicyConnectingSessionThreshold
	}
	name := fmt.Sprintf("RDS host %s in farm %s", h.Name, farm)
	// No load index, or a load preference of UNKNOWN, is a host whose
	// load is not known: cpactl's -1.
	switch {
	case h.LoadIndex == nil || h.LoadPref == "UNKNOWN":
		rec.LoadIndex = -1
	default:
		def := 0
		if inBase {
			def = b.LoadIndex
		}
		rec.LoadIndex = im.inRange(*h.LoadIndex, 0, 100, name+": load_index", def)
	}
	if h.Sessions != nil {
		rec.Sessions = im.inRange(*h.Sessions, 0, 1<<20, name+": session_count", 0)
	}
	// DISABLED is what cpactl holds as the enabled flag (false).
	if h.State != "" && !(h.State == "DISABLED" && !rec.Enabled) {
		if _, ok, _ := hostStateEnum.Map(h.State); !ok {
			im.rep.loss(keyHostState, fmt.Sprintf("%s (%s)", h.Name, h.State))
		}
	}
	return rec
}

// desktopPool maps a desktop pool with its metrics: RDS pools to RDS
// desktop pools on their farm, the others to desktop pools with capacity,
// sessions and (dedicated) assigned machines.
func (im *importer) desktopPool(pod string, p desktopPoolJSON, metrics map[string]poolMetricsJSON) (ldapschema.Pool, bool) {
	name := fmt.Sprintf("pool %s in pod %s", p.Name, pod)
	rec := ldapschema.Pool{Name: p.Name, Description: p.Description, Enabled: p.Enabled == nil || *p.Enabled}
	kind := ldapschema.KindDesktop
	if !im.mapEnum(poolTypeEnum, p.Type, name, &kind) && p.FarmID != "" {
		kind = ldapschema.KindRDSDesktop
	}
	rec.Kind = kind
	if kind == ldapschema.KindRDSDesktop {
		farm, ok := im.farms[inPod{im.podID(pod), p.FarmID}]
		if !ok {
			im.rep.loss(keyDangling, fmt.Sprintf("%s: farm %s", name, p.FarmID))
			return rec, false
		}
		rec.FarmDN = im.dit.Farm(pod, farm)
		return rec, true
	}
	assignment := "FLOATING"
	im.mapEnum(assignmentEnum, p.UserAssignment, name, &assignment)
	rec.Dedicated = assignment == "DEDICATED"
	mt, ok := metrics[p.ID]
	val := func(ptrs ...*int) int {
		n := 0
		for _, v := range ptrs {
			if v != nil {
				n += *v
			}
		}
		return n
	}
	if ok && mt.NumMachines != nil {
		rec.Capacity = val(mt.NumMachines)
	} else {
		rec.Capacity = val(p.NumMachines)
	}
	switch {
	case ok && rec.Dedicated:
		rec.Assigned = val(mt.Occupancy)
		rec.Sessions = val(mt.Connected, mt.Disconnected)
	case ok:
		rec.Sessions = val(mt.Occupancy)
	default:
		rec.Sessions = val(p.NumSessions)
	}
	return rec, true
}

func (im *importer) podID(name string) string { return im.podNames[fold.Key(name)] }

// missingPods keeps, for a pod missing from the pull, what the base holds
// below it, and its pools in their entitlements.
func (im *importer) missingPods() error {
	var missing []string
	for _, id := range im.podOrder() {
		st := im.pods[id]
		if !st.missing {
			continue
		}
		missing = append(missing, st.name)
		im.rep.loss(keyMissingPodLocal, st.name)
		for _, c := range im.base.ConnectionServers {
			if strings.EqualFold(c.Pod, st.name) {
				im.count("connection servers")
				if err := im.emit(im.dit.ConnectionServer(st.name, c.Name), c.Attrs()); err != nil {
					return err
				}
			}
		}
		for _, f := range im.base.Farms {
			if strings.EqualFold(f.Pod, st.name) {
				im.count("farms")
				if err := im.emit(im.dit.Farm(st.name, f.Name), f.Attrs()); err != nil {
					return err
				}
			}
		}
		for _, h := range im.base.Hosts {
			if strings.EqualFold(h.Pod, st.name) {
				im.count("hosts")
				if err := im.emit(im.dit.Host(st.name, h.Farm, h.Name), h.Attrs()); err != nil {
					return err
				}
			}
		}
		for _, p := range im.base.Pools {
			if !strings.EqualFold(p.Pod, st.name) {
				continue
			}
			if p.FarmDN != "" {
				p.FarmDN = im.dit.Farm(st.name, p.Farm)
			}
			dn := im.dit.Pool(st.name, p.Name)
			im.count("pools")
			if err := im.emit(dn, p.Attrs()); err != nil {
				return err
			}
			for _, g := range im.base.Entitlements {
				if slices.ContainsFunc(g.PoolDNs, func(d string) bool { return ldapschema.EqualDN(d, p.DN) }) {
					if id, ok := im.geNames[fold.Key(g.Name)]; ok {
						im.ges[id].rec.PoolDNs = append(im.ges[id].rec.PoolDNs, dn)
					}
				}
			}
		}
	}
	if len(missing) > 0 {
		im.rep.note("pods missing from the pull: %s (what lies below them comes from %s)", strings.Join(missing, ", "), im.base.Source)
	}
	return nil
}

// geDN returns the DN of the entitlement of a desktop or application
// entitlement id, "" when the pull does not hold it.
func (im *importer) geDN(gde, gae string) string {
	id := gde
	if id == "" {
		id = gae
	}
	if st := im.ges[id]; st != nil {
		return st.dn
	}
	return ""
}

func (im *importer) homeSites() error {
	return eachOf(im, "home-sites", "", func(h homeSiteJSON) error {
		p, ok := im.principals[h.SID]
		site, siteOK := im.sites[h.SiteID]
		geDN := im.geDN(h.GDE, h.GAE)
		switch {
		case !ok:
			im.rep.loss(keyDangling, fmt.Sprintf("home site %s: user or group %s", h.ID, h.SID))
			return nil
		case !siteOK:
			im.rep.loss(keyDangling, fmt.Sprintf("home site %s: site %s", h.ID, h.SiteID))
			return nil
		case geDN == "" && (h.GDE != "" || h.GAE != ""):
			im.rep.loss(keyDangling, fmt.Sprintf("home site %s: entitlement %s%s", h.ID, h.GDE, h.GAE))
			return nil
		}
		rec := ldapschema.HomeSite{EntitlementDN: geDN, SiteDN: im.dit.Site(site)}
		if p.group {
			rec.GroupDN = p.dn
		} else {
			rec.UserDN = p.dn
		}
		rec.DN = im.dit.HomeSite(p.dn, geDN)
		im.count("home sites")
		return im.emit(rec.DN, rec.Attrs())
	})
}

func (im *importer) assignments() error {
	return eachOf(im, "pod-assignments", "", func(a assignmentJSON) error {
		p, ok := im.principals[a.UserID]
		pod := im.pods[a.PodID]
		geDN := im.geDN(a.GDE, a.GAE)
		switch {
		case !ok || p.group:
			im.rep.loss(keyDangling, fmt.Sprintf("pod assignment %s: user %s", a.ID, a.UserID))
			return nil
		case pod == nil:
			im.rep.loss(keyDangling, fmt.Sprintf("pod assignment %s: pod %s", a.ID, a.PodID))
			return nil
		case geDN == "":
			im.rep.loss(keyDangling, fmt.Sprintf("pod assignment %s: entitlement %s%s", a.ID, a.GDE, a.GAE))
			return nil
		}
		ge := a.GDE
		if ge == "" {
			ge = a.GAE
		}
		rec := ldapschema.Assignment{UserDN: p.dn, EntitlementDN: geDN, PodDN: pod.dn,
			Machine: im.machines[machineKey{a.PodID, a.UserID, ge}]}
		rec.DN = im.dit.Assignment(p.dn, geDN)
		im.count("assignments")
		return im.emit(rec.DN, rec.Attrs())
	})
}

// sessions streams every pod's sessions, a page at a time on every
// processor: nothing of them is held but the page being mapped.
func (im *importer) sessions() error {
	var files []horizon.File
	for _, id := range im.podOrder() {
		if !im.pods[id].missing {
			files = append(files, im.m.FilesOf("global-sessions", id)...)
		}
	}
	work := make(chan horizon.File)
	errs := make(chan error, im.opts.Workers)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range im.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte // the worker's page, reused
			for f := range work {
				if failed.Load() {
					continue
				}
				err := im.sessionPage(f, &buf)
				if err != nil && !failed.Swap(true) {
					errs <- err
				}
			}
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

// sessionPage reads one page of sessions in one pass (fastjson.go).
func (im *importer) sessionPage(f horizon.File, buf *[]byte) error {
	i := 0
	var s sessionJSON // decoded into in place, reset for each record
	return eachRecordIn(im.dir, f, buf, func(sc *scanner) error {
		im.opts.Records.Add(1)
		i++
		s = sessionJSON{}
		if err := sc.record(&s); err != nil {
			return fmt.Errorf("%s: record %d is not a session: %w", f.Name, i, err)
		}
		return im.session(s)
	})
}

// session maps one session; it runs on several goroutines and only reads
// the importer's maps.
func (im *importer) session(s sessionJSON) error {
	if s.ID == "" {
		im.rep.loss(keyNoName, "session without an id")
		return nil
	}
	state, ok, _ := sessionStateEnum.Map(s.State)
	if !ok {
		name := "session " + s.ID
		if !im.mapEnum(sessionStateEnum, s.State, name, &state) && s.State == "" {
			im.rep.loss(keyUnknownEnum, name+": session_state (none)")
		}
		return nil
	}
	p, ok := im.principals[s.UserID]
	pod := im.pods[s.PodID]
	ge, gae := s.GDE, ""
	if ge == "" && len(s.GAEs) > 0 {
		gae = s.GAEs[0]
		if len(s.GAEs) > 1 {
			im.rep.loss(keyManyApps, s.ID)
		}
	}
	geDN := im.geDN(ge, gae)
	switch {
	case !ok || p.group:
		im.rep.loss(keyDangling, fmt.Sprintf("session %s: user %s", s.ID, s.UserID))
		return nil
	case pod == nil:
		im.rep.loss(keyDangling, fmt.Sprintf("session %s: pod %s", s.ID, s.PodID))
		return nil
	case geDN == "":
		im.rep.loss(keyDangling, fmt.Sprintf("session %s: entitlement %s%s", s.ID, ge, gae))
		return nil
	}
	rec := ldapschema.Session{ID: s.ID, UserDN: p.dn, EntitlementDN: geDN, PodDN: pod.dn, State: state}
	if b := im.pods[s.BrokeringPodID]; b != nil {
		rec.BrokeringPodDN = b.dn
	}
	switch {
	case s.DesktopPoolID != "":
		rec.PoolDN = im.pools[inPod{s.PodID, s.DesktopPoolID}]
	case gae != "" && s.FarmID != "":
		// The API names no application pool: the one of the entitlement
		// on that farm that application_names names, else the first.
		k := appPoolKey{s.PodID, gae, s.FarmID}
		rec.PoolDN = im.appPools[k]
		for _, name := range s.Apps {
			if dn, ok := im.appPoolNamed[appPoolName{k, fold.Key(name)}]; ok {
				rec.PoolDN = dn
				break
			}
		}
	}
	if s.RDSServerID != "" {
		rec.HostDN = im.hosts[inPod{s.PodID, s.RDSServerID}]
	}
	if s.Client != nil && s.Client.Name != "" {
		if dn, ok := im.computers[fold.Key(s.Client.Name)]; ok {
			rec.ClientDN = dn
		} else {
			im.rep.loss(keyClient, s.Client.Name)
		}
	}
	im.count("sessions")
	return im.out.session(ldapschema.RDN(ldapschema.AttrCN, s.ID)+im.sessionSuffix, &rec)
}

// finish writes the entitlements and groups, now that their members and
// pools are known.
func (im *importer) finish() error {
	ids := make([]string, 0, len(im.ges))
	for id := range im.ges {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		st := im.ges[id]
		if st.backup != "" {
			if b := im.ges[st.backup]; b != nil && b.rec.Type == ldapschema.TypeDesktop {
				st.rec.BackupDN = im.dit.Entitlement(b.rec.Name)
			} else {
				im.rep.loss(keyDangling, fmt.Sprintf("entitlement %s: backup %s", st.rec.Name, st.backup))
			}
		}
		im.count("entitlements")
		if err := im.emit(im.dit.Entitlement(st.rec.Name), st.rec.Attrs()); err != nil {
			return err
		}
	}
	for _, g := range im.groups {
		for _, c := range im.base.GroupComputers[key(g.rec.Name)] {
			if dn, ok := im.computers[fold.Key(c)]; ok {
				g.rec.Members = append(g.rec.Members, dn)
			}
		}
		im.count("groups")
		if err := im.emit(g.rec.DN, g.rec.Attrs()); err != nil {
			return err
		}
	}
	return nil
}

// Summary renders the counts that are not zero: "4 sites, 5 pods, 1
// entitlement, ...".
func (r *Report) Summary() string {
	var parts []string
	for _, k := range Kinds {
		n := r.Counts[k]
		if n == 0 {
			continue
		}
		word := k
		if n == 1 {
			word = strings.TrimSuffix(k, "s") // every kind's plural is its singular and s
		}
		parts = append(parts, strconv.Itoa(n)+" "+word)
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// IsPull reports whether path is a directory that holds a pull (its
// manifest.json): what --from takes besides an LDIF file.
func IsPull(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	m, err := os.Stat(filepath.Join(path, horizon.ManifestFile))
	return err == nil && m.Mode().IsRegular()
}

// Snapshot imports the pull in dir into an in-memory snapshot, as if the
// LDIF WriteLDIF writes had been read with directory.ReadSnapshot: the
// records are streamed from the import into the snapshot's reader.
func Snapshot(dir string, opts Options) (*snapshot.Snapshot, *Report, error) {
	pr, pw := io.Pipe()
	var rep *Report
	done := make(chan error, 1)
	go func() {
		var err error
		rep, err = WriteLDIF(dir, opts, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	snap, err := snapshot.ReadSnapshot(pr)
	pr.CloseWithError(io.ErrClosedPipe) // the writer stops if the reader failed
	if ierr := <-done; ierr != nil {
		return nil, nil, ierr
	}
	if err != nil {
		return nil, nil, err
	}
	return snap, rep, nil
}
