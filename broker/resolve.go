package broker

// Resolve: the broker search of docs/resolve.md, step by step. The steps live in
// this file in the order the spec gives them; the site and pod search (steps
// 5-7) lives in search.go, loads in load.go, home sites in homesite.go.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cpactl/cpactl/internal/objkind"
)

// Request is one connection request to resolve.
type Request struct {
	// User and Entitlement name the user and the global entitlement.
	User, Entitlement string
	// ConnectionServer is the server the user connected through; its pod
	// and that pod's site are the connecting pod and site, and its tags are
	// matched in step 1. Exactly one of ConnectionServer and Pod is given.
	ConnectionServer string
	// Pod connects as if through a Connection Server of that pod with no
	// tags.
	Pod string
	// Client is the client computer, "" when not given.
	Client string
	// Protocol is the display protocol; "" means the GE's default protocol
	// (BLAST when the GE has none). Case-insensitive.
	Protocol Protocol
	// Unauthenticated asks for unauthenticated access: hosts must support
	// it. Only application GEs publish to unauthenticated users, so Resolve
	// returns a RequestError for a desktop GE rather than silently ignoring
	// the flag.
	Unauthenticated bool
	// OfflinePods are pods to treat as offline (what-if), in addition to
	// those stored as offline.
	OfflinePods []string
	// Seed seeds every random order (docs/resolve.md "Randomness").
	Seed int64
	// WhatIf lists the what-ifs in force (the offline pods among them),
	// as the caller laid them: the decision echoes them in what_if and the
	// trace names them.
	WhatIf []WhatIf
}

// Resolve dry-runs the broker's search for one connection request (docs/resolve.md)
// over the federation data f, and explains it.
//
// Errors, not outcomes: a *NotFoundError when the request names a user,
// global entitlement, Connection Server, pod, client computer or offline pod
// that does not exist (or the connecting pod's site is missing from f); a
// *RequestError for both or neither of ConnectionServer and Pod, connecting
// through an offline pod, an unknown protocol, or Unauthenticated on a
// desktop GE. Every other result, refusals included, is a Decision.
//
// f.Settings must hold the effective settings (DefaultSettings for the
// attributes cn=Common does not set). Resolve does not modify f.
func Resolve(f *Federation, r Request) (*Decision, error) { return ResolveWith(f, r, Prepared{}) }

// ResolveWith is Resolve, with the parts of pre standing for the index of
// f's sites and pods (Places, when it indexes f's very Sites and Pods
// slices with r.OfflinePods) and of its hosts (Hosts, when it indexes f's
// very Hosts slice); a part that is nil or does not fit is built anew. The
// decision is Resolve's either way: pre only saves indexing per call.
func ResolveWith(f *Federation, r Request, pre Prepared) (*Decision, error) {
	if f == nil {
		return nil, &RequestError{Message: "no federation data to resolve against"}
	}
	if (r.ConnectionServer == "") == (r.Pod == "") {
		return nil, &RequestError{
			Message: "give exactly one of a connection server and a pod to connect through",
			Hint:    "name the connection server the user reached, or a pod to connect as if through an untagged server of that pod",
		}
	}
	ix := indexWith(f, r.OfflinePods, pre) // unknown offline pods are reported below
	rs := &resolver{ix: ix, req: r, lazy: pre.LazyTrace}
	if pre.Searches != nil && pre.Places.fits(f, r.OfflinePods) && pre.Hosts != nil && sameSlice(pre.Hosts.hosts, f.Hosts) {
		rs.searches, rs.pre = pre.Searches, pre
	}
	if rs.user = ix.user(r.User); rs.user == nil {
		return nil, &NotFoundError{Kind: objkind.User, Name: r.User}
	}
	if rs.ge = ix.entitlement(r.Entitlement); rs.ge == nil {
		return nil, &NotFoundError{Kind: objkind.Entitlement, Name: r.Entitlement}
	}
	if r.ConnectionServer != "" {
		if rs.cs = ix.server(r.ConnectionServer); rs.cs == nil {
			return nil, &NotFoundError{Kind: objkind.ConnectionServer, Name: r.ConnectionServer}
		}
		if rs.pod = ix.pod(rs.cs.Pod); rs.pod == nil {
			return nil, &NotFoundError{Kind: objkind.Pod, Name: rs.cs.Pod}
		}
	} else if rs.pod = ix.pod(r.Pod); rs.pod == nil {
		return nil, &NotFoundError{Kind: objkind.Pod, Name: r.Pod}
	}
	if rs.site = ix.site(rs.pod.Site); rs.site == nil {
		// Not a name the request gave: the data is inconsistent (exit 1).
		return nil, &RequestError{
			Message: fmt.Sprintf("the connecting pod %s names site %q, which does not exist", rs.pod.Name, rs.pod.Site),
			Hint:    "run `cpactl lint` and move the pod to an existing site with `cpactl pod update POD --site SITE`",
		}
	}
	if r.Client != "" {
		if rs.client = ix.computer(r.Client); rs.client == nil {
			return nil, &NotFoundError{Kind: objkind.Computer, Name: r.Client}
		}
	}
	for _, p := range r.OfflinePods {
		if ix.pod(p) == nil {
			return nil, &NotFoundError{Kind: objkind.Pod, Name: p}
		}
	}
	if err := rs.settle(); err != nil {
		return nil, err
	}
	if rs.ix.isOffline(rs.pod.Name) {
		via := "pod " + rs.pod.Name
		if rs.cs != nil {
			via = fmt.Sprintf("connection server %s (pod %s)", rs.cs.Name, rs.pod.Name)
		}
		return nil, &RequestError{
			Message: fmt.Sprintf("cannot connect through %s: the pod is offline", via),
			Hint:    "pick a connection server of an online pod",
		}
	}
	return rs.run(), nil
}

// resolver carries one Resolve call.
type resolver struct {
	ix     *index
	req    Request
	user   *User
	ge     *Entitlement
	cs     *ConnectionServer // nil when connecting through a pod
	pod    *Pod              // connecting pod
	site   *Site             // connecting site
	client *Computer         // nil when not given

	// The GE's settings in force: defaults filled in, options that do not
	// apply to this kind of GE switched off (with a warning).
	geType             EntitlementType
	scope              Scope
	policy             Policy
	dedicated          bool
	requireHomeSite    bool
	ignoreHighLoad     bool
	autoClean          bool
	multipleSessions   bool
	clientRestrictions bool
	protocol           Protocol
	protocolSource     string

	home     *HomeSiteResolution // the user's home site for the GE, when it uses home sites
	homeSite *Site               // the home site that applies, nil when none
	visited  map[string]bool     // folded names of the sites searched (or found empty)
	started  bool                // the trace has begun: warnings are traced as they come
	d        *Decision

	searches *Searches // the caller's, when its Places and Hosts fit (pre)
	pre      Prepared
	lazy     bool // the trace is formatted as it is read (Prepared.LazyTrace)
}

// settle fills in the GE's defaults and the protocol, and rejects what the
// request cannot ask of this GE.
func (rs *resolver) settle() error {
	ge := rs.ge
	rs.d = &Decision{
		Checks:    make([]Check, 0, 4),
		SiteOrder: []SiteVisit{},
		Sessions:  []SessionReport{},
		Warnings:  []string{},
		Trace:     make([]TraceStep, 0, 32), // a search traces about 20-40 steps
		Seed:      rs.req.Seed,
		WhatIf:    append([]WhatIf{}, rs.req.WhatIf...),
	}
	if rs.lazy {
		rs.d.traceArgs = make([][]any, 0, 32)
	}
	rs.geType = EntitlementType(strings.ToUpper(string(ge.Type)))
	switch rs.geType {
	case TypeDesktop, TypeApplication:
	case "":
		rs.geType = TypeDesktop
	default:
		rs.warn("entitlement %s has unknown type %q; treated as DESKTOP", ge.Name, ge.Type)
		rs.geType = TypeDesktop
	}
	rs.scope = Scope(strings.ToUpper(string(ge.Scope)))
	switch rs.scope {
	case ScopeAny, ScopeSite, ScopeLocal:
	case "":
		rs.scope = ScopeAny
	default:
		rs.warn("entitlement %s has unknown scope %q; treated as ANY", ge.Name, ge.Scope)
		rs.scope = ScopeAny
	}
	var warning string
	if rs.policy, warning = policyOf(ge); warning != "" {
		rs.warn("%s", warning)
	}
	floatingDesktop := rs.geType == TypeDesktop && !ge.Dedicated
	rs.dedicated = ge.Dedicated
	if ge.Dedicated && rs.geType != TypeDesktop {
		rs.warn("entitlement %s is an application entitlement marked dedicated; dedicated applies to desktop entitlements only and is ignored", ge.Name)
		rs.dedicated = false
	}
	rs.requireHomeSite = ge.RequireHomeSite && ge.UseHomeSite
	if ge.RequireHomeSite && !ge.UseHomeSite {
		rs.warn("entitlement %s has Require Home Site without Use Home Site; Require Home Site is ignored", ge.Name)
	}
	rs.ignoreHighLoad = ge.IgnoreHighLoad && policyHasLoad(rs.policy)
	if ge.IgnoreHighLoad && !policyHasLoad(rs.policy) {
		rs.warn("entitlement %s has Ignore Preferred Sites with High Load but no session load distribution policy; the option is ignored (it needs LOAD or SESSION to measure a site's load)", ge.Name)
	}
	rs.autoClean = ge.AutoClean && (floatingDesktop || rs.geType == TypeApplication)
	if ge.AutoClean && !rs.autoClean {
		rs.warn("entitlement %s has automatic clean-up of redundant sessions, which applies only to floating desktop and application entitlements; ignored", ge.Name)
	}
	rs.multipleSessions = ge.MultipleSessionsPerUser && floatingDesktop
	if ge.MultipleSessionsPerUser && !rs.multipleSessions {
		rs.warn("entitlement %s has multiple sessions per user, which applies only to floating desktop entitlements; ignored", ge.Name)
	}
	rs.clientRestrictions = ge.ClientRestrictions && (floatingDesktop || rs.geType == TypeApplication)
	if ge.ClientRestrictions && !rs.clientRestrictions {
		rs.warn("entitlement %s has client restrictions, which apply only to floating desktop and application entitlements; ignored", ge.Name)
	}

	switch {
	case rs.req.Protocol != "":
		rs.protocol, rs.protocolSource = Protocol(strings.ToUpper(string(rs.req.Protocol))), "requested"
	case ge.DefaultProtocol != "":
		rs.protocol, rs.protocolSource = Protocol(strings.ToUpper(string(ge.DefaultProtocol))), "the entitlement's default protocol"
	default:
		rs.protocol, rs.protocolSource = ProtocolBlast, "the entitlement names no default protocol; Horizon's default"
	}
	switch rs.protocol {
	case ProtocolBlast, ProtocolPCoIP, ProtocolRDP:
	default:
		if rs.req.Protocol != "" {
			return &RequestError{Message: fmt.Sprintf("unknown protocol %q", rs.req.Protocol), Hint: "use blast, pcoip or rdp"}
		}
		rs.warn("entitlement %s has unknown default protocol %q; BLAST is used", ge.Name, ge.DefaultProtocol)
		rs.protocol, rs.protocolSource = ProtocolBlast, "the entitlement's default protocol is unknown; Horizon's default"
	}
	if rs.req.Unauthenticated && rs.geType != TypeApplication {
		return &RequestError{
			Message: fmt.Sprintf("unauthenticated access applies to application entitlements only, and %s is a desktop entitlement", ge.Name),
			Hint:    "drop the unauthenticated option, or resolve an application entitlement",
		}
	}
	return nil
}

// trace appends a line to the trace: formatted now, or with
// Prepared.LazyTrace the format and its arguments kept for
// Decision.TraceMessage (every argument is a value that does not change
// afterwards: a string, a number or a flag).
func (rs *resolver) trace(step, format string, args ...any) {
	if rs.lazy && len(args) > 0 {
		rs.d.Trace = append(rs.d.Trace, TraceStep{Step: step, Message: format})
		rs.d.traceArgs = append(rs.d.traceArgs, args)
		return
	}
	rs.addStep(step, fmt.Sprintf(format, args...))
}

// addStep appends a line whose message is already written to the trace.
func (rs *resolver) addStep(step, message string) {
	rs.d.Trace = append(rs.d.Trace, TraceStep{Step: step, Message: message})
	if rs.lazy {
		rs.d.traceArgs = append(rs.d.traceArgs, nil)
	}
}

// warn records a warning (once) and traces it.
func (rs *resolver) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, w := range rs.d.Warnings {
		if w == msg {
			return
		}
	}
	rs.d.Warnings = append(rs.d.Warnings, msg)
	if rs.started {
		rs.trace("warning", "%s", msg)
	}
}

// finish sets the outcome and its one-sentence reason, and traces it.
func (rs *resolver) finish(o Outcome, format string, args ...any) *Decision {
	rs.d.Outcome = o
	rs.d.Reason = fmt.Sprintf(format, args...)
	rs.trace("outcome", "%s: %s", o, rs.d.Reason)
	return rs.d
}

// run performs steps 1-7.
func (rs *resolver) run() *Decision {
	rs.describeRequest()
	if len(rs.req.WhatIf) > 0 {
		rs.trace("what_if", "what-ifs in force, laid over the directory in memory (nothing is written): %s", DescribeWhatIfs(rs.req.WhatIf))
	}
	for _, w := range rs.d.Warnings { // found while settling the GE's options
		rs.trace("warning", "%s", w)
	}
	rs.started = true
	if rs.ge.UseHomeSite {
		h := rs.ix.resolveHomeSite(rs.user.Name, rs.ge.Name)
		rs.home = &h
		if h.Site != nil {
			rs.homeSite = rs.ix.site(*h.Site)
		}
	}
	rs.fillHomeSiteReport()

	denial := rs.checkEntitlement() // step 1
	offered := rs.existingSessions(denial != "")
	assignment := rs.findAssignment(denial != "")
	rs.redirection()
	if denial != "" {
		return rs.finish(OutcomeDenied, "%s", denial)
	}

	// Step 2, then an application's existing RDS session of another GE.
	switch len(offered) {
	case 0:
		if d := rs.sharedSession(); d != nil {
			return d
		}
	case 1:
		return rs.reconnect(offered[0])
	default:
		return rs.chooseSession(offered)
	}

	// Step 3.
	if assignment != nil {
		return rs.assigned(assignment)
	}

	// Step 4, then 5-7; NO_CAPACITY tries the backup GE.
	rs.traceHomeSite()
	if d := rs.search(); d.Outcome != OutcomeNoCapacity {
		return d
	}
	return rs.tryBackup()
}

// describeRequest echoes the request and traces it.
func (rs *resolver) describeRequest() {
	ge := rs.ge
	sum := RequestSummary{
		User:            rs.user.Name,
		Entitlement:     ge.Name,
		EntitlementType: rs.geType,
		Scope:           rs.scope,
		Policy:          rs.policy,
		Dedicated:       rs.dedicated,
		ConnectingPod:   rs.pod.Name,
		ConnectingSite:  rs.site.Name,
		Protocol:        rs.protocol,
		Unauthenticated: rs.req.Unauthenticated,
		OfflinePods:     append([]string{}, rs.ix.offlineNames...),
	}
	if rs.cs != nil {
		sum.ConnectionServer = rs.cs.Name
	}
	if rs.client != nil {
		sum.Client = rs.client.Name
	}
	rs.d.Request = sum

	kind := "floating"
	if rs.dedicated {
		kind = "dedicated"
	}
	if rs.geType == TypeApplication {
		kind = "application"
	}
	// "... through VIA, connecting site S", VIA written by the format.
	if rs.cs != nil {
		rs.trace("request", "%s asks for %s (%s entitlement, scope %s, policy %s) through connection server %s (%s) in pod %s, connecting site %s",
			rs.user.Name, ge.Name, kind, rs.scope, rs.policy, rs.cs.Name, tagList(rs.cs.Tags), rs.pod.Name, rs.site.Name)
	} else {
		rs.trace("request", "%s asks for %s (%s entitlement, scope %s, policy %s) through pod %s (as if through a connection server without tags), connecting site %s",
			rs.user.Name, ge.Name, kind, rs.scope, rs.policy, rs.pod.Name, rs.site.Name)
	}
	rs.trace("request", "protocol %s (%s); unauthenticated %t; client %s; seed %d",
		rs.protocol, rs.protocolSource, rs.req.Unauthenticated, orNone(sum.Client), rs.req.Seed)
	if rs.ix.offlineLine != "" {
		rs.addStep("request", rs.ix.offlineLine)
	}
}

// checkEntitlement is step 1. It records every check and returns the reason
// of the first failure, or "" when the user may use the GE.
func (rs *resolver) checkEntitlement() string {
	ge, user := rs.ge, rs.user
	var denial string
	check := func(name string, passed bool, format string, args ...any) {
		c := Check{Check: name, Passed: passed, Detail: fmt.Sprintf(format, args...)}
		rs.d.Checks = append(rs.d.Checks, c)
		verdict := "passed"
		if !passed {
			verdict = "FAILED"
			if denial == "" {
				denial = c.Detail
			}
		}
		rs.trace("entitlement", "%s %s: %s", name, verdict, c.Detail)
	}

	if ge.Enabled {
		check("enabled", true, "entitlement %s is enabled", ge.Name)
	} else {
		check("enabled", false, "entitlement %s is disabled", ge.Name)
	}

	if direct, chain, ok := rs.ix.userEntitlement(ge, user); !ok {
		check("membership", false, "%s is not a member of %s, directly or through nested groups (immediate groups: %s)",
			user.Name, ge.Name, listOrNone(sortedCopy(user.Groups)))
	} else if direct {
		check("membership", true, "%s is a direct member of %s", user.Name, ge.Name)
	} else {
		check("membership", true, "%s is a member of %s through group %s", user.Name, ge.Name, strings.Join(chain, " → "))
	}

	tagsOK, tagsWhy := rs.tagCheck(ge)
	check("connection_server_tags", tagsOK, "%s", tagsWhy)

	if rs.clientRestrictions {
		switch {
		case rs.client == nil:
			check("client_restrictions", false, "%s has client restrictions and no client computer was given", ge.Name)
		default:
			if chain := rs.ix.computerEntitlement(ge, rs.client); chain != nil {
				check("client_restrictions", true, "client computer %s is a member of %s through group %s",
					rs.client.Name, ge.Name, strings.Join(chain, " → "))
			} else {
				check("client_restrictions", false, "%s has client restrictions and client computer %s is not in a group entitled to it (its groups: %s)",
					ge.Name, rs.client.Name, listOrNone(sortedCopy(rs.client.Groups)))
			}
		}
	}

	if rs.requireHomeSite {
		if rs.home.Site != nil {
			check("require_home_site", true, "%s requires a home site and %s has one: %s (%s)", ge.Name, user.Name, *rs.home.Site, rs.home.Source)
		} else {
			check("require_home_site", false, "%s requires a home site and %s has none for it (Horizon offers such an entitlement only to users with a home site)", ge.Name, user.Name)
		}
	}
	return denial
}

// tagCheck is step 1's Connection Server restriction tags check for ge:
// whether the connecting server may broker it, and why.
func (rs *resolver) tagCheck(ge *Entitlement) (bool, string) {
	switch ok, shared := tagsMatch(ge.Tags, rs.serverTags()); {
	case len(ge.Tags) == 0:
		return true, fmt.Sprintf("%s has no restriction tags: any connection server may broker it", ge.Name)
	case ok:
		return true, fmt.Sprintf("connection server %s shares tag(s) %s with %s (restricted to %s)",
			rs.cs.Name, strings.Join(shared, ", "), ge.Name, strings.Join(ge.Tags, ", "))
	case rs.cs == nil:
		return false, fmt.Sprintf("%s is restricted to tags %s, and connecting through pod %s counts as a connection server without tags, which cannot broker it",
			ge.Name, strings.Join(ge.Tags, ", "), rs.pod.Name)
	case len(rs.cs.Tags) == 0:
		return false, fmt.Sprintf("%s is restricted to tags %s, and connection server %s has no tags, so it cannot broker it",
			ge.Name, strings.Join(ge.Tags, ", "), rs.cs.Name)
	default:
		return false, fmt.Sprintf("%s is restricted to tags %s, and connection server %s has none of them (it has %s)",
			ge.Name, strings.Join(ge.Tags, ", "), rs.cs.Name, strings.Join(rs.cs.Tags, ", "))
	}
}

// serverTags are the connecting server's tags (none when connecting through
// a pod).
func (rs *resolver) serverTags() []string {
	if rs.cs == nil {
		return nil
	}
	return rs.cs.Tags
}

// inScope reports whether pod p is one of the scope pods: LOCAL the
// connecting pod, SITE the pods of the connecting site, ANY every pod.
func (rs *resolver) inScope(p *Pod) bool {
	switch rs.scope {
	case ScopeLocal:
		return strings.EqualFold(p.Name, rs.pod.Name)
	case ScopeSite:
		return strings.EqualFold(p.Site, rs.site.Name)
	}
	return true
}

// scopeWords describes the scope pods.
func (rs *resolver) scopeWords() string {
	switch rs.scope {
	case ScopeLocal:
		return fmt.Sprintf("LOCAL: only the connecting pod %s", rs.pod.Name)
	case ScopeSite:
		return fmt.Sprintf("SITE: only the pods of the connecting site %s", rs.site.Name)
	}
	return "ANY: every pod"
}

// existingSessions is step 2: it lists the user's sessions of this GE with
// what became of each, and returns the ones that count. When the user was
// denied in step 1 none counts.
func (rs *resolver) existingSessions(denied bool) []*Session {
	var mine []*Session
	for i := range rs.ix.f.Sessions {
		if s := &rs.ix.f.Sessions[i]; strings.EqualFold(s.User, rs.user.Name) && strings.EqualFold(s.Entitlement, rs.ge.Name) {
			mine = append(mine, s)
		}
	}
	if len(mine) == 0 {
		rs.trace("sessions", "%s has no session of %s", rs.user.Name, rs.ge.Name)
		return nil
	}
	// By ID, then pod, in name order (stable: the federation's order
	// breaks the remaining ties).
	less := func(a, b *Session) bool {
		if !strings.EqualFold(a.ID, b.ID) {
			return nameLess(a.ID, b.ID)
		}
		return nameLess(a.Pod, b.Pod)
	}
	sortSessions(mine, less)
	var offered []*Session
	rs.d.Sessions = slices.Grow(rs.d.Sessions, len(mine))
	for _, s := range mine {
		rep := SessionReport{ID: s.ID, Pod: s.Pod, Pool: s.Pool, Host: s.Host, State: s.State, Client: s.Client}
		pod := rs.ix.pod(s.Pod)
		if pod != nil {
			rep.Pod, rep.Site = pod.Name, pod.Site
			if site := rs.ix.site(pod.Site); site != nil {
				rep.Site = site.Name
			}
		}
		if p := rs.ix.pool(s.Pool); p != nil {
			rep.Pool = p.Name
		}
		switch {
		case pod == nil:
			rep.Status, rep.Detail = SessionUnknownPod, fmt.Sprintf("pod %q is not in the federation; ignored", s.Pod)
		case rs.ix.isOffline(pod.Name):
			rep.Status, rep.Detail = SessionIgnoredOffline, fmt.Sprintf("pod %s is offline; ignored", pod.Name)
		case !rs.inScope(pod):
			rep.Status, rep.Detail = SessionOutOfScope, fmt.Sprintf("pod %s is outside the scope (%s); not offered", pod.Name, rs.scopeWords())
		case rs.multipleSessions && rs.client == nil:
			rep.Status, rep.Detail = SessionOtherClient, "multiple sessions per user: no client computer given, so the request is a new device and no session counts"
		case rs.multipleSessions && !strings.EqualFold(s.Client, rs.client.Name):
			rep.Status, rep.Detail = SessionOtherClient, fmt.Sprintf("multiple sessions per user: recorded with client %s, not %s", orNone(s.Client), rs.client.Name)
		case denied:
			rep.Status, rep.Detail = SessionDenied, "in scope, but not offered: the user is denied in step 1"
		default:
			rep.Status, rep.Detail = SessionOffered, "in scope; offered"
			offered = append(offered, s)
		}
		rs.d.Sessions = append(rs.d.Sessions, rep)
		rs.trace("sessions", "session %s (%s, pod %s, pool %s%s): %s", orNone(s.ID), s.State, rep.Pod, rep.Pool, hostSuffix(s.Host), rep.Detail)
	}
	return offered
}

// hostSuffix renders ", host H" or "".
func hostSuffix(h string) string {
	if h == "" {
		return ""
	}
	return ", host " + h
}

// reconnect is the outcome of one offered session.
func (rs *resolver) reconnect(s *Session) *Decision {
	pl := &Placement{Pod: s.Pod, Pool: s.Pool, Host: s.Host, Session: s.ID}
	if pod := rs.ix.pod(s.Pod); pod != nil {
		pl.Pod, pl.Site = pod.Name, pod.Site
		if site := rs.ix.site(pod.Site); site != nil {
			pl.Site = site.Name
		}
	}
	if p := rs.ix.pool(s.Pool); p != nil {
		pl.Pool = p.Name
		if p.Kind.FarmBacked() {
			pl.Farm = p.Farm
			if fm := rs.ix.farm(p.Farm); fm != nil {
				pl.Farm = fm.Name
			}
		}
	}
	rs.d.Placement = pl
	return rs.finish(OutcomeReconnect, "%s reconnects to the existing %s session %s on pod %s (site %s)",
		rs.user.Name, strings.ToLower(string(s.State)), orNone(s.ID), pl.Pod, pl.Site)
}

// chooseSession is the outcome of several offered sessions.
func (rs *resolver) chooseSession(ss []*Session) *Decision {
	clean := rs.autoClean
	rs.d.AutoClean = &clean
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	after := "the others are left for manual logoff"
	if clean {
		after = "the others are logged off automatically (automatic clean-up of redundant sessions)"
	}
	return rs.finish(OutcomeChooseSession, "%s has %d sessions of %s in scope (%s): Horizon Client asks which one, and %s",
		rs.user.Name, len(ss), rs.ge.Name, strings.Join(ids, ", "), after)
}

// findAssignment looks up the user's pod assignment for the GE (step 3)
// and traces it. It returns the assignment when a dedicated GE holds one.
func (rs *resolver) findAssignment(denied bool) *Assignment {
	var found []Assignment
	for _, a := range rs.ix.f.Assignments {
		if strings.EqualFold(a.User, rs.user.Name) && strings.EqualFold(a.Entitlement, rs.ge.Name) {
			found = append(found, a)
		}
	}
	if len(found) == 0 {
		if rs.dedicated {
			rs.trace("assignment", "%s has no pod assignment for %s yet: the search below allocates one", rs.user.Name, rs.ge.Name)
		}
		return nil
	}
	sort.SliceStable(found, func(i, j int) bool { return nameLess(found[i].Pod, found[j].Pod) })
	a := found[0]
	if pod := rs.ix.pod(a.Pod); pod != nil {
		a.Pod = pod.Name
	}
	if !rs.dedicated {
		rs.trace("assignment", "a pod assignment of %s on pod %s is recorded, but %s is not dedicated; ignored", rs.user.Name, a.Pod, rs.ge.Name)
		return nil
	}
	if len(found) > 1 {
		rs.warn("%s has %d pod assignments for %s; the one on pod %s (first by name) is used", rs.user.Name, len(found), rs.ge.Name, a.Pod)
	}
	rs.d.Assignment = &a
	if denied {
		rs.trace("assignment", "%s is assigned to pod %s%s, but is denied in step 1", rs.user.Name, a.Pod, machineSuffix(a.Machine))
	}
	return &a
}

// machineSuffix renders ", machine M" or "".
func machineSuffix(m string) string {
	if m == "" {
		return ""
	}
	return ", machine " + m
}

// assigned is step 3's outcome: the assigned pod, or UNAVAILABLE when it is
// offline (no second assignment is made). The assignment ignores scope.
func (rs *resolver) assigned(a *Assignment) *Decision {
	pod := rs.ix.pod(a.Pod)
	if pod == nil {
		rs.trace("assignment", "%s is assigned to pod %q, which is not in the federation", rs.user.Name, a.Pod)
		return rs.finish(OutcomeUnavailable, "%s's pod assignment for %s is on pod %q, which does not exist; no second assignment is made",
			rs.user.Name, rs.ge.Name, a.Pod)
	}
	if rs.ix.isOffline(pod.Name) {
		rs.trace("assignment", "%s is assigned to pod %s%s, which is offline; a dedicated user gets no second assignment", rs.user.Name, pod.Name, machineSuffix(a.Machine))
		return rs.finish(OutcomeUnavailable, "%s's pod assignment for %s is on pod %s, which is offline, and no second assignment is made",
			rs.user.Name, rs.ge.Name, pod.Name)
	}
	site := pod.Site
	if s := rs.ix.site(pod.Site); s != nil {
		site = s.Name
	}
	rs.d.Placement = &Placement{Site: site, Pod: pod.Name, Machine: a.Machine}
	rs.trace("assignment", "%s is assigned to pod %s%s: straight there, scope and home site play no part", rs.user.Name, pod.Name, machineSuffix(a.Machine))
	return rs.finish(OutcomeAssigned, "%s goes straight back to the assigned pod %s (site %s)%s",
		rs.user.Name, pod.Name, site, machineSuffix(a.Machine))
}

// fillHomeSiteReport fills the home-site part of the decision.
func (rs *resolver) fillHomeSiteReport() {
	rep := HomeSiteReport{
		Source:      SourceConnectingSite,
		Conflicts:   []HomeSiteConflict{},
		UseHomeSite: rs.ge.UseHomeSite,
		Rows:        []HomeSiteRow{},
	}
	if rs.home != nil {
		rep.Conflicts, rep.Rows = rs.home.Conflicts, rs.home.Rows
		if rs.home.Site != nil {
			site := *rs.home.Site
			rep.Site, rep.Source = &site, rs.home.Source
			rep.OutsideScope = rs.scope != ScopeAny && !strings.EqualFold(site, rs.site.Name)
		}
	}
	rs.d.HomeSite = rep
}

// traceHomeSite is step 4's trace.
func (rs *resolver) traceHomeSite() {
	if !rs.ge.UseHomeSite {
		rs.trace("home_site", "%s does not use home sites: they play no part; the search starts at the connecting site %s", rs.ge.Name, rs.site.Name)
		return
	}
	for _, r := range rs.home.Rows {
		scope := "global"
		if r.Entitlement != nil {
			scope = "override for " + *r.Entitlement
		}
		if r.Won {
			rs.trace("home_site", "%s %s → %s (%s, %s): wins", r.Kind, r.Name, r.Site, scope, r.Level)
		} else {
			rs.trace("home_site", "%s %s → %s (%s, %s): loses, %s", r.Kind, r.Name, r.Site, scope, r.Level, r.LostBecause)
		}
	}
	for _, c := range rs.home.Conflicts {
		var parts []string
		for _, g := range c.Groups {
			parts = append(parts, g.Group+" → "+g.Site)
		}
		effect := "outranked by a higher level, no effect"
		if c.Decisive {
			effect = "decides the home site"
		}
		rs.trace("home_site", "conflict at %s: %s; group %s sorts first, site %s (%s)", c.Level, strings.Join(parts, ", "), c.WinningGroup, c.Site, effect)
	}
	if rs.home.Site == nil {
		rs.trace("home_site", "%s has no home site for %s: the connecting site %s serves (CONNECTING_SITE)", rs.user.Name, rs.ge.Name, rs.site.Name)
		return
	}
	rs.trace("home_site", "home site %s (%s): the search starts there", *rs.home.Site, rs.home.Source)
}

// redirection reports Home Site Redirection when pae-EnableSiteRedirection
// is 1. Redirection happens when the user logs in, before any entitlement is
// chosen, so it follows the user's global home site (ResolveHomeSite with no
// entitlement), not a per-GE override; the search shown stays the one for
// the original connection.
func (rs *resolver) redirection() {
	if !rs.ix.f.Settings.EnableSiteRedirection {
		return
	}
	global := rs.ix.resolveHomeSite(rs.user.Name, "")
	red := &Redirection{}
	switch {
	case global.Site == nil:
		red.Detail = fmt.Sprintf("%s has no global home site: no redirection", rs.user.Name)
	case strings.EqualFold(*global.Site, rs.site.Name):
		red.Detail = fmt.Sprintf("%s connected to the home site %s: no redirection", rs.user.Name, rs.site.Name)
	default:
		site := *global.Site
		red.WouldRedirect, red.ToSite = true, &site
		red.Detail = fmt.Sprintf("%s's global home site is %s but the connection reached %s: Horizon would redirect the client to %s; the search below is still the one for the original connection",
			rs.user.Name, site, rs.site.Name, site)
	}
	rs.d.HomeSiteRedirection = red
	rs.trace("redirection", "home site redirection is on (pae-EnableSiteRedirection 1): %s", red.Detail)
}

// tagList renders a server's tags.
func tagList(tags []string) string {
	if len(tags) == 0 {
		return "no tags"
	}
	return "tags " + strings.Join(tags, ", ")
}

// orNone renders "" as "none".
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// listOrNone renders a list, or "none".
func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// sortedCopy returns names in name order, leaving names untouched.
func sortedCopy(names []string) []string {
	out := append([]string(nil), names...)
	sortNames(out)
	return out
}

// policyOf is ge's Session Load Distribution policy as the broker applies
// it: NONE when unset, and NONE with a warning when unknown.
func policyOf(ge *Entitlement) (Policy, string) {
	p := Policy(strings.ToUpper(string(ge.Policy)))
	switch p {
	case PolicyNone, PolicyLoad, PolicySession:
		return p, ""
	case "":
		return PolicyNone, ""
	}
	return PolicyNone, fmt.Sprintf("entitlement %s has unknown session load distribution policy %q; treated as NONE", ge.Name, ge.Policy)
}
