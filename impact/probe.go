package impact

// Probes: the site search of a GE from one connecting point with one home
// site, resolved once for every user who reaches it (docs/impact.md
// "Probes").
//
// The claim, and why it holds. Take a request of user u for GE G through
// point p whose inputs before the site search are the same in both states
// (prefixSame below): u's own part (its groups, home-site rows, the
// sessions and the assignments the decision reads), G's record and its
// backup's, the Connection Server and its site, the pods, and none of
// u's records on a what-if offline pod whose being offline may change
// the decision (engine.offlineRecords: a session of another GE there is
// passed over in both states unless G has a farm there). broker.Resolve
// runs steps 1-4 (the entitlement checks, the existing sessions, an
// application's session of another GE, the assignment, the home site)
// and then, unless one of them decided, the site search (steps 5-7, and
// the backup GE's search after NO_CAPACITY). Steps 1-4 read only the
// inputs above, and the availability of G's pools, which only an
// application GE's shared-session step reads, through the hosts of the
// farms of its available pools on the pod of each session of u: that
// availability differs between the states only for a pool on a what-if
// offline pod (the pool, farm and host records being the same, or u
// having no session), so it reads the same unless u has a session on the
// pod of the farm of such a pool, which prefixSame excludes. So steps 1-4
// run alike in both states: they decide alike, or both reach the search
// with the same home site.
//
// The search reads, of the user, only its name (in texts) and its home
// sites for G and for the backup (rs.homeSite; the backup's from the
// rows), and, in the backup part, its sessions of the backup (which
// prefixSame excludes: a user with one is not probed). Everything else it
// reads is the GE's, the point's and the federation's: it decides for u
// as it decides for any user with the same home sites, such as the probe
// user, a direct member with no records but home-site rows that give
// those home sites. The probe resolves to the search whenever u does:
// the entitlement checks other than the membership read only G, the
// point and the home site, and it has no session nor assignment.
//
// Hence: when the probe's result is the same before and after, so is
// u's, whether u's decision is made in steps 1-4 (alike in both states)
// or by the search (the probe's). Such requests are counted as unchanged
// without being resolved; only the others are.

import (
	"reflect"
	"strings"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/internal/fold"
)

// prober holds the probes of one GE (one worker's; not shared).
type prober struct {
	e      *engine
	db, da *geData
	// ok: G's record, its backup's and the pods read the same in both
	// states, so that probes may stand for users.
	ok bool
	// poolsSame: the GE's pools, farms and hosts are the same records in
	// both states (their availability may still differ, on a what-if
	// offline pod).
	poolsSame bool
	// sharedPods are, for an application GE, the folded pods of the
	// farms of its pools on a what-if offline pod: a session of the user
	// there may be shared in one state and not in the other.
	sharedPods map[string]bool
	homes      map[string][2]string // encoded home-site rows -> home sites for G and the backup
	same       map[probeKey]bool
	resolved   int // probes resolved (before and after counted once)
	// searches remember the GE's site searches in each state, for every
	// request of the GE resolved (nil in the full comparison).
	searches [2]*broker.Searches
}

type probeKey struct {
	point int
	home  [2]string
}

// noHome stands for "no home site" in a probeKey (no site name holds a
// NUL).
const noHome = "\x00none"

func (e *engine) newProber(db, da *geData) *prober {
	pr := &prober{e: e, db: db, da: da, homes: map[string][2]string{}, same: map[probeKey]bool{}}
	if !e.opt.full {
		pr.searches = [2]*broker.Searches{broker.NewSearches(), broker.NewSearches()}
	}
	if e.opt.full || db == nil || da == nil {
		return pr
	}
	pr.ok = e.common && reflect.DeepEqual(db.ge, da.ge) && reflect.DeepEqual(db.backup, da.backup)
	pr.poolsSame = reflect.DeepEqual(db.pools, da.pools) && reflect.DeepEqual(db.farms, da.farms) && reflect.DeepEqual(db.hosts, da.hosts)
	if db.app {
		pr.sharedPods = map[string]bool{}
		for _, d := range []*geData{db, da} {
			for _, p := range d.pools {
				if !p.Kind.FarmBacked() || !e.offline[fold.Key(p.Pod)] {
					continue
				}
				for _, fm := range d.farms {
					if fold.Key(fm.Name) == fold.Key(p.Farm) {
						pr.sharedPods[fold.Key(fm.Pod)] = true
					}
				}
			}
		}
	}
	return pr
}

// prefixSame reports whether a request with these user parts reads the
// same in both states before the site search (the claim above), the
// Connection Server aside (the caller checks it).
func (pr *prober) prefixSame(parts [2]*userPart, userSame bool) bool {
	if !pr.ok || !userSame {
		return false
	}
	u := parts[0]
	if len(u.sessions) > 0 && !pr.poolsSame {
		return false
	}
	for _, x := range u.sessions {
		k := fold.Key(x.Entitlement)
		if pr.db.backup != nil && k == pr.db.backupKey {
			return false // the backup part reads it
		}
		if pr.sharedPods[fold.Key(x.Pod)] {
			return false
		}
	}
	return true
}

// unchanged reports whether the probe of point pi with the home sites
// of the user part u resolves alike before and after.
func (pr *prober) unchanged(pi int, u *userPart) (bool, error) {
	k := probeKey{point: pi, home: pr.home(u)}
	if same, ok := pr.same[k]; ok {
		return same, nil
	}
	probe := &userPart{direct: true, users: []broker.User{{Name: placeholder}}}
	for i, d := range []*broker.Entitlement{&pr.db.ge, pr.db.backup} {
		if d != nil && k.home[i] != noHome {
			probe.rows = append(probe.rows, broker.HomeSite{User: placeholder, Entitlement: d.Name, Site: k.home[i]})
		}
	}
	var res [2]Result
	p := &pr.e.points[pi]
	for si, st := range pr.e.states() {
		d := [2]*geData{pr.db, pr.da}[si]
		got, err := pr.e.resolve(st, d, probe, p, si, pr.searches[si])
		if err != nil {
			return false, err
		}
		res[si] = result(got)
	}
	pr.resolved++
	pr.same[k] = res[0].same(res[1])
	return pr.same[k], nil
}

// home returns the home sites the user part gives for the GE and for its
// backup (noHome when none applies, or the GE does not use home sites),
// as broker.ResolveHomeSite resolves them: from the rows alone (those of
// the user and its immediate groups), the sites and the GEs' names.
func (pr *prober) home(u *userPart) [2]string {
	d := pr.db
	uses := [2]bool{d.ge.UseHomeSite, d.backup != nil && d.backup.UseHomeSite}
	out := [2]string{noHome, noHome}
	if !uses[0] && !uses[1] || len(u.rows) == 0 {
		return out
	}
	var b strings.Builder
	for _, r := range u.rows {
		b.WriteString(r.User + "\x00" + r.Group + "\x00" + r.Entitlement + "\x00" + r.Site + "\x01")
	}
	key := b.String()
	if h, ok := pr.homes[key]; ok {
		return h
	}
	f := &broker.Federation{Sites: pr.e.b.noPreferred, Users: u.users, Groups: u.groups, HomeSites: u.rows, Entitlements: d.ges}
	for i, ge := range []*broker.Entitlement{&d.ge, d.backup} {
		if uses[i] {
			if h := broker.ResolveHomeSite(f, placeholder, ge.Name); h.Site != nil {
				out[i] = *h.Site
			}
		}
	}
	pr.homes[key] = out
	return out
}
