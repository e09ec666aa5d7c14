package broker

// The site search (steps 5-7) remembered across ResolveWith calls that
// read the same federation but for the users' own records (impact
// resolves thousands of users' requests that way).

import (
	"fmt"
	"slices"
	"strings"
)

// Searches remembers the site searches of the requests resolved with it
// (Prepared.Searches), for a caller that resolves many users' requests
// over federations that differ only in the users' own records. Every call
// given the same Searches must read the same settings, sites, pods and
// offline pods (the same Places), the same hosts (the same Hosts), and the
// same records of pools, farms and the entitlements it searches (their
// members aside); the user, its groups, home-site rows, sessions and
// assignments, the entitlements of its sessions and their pools may
// differ.
//
// The search reads nothing else of the request but the entitlement
// searched, the user's name (in its texts) and home site, the connecting
// pod (and its site), the seed, the protocol, the unauthenticated flag
// and the warnings issued before it (a warning is traced once). Each
// search is remembered under all of these, with the connecting server,
// the client and the Places and Hosts it was made with: a later call that
// reaches a search with every one of them the same, and the same record
// of the entitlement, gets the trace steps, warnings, site order,
// placement and outcome of the first without searching again. The
// decision is the one Resolve gives (the broker's tests resolve every
// case both ways).
//
// A Searches is not safe for concurrent use. Decisions resolved with it
// share the remembered site order and host selection: read them only.
type Searches struct {
	m map[searchKey]*searchMemo
}

// NewSearches returns an empty Searches.
func NewSearches() *Searches { return &Searches{m: map[searchKey]*searchMemo{}} }

// searchKey is everything of a request a search reads that may differ
// between the calls given one Searches.
type searchKey struct {
	places                          *Places
	hosts                           *Hosts
	ge, user, home, cs, pod, client string
	homeSet, unauthenticated        bool
	protocol                        Protocol
	seed                            int64
	settings                        Settings
	warnings                        string
}

// searchMemo is what one search added to its decision.
type searchMemo struct {
	ge        Entitlement // the entitlement searched, members left out
	trace     []TraceStep
	traceArgs [][]any // the steps' arguments when traced lazily (Decision.traceArgs), else nil
	warnings  []string
	siteOrder []SiteVisit
	placement *Placement
	outcome   Outcome
	reason    string
	visited   map[string]bool
}

// search runs steps 5-7 (searchSites), or gives what the same search gave
// an earlier request resolved with the same Searches.
func (rs *resolver) search() *Decision {
	m := rs.searches
	if m == nil || len(rs.d.SiteOrder) > 0 || rs.d.Placement != nil || rs.visited != nil {
		return rs.searchSites()
	}
	k := searchKey{places: rs.pre.Places, hosts: rs.pre.Hosts, ge: rs.ge.Name, user: rs.user.Name, pod: rs.pod.Name,
		protocol: rs.protocol, seed: rs.req.Seed, unauthenticated: rs.req.Unauthenticated,
		settings: rs.ix.f.Settings, warnings: strings.Join(rs.d.Warnings, "\x00")}
	if rs.homeSite != nil {
		k.home, k.homeSet = rs.homeSite.Name, true
	}
	if rs.cs != nil {
		k.cs = rs.cs.Name
	}
	if rs.client != nil {
		k.client = rs.client.Name
	}
	if memo, ok := m.m[k]; ok {
		if !sameSearched(&memo.ge, rs.ge) {
			return rs.searchSites()
		}
		rs.visited = memo.visited
		rs.replay(memo)
		rs.d.Warnings = append(rs.d.Warnings, memo.warnings...)
		rs.d.SiteOrder = slices.Clone(memo.siteOrder)
		if memo.placement != nil {
			p := *memo.placement
			rs.d.Placement = &p
		}
		rs.d.Outcome, rs.d.Reason = memo.outcome, memo.reason
		return rs.d
	}
	nt, nw := len(rs.d.Trace), len(rs.d.Warnings)
	d := rs.searchSites()
	memo := &searchMemo{ge: *rs.ge, trace: slices.Clone(d.Trace[nt:]), warnings: slices.Clone(d.Warnings[nw:]),
		siteOrder: d.SiteOrder, outcome: d.Outcome, reason: d.Reason, visited: rs.visited}
	if d.traceArgs != nil {
		memo.traceArgs = slices.Clone(d.traceArgs[nt:])
	}
	memo.ge.Members = nil
	if d.Placement != nil {
		p := *d.Placement
		memo.placement = &p
	}
	m.m[k] = memo
	return d
}

// replay appends the trace steps of a remembered search to the
// decision's, as this decision traces them (lazily or not) whichever way
// the search that was remembered traced them.
func (rs *resolver) replay(memo *searchMemo) {
	switch {
	case rs.lazy && memo.traceArgs != nil:
		rs.d.Trace = append(rs.d.Trace, memo.trace...)
		rs.d.traceArgs = append(rs.d.traceArgs, memo.traceArgs...)
	case rs.lazy:
		rs.d.Trace = append(rs.d.Trace, memo.trace...)
		rs.d.traceArgs = append(rs.d.traceArgs, make([][]any, len(memo.trace))...)
	case memo.traceArgs != nil:
		for i, t := range memo.trace {
			if args := memo.traceArgs[i]; args != nil {
				t.Message = fmt.Sprintf(t.Message, args...)
			}
			rs.d.Trace = append(rs.d.Trace, t)
		}
	default:
		rs.d.Trace = append(rs.d.Trace, memo.trace...)
	}
}

// sameSearched reports whether the record searched (members left out)
// is the same as ge but for its members, which the search does not read:
// reflect.DeepEqual of the two with the members left out, field by field
// (a list nil in one and empty in the other differs, as there).
func sameSearched(s, g *Entitlement) bool {
	return s.Name == g.Name && s.Type == g.Type && s.Scope == g.Scope && s.Dedicated == g.Dedicated &&
		s.UseHomeSite == g.UseHomeSite && s.RequireHomeSite == g.RequireHomeSite &&
		s.UsePreferredSites == g.UsePreferredSites && s.IgnoreHighLoad == g.IgnoreHighLoad &&
		s.Policy == g.Policy && s.AutoClean == g.AutoClean && s.MultipleSessionsPerUser == g.MultipleSessionsPerUser &&
		sameList(s.Tags, g.Tags) && s.ClientRestrictions == g.ClientRestrictions && s.Enabled == g.Enabled &&
		s.DefaultProtocol == g.DefaultProtocol && sameList(s.Pools, g.Pools) && s.Backup == g.Backup &&
		s.BackupNamed == g.BackupNamed && sameList(s.BackedUpBy, g.BackedUpBy)
}

// sameList is reflect.DeepEqual of two lists of names.
func sameList(a, b []string) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}
