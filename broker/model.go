// Package broker models the Horizon Cloud Pod Architecture broker search: it
// decides where one connection request would land (docs/resolve.md), how loads are
// computed (docs/resolve.md, "Loads") and how an RDS farm picks a host during a logon storm
// (docs/storm.md).
//
// The package is pure: it imports neither LDAP nor cobra. Callers (the
// directory reader for a live server, the LDIF snapshot loader for --from)
// build a Federation holding the objects the request needs, and the engine
// returns a Decision with a complete trace. Every order that depends on chance
// is drawn from generators seeded by Request.Seed, so a live directory and a
// snapshot of it give the same answer.
package broker

import "github.com/cpactl/cpactl/internal/objkind"

// Scope is a global entitlement's scope policy.
type Scope string

// Scope values, as Horizon's View API spells them.
const (
	ScopeAny   Scope = "ANY"   // every pod of the federation ("All Sites")
	ScopeSite  Scope = "SITE"  // the pods of the connecting site ("Within Site")
	ScopeLocal Scope = "LOCAL" // the connecting pod only ("Within Pod")
)

// Policy is a global entitlement's Session Load Distribution policy.
type Policy string

// Policy values.
const (
	PolicyNone    Policy = "NONE"    // random order
	PolicyLoad    Policy = "LOAD"    // least mean load index first
	PolicySession Policy = "SESSION" // least session count ratio first
)

// EntitlementType says whether a global entitlement publishes desktops or
// applications.
type EntitlementType string

// EntitlementType values.
const (
	TypeDesktop     EntitlementType = "DESKTOP"
	TypeApplication EntitlementType = "APPLICATION"
)

// PoolKind says what a pool is made of.
type PoolKind string

// PoolKind values.
const (
	KindDesktop     PoolKind = "DESKTOP"     // virtual machines in one pod
	KindRDSDesktop  PoolKind = "RDS_DESKTOP" // RDS desktops served by a farm
	KindApplication PoolKind = "APPLICATION" // published applications served by a farm
)

// FarmBacked reports whether pools of this kind are served by an RDS farm.
func (k PoolKind) FarmBacked() bool { return k == KindRDSDesktop || k == KindApplication }

// Protocol is a display protocol.
type Protocol string

// Protocol values.
const (
	ProtocolBlast Protocol = "BLAST"
	ProtocolPCoIP Protocol = "PCOIP"
	ProtocolRDP   Protocol = "RDP"
)

// SessionState is the state of an existing session.
type SessionState string

// SessionState values.
const (
	StateConnected    SessionState = "CONNECTED"
	StateDisconnected SessionState = "DISCONNECTED"
)

// Settings are the federation-wide values of cn=Common (docs/schema.md).
type Settings struct {
	LoadThresholdForSite          int  // pae-LoadThresholdForSite, 0..100, default 98
	RDSLoadIndexThreshold         int  // pae-RDSLoadIndexThreshold, 0..100, default 20
	RDSConnectingSessionThreshold int  // pae-RDSConnectingSessionThreshold, 0..150, default 20
	MinRDSServersInLBQueue        int  // pae-MinRDSServersInLBQueue, 0..1000, default 4
	EnableSiteRedirection         bool // pae-EnableSiteRedirection, default false
	// RDSSources says whether each of the three RDS values above is
	// cn=Common's (SourceFederation) or the default (SourceDefault); an
	// empty source reads as SourceFederation.
	RDSSources ThresholdSources
}

// DefaultSettings returns the values in force when cn=Common holds none.
func DefaultSettings() Settings {
	return Settings{
		LoadThresholdForSite:          98,
		RDSLoadIndexThreshold:         20,
		RDSConnectingSessionThreshold: 20,
		MinRDSServersInLBQueue:        4,
		RDSSources:                    ThresholdSources{LIT: SourceDefault, CST: SourceDefault, MIN: SourceDefault},
	}
}

// Site is a group of pods on one LAN.
type Site struct {
	Name string
	// PreferredSites are the other sites searched, in rank order, when the
	// connecting site cannot serve a request (seed 000).
	PreferredSites []string
}

// Pod is one Horizon pod.
type Pod struct {
	Name   string
	Site   string
	Online bool
	// RDS holds the pod's own pae-RDS* values; a nil one falls back to
	// the federation's (docs/storm.md).
	RDS PodRDS
}

// PodRDS are the per-pod values of the three pae-RDS* settings; nil is
// not set on the pod.
type PodRDS struct {
	LoadIndexThreshold         *int // pae-RDSLoadIndexThreshold
	ConnectingSessionThreshold *int // pae-RDSConnectingSessionThreshold
	MinServersInLBQueue        *int // pae-MinRDSServersInLBQueue
}

// ConnectionServer is a broker in a pod.
type ConnectionServer struct {
	Name string
	Pod  string
	Tags []string // restriction tags; empty means untagged
}

// Pool is a desktop pool or a farm-backed (RDS desktop or application) pool.
type Pool struct {
	Name      string
	Pod       string
	Kind      PoolKind
	Dedicated bool // desktop pools only
	Capacity  int  // desktop pools: machines
	Sessions  int  // desktop pools: sessions in use
	Assigned  int  // dedicated desktop pools: machines already assigned
	Farm      string
	Enabled   bool
}

// Farm is an RDS farm.
type Farm struct {
	Name string
	Pod  string
	// MaxSessionsPerHost is the session limit of each host; 0 is unlimited
	// (and counts as 150 for the SESSION policy).
	MaxSessionsPerHost int
	// LoadIndexThreshold is the host-side Load Index Threshold (0 = off).
	LoadIndexThreshold int
	// ConnectingSessionThreshold is the host-side Connecting Session
	// Threshold (0 = off).
	ConnectingSessionThreshold int
}

// Features is the set of features an RDS host supports.
type Features struct {
	MultiSession    bool
	Unauthenticated bool
	RDP             bool
	PCoIP           bool
	Blast           bool
}

// AllFeatures returns the default feature set of an RDS host.
func AllFeatures() Features {
	return Features{MultiSession: true, Unauthenticated: true, RDP: true, PCoIP: true, Blast: true}
}

// Default reports whether every default feature is supported (bucket 1 of
// docs/storm.md takes only such hosts).
func (f Features) Default() bool { return f == AllFeatures() }

// Supports reports whether the host can serve protocol p.
func (f Features) Supports(p Protocol) bool {
	switch p {
	case ProtocolBlast:
		return f.Blast
	case ProtocolPCoIP:
		return f.PCoIP
	case ProtocolRDP:
		return f.RDP
	}
	return false
}

// Host is an RDS host of a farm.
type Host struct {
	Name       string
	Farm       string
	LoadIndex  int // -1..100; -1 means load balancing is disabled on the host
	Sessions   int
	Connecting int // connecting sessions
	Features   Features
	Enabled    bool
	// PolicyLoadIndexThreshold and PolicyConnectingSessionThreshold are
	// the host's policy (ADMX) values, which replace the farm's host-side
	// thresholds; nil when not set, 0 = off.
	PolicyLoadIndexThreshold         *int
	PolicyConnectingSessionThreshold *int
}

// MemberKind says what a member of a global entitlement is.
type MemberKind string

// MemberKind values.
const (
	MemberUser  MemberKind = objkind.User
	MemberGroup MemberKind = objkind.Group
)

// Member is a user or group entitled to a global entitlement.
type Member struct {
	Kind MemberKind
	Name string
}

// Entitlement is a global entitlement (GE).
type Entitlement struct {
	Name                    string
	Type                    EntitlementType
	Scope                   Scope
	Dedicated               bool // desktop GEs only
	UseHomeSite             bool
	RequireHomeSite         bool
	UsePreferredSites       bool
	IgnoreHighLoad          bool // Ignore Preferred Sites with High Load
	Policy                  Policy
	AutoClean               bool // automatically clean up redundant sessions
	MultipleSessionsPerUser bool
	Tags                    []string // Connection Server restriction tags
	ClientRestrictions      bool
	Enabled                 bool
	DefaultProtocol         Protocol
	Members                 []Member
	Pools                   []string // names of the associated pools
	// Backup names the backup global entitlement (floating desktop GEs
	// only), "" when none (docs/resolve.md "Backup global entitlements").
	Backup string
	// BackupNamed is the backup the entitlement's entry names, whether or
	// not it exists (Backup is that one when the reader found it): the
	// backup rule's chain check reads it on a backup.
	BackupNamed string
	// BackedUpBy names the entitlements that name this one as their
	// backup (a primary that is itself a backup breaks the chain rule).
	BackedUpBy []string
}

// User is a user and the groups it is an immediate member of.
type User struct {
	Name   string
	Groups []string
}

// Group is a group and the groups it is an immediate member of (groups may
// nest; cycles are tolerated).
type Group struct {
	Name   string
	Groups []string
}

// Computer is a client computer and the groups it is an immediate member of.
type Computer struct {
	Name   string
	Groups []string
}

// HomeSite is one home-site row: a user or a group (exactly one of the two is
// set) mapped to a site, globally (Entitlement == "") or as an override for
// one global entitlement.
type HomeSite struct {
	User        string
	Group       string
	Entitlement string
	Site        string
}

// Session is an existing session recorded in the global data layer.
type Session struct {
	ID           string
	User         string
	Entitlement  string
	Pod          string // hosting pod
	BrokeringPod string
	Pool         string
	Host         string
	State        SessionState
	Client       string // client computer, "" when not recorded
}

// Assignment is a dedicated user's pod assignment for one entitlement.
type Assignment struct {
	User        string
	Entitlement string
	Pod         string
	Machine     string
}

// Federation is the part of a federation's configuration a request needs.
// A snapshot loader may fill it with everything; a live reader fills it with
// only what docs/resolve.md "Reads" lists. Names are matched case-insensitively, as
// the directory matches them.
type Federation struct {
	Settings          Settings
	Sites             []Site
	Pods              []Pod
	ConnectionServers []ConnectionServer
	Entitlements      []Entitlement
	Pools             []Pool
	Farms             []Farm
	Hosts             []Host
	Users             []User
	Groups            []Group
	Computers         []Computer
	HomeSites         []HomeSite
	Sessions          []Session
	Assignments       []Assignment
}
