package broker

// Applications in an existing RDS session (docs/resolve.md "Applications in
// an existing RDS session"): an application GE with no session of its own
// opens in the user's session of another application GE on a farm serving
// one of its pools.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// sharedSession looks for a session of another application GE that this
// application GE can open in, tracing why each of the user's other sessions
// is or is not used. It returns the RECONNECT, or nil.
func (rs *resolver) sharedSession() *Decision {
	if rs.geType != TypeApplication {
		return nil
	}
	// The user's sessions of other GEs: without one, nothing to open in
	// (looked up first: the hosts below are many).
	var others []*Session
	for i := range rs.ix.f.Sessions {
		if s := &rs.ix.f.Sessions[i]; strings.EqualFold(s.User, rs.user.Name) && !strings.EqualFold(s.Entitlement, rs.ge.Name) {
			others = append(others, s)
		}
	}
	if len(others) == 0 {
		return nil
	}
	// This GE's enabled farm-backed pools by folded farm name: the first by
	// name serves the placement.
	farmPool := map[string]*Pool{}
	for _, gp := range rs.ix.entitlementPools(rs.ge) {
		if p := gp.pool; p != nil && gp.why == "" && p.Enabled && p.Kind.FarmBacked() {
			if _, dup := farmPool[foldKey(p.Farm)]; !dup {
				farmPool[foldKey(p.Farm)] = p
			}
		}
	}
	// The hosts of those farms, by pod and host name: farms in name
	// order, each farm's hosts in name order, the first so named wins.
	farms := make([]string, 0, len(farmPool))
	for k := range farmPool {
		farms = append(farms, k)
	}
	sort.Strings(farms)
	served := func(pod, host string) (servedHost, bool) {
		for _, k := range farms {
			p := farmPool[k]
			fm := rs.ix.farm(p.Farm)
			if fm == nil || !strings.EqualFold(fm.Pod, pod) {
				continue
			}
			hs := rs.ix.hostsOf(k)
			for i := range hs {
				if strings.EqualFold(hs[i].Name, host) {
					return servedHost{pool: p, host: &hs[i]}, true
				}
			}
		}
		return servedHost{}, false
	}
	// CONNECTED first, then by session ID.
	less := func(a, b *Session) bool {
		ca, cb := strings.EqualFold(string(a.State), string(StateConnected)), strings.EqualFold(string(b.State), string(StateConnected))
		if ca != cb {
			return ca
		}
		return nameLess(a.ID, b.ID)
	}
	sortSessions(others, less)
	for _, s := range others {
		pool, host, why := rs.shareable(s, served)
		if why != "" {
			rs.trace("shared_session", "session %s of %s (pod %s%s) is not used: %s", orNone(s.ID), s.Entitlement, s.Pod, hostSuffix(s.Host), why)
			continue
		}
		pod := rs.ix.pod(s.Pod)
		site := pod.Site
		if st := rs.ix.site(pod.Site); st != nil {
			site = st.Name
		}
		other := rs.ix.entitlement(s.Entitlement)
		rs.d.Placement = &Placement{Site: site, Pod: pod.Name, Pool: pool.Name, Farm: pool.Farm, Host: host.Name, Session: s.ID}
		if fm := rs.ix.farm(pool.Farm); fm != nil {
			rs.d.Placement.Farm = fm.Name
		}
		rs.d.SharedSession = &SharedSession{Entitlement: other.Name, Session: s.ID}
		rs.trace("shared_session", "session %s of %s (%s) runs on host %s of farm %s, which serves %s's pool %s: the application opens in it",
			orNone(s.ID), other.Name, s.State, host.Name, rs.d.Placement.Farm, rs.ge.Name, pool.Name)
		return rs.finish(OutcomeReconnect, "%s opens %s in the existing %s session %s of %s on host %s (pod %s, site %s)",
			rs.user.Name, rs.ge.Name, strings.ToLower(string(s.State)), orNone(s.ID), other.Name, host.Name, pod.Name, site)
	}
	return nil
}

// shareable says whether session s of another GE can take this application
// GE: the pool of this GE on the session host's farm and the host, or why
// not.
func (rs *resolver) shareable(s *Session, served func(pod, host string) (servedHost, bool)) (*Pool, *Host, string) {
	other := rs.ix.entitlement(s.Entitlement)
	switch {
	case other == nil:
		return nil, nil, fmt.Sprintf("entitlement %q is not known, so not known to be an application entitlement", s.Entitlement)
	case !strings.EqualFold(string(other.Type), string(TypeApplication)):
		return nil, nil, fmt.Sprintf("%s is a desktop entitlement: only application sessions are shared", other.Name)
	case s.Host == "":
		return nil, nil, "no RDS host is recorded"
	}
	pod := rs.ix.pod(s.Pod)
	switch {
	case pod == nil:
		return nil, nil, fmt.Sprintf("pod %q is not in the federation", s.Pod)
	case rs.ix.isOffline(pod.Name):
		return nil, nil, fmt.Sprintf("pod %s is offline", pod.Name)
	case !rs.inScope(pod):
		return nil, nil, fmt.Sprintf("pod %s is outside the scope (%s)", pod.Name, rs.scopeWords())
	}
	sh, ok := served(pod.Name, s.Host)
	switch {
	case !ok:
	case !sh.host.Features.Supports(rs.protocol):
		return nil, nil, fmt.Sprintf("host %s does not support protocol %s", sh.host.Name, rs.protocol)
	case rs.req.Unauthenticated && !sh.host.Features.Unauthenticated:
		return nil, nil, fmt.Sprintf("host %s does not support unauthenticated access", sh.host.Name)
	default:
		return sh.pool, sh.host, ""
	}
	return nil, nil, fmt.Sprintf("host %s is on another farm: no enabled pool of %s is served by its farm", s.Host, rs.ge.Name)
}

// servedHost is an RDS host of a farm serving one of the GE's pools.
type servedHost struct {
	pool *Pool // the GE's pool on the host's farm
	host *Host
}

// sortSessions sorts sessions by less, keeping the order of those it finds
// equal.
func sortSessions(sessions []*Session, less func(a, b *Session) bool) {
	slices.SortStableFunc(sessions, func(a, b *Session) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
}
