package broker

// The backup global entitlement (docs/resolve.md "Backup global
// entitlements"): when a floating desktop GE's search ends in NO_CAPACITY,
// its backup is searched from the same connecting pod and site.

import (
	"fmt"
	"strings"
)

// tryBackup runs the backup part after the primary's NO_CAPACITY (rs.d). It
// returns the primary's decision unchanged when there is no usable backup,
// and otherwise the backup's outcome, or NO_CAPACITY naming both searches.
func (rs *resolver) tryBackup() *Decision {
	name := rs.ge.Backup
	if name == "" {
		return rs.d
	}
	switch {
	case rs.geType != TypeDesktop || rs.dedicated:
		rs.warn("entitlement %s names backup %s, but only floating desktop entitlements have a backup; ignored", rs.ge.Name, name)
		return rs.d
	}
	b := rs.ix.entitlement(name)
	if b == nil {
		rs.warn("entitlement %s names backup %q, which does not exist; ignored", rs.ge.Name, name)
		return rs.d
	}
	if vs := BackupRule(rs.ge.BackupSide(), b.BackupSide()); len(vs) > 0 {
		problems := make([]string, len(vs))
		for i, v := range vs {
			problems[i] = v.Message
		}
		rs.warn("backup %s of %s is ignored: %s (run `cpactl lint`)", name, rs.ge.Name, strings.Join(problems, "; "))
		return rs.d
	}
	primary := *rs.d
	rep := &BackupReport{Entitlement: b.Name, Reason: fmt.Sprintf("%s: %s", rs.ge.Name, primary.Reason),
		Checks: []Check{}, Sessions: []SessionReport{}, SiteOrder: []SiteVisit{}}
	rs.trace("backup", "%s found no capacity; its backup entitlement %s is tried from the same connecting pod %s (site %s), with the backup's own scope, home-site, preferred-site and load settings and pools",
		rs.ge.Name, b.Name, rs.pod.Name, rs.site.Name)

	// Step 1 is the primary's, plus the backup's enabled flag and tags.
	bs := &resolver{ix: rs.ix, req: rs.req, user: rs.user, ge: b, cs: rs.cs, pod: rs.pod, site: rs.site, client: rs.client,
		searches: rs.searches, pre: rs.pre, lazy: rs.lazy}
	bs.req.Protocol = rs.protocol
	if err := bs.settle(); err != nil { // cannot happen: the protocol is one the primary accepted
		rs.warn("backup %s: %s; ignored", b.Name, err)
		return rs.d
	}
	for _, w := range bs.d.Warnings {
		rs.warn("backup %s: %s", b.Name, w)
	}
	bs.started = true
	check := func(name string, ok bool, detail string) bool {
		rep.Checks = append(rep.Checks, Check{Check: name, Passed: ok, Detail: detail})
		verdict := "passed"
		if !ok {
			verdict = "FAILED"
		}
		rs.trace("backup", "%s %s: %s", name, verdict, detail)
		return ok
	}
	enabled := fmt.Sprintf("backup %s is enabled", b.Name)
	if !b.Enabled {
		enabled = fmt.Sprintf("backup %s is disabled", b.Name)
	}
	tagsOK, tagsWhy := rs.tagCheck(b)
	if !check("enabled", b.Enabled, enabled) || !check("connection_server_tags", tagsOK, tagsWhy) {
		rep.Outcome, rep.Detail = OutcomeNoCapacity, rep.Checks[len(rep.Checks)-1].Detail
		rs.d.Backup = rep
		return rs.finish(OutcomeNoCapacity, "%s; backup %s cannot serve: %s", primary.Reason, b.Name, rep.Detail)
	}

	if b.UseHomeSite {
		h := rs.ix.resolveHomeSite(rs.user.Name, b.Name)
		bs.home = &h
		if h.Site != nil {
			bs.homeSite = rs.ix.site(*h.Site)
		}
	}
	var bd *Decision
	switch offered := bs.existingSessions(false); len(offered) {
	case 0:
		bs.traceHomeSite()
		bd = bs.search()
	case 1:
		bd = bs.reconnect(offered[0])
	default:
		bd = bs.chooseSession(offered)
	}
	for i, t := range bd.Trace {
		rs.trace("backup", "%s: %s", t.Step, bd.TraceMessage(i))
	}
	for _, w := range bd.Warnings { // traced in the backup part already
		if msg := fmt.Sprintf("backup %s: %s", b.Name, w); !containsString(rs.d.Warnings, msg) {
			rs.d.Warnings = append(rs.d.Warnings, msg)
		}
	}
	rep.Outcome, rep.Detail, rep.Sessions, rep.SiteOrder = bd.Outcome, bd.Reason, bd.Sessions, bd.SiteOrder
	rs.d.Backup = rep
	if bd.Outcome == OutcomeNoCapacity {
		return rs.finish(OutcomeNoCapacity, "%s; backup %s: %s", primary.Reason, b.Name, bd.Reason)
	}
	rs.d.Placement, rs.d.AutoClean = bd.Placement, bd.AutoClean
	return rs.finish(bd.Outcome, "from backup entitlement %s (%s found no capacity): %s", b.Name, rs.ge.Name, bd.Reason)
}

// containsString reports whether list holds s exactly.
func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
