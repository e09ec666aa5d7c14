package ldapschema

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/internal/fold"
)

// Attrs is an entry's attributes as a map from attribute name to values, the
// form records are written in. Absent or empty means "not stored".
type Attrs map[string][]string

// Set stores values under name; no values removes the attribute.
func (a Attrs) Set(name string, values ...string) {
	if len(values) == 0 {
		delete(a, name)
		return
	}
	a[name] = values
}

// SetInt stores an integer.
func (a Attrs) SetInt(name string, v int) { a[name] = []string{strconv.Itoa(v)} }

// SetBool stores an LDAP boolean (TRUE or FALSE).
func (a Attrs) SetBool(name string, v bool) { a[name] = []string{FormatBool(v)} }

// SetString stores a string, or removes the attribute when s is empty.
func (a Attrs) SetString(name, s string) {
	if s == "" {
		delete(a, name)
		return
	}
	a[name] = []string{s}
}

// AddRequest returns the request that adds an entry with these attributes.
func (a Attrs) AddRequest(dn string) *ldap.AddRequest {
	req := ldap.NewAddRequest(dn, nil)
	for _, name := range a.names() {
		req.Attribute(name, a[name])
	}
	return req
}

func (a Attrs) names() []string {
	names := make([]string, 0, len(a))
	for n := range a {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		// objectClass first reads better in dumps and dry-runs.
		if (names[i] == AttrObjectClass) != (names[j] == AttrObjectClass) {
			return names[i] == AttrObjectClass
		}
		return names[i] < names[j]
	})
	return names
}

// Changes is the modify that turns one object's stored attributes into
// its new ones, as Attrs.Changes computes it: one replace or delete per
// attribute that differs. It is a []ldap.Change, so it goes as is to the
// directory package's writes.
type Changes []ldap.Change

// Attrs names the attributes the changes touch, in order.
func (c Changes) Attrs() []string {
	names := make([]string, len(c))
	for i, ch := range c {
		names[i] = ch.Modification.Type
	}
	return names
}

// Changes returns the modifications that turn the stored attributes old into
// a, considering only the attributes named in managed (the ones the record
// owns); nil when nothing changes. Values compare case-sensitively as sets,
// except that DN values compare as DNs.
func (a Attrs) Changes(old Attrs, managed ...string) Changes {
	var changes Changes
	for _, name := range managed {
		newV, oldV := a[name], lookupFold(old, name)
		if sameValues(name, oldV, newV) {
			continue
		}
		if len(newV) == 0 {
			changes = append(changes, ldap.Change{Operation: ldap.DeleteAttribute,
				Modification: ldap.PartialAttribute{Type: name}})
			continue
		}
		changes = append(changes, ldap.Change{Operation: ldap.ReplaceAttribute,
			Modification: ldap.PartialAttribute{Type: name, Vals: newV}})
	}
	return changes
}

func lookupFold(a Attrs, name string) []string {
	if v, ok := a[name]; ok {
		return v
	}
	for k, v := range a {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}

func sameValues(name string, a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	norm := func(v string) string { return v }
	if at, ok := Attribute(name); ok && at.Syntax == DN || strings.EqualFold(name, AttrMember) {
		norm = NormalizeDN
	}
	seen := map[string]int{}
	for _, v := range a {
		seen[norm(v)]++
	}
	for _, v := range b {
		if seen[norm(v)] == 0 {
			return false
		}
		seen[norm(v)]--
	}
	return true
}

// AttrsOf returns an entry's attributes as Attrs (names as the server sent
// them).
func AttrsOf(e *ldap.Entry) Attrs {
	a := Attrs{}
	for _, at := range e.Attributes {
		a[at.Name] = append(a[at.Name], at.Values...)
	}
	return a
}

// FormatBool renders an LDAP BOOLEAN.
func FormatBool(v bool) string {
	if v {
		return "TRUE"
	}
	return "FALSE"
}

// HasClass reports whether the entry has the object class.
func HasClass(e *ldap.Entry, class string) bool {
	return fold.Contains(e.GetEqualFoldAttributeValues(AttrObjectClass), class)
}

// reader reads typed values from an entry and remembers the first error.
type reader struct {
	e   *ldap.Entry
	err error
}

func (r *reader) str(name string) string { return r.e.GetEqualFoldAttributeValue(name) }

func (r *reader) strs(name string) []string { return r.e.GetEqualFoldAttributeValues(name) }

func (r *reader) num(name string, def int) int {
	s := r.str(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("entry %q: %s=%q is not an integer", r.e.DN, name, s)
	}
	return v
}

// optNum reads an optional integer: nil when absent.
func (r *reader) optNum(name string) *int {
	if r.str(name) == "" {
		return nil
	}
	v := r.num(name, 0)
	return &v
}

func (r *reader) boolean(name string, def bool) bool {
	s := r.str(name)
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "":
		return def
	case "TRUE":
		return true
	case "FALSE":
		return false
	}
	if r.err == nil {
		r.err = fmt.Errorf("entry %q: %s=%q is not TRUE or FALSE", r.e.DN, name, s)
	}
	return def
}

func (r *reader) enum(name, def string, allowed ...string) string {
	s := strings.ToUpper(strings.TrimSpace(r.str(name)))
	if s == "" {
		return def
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	if r.err == nil {
		r.err = fmt.Errorf("entry %q: %s=%q is not one of %s", r.e.DN, name, r.str(name), strings.Join(allowed, ", "))
	}
	return def
}

func (r *reader) name() string {
	if n := NameOf(r.e.DN); n != "" {
		return n
	}
	if r.err == nil {
		r.err = fmt.Errorf("entry %q: the DN does not parse", r.e.DN)
	}
	return ""
}

// ErrWrongClass is returned when an entry lacks the object class a record
// needs.
var ErrWrongClass = errors.New("entry has the wrong object class")

func need(e *ldap.Entry, class string) error {
	if !HasClass(e, class) {
		return fmt.Errorf("%w: %q is not a %s", ErrWrongClass, e.DN, class)
	}
	return nil
}

// Enumerations as stored.
const (
	PodOnline  = "ONLINE"
	PodOffline = "OFFLINE"

	KindDesktop     = "DESKTOP"
	KindRDSDesktop  = "RDS_DESKTOP"
	KindApplication = "APPLICATION"

	TypeDesktop     = "DESKTOP"
	TypeApplication = "APPLICATION"

	ScopeAny   = "ANY"
	ScopeSite  = "SITE"
	ScopeLocal = "LOCAL"

	PolicyNone    = "NONE"
	PolicyLoad    = "LOAD"
	PolicySession = "SESSION"

	ProtocolBlast = "BLAST"
	ProtocolPCoIP = "PCOIP"
	ProtocolRDP   = "RDP"

	StateConnected    = "CONNECTED"
	StateDisconnected = "DISCONNECTED"

	FeatureMultiSession    = "MULTISESSION"
	FeatureUnauthenticated = "UNAUTHENTICATED"
	FeatureRDP             = "RDP"
	FeaturePCoIP           = "PCOIP"
	FeatureBlast           = "BLAST"
)

// AllFeatures lists the default features of an RDS host.
var AllFeatures = []string{FeatureMultiSession, FeatureUnauthenticated, FeatureRDP, FeaturePCoIP, FeatureBlast}

// SettingsRecord is the global settings entry: the stored values of the
// five settings (absent ones are not in the map).
type SettingsRecord struct {
	DN     string
	Stored map[string]int // keyed by Setting.Attr
}

// Value returns the effective value of a setting and whether the default is
// in force.
func (s SettingsRecord) Value(set Setting) (value int, isDefault bool) {
	if v, ok := s.Stored[set.Attr]; ok {
		return v, false
	}
	return set.Default, true
}

// SettingsFromEntry reads cn=Common; a nil entry means every default.
func SettingsFromEntry(e *ldap.Entry) (SettingsRecord, error) {
	rec := SettingsRecord{Stored: map[string]int{}}
	if e == nil {
		return rec, nil
	}
	rec.DN = e.DN
	r := reader{e: e}
	for _, set := range Settings {
		if r.str(set.Attr) != "" {
			rec.Stored[set.Attr] = r.num(set.Attr, set.Default)
		}
	}
	return rec, r.err
}

// Site is a site entry.
type Site struct {
	DN             string
	Name           string
	Description    string
	URL            string
	PreferredSites []string // in rank order
	// PreferredRaw holds the stored pae-PreferredSite values as read, so that
	// a write can assert them and lint can report their problems.
	PreferredRaw []string
}

// SiteFromEntry maps a site entry.
func SiteFromEntry(e *ldap.Entry) (Site, error) {
	if err := need(e, ClassSite); err != nil {
		return Site{}, err
	}
	r := reader{e: e}
	s := Site{DN: e.DN, Name: r.name(), Description: r.str(AttrDescription), URL: r.str(AttrSiteURL),
		PreferredRaw: r.strs(AttrPreferredSite)}
	list, err := DecodePreferredSites(s.PreferredRaw)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("site %q: %w", s.Name, err)
	}
	s.PreferredSites = list.Names()
	return s, r.err
}

// Attrs returns the entry form of the site.
func (s Site) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassSite}, AttrCN: {s.Name}}
	a.SetString(AttrDescription, s.Description)
	a.SetString(AttrSiteURL, s.URL)
	a.Set(AttrPreferredSite, EncodePreferredSites(s.PreferredSites)...)
	return a
}

// SiteManaged lists the attributes an update of a site rewrites.
var SiteManaged = []string{AttrDescription, AttrSiteURL, AttrPreferredSite}

// Pod is a pod entry.
type Pod struct {
	DN          string
	Name        string
	Description string
	SiteDN      string
	Site        string // the site's name, from SiteDN
	Online      bool
	// RDS holds the pod's own values of the per-pod settings
	// (Setting.PerPod), keyed by Setting.Attr; absent ones are not set.
	RDS map[string]int
}

// PodFromEntry maps a pod entry.
func PodFromEntry(e *ldap.Entry) (Pod, error) {
	if err := need(e, ClassPod); err != nil {
		return Pod{}, err
	}
	r := reader{e: e}
	p := Pod{DN: e.DN, Name: r.name(), Description: r.str(AttrDescription), SiteDN: r.str(AttrSiteDN)}
	p.Site = NameOf(p.SiteDN)
	p.Online = r.enum(AttrPodStatus, PodOnline, PodOnline, PodOffline) == PodOnline
	for _, set := range Settings {
		if set.PerPod && r.str(set.Attr) != "" {
			if p.RDS == nil {
				p.RDS = map[string]int{}
			}
			p.RDS[set.Attr] = r.num(set.Attr, set.Default)
		}
	}
	return p, r.err
}

// Attrs returns the entry form of the pod.
func (p Pod) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassPod}, AttrCN: {p.Name}, AttrSiteDN: {p.SiteDN}}
	a.SetString(AttrDescription, p.Description)
	status := PodOnline
	if !p.Online {
		status = PodOffline
	}
	a.SetString(AttrPodStatus, status)
	for attr, v := range p.RDS {
		a.SetInt(attr, v)
	}
	return a
}

// PodManaged lists the attributes an update of a pod rewrites.
var PodManaged = []string{AttrDescription, AttrSiteDN, AttrPodStatus}

// ConnectionServer is a Connection Server entry (a child of its pod).
type ConnectionServer struct {
	DN          string
	Name        string
	Pod         string // from the parent DN
	Description string
	Tags        []string
}

// ConnectionServerFromEntry maps a Connection Server entry.
func ConnectionServerFromEntry(e *ldap.Entry) (ConnectionServer, error) {
	if err := need(e, ClassConnectionServer); err != nil {
		return ConnectionServer{}, err
	}
	r := reader{e: e}
	cs := ConnectionServer{DN: e.DN, Name: r.name(), Pod: NameOf(ParentOf(e.DN)),
		Description: r.str(AttrDescription), Tags: sortedCopy(r.strs(AttrTag))}
	return cs, r.err
}

// Attrs returns the entry form of the Connection Server.
func (c ConnectionServer) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassConnectionServer}, AttrCN: {c.Name}}
	a.SetString(AttrDescription, c.Description)
	a.Set(AttrTag, c.Tags...)
	return a
}

// ConnectionServerManaged lists the attributes an update rewrites.
var ConnectionServerManaged = []string{AttrDescription, AttrTag}

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
	DN          string
	Name        string
	Farm        string
	Pod         string
	LoadIndex   int
	Sessions    int
	Connecting  int
	Features    []string // upper case, see AllFeatures
	Enabled     bool
	Description string
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

// HomeSite is a home-site row.
type HomeSite struct {
	DN            string
	UserDN        string // exactly one of UserDN and GroupDN
	GroupDN       string
	EntitlementDN string // "" for the global home site
	SiteDN        string
}

// HomeSiteFromEntry maps a home-site row.
func HomeSiteFromEntry(e *ldap.Entry) (HomeSite, error) {
	if err := need(e, ClassHomeSite); err != nil {
		return HomeSite{}, err
	}
	r := reader{e: e}
	h := HomeSite{DN: e.DN, UserDN: r.str(AttrUserDN), GroupDN: r.str(AttrGroupDN),
		EntitlementDN: r.str(AttrEntitlementDN), SiteDN: r.str(AttrSiteDN)}
	if (h.UserDN == "") == (h.GroupDN == "") && r.err == nil {
		r.err = fmt.Errorf("home-site row %q: needs exactly one of %s and %s", e.DN, AttrUserDN, AttrGroupDN)
	}
	return h, r.err
}

// Attrs returns the entry form of the row.
func (h HomeSite) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassHomeSite}, AttrCN: {NameOf(h.DN)}, AttrSiteDN: {h.SiteDN}}
	a.SetString(AttrUserDN, h.UserDN)
	a.SetString(AttrGroupDN, h.GroupDN)
	a.SetString(AttrEntitlementDN, h.EntitlementDN)
	return a
}

// HomeSiteManaged lists the attributes a rewrite of a row changes.
var HomeSiteManaged = []string{AttrSiteDN, AttrUserDN, AttrGroupDN, AttrEntitlementDN}

// Session is a session record.
type Session struct {
	DN             string
	ID             string
	UserDN         string
	EntitlementDN  string
	PodDN          string
	BrokeringPodDN string
	PoolDN         string
	HostDN         string
	ClientDN       string
	State          string
}

// SessionFromEntry maps a session record.
func SessionFromEntry(e *ldap.Entry) (Session, error) {
	if err := need(e, ClassSession); err != nil {
		return Session{}, err
	}
	r := reader{e: e}
	s := Session{DN: e.DN, ID: r.name(), UserDN: r.str(AttrUserDN), EntitlementDN: r.str(AttrEntitlementDN),
		PodDN: r.str(AttrPodDN), BrokeringPodDN: r.str(AttrBrokeringPodDN), PoolDN: r.str(AttrPoolDN),
		HostDN: r.str(AttrHostDN), ClientDN: r.str(AttrClientDN),
		State: r.enum(AttrSessionState, StateConnected, StateConnected, StateDisconnected)}
	return s, r.err
}

// Attrs returns the entry form of the session.
func (s Session) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassSession}, AttrCN: {s.ID}}
	a.SetString(AttrUserDN, s.UserDN)
	a.SetString(AttrEntitlementDN, s.EntitlementDN)
	a.SetString(AttrPodDN, s.PodDN)
	a.SetString(AttrBrokeringPodDN, s.BrokeringPodDN)
	a.SetString(AttrPoolDN, s.PoolDN)
	a.SetString(AttrHostDN, s.HostDN)
	a.SetString(AttrClientDN, s.ClientDN)
	a.SetString(AttrSessionState, s.State)
	return a
}

// Assignment is a pod assignment.
type Assignment struct {
	DN            string
	UserDN        string
	EntitlementDN string
	PodDN         string
	Machine       string
}

// AssignmentFromEntry maps a pod assignment.
func AssignmentFromEntry(e *ldap.Entry) (Assignment, error) {
	if err := need(e, ClassPodAssignment); err != nil {
		return Assignment{}, err
	}
	r := reader{e: e}
	a := Assignment{DN: e.DN, UserDN: r.str(AttrUserDN), EntitlementDN: r.str(AttrEntitlementDN),
		PodDN: r.str(AttrPodDN), Machine: r.str(AttrMachine)}
	return a, r.err
}

// Attrs returns the entry form of the assignment.
func (a Assignment) Attrs() Attrs {
	at := Attrs{AttrObjectClass: {ClassTop, ClassPodAssignment}, AttrCN: {NameOf(a.DN)}}
	at.SetString(AttrUserDN, a.UserDN)
	at.SetString(AttrEntitlementDN, a.EntitlementDN)
	at.SetString(AttrPodDN, a.PodDN)
	at.SetString(AttrMachine, a.Machine)
	return at
}

// AssignmentManaged lists the attributes a rewrite of an assignment changes.
var AssignmentManaged = []string{AttrPodDN, AttrMachine}

// User is a user entry (inetOrgPerson with pae-UserIdentity).
type User struct {
	DN       string
	UID      string
	Domain   string
	FullName string
}

// UserFromEntry maps a user entry.
func UserFromEntry(e *ldap.Entry) (User, error) {
	if err := need(e, ClassInetOrgPerson); err != nil {
		return User{}, err
	}
	r := reader{e: e}
	u := User{DN: e.DN, UID: r.str(AttrUID), Domain: r.str(AttrDomain), FullName: r.str(AttrCN)}
	if u.UID == "" {
		u.UID = r.name()
	}
	return u, r.err
}

// Attrs returns the entry form of the user. inetOrgPerson needs cn and sn:
// without a full name both are the uid.
func (u User) Attrs() Attrs {
	full := u.FullName
	if full == "" {
		full = u.UID
	}
	sn := full
	if i := strings.LastIndex(full, " "); i >= 0 && i < len(full)-1 {
		sn = full[i+1:]
	}
	a := Attrs{AttrObjectClass: {ClassTop, "person", "organizationalPerson", ClassInetOrgPerson, ClassUserIdentity},
		AttrUID: {u.UID}, AttrCN: {full}, AttrSN: {sn}}
	a.SetString(AttrDomain, u.Domain)
	return a
}

// UserManaged lists the attributes an update of a user rewrites.
var UserManaged = []string{AttrDomain, AttrCN, AttrSN}

// Group is a group entry.
type Group struct {
	DN          string
	Name        string
	Description string
	Members     []string // DNs of users, groups and computers
}

// GroupFromEntry maps a group entry.
func GroupFromEntry(e *ldap.Entry) (Group, error) {
	if err := need(e, ClassGroup); err != nil {
		return Group{}, err
	}
	r := reader{e: e}
	g := Group{DN: e.DN, Name: r.name(), Description: r.str(AttrDescription), Members: r.strs(AttrMember)}
	return g, r.err
}

// Attrs returns the entry form of the group.
func (g Group) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassGroup}, AttrCN: {g.Name}}
	a.SetString(AttrDescription, g.Description)
	a.Set(AttrMember, g.Members...)
	return a
}

// Computer is a client computer entry (device).
type Computer struct {
	DN          string
	Name        string
	Description string
}

// ComputerFromEntry maps a client computer entry.
func ComputerFromEntry(e *ldap.Entry) (Computer, error) {
	if err := need(e, ClassDevice); err != nil {
		return Computer{}, err
	}
	r := reader{e: e}
	return Computer{DN: e.DN, Name: r.name(), Description: r.str(AttrDescription)}, r.err
}

// Attrs returns the entry form of the computer.
func (c Computer) Attrs() Attrs {
	a := Attrs{AttrObjectClass: {ClassTop, ClassDevice}, AttrCN: {c.Name}}
	a.SetString(AttrDescription, c.Description)
	return a
}

func sortedCopy(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}

// Records holds every record of one federation: what `cpactl lint` checks
// and directory.Store.Inventory reads (leniently: entries with values that
// do not parse are kept as far as they decode and listed in Unreadable).
type Records struct {
	Settings          SettingsRecord
	Sites             []Site
	Pods              []Pod
	ConnectionServers []ConnectionServer
	Pools             []Pool
	Farms             []Farm
	Hosts             []Host
	Entitlements      []Entitlement
	HomeSites         []HomeSite
	Users             []User
	Groups            []Group
	Computers         []Computer
	Sessions          []Session
	Assignments       []Assignment
	// Unreadable lists entries with values that do not parse.
	Unreadable []Unreadable
}

// Unreadable is an entry whose values did not all decode.
type Unreadable struct {
	DN     string
	Reason string
}
