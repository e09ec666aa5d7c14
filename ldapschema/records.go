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
		r.err = fmt.Errorf("site %s: %w", s.Name, err)
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
