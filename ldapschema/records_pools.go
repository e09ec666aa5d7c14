package ldapschema

// The records of what serves sessions: pools, RDS farms and hosts, and
// global entitlements.

import (
	"fmt"
	"strings"

	"github.com/go-ldap/ldap/v3"
)

// Pool is a desktop pool or a farm-backed pool (a child of its pod).
type Pool struct {
	DN          string
	Name        string
	Pod         string // from the parent DN
	Kind        string // KindDesktop, KindRDSDesktop or KindApplication
	Dedicated   bool   // desktop pools
	Capacity    int    // desktop pools
	Sessions    int    // desktop pools
	Assigned    int    // dedicated desktop pools
	FarmDN      string // farm-backed pools
	Farm        string // the farm's name, from FarmDN
	Enabled     bool
	Description string
}

// IsPool reports whether the entry is a pool of either class.
func IsPool(e *ldap.Entry) bool { return HasClass(e, ClassDesktopPool) || HasClass(e, ClassFarmPool) }

// PoolFromEntry maps a desktop pool or farm-backed pool entry.
func PoolFromEntry(e *ldap.Entry) (Pool, error) {
	r := reader{e: e}
	p := Pool{DN: e.DN, Name: r.name(), Pod: NameOf(ParentOf(e.DN)), Description: r.str(AttrDescription),
		Enabled: r.boolean(AttrEnabled, true)}
	switch {
	case HasClass(e, ClassDesktopPool):
		p.Kind = KindDesktop
		p.Dedicated = r.boolean(AttrDedicated, false)
		p.Capacity = r.num(AttrCapacity, 0)
		p.Sessions = r.num(AttrSessions, 0)
		p.Assigned = r.num(AttrAssigned, 0)
	case HasClass(e, ClassFarmPool):
		p.Kind = r.enum(AttrPoolKind, KindRDSDesktop, KindRDSDesktop, KindApplication)
		p.FarmDN = r.str(AttrFarmDN)
		p.Farm = NameOf(p.FarmDN)
	default:
		return Pool{}, fmt.Errorf("%w: %q is not a pool", ErrWrongClass, e.DN)
	}
	return p, r.err
}

// Attrs returns the entry form of the pool.
func (p Pool) Attrs() Attrs {
	a := Attrs{AttrCN: {p.Name}}
	a.SetString(AttrDescription, p.Description)
	a.SetBool(AttrEnabled, p.Enabled)
	if p.Kind == KindDesktop {
		a[AttrObjectClass] = []string{ClassTop, ClassDesktopPool}
		a.SetBool(AttrDedicated, p.Dedicated)
		a.SetInt(AttrCapacity, p.Capacity)
		a.SetInt(AttrSessions, p.Sessions)
		if p.Dedicated {
			a.SetInt(AttrAssigned, p.Assigned)
		}
		return a
	}
	a[AttrObjectClass] = []string{ClassTop, ClassFarmPool}
	a.SetString(AttrPoolKind, p.Kind)
	a.SetString(AttrFarmDN, p.FarmDN)
	return a
}

// PoolCounters are a pool's live counters, which a feed moves (pool
// update): a repeated create leaves them as they are.
var PoolCounters = []string{AttrSessions, AttrAssigned}

// PoolManaged lists the attributes an update of a pool rewrites.
var PoolManaged = []string{AttrDescription, AttrEnabled, AttrDedicated, AttrCapacity, AttrSessions, AttrAssigned,
	AttrPoolKind, AttrFarmDN}

// Farm is an RDS farm entry (a child of its pod).
type Farm struct {
	DN                         string
	Name                       string
	Pod                        string
	MaxSessionsPerHost         int
	LoadIndexThreshold         int // host-side, 0 = off
	ConnectingSessionThreshold int // host-side, 0 = off
	Description                string
}

// FarmFromEntry maps a farm entry.
func FarmFromEntry(e *ldap.Entry) (Farm, error) {
	if err := need(e, ClassRDSFarm); err != nil {
		return Farm{}, err
	}
	r := reader{e: e}
	f := Farm{DN: e.DN, Name: r.name(), Pod: NameOf(ParentOf(e.DN)), Description: r.str(AttrDescription),
		MaxSessionsPerHost:         r.num(AttrMaxSessionsPerHost, 0),
		LoadIndexThreshold:         r.num(AttrHostLoadIndexThreshold, 0),
		ConnectingSessionThreshold: r.num(AttrHostConnectingSessionThreshold, 0)}
	return f, r.err
}

// Attrs returns the entry form of the farm.
func (f Farm) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassRDSFarm}, AttrCN: {f.Name}}
	a.SetString(AttrDescription, f.Description)
	a.SetInt(AttrMaxSessionsPerHost, f.MaxSessionsPerHost)
	a.SetInt(AttrHostLoadIndexThreshold, f.LoadIndexThreshold)
	a.SetInt(AttrHostConnectingSessionThreshold, f.ConnectingSessionThreshold)
	return a
}

// FarmManaged lists the attributes an update of a farm rewrites.
var FarmManaged = []string{AttrDescription, AttrMaxSessionsPerHost, AttrHostLoadIndexThreshold,
	AttrHostConnectingSessionThreshold}

// Host is an RDS host entry (a child of its farm).
type Host struct {
	DN         string
	Name       string
	Farm       string
	Pod        string
	LoadIndex  int
	Sessions   int
	Connecting int
	Features   []string // upper case, see AllFeatures
	// FeaturesDefault: the entry holds no pae-HostFeature value, which
	// means every feature (Features then lists them all). Only
	// HostFromEntry sets it; Attrs writes Features whatever it says.
	FeaturesDefault bool
	Enabled         bool
	Description     string
	// PolicyLoadIndexThreshold and PolicyConnectingSessionThreshold are
	// the host's policy (ADMX) thresholds, which replace the farm's
	// host-side ones; nil when not set, 0 = off.
	PolicyLoadIndexThreshold         *int
	PolicyConnectingSessionThreshold *int
}

// HostFromEntry maps an RDS host entry. A host with no pae-HostFeature
// value supports every default feature.
func HostFromEntry(e *ldap.Entry) (Host, error) {
	if err := need(e, ClassRDSHost); err != nil {
		return Host{}, err
	}
	r := reader{e: e}
	farmDN := ParentOf(e.DN)
	h := Host{DN: e.DN, Name: r.name(), Farm: NameOf(farmDN), Pod: NameOf(ParentOf(farmDN)),
		LoadIndex: r.num(AttrLoadIndex, 0), Sessions: r.num(AttrSessions, 0),
		Connecting: r.num(AttrConnectingSessions, 0), Enabled: r.boolean(AttrEnabled, true),
		Description: r.str(AttrDescription)}
	h.PolicyLoadIndexThreshold = r.optNum(AttrPolicyLoadIndexThreshold)
	h.PolicyConnectingSessionThreshold = r.optNum(AttrPolicyConnectingSessionThreshold)
	for _, f := range r.strs(AttrHostFeature) {
		h.Features = append(h.Features, strings.ToUpper(f))
	}
	if len(h.Features) == 0 {
		h.Features = append([]string(nil), AllFeatures...)
		h.FeaturesDefault = true
	}
	return h, r.err
}

// Attrs returns the entry form of the host.
func (h Host) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassRDSHost}, AttrCN: {h.Name}}
	a.SetString(AttrDescription, h.Description)
	a.SetInt(AttrLoadIndex, h.LoadIndex)
	a.SetInt(AttrSessions, h.Sessions)
	a.SetInt(AttrConnectingSessions, h.Connecting)
	a.Set(AttrHostFeature, h.Features...)
	a.SetBool(AttrEnabled, h.Enabled)
	if h.PolicyLoadIndexThreshold != nil {
		a.SetInt(AttrPolicyLoadIndexThreshold, *h.PolicyLoadIndexThreshold)
	}
	if h.PolicyConnectingSessionThreshold != nil {
		a.SetInt(AttrPolicyConnectingSessionThreshold, *h.PolicyConnectingSessionThreshold)
	}
	return a
}

// HostCounters are a host's live figures, which a feed moves (host
// set-load): a repeated create leaves them as they are.
var HostCounters = []string{AttrLoadIndex, AttrSessions, AttrConnectingSessions}

// HostManaged lists the attributes an update of a host rewrites.
var HostManaged = []string{AttrDescription, AttrLoadIndex, AttrSessions, AttrConnectingSessions, AttrHostFeature,
	AttrEnabled, AttrPolicyLoadIndexThreshold, AttrPolicyConnectingSessionThreshold}

// Entitlement is a global entitlement entry.
type Entitlement struct {
	DN                      string
	Name                    string
	Description             string
	Type                    string // TypeDesktop or TypeApplication
	Scope                   string
	Dedicated               bool
	UseHomeSite             bool
	RequireHomeSite         bool
	UsePreferredSites       bool
	IgnoreHighLoad          bool
	LoadDistribution        string
	AutoClean               bool
	MultipleSessionsPerUser bool
	Tags                    []string
	ClientRestrictions      bool
	Enabled                 bool
	DefaultProtocol         string
	Members                 []string // DNs of users and groups
	PoolDNs                 []string
	BackupDN                string // the backup GE's DN, "" when none (docs/resolve.md "Backup")
}

// EntitlementFromEntry maps a global entitlement entry.
func EntitlementFromEntry(e *ldap.Entry) (Entitlement, error) {
	if err := need(e, ClassGlobalEntitlement); err != nil {
		return Entitlement{}, err
	}
	r := reader{e: e}
	g := Entitlement{DN: e.DN, Name: r.name(), Description: r.str(AttrDescription),
		Type:                    r.enum(AttrEntitlementType, TypeDesktop, TypeDesktop, TypeApplication),
		Scope:                   r.enum(AttrScope, ScopeAny, ScopeAny, ScopeSite, ScopeLocal),
		Dedicated:               r.boolean(AttrDedicated, false),
		UseHomeSite:             r.boolean(AttrUseHomeSite, false),
		RequireHomeSite:         r.boolean(AttrRequireHomeSite, false),
		UsePreferredSites:       r.boolean(AttrUsePreferredSites, false),
		IgnoreHighLoad:          r.boolean(AttrIgnoreHighLoadPreferredSites, false),
		LoadDistribution:        r.enum(AttrLoadDistribution, PolicyNone, PolicyNone, PolicyLoad, PolicySession),
		AutoClean:               r.boolean(AttrMultipleSessionAutoClean, false),
		MultipleSessionsPerUser: r.boolean(AttrMultipleSessionsPerUser, false),
		Tags:                    sortedCopy(r.strs(AttrTag)),
		ClientRestrictions:      r.boolean(AttrClientRestrictions, false),
		Enabled:                 r.boolean(AttrEnabled, true),
		DefaultProtocol:         r.enum(AttrDefaultProtocol, ProtocolBlast, ProtocolBlast, ProtocolPCoIP, ProtocolRDP),
		Members:                 r.strs(AttrMember),
		PoolDNs:                 r.strs(AttrEntitlementPoolDN),
		BackupDN:                r.str(AttrBackupEntitlementDN),
	}
	return g, r.err
}

// Attrs returns the entry form of the entitlement.
func (g Entitlement) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassGlobalEntitlement}, AttrCN: {g.Name}}
	a.SetString(AttrDescription, g.Description)
	a.SetString(AttrEntitlementType, g.Type)
	a.SetString(AttrScope, g.Scope)
	if g.Type == TypeDesktop {
		a.SetBool(AttrDedicated, g.Dedicated)
	}
	a.SetBool(AttrUseHomeSite, g.UseHomeSite)
	a.SetBool(AttrRequireHomeSite, g.RequireHomeSite)
	a.SetBool(AttrUsePreferredSites, g.UsePreferredSites)
	a.SetBool(AttrIgnoreHighLoadPreferredSites, g.IgnoreHighLoad)
	a.SetString(AttrLoadDistribution, g.LoadDistribution)
	a.SetBool(AttrMultipleSessionAutoClean, g.AutoClean)
	a.SetBool(AttrMultipleSessionsPerUser, g.MultipleSessionsPerUser)
	a.Set(AttrTag, g.Tags...)
	a.SetBool(AttrClientRestrictions, g.ClientRestrictions)
	a.SetBool(AttrEnabled, g.Enabled)
	a.SetString(AttrDefaultProtocol, g.DefaultProtocol)
	a.Set(AttrMember, g.Members...)
	a.Set(AttrEntitlementPoolDN, g.PoolDNs...)
	a.SetString(AttrBackupEntitlementDN, g.BackupDN)
	return a
}

// EntitlementManaged lists the attributes an update of an entitlement's
// policy rewrites (members and pools have their own commands).
var EntitlementManaged = []string{AttrDescription, AttrScope, AttrDedicated, AttrUseHomeSite, AttrRequireHomeSite,
	AttrUsePreferredSites, AttrIgnoreHighLoadPreferredSites, AttrLoadDistribution, AttrMultipleSessionAutoClean,
	AttrMultipleSessionsPerUser, AttrTag, AttrClientRestrictions, AttrEnabled, AttrDefaultProtocol}
