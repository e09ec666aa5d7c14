package broker

// The result of Resolve and its errors. The JSON field names are a stable
// contract (docs/conventions.md), pinned by TestDecisionJSONShape.

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/cpactl/cpactl/internal/nearest"
	"github.com/cpactl/cpactl/quote"
)

// Outcome is what a connection request would get.
type Outcome string

// Outcome values (docs/resolve.md).
const (
	// OutcomePlaced: a new session at site/pod/pool[/farm/host].
	OutcomePlaced Outcome = "PLACED"
	// OutcomeReconnect: back to the one existing session.
	OutcomeReconnect Outcome = "RECONNECT"
	// OutcomeChooseSession: several existing sessions; the client asks the
	// user which one.
	OutcomeChooseSession Outcome = "CHOOSE_SESSION"
	// OutcomeAssigned: a dedicated user goes straight back to the assigned
	// pod (and machine).
	OutcomeAssigned Outcome = "ASSIGNED"
	// OutcomeDenied: the user or GE refuses the request (not entitled,
	// filtered by tags or client restrictions, disabled, or a required home
	// site is missing).
	OutcomeDenied Outcome = "DENIED"
	// OutcomeUnavailable: the dedicated assignment is on an offline pod; no
	// second assignment is made.
	OutcomeUnavailable Outcome = "UNAVAILABLE"
	// OutcomeNoCapacity: nothing in scope can take the session.
	OutcomeNoCapacity Outcome = "NO_CAPACITY"
)

// GetsSession reports whether the user would get a session (the CLI exits 0
// for these outcomes, 6 for the others).
func (o Outcome) GetsSession() bool {
	switch o {
	case OutcomePlaced, OutcomeReconnect, OutcomeChooseSession, OutcomeAssigned:
		return true
	}
	return false
}

// Tier is the stage of the site search at which a site is considered.
type Tier string

// Tier values (docs/resolve.md step 5).
const (
	TierStarting   Tier = "starting"   // the home site, or the connecting site when none applies
	TierConnecting Tier = "connecting" // the connecting site, when the search started elsewhere
	TierPreferred  Tier = "preferred"  // the connecting site's preferred sites, in rank order
	TierRemaining  Tier = "remaining"  // every other site with an available pool
)

// SessionStatus says what became of an existing session in step 2.
type SessionStatus string

// SessionStatus values.
const (
	SessionOffered        SessionStatus = "offered"         // counts: reconnect or choose
	SessionIgnoredOffline SessionStatus = "ignored_offline" // its pod is offline
	SessionOutOfScope     SessionStatus = "out_of_scope"    // its pod is outside the GE's scope
	SessionOtherClient    SessionStatus = "other_client"    // multiple sessions per user: another client computer
	SessionUnknownPod     SessionStatus = "unknown_pod"     // its pod is not in the federation
	SessionDenied         SessionStatus = "denied"          // would count, but step 1 denied the user
)

// Pool and pod statuses in the search listing.
const (
	StatusPlaced      = "placed"      // this pool took the session
	StatusFull        = "full"        // no room
	StatusNoHost      = "no_host"     // the farm yields no host for the request
	StatusUnavailable = "unavailable" // not available (see docs/resolve.md) or unfit for this GE
	StatusNotTried    = "not_tried"   // a pool earlier in the order took the session
	StatusSearched    = "searched"    // a pod whose pools were tried
	StatusSkipped     = "skipped"     // a pod not searched, see skip_reason
	StatusNotReached  = "not_reached" // a pod after the one that took the session
)

// Decision is the answer of Resolve: the outcome, where the session lands,
// and everything the broker looked at on the way.
type Decision struct {
	Outcome Outcome `json:"outcome"` // what the request gets
	// Reason explains the outcome in one sentence.
	Reason string `json:"reason"`
	// Request echoes the request as resolved: stored spellings, the
	// connecting pod and site, the protocol in force.
	Request RequestSummary `json:"request"`
	// Placement is set for PLACED, ASSIGNED and RECONNECT; null otherwise.
	Placement *Placement `json:"placement"`
	// Checks are the step-1 entitlement checks, in order.
	Checks   []Check        `json:"checks"`
	HomeSite HomeSiteReport `json:"home_site"` // step 4: the user's home site for this GE
	// HomeSiteRedirection is reported when pae-EnableSiteRedirection is 1;
	// null otherwise.
	HomeSiteRedirection *Redirection `json:"home_site_redirection"`
	// SiteOrder lists the sites in the order considered, each with the pods,
	// pools and hosts looked at there.
	SiteOrder []SiteVisit `json:"site_order"`
	// Sessions are the user's existing sessions of this GE, each with what
	// step 2 made of it.
	Sessions []SessionReport `json:"sessions"`
	// AutoClean is set for CHOOSE_SESSION only: whether the sessions the user
	// does not pick are logged off automatically.
	AutoClean *bool `json:"auto_clean,omitempty"`
	// Assignment is the user's pod assignment for a dedicated GE, when one
	// exists.
	Assignment *Assignment `json:"assignment"`
	// Warnings report data the broker ignored or found inconsistent.
	Warnings []string    `json:"warnings"`
	Trace    []TraceStep `json:"trace"` // every step, in order
	// WhatIf lists the what-ifs in force ([] when none).
	WhatIf []WhatIf `json:"what_if"`
	Seed   int64    `json:"seed"` // the seed of every random order
	// Backup is set when the GE's search ended in NO_CAPACITY and its backup
	// entitlement was tried (docs/resolve.md "Backup global entitlements").
	Backup *BackupReport `json:"backup,omitempty"`
	// SharedSession is set for a RECONNECT of an application GE into the
	// user's session of another application GE on the same farm
	// (docs/resolve.md "Applications in an existing RDS session").
	SharedSession *SharedSession `json:"shared_session,omitempty"`

	// traceArgs is set when the trace is formatted as it is read
	// (Prepared.LazyTrace): for each step the arguments of its message,
	// whose Message is then the format; nil for a step whose Message is
	// its text.
	traceArgs [][]any
}

// TraceMessage returns the message of trace step i. It is Trace[i].Message,
// formatted first when the decision was resolved with Prepared.LazyTrace.
func (d *Decision) TraceMessage(i int) string {
	if d.traceArgs != nil && d.traceArgs[i] != nil {
		return fmt.Sprintf(d.Trace[i].Message, d.traceArgs[i]...)
	}
	return d.Trace[i].Message
}

// SameTraceStep reports whether step i of a's trace and step j of b's
// say the same (TraceStep and TraceMessage). Steps formatted as read
// from the same format with equal arguments of kinds that print one way
// (strings, integers, booleans) are the same without being formatted.
func SameTraceStep(a *Decision, i int, b *Decision, j int) bool {
	sa, sb := a.Trace[i], b.Trace[j]
	if sa.Step != sb.Step {
		return false
	}
	var xa, xb []any
	if a.traceArgs != nil {
		xa = a.traceArgs[i]
	}
	if b.traceArgs != nil {
		xb = b.traceArgs[j]
	}
	if xa == nil && xb == nil {
		return sa.Message == sb.Message
	}
	if xa != nil && xb != nil && sa.Message == sb.Message && sameArgs(xa, xb) {
		return true
	}
	return a.TraceMessage(i) == b.TraceMessage(j)
}

// sameArgs reports whether two argument lists are equal, each argument of
// a kind that formats one way only: equal lists then format alike under
// one format.
func sameArgs(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		ta, tb := reflect.TypeOf(a[k]), reflect.TypeOf(b[k])
		if ta != tb || ta == nil {
			return false
		}
		switch ta.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return false
		}
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// BackupReport is the backup part of a Decision.
type BackupReport struct {
	Entitlement string `json:"entitlement"` // the backup GE's stored name
	// Reason says why the backup was tried: the primary's NO_CAPACITY.
	Reason string `json:"reason"`
	// Outcome and Detail are what the backup's own search gave.
	Outcome Outcome `json:"outcome"`
	Detail  string  `json:"detail"`
	// Checks are the backup's own step-1 checks (enabled, Connection
	// Server tags); SiteOrder and Sessions its search.
	Checks    []Check         `json:"checks"`
	Sessions  []SessionReport `json:"sessions"`
	SiteOrder []SiteVisit     `json:"site_order"`
}

// SharedSession names the session of another application GE that a
// RECONNECT reuses.
type SharedSession struct {
	Entitlement string `json:"entitlement"` // the GE the session was started for
	Session     string `json:"session"`     // the session ID
}

// RequestSummary is the request as Resolve understood it.
type RequestSummary struct {
	User             string          `json:"user"`                        // the user's stored name
	Entitlement      string          `json:"entitlement"`                 // the GE's stored name
	EntitlementType  EntitlementType `json:"entitlement_type"`            // DESKTOP or APPLICATION
	Scope            Scope           `json:"scope"`                       // the GE's scope in force (default ANY)
	Policy           Policy          `json:"policy"`                      // the GE's load distribution policy in force (default NONE)
	Dedicated        bool            `json:"dedicated"`                   // a dedicated desktop GE
	ConnectionServer string          `json:"connection_server,omitempty"` // omitted when connecting through a pod
	ConnectingPod    string          `json:"connecting_pod"`              // the connection server's pod, or the pod given
	ConnectingSite   string          `json:"connecting_site"`             // the connecting pod's site
	Client           string          `json:"client,omitempty"`            // the client computer, omitted when not given
	Protocol         Protocol        `json:"protocol"`                    // the protocol in force (asked, or the GE's default)
	Unauthenticated  bool            `json:"unauthenticated"`             // unauthenticated access asked
	// OfflinePods are the pods treated as offline: stored offline ones and
	// the what-if ones, in name order.
	OfflinePods []string `json:"offline_pods"`
}

// Placement is where the session goes.
type Placement struct {
	Site string `json:"site"`           // the pod's site
	Pod  string `json:"pod"`            // the pod that hosts the session
	Pool string `json:"pool,omitempty"` // omitted for ASSIGNED
	// Farm, Host and EligibleHosts are set for farm-backed pools (and Host
	// for a RECONNECT to an RDS session).
	Farm          string   `json:"farm,omitempty"`
	Host          string   `json:"host,omitempty"`           // the RDS host
	EligibleHosts []string `json:"eligible_hosts,omitempty"` // the serving bucket in serving order (bucket 1: rotation order)
	// Machine is the assigned machine of an ASSIGNED outcome, when known.
	Machine string `json:"machine,omitempty"`
	// Session is the ID of the session a RECONNECT goes back to.
	Session string `json:"session,omitempty"`
	// BecomesAssignment is set on a PLACED for a dedicated GE: the pod
	// becomes the user's pod assignment.
	BecomesAssignment bool `json:"becomes_assignment,omitempty"`
	// HostSelection is the farm's host selection (docs/storm.md) for a PLACED on
	// a farm-backed pool.
	HostSelection *HostSelection `json:"host_selection,omitempty"`
}

// Check is one step-1 entitlement check.
type Check struct {
	Check  string `json:"check"`  // enabled, membership, connection_server_tags, client_restrictions, require_home_site (a backup: enabled, connection_server_tags)
	Passed bool   `json:"passed"` // false denies the request
	Detail string `json:"detail"` // what was checked and found
}

// HomeSiteReport is the home-site part of a Decision.
type HomeSiteReport struct {
	// Site is the user's home site for this GE; null when none applies
	// (or the GE does not use home sites).
	Site *string `json:"site"`
	// Source is the winning row's level, or CONNECTING_SITE.
	Source    HomeSiteSource     `json:"source"`
	Conflicts []HomeSiteConflict `json:"conflicts"` // group conflicts, see HomeSiteConflict
	// UseHomeSite is the GE's Use Home Site: without it home sites play no
	// part and Rows is empty.
	UseHomeSite bool `json:"use_home_site"`
	// OutsideScope is set when the home site lies outside a LOCAL or SITE
	// scope: it is not searched (it still satisfies Require Home Site).
	OutsideScope bool          `json:"outside_scope"`
	Rows         []HomeSiteRow `json:"rows"` // every row considered, with why it lost
}

// Redirection is what Home Site Redirection would do with this connection.
type Redirection struct {
	WouldRedirect bool `json:"would_redirect"` // the client would be sent to ToSite
	// ToSite is the user's global home site when the connection would be
	// redirected; null otherwise.
	ToSite *string `json:"to_site"`
	Detail string  `json:"detail"` // one sentence
}

// SiteVisit is one site in the order considered.
type SiteVisit struct {
	Site string `json:"site"` // the site's stored name
	Tier Tier   `json:"tier"` // starting, connecting, preferred or remaining
	// Searched is set when the site's pods were looked at; Skipped when
	// not, with SkipReason.
	Searched   bool   `json:"searched"`
	Skipped    bool   `json:"skipped"`     // not searched, see SkipReason
	SkipReason string `json:"skip_reason"` // "" unless Skipped
	// Load is the site's load under the GE's policy (docs/resolve.md, "Loads"), rounded to two
	// decimals; null under NONE or when the site has no available pool.
	Load *float64 `json:"load"`
	// Threshold is pae-LoadThresholdForSite when the load was compared with
	// it (preferred sites with Ignore Preferred Sites with High Load).
	Threshold *int `json:"threshold,omitempty"`
	// PodOrder says how the pods were ordered.
	PodOrder string     `json:"pod_order,omitempty"`
	Pods     []PodVisit `json:"pods"` // searched pods in search order, then skipped ones
}

// PodVisit is one pod of a site visit.
type PodVisit struct {
	Pod        string `json:"pod"`        // the pod's stored name
	Connecting bool   `json:"connecting"` // the connecting pod
	// Status is searched, skipped or not_reached.
	Status     string      `json:"status"`
	SkipReason string      `json:"skip_reason,omitempty"` // offline, outside the scope, or no available pool
	Load       *float64    `json:"load"`                  // the pod's load under the policy; null under NONE
	Pools      []PoolVisit `json:"pools"`                 // the GE's pools in the pod, in the order tried, then unavailable ones
}

// PoolVisit is one pool of the GE in a pod, in the order tried.
type PoolVisit struct {
	Pool string   `json:"pool"`           // the pool's stored name
	Kind PoolKind `json:"kind"`           // DESKTOP, RDS_DESKTOP or APPLICATION
	Farm string   `json:"farm,omitempty"` // farm-backed pools only
	// Status is placed, full, no_host, unavailable or not_tried.
	Status string `json:"status"`
	Detail string `json:"detail"` // the capacity test, or why unavailable
	// Load is the pool's load under the GE's policy; null under NONE or
	// for an unavailable pool.
	Load          *float64       `json:"load"`
	HostSelection *HostSelection `json:"host_selection,omitempty"` // docs/storm.md buckets, for a farm-backed pool tried
}

// SessionReport is one existing session considered in step 2.
type SessionReport struct {
	ID     string        `json:"id"`               // the session ID
	Site   string        `json:"site"`             // the hosting pod's site
	Pod    string        `json:"pod"`              // the hosting pod
	Pool   string        `json:"pool"`             // the pool recorded
	Host   string        `json:"host,omitempty"`   // the RDS host recorded, if any
	State  SessionState  `json:"state"`            // CONNECTED or DISCONNECTED
	Client string        `json:"client,omitempty"` // the client computer recorded, if any
	Status SessionStatus `json:"status"`           // what step 2 made of it
	Detail string        `json:"detail"`           // why, in one sentence
}

// TraceStep is one line of the trace.
type TraceStep struct {
	// Step names the part of the search: request, warning, entitlement,
	// sessions, shared_session, assignment, home_site, redirection, tiers,
	// site, pod, random, host, not_modelled, backup (the backup GE's part,
	// each message naming the step of the backup's search), outcome.
	Step    string `json:"step"`
	Message string `json:"message"` // one sentence
}

// NotFoundError is returned when the request names a user, global
// entitlement, Connection Server, pod, client computer or offline pod that
// does not exist (the CLI exits 3).
type NotFoundError struct {
	Kind string // user, entitlement, connection server, pod, computer, site
	Name string // the name as given
	// Suggestion is the name of that kind nearest to Name, when the
	// caller found one (the broker sees only what it was given to read).
	Suggestion string
}

// Error implements error: the directory's phrasing, "does not exist".
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s %s does not exist", e.Kind, quote.Name(e.Name))
}

// Hint asks whether the nearest name was meant, when there is one.
func (e *NotFoundError) Hint() string { return nearest.Hint(e.Suggestion) }

// RequestError is returned for a request that cannot be resolved as given:
// both or neither of Connection Server and pod, connecting through an offline
// pod, an unknown protocol (the CLI exits 1).
type RequestError struct {
	Message string // one line, lower case
	Hint    string // the fix, or ""
}

// Error implements error.
func (e *RequestError) Error() string { return e.Message }

// WhatIf is one what-if in force during a decision: a change laid over the
// directory in memory (never written), or a request option such as an
// offline pod.
type WhatIf struct {
	Kind   string `json:"kind"`   // offline_pod, setting, pod_setting, pool_sessions, host_load, preferred, with, storm_threshold
	Target string `json:"target"` // the object or setting it changes (the file for with)
	Value  string `json:"value"`  // the new value, as given ("" when the kind has none)
}

// String renders the what-if for people: "setting pae-LoadThresholdForSite=99",
// "offline pod us-pod-1".
func (w WhatIf) String() string {
	word := strings.ReplaceAll(w.Kind, "_", " ")
	switch {
	case w.Kind == "pod_setting":
		return fmt.Sprintf("setting %s of pod %s", w.Value, w.Target)
	case w.Kind == "preferred" && w.Value == "":
		return fmt.Sprintf("preferred %s=(none)", w.Target)
	case w.Value == "":
		return word + " " + w.Target
	case w.Kind == "with":
		return fmt.Sprintf("with %s (%s)", w.Target, w.Value)
	}
	return fmt.Sprintf("%s %s=%s", word, w.Target, w.Value)
}

// DescribeWhatIfs renders a list of what-ifs on one line, "; " between
// them.
func DescribeWhatIfs(list []WhatIf) string {
	parts := make([]string, len(list))
	for i, w := range list {
		parts[i] = w.String()
	}
	return strings.Join(parts, "; ")
}
