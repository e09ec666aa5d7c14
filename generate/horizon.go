package generate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/url"
	"strings"

	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/ldapschema"
)

// The federation as a pull directory (`cpactl generate --format horizon`):
// what `cpactl horizon pull` would have written from a Horizon holding the
// same federation (docs/horizon.md): the same files, pages, manifest and
// REST records (2512 swagger schemas), with what the API does not carry
// left out (docs/horizon.md#generate-the-mapping lists every field). The
// server that answered the pull is the first Connection Server of the
// first pod; the other pods are reached through their endpoints.

// HorizonOptions say how the pull directory is written.
type HorizonOptions struct {
	// PageSize is the size of the pages of paged lists (1..1000, default
	// 1000: what `horizon pull` asks for by default).
	PageSize int
	// Replace replaces an earlier pull directory (horizon.CheckTarget).
	Replace bool
}

// Values of the generated directory that are not the federation's.
const (
	generatedBy = "cpactl generate"
	// csVersion is every Connection Server's version.
	csVersion = "8.17.0-generated"
	// epochMillis is the time of every generated timestamp (session start,
	// monitor updates): 2026-01-01T00:00:00Z, so that the output does not
	// depend on the clock.
	epochMillis int64 = 1767225600000
	// dnsDomain and netbiosDomain are the AD domain of users and groups
	// (the generator's user domains: "CORP" and "corp.example.com").
	dnsDomain     = "corp.example.com"
	netbiosDomain = "CORP"
)

// WriteHorizon writes the federation of cfg to dir as a pull directory and
// returns its manifest. The same Config and options give the same
// directory, byte for byte. Nothing is written when cfg is invalid; dir is
// written beside it and renamed into place (horizon.DirWriter).
func WriteHorizon(dir string, cfg Config, opts HorizonOptions) (*horizon.Manifest, error) {
	if opts.PageSize == 0 {
		opts.PageSize = horizon.MaxPageSize
	}
	if opts.PageSize < 1 || opts.PageSize > horizon.MaxPageSize {
		return nil, refuse("page size %d: pages hold 1 to %d records", opts.PageSize, horizon.MaxPageSize)
	}
	p, err := newPlan(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Pods == 0 {
		return nil, refuse("--pods 0: a pull is read through a Connection Server of a pod; --format horizon needs --pods above 0")
	}
	d, err := horizon.NewDirWriter(dir, opts.Replace)
	if err != nil {
		return nil, err
	}
	defer d.Discard()
	h := newHorizonWriter(p, d, opts.PageSize)
	if err := h.run(); err != nil {
		return nil, err
	}
	if err := d.Commit(h.m); err != nil {
		return nil, err
	}
	return h.m, nil
}

type horizonWriter struct {
	p    *plan
	d    *horizon.DirWriter
	m    *horizon.Manifest
	size int
	ids  map[string]string // kind -> id prefix
	sid  string            // the AD domain's SID
	buf  bytes.Buffer
	enc  *json.Encoder

	hosts      *rng          // the hosts' stream, drawn pod by pod as the LDIF does
	podGEs     [][2][]string // pod -> ids of desktop, application entitlements with pools there
	memberPods [][]string    // entitlement -> ids of the pods of its pools
	podFiles   [][]horizon.File
}

func newHorizonWriter(p *plan, d *horizon.DirWriter, size int) *horizonWriter {
	h := &horizonWriter{p: p, d: d, size: size, ids: map[string]string{}}
	h.enc = json.NewEncoder(&h.buf)
	h.enc.SetEscapeHTML(false)
	counts := map[string]int{}
	for _, k := range Counts {
		counts[k.Flag] = *k.Field(&p.cfg)
	}
	h.m = &horizon.Manifest{Format: horizon.FormatName, Version: horizon.FormatVersion, PageSize: size,
		PreferredSites: true, Counts: map[string]int{},
		Generated: &horizon.Generated{By: generatedBy, Seed: p.cfg.Seed, Counts: counts}}
	// The domain SID: three sub-authorities drawn from the seed.
	x := mix(uint64(p.cfg.Seed) ^ labelHash("domain-sid"))
	y := mix(x)
	h.sid = fmt.Sprintf("S-1-5-21-%d-%d-%d", uint32(x)>>1, uint32(x>>32)>>1, uint32(y)>>1)
	return h
}

// labelHash is FNV-1a of a label.
func labelHash(label string) uint64 {
	f := fnv.New64a()
	f.Write([]byte(label))
	return f.Sum64()
}

// id returns the REST id of object i of a kind: a UUID (version 4 form)
// whose first 60 bits are drawn from the seed and the kind, and whose last
// 48 are i+1, so that ids are unique, stable for a seed, and say nothing
// of other objects.
func (h *horizonWriter) id(kind string, i int) string {
	pre, ok := h.ids[kind]
	if !ok {
		x := mix(uint64(h.p.cfg.Seed) ^ labelHash("id:"+kind))
		pre = fmt.Sprintf("%08x-%04x-4%03x-8000-", uint32(x>>32), uint16(x>>16), uint16(x)&0xfff)
		h.ids[kind] = pre
	}
	return fmt.Sprintf("%s%012x", pre, uint64(i)+1)
}

// userSID and groupSID are the SIDs of user u and group idx: the domain's
// SID and a relative id (users even, groups odd, from 1000), stable for a
// seed whatever the counts.
func (h *horizonWriter) userSID(u int) string { return fmt.Sprintf("%s-%d", h.sid, 1000+2*u) }

func (h *horizonWriter) groupSID(idx int) string { return fmt.Sprintf("%s-%d", h.sid, 1001+2*idx) }

func (h *horizonWriter) memberSID(m member) string {
	if m.group {
		return h.groupSID(m.index)
	}
	return h.userSID(m.index)
}

func (h *horizonWriter) geID(e int) string {
	if h.p.ges[e].rec.Type == ldapschema.TypeApplication {
		return h.id("global-application-entitlement", e)
	}
	return h.id("global-desktop-entitlement", e)
}

// encode returns v as compact JSON (no HTML escaping, as Horizon's
// Jackson writes it), valid until the next call.
func (h *horizonWriter) encode(v any) ([]byte, error) {
	h.buf.Reset()
	if err := h.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(h.buf.Bytes(), []byte("\n")), nil
}

// list is one endpoint's read being written: one file, or pages of
// h.size records, each a JSON array.
type list struct {
	h                          *horizonWriter
	dir, endpoint, path, query string
	pod                        string
	paged                      bool
	batch                      int // the batch number of an unpaged read in batches
	fw                         *horizon.FileWriter
	file                       horizon.File
	files                      []horizon.File
}

func (h *horizonWriter) list(dir, endpoint, path, query, pod string, paged bool) *list {
	return &list{h: h, dir: dir, endpoint: endpoint, path: path, query: query, pod: pod, paged: paged}
}

func (l *list) open() error {
	page := l.batch
	if l.paged {
		page = len(l.files) + 1
	}
	name := horizon.PageName(l.dir, l.endpoint, page)
	fw, err := l.h.d.Create(name)
	if err != nil {
		return err
	}
	l.fw = fw
	l.file = horizon.File{Name: name, Endpoint: l.endpoint, Path: l.path, Query: l.query, Pod: l.pod, Page: page,
		Server: horizon.GeneratedURL}
	_, err = fw.WriteString("[")
	return err
}

func (l *list) closeFile() error {
	if _, err := l.fw.WriteString("]"); err != nil {
		return err
	}
	if err := l.fw.Close(); err != nil {
		return err
	}
	l.file.Bytes, l.file.SHA256 = l.fw.Bytes(), l.fw.SHA256()
	l.files = append(l.files, l.file)
	l.fw = nil
	return nil
}

// add writes one record, starting the next page when this one is full.
func (l *list) add(v any) error {
	if l.fw != nil && l.paged && l.file.Records == l.h.size {
		if err := l.closeFile(); err != nil {
			return err
		}
	}
	if l.fw == nil {
		if err := l.open(); err != nil {
			return err
		}
	}
	b, err := l.h.encode(v)
	if err != nil {
		return err
	}
	if l.file.Records > 0 {
		if _, err := l.fw.WriteString(","); err != nil {
			return err
		}
	}
	if _, err := l.fw.Write(b); err != nil {
		return err
	}
	l.file.Records++
	return nil
}

// done ends the list (an empty one is one file, or page 1, holding []) and
// returns its files.
func (l *list) done() ([]horizon.File, error) {
	if l.fw == nil && len(l.files) == 0 {
		if err := l.open(); err != nil {
			return nil, err
		}
	}
	if l.fw != nil {
		if err := l.closeFile(); err != nil {
			return nil, err
		}
	}
	return l.files, nil
}

func (h *horizonWriter) addFiles(to *[]horizon.File, files []horizon.File) {
	for _, f := range files {
		*to = append(*to, f)
		h.m.Counts[f.Endpoint] += f.Records
	}
}

// writeList writes a whole list: each(add) adds its records.
func (h *horizonWriter) writeList(to *[]horizon.File, dir, endpoint, path, query, pod string, paged bool, each func(add func(any) error) error) error {
	l := h.list(dir, endpoint, path, query, pod, paged)
	if err := each(l.add); err != nil {
		if l.fw != nil {
			l.fw.Abort()
		}
		return err
	}
	files, err := l.done()
	if err != nil {
		return err
	}
	h.addFiles(to, files)
	return nil
}

func (h *horizonWriter) run() error {
	p := h.p
	h.podGEs = make([][2][]string, len(p.pods))
	h.memberPods = make([][]string, len(p.ges))
	for e, ge := range p.ges {
		seen := map[int]bool{}
		for _, j := range ge.pools {
			seen[p.poolAt[j].pod] = true
		}
		for i := range p.pods {
			if seen[i] {
				h.memberPods[e] = append(h.memberPods[e], h.id("pod", i))
				k := 0
				if ge.rec.Type == ldapschema.TypeApplication {
					k = 1
				}
				h.podGEs[i][k] = append(h.podGEs[i][k], h.geID(e))
			}
		}
	}
	var global []horizon.File
	if err := h.writeGlobal(&global); err != nil {
		return err
	}
	h.podFiles = make([][]horizon.File, len(p.pods))
	h.hosts = newRng(p.cfg.Seed, "hosts")
	for i := range p.pods {
		if err := h.writePod(i); err != nil {
			return err
		}
	}
	sessions, err := h.writeSessions()
	if err != nil {
		return err
	}
	h.m.Files = global
	for i, pod := range p.pods {
		h.m.Files = append(h.m.Files, h.podFiles[i]...)
		h.addFiles(&h.m.Files, sessions[i])
		h.m.Pods = append(h.m.Pods, horizon.Pod{ID: h.id("pod", i), Name: pod.Name, SiteID: h.id("site", p.podOf[i]),
			Dir: horizon.PodDir(i, pod.Name), Server: &horizon.Server{URL: horizon.GeneratedURL, Name: p.cs[i].Name, Version: csVersion}})
	}
	h.m.Server = horizon.Server{URL: horizon.GeneratedURL, Name: p.cs[0].Name, Version: csVersion}
	// What a pull of this federation sends: a login and a logout per pod
	// (the first pod's on the server it was given) and one GET per file.
	h.m.Requests = int64(len(h.m.Files) + 2*len(p.pods))
	return nil
}

// The REST records the generator writes: the fields of the 2512 swagger's
// schemas it fills, in the swagger's names (docs/horizon.md lists the
// mapping).

type restCPA struct {
	GUID        string            `json:"guid"`
	Name        string            `json:"name"`
	Sites       []string          `json:"sites"`
	Status      string            `json:"local_connection_server_status"`
	Statuses    []restCSStatus    `json:"connection_server_statuses"`
	Redirection restSiteRedirects `json:"site_redirection_settings"`
}

type restCSStatus struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	Status            string `json:"status"`
	MessageCode       string `json:"message_code"`
	Message           string `json:"message"`
	PendingPercentage int    `json:"pending_percentage"`
}

type restSiteRedirects struct {
	Enabled           bool `json:"site_redirection_enabled"`
	EnabledWithoutSSO bool `json:"site_redirection_enabled_without_sso"`
}

type restSite struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Description    string   `json:"description,omitempty"`
	SiteURL        string   `json:"site_url,omitempty"`
	Pods           []string `json:"pods"`
	PreferredSites []string `json:"preferred_sites"`
}

type restPod struct {
	ID                  string   `json:"id"`
	Name                string   `json:"name"`
	Description         string   `json:"description,omitempty"`
	SiteID              string   `json:"site_id"`
	LocalPod            bool     `json:"local_pod"`
	Endpoints           []string `json:"endpoints"`
	DesktopEntitlements []string `json:"active_global_desktop_entitlements"`
	AppEntitlements     []string `json:"active_global_application_entitlements"`
	CloudManaged        bool     `json:"cloud_managed"`
}

type restMonitorPod struct {
	ID        string                `json:"id"`
	Name      string                `json:"name"`
	SiteID    string                `json:"site_id"`
	Endpoints []restMonitorEndpoint `json:"endpoints"`
}

type restMonitorEndpoint struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	URL         string `json:"url"`
	Enabled     bool   `json:"enabled"`
	Status      string `json:"status"`
	LastUpdated int64  `json:"last_updated_timestamp"`
	Roundtrip   int64  `json:"roundtrip_time"`
}

type restPodEndpoint struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	ServerAddress string `json:"server_address"`
	Enabled       bool   `json:"enabled"`
}

type restConnectionServer struct {
	ID                    string   `json:"id"`
	Name                  string   `json:"name"`
	Enabled               bool     `json:"enabled"`
	Version               string   `json:"version"`
	FQHN                  string   `json:"fqhn"`
	ServerURL             string   `json:"server_url"`
	ExternalURL           string   `json:"external_url"`
	ClusterName           string   `json:"cluster_name"`
	LocalConnectionServer bool     `json:"local_connection_server"`
	Tags                  []string `json:"tags"`
	IPMode                string   `json:"ip_mode"`
	SmartCardSupport      string   `json:"smart_card_support"`
	SmartCardForAdmin     string   `json:"smart_card_support_for_admin"`
	BypassTunnel          bool     `json:"bypass_tunnel"`
	BypassPCoIPGateway    bool     `json:"bypass_pcoip_gateway"`
	BypassBlastGateway    bool     `json:"bypass_app_blast_gateway"`
	FIPSMode              bool     `json:"fips_mode_enabled"`
}

// restEntitlement holds the fields of GlobalDesktopEntitlementSummaryV7
// and GlobalApplicationEntitlementSummaryV7 (the desktop-only and
// application-only ones as pointers, left out of the other).
type restEntitlement struct {
	ID                        string   `json:"id"`
	Name                      string   `json:"name"`
	DisplayName               string   `json:"display_name"`
	Description               string   `json:"description,omitempty"`
	Enabled                   bool     `json:"enabled"`
	Dedicated                 *bool    `json:"dedicated,omitempty"`
	Scope                     string   `json:"scope"`
	UseHomeSite               bool     `json:"use_home_site"`
	RequireHomeSite           bool     `json:"require_home_site"`
	UsePreferredSites         bool     `json:"use_preferred_sites"`
	IgnoreHighLoad            bool     `json:"ignore_preferred_sites_with_high_load"`
	SessionDistribution       string   `json:"session_distribution_policy"`
	AutoClean                 bool     `json:"multiple_session_auto_clean"`
	MultipleSessions          *bool    `json:"allow_multiple_sessions_per_user,omitempty"`
	ClientRestrictions        bool     `json:"enable_client_restrictions"`
	DefaultProtocol           string   `json:"default_display_protocol"`
	SupportedProtocols        []string `json:"supported_display_protocols"`
	ChooseProtocol            bool     `json:"allow_users_to_choose_protocol"`
	ResetMachines             *bool    `json:"allow_users_to_reset_machines,omitempty"`
	ChooseMachines            bool     `json:"allow_users_to_choose_machines"`
	Collaboration             *bool    `json:"session_collaboration_enabled,omitempty"`
	DisplayMachineName        *bool    `json:"display_assigned_machine_name,omitempty"`
	DisplayMachineAlias       *bool    `json:"display_machine_alias,omitempty"`
	CloudManaged              *bool    `json:"cloud_managed,omitempty"`
	PCoIPUltra                *bool    `json:"pcoip_ultra_protocol_enabled,omitempty"`
	MultiSessionMode          string   `json:"multi_session_mode,omitempty"`
	PreLaunch                 *bool    `json:"enable_pre_launch,omitempty"`
	LaunchLimit               *bool    `json:"app_launch_limit_enabled,omitempty"`
	EntraSSO                  bool     `json:"entra_sso_enabled"`
	FederatedAccessGroup      string   `json:"federated_access_group_id"`
	Tags                      []string `json:"cs_restriction_tags,omitempty"`
	BackupDesktopEntitlement  string   `json:"backup_gde_id,omitempty"`
	PrimaryDesktopEntitlement string   `json:"primary_gde_id,omitempty"`
	BackupAppEntitlement      string   `json:"backup_gae_id,omitempty"`
	MemberPods                []string `json:"member_pods"`
	UserCount                 int      `json:"user_count"`
	GroupCount                int      `json:"group_count"`
	ShortcutLocations         []string `json:"shortcut_locations_v2"`
}

type restMembers struct {
	ID         string   `json:"id"`
	Principals []string `json:"ad_user_or_group_ids"`
}

type restHomeSite struct {
	ID                 string `json:"id"`
	Principal          string `json:"ad_user_or_group_id"`
	Group              bool   `json:"group"`
	DesktopEntitlement string `json:"global_desktop_entitlement_id,omitempty"`
	AppEntitlement     string `json:"global_application_entitlement_id,omitempty"`
	SiteID             string `json:"site_id"`
	SiteName           string `json:"site_name"`
	ForRedirection     bool   `json:"use_homesite_for_redirection"`
	UserName           string `json:"user_name"`
	Domain             string `json:"domain,omitempty"`
}

type restPodAssignment struct {
	ID                 string `json:"id"`
	User               string `json:"user_id"`
	DesktopEntitlement string `json:"global_desktop_entitlement_id"`
	Pod                string `json:"pod_id"`
}

type restAccessGroup struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	Deletable     bool     `json:"deletable"`
	PermissionIDs []string `json:"permission_ids"`
}

type restADEntry struct {
	ID                  string   `json:"id"`
	Group               bool     `json:"group"`
	LoginName           string   `json:"login_name"`
	Name                string   `json:"name"`
	UserDisplayName     string   `json:"user_display_name,omitempty"`
	FirstName           string   `json:"first_name,omitempty"`
	LastName            string   `json:"last_name,omitempty"`
	Description         string   `json:"description,omitempty"`
	Domain              string   `json:"domain,omitempty"`
	NetBIOSDomain       string   `json:"domain_net_biosname,omitempty"`
	DisplayName         string   `json:"display_name"`
	UserPrincipalName   string   `json:"user_principal_name,omitempty"`
	GroupMembershipIDs  []string `json:"group_membership_ids"`
	KioskUser           *bool    `json:"kiosk_user,omitempty"`
	UnauthenticatedUser *bool    `json:"unauthenticated_user,omitempty"`
}

type restDesktopPool struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	DisplayName        string `json:"display_name"`
	Description        string `json:"description,omitempty"`
	Enabled            bool   `json:"enabled"`
	Type               string `json:"type"`
	Source             string `json:"source"`
	UserAssignment     string `json:"user_assignment"`
	SessionType        string `json:"session_type"`
	Entitlement        string `json:"global_desktop_entitlement_id,omitempty"`
	EntitlementName    string `json:"global_entitlement_name,omitempty"`
	FarmID             string `json:"farm_id,omitempty"`
	NumMachines        int    `json:"num_machines,omitempty"`
	NumSessions        int    `json:"num_sessions,omitempty"`
	EntraSSO           bool   `json:"entra_sso_enabled"`
	CloudManaged       bool   `json:"cloud_managed"`
	NamingMethod       string `json:"naming_method,omitempty"`
	AccessGroupID      string `json:"access_group_id"`
	ClientRestrictions bool   `json:"enable_client_restrictions"`
}

type restPoolMetrics struct {
	ID                      string  `json:"id"`
	NumMachines             int     `json:"num_machines"`
	OccupancyCount          int     `json:"occupancy_count"`
	NumConnectedSessions    int     `json:"num_connected_sessions"`
	NumDisconnectedSessions int     `json:"num_disconnected_sessions"`
	NumIdleSessions         int     `json:"num_idle_sessions"`
	LoadIndex               float64 `json:"load_index"`
}

type restFarm struct {
	ID                 string           `json:"id"`
	Name               string           `json:"name"`
	DisplayName        string           `json:"display_name"`
	Description        string           `json:"description,omitempty"`
	Type               string           `json:"type"`
	Source             string           `json:"source"`
	Enabled            bool             `json:"enabled"`
	MaxSessionType     string           `json:"max_session_type"`
	MaxSessionsPerHost int              `json:"max_sessions_per_rds_server,omitempty"`
	LoadBalancer       restLoadBalancer `json:"load_balancer_settings"`
	AccessGroupID      string           `json:"access_group_id"`
	EntraSSO           bool             `json:"entra_sso_enabled"`
}

type restLoadBalancer struct {
	LoadIndexThreshold         int  `json:"load_index_threshold"`
	ConnectingSessionThreshold int  `json:"connecting_session_threshold"`
	LoadIndexLBEnabled         bool `json:"load_index_lb_enabled"`
	IncludeSessionCount        bool `json:"include_session_count"`
	CPUThreshold               int  `json:"cpu_threshold"`
	MemoryThreshold            int  `json:"memory_threshold"`
	DiskQueueLengthThreshold   int  `json:"disk_queue_length_threshold"`
	DiskReadLatencyThreshold   int  `json:"disk_read_latency_threshold"`
	DiskWriteLatencyThreshold  int  `json:"disk_write_latency_threshold"`
}

type restRDSServer struct {
	ID                   string `json:"id"`
	Name                 string `json:"name"`
	Description          string `json:"description,omitempty"`
	DNSName              string `json:"dns_name"`
	FarmID               string `json:"farm_id"`
	FarmName             string `json:"farm_name"`
	Enabled              bool   `json:"enabled"`
	LoadIndex            *int   `json:"load_index,omitempty"`
	LoadPreference       string `json:"load_preference"`
	SessionCount         int    `json:"session_count"`
	MaxSessionsType      string `json:"max_sessions_type"`
	MaxSessionsCount     int    `json:"max_sessions_count,omitempty"`
	MaxSessionsTypeConf  string `json:"max_sessions_type_configured"`
	State                string `json:"state"`
	OperatingSystem      string `json:"operating_system"`
	AccessGroupID        string `json:"access_group_id"`
	AgentVersion         string `json:"agent_version"`
	FarmType             string `json:"farm_type"`
	MessageSecurityMode  string `json:"message_security_mode"`
	MessageSecurityEnhan bool   `json:"message_security_enhanced_mode_supported"`
}

type restAppPool struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	DisplayName      string `json:"display_name"`
	Description      string `json:"description,omitempty"`
	Enabled          bool   `json:"enabled"`
	FarmID           string `json:"farm_id"`
	FarmName         string `json:"farm_name"`
	Entitlement      string `json:"global_application_entitlement_id,omitempty"`
	ExecutablePath   string `json:"executable_path"`
	MultiSessionMode string `json:"multi_session_mode"`
	Status           string `json:"status"`
	AccessGroupID    string `json:"access_group_id"`
}

type restMachine struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	DNSName        string   `json:"dns_name"`
	PoolID         string   `json:"desktop_pool_id"`
	PoolName       string   `json:"desktop_pool_name"`
	PoolType       string   `json:"desktop_pool_type"`
	PoolSource     string   `json:"desktop_pool_source"`
	UserAssignment string   `json:"desktop_pool_user_assignment"`
	UserIDs        []string `json:"user_ids"`
	UserNames      []string `json:"user_names"`
	State          string   `json:"state"`
	Type           string   `json:"type"`
	AccessGroupID  string   `json:"access_group_id"`
}

type restSession struct {
	ID                     string          `json:"id"`
	UserID                 string          `json:"user_id"`
	UserName               string          `json:"user_name"`
	DesktopEntitlement     string          `json:"global_desktop_entitlement_id,omitempty"`
	DesktopEntitlementName string          `json:"global_desktop_entitlement_name,omitempty"`
	AppEntitlements        []string        `json:"global_application_entitlement_ids,omitempty"`
	AppEntitlementNames    []string        `json:"global_application_entitlement_names,omitempty"`
	PodID                  string          `json:"pod_id"`
	PodName                string          `json:"pod_name"`
	BrokeringPodID         string          `json:"brokering_pod_id"`
	BrokeringPodName       string          `json:"brokering_pod_name"`
	SiteID                 string          `json:"site_id"`
	SiteName               string          `json:"site_name"`
	DesktopPoolID          string          `json:"desktop_pool_id,omitempty"`
	FarmID                 string          `json:"farm_id,omitempty"`
	RDSServerID            string          `json:"rds_server_id,omitempty"`
	MachineID              string          `json:"machine_id,omitempty"`
	MachineName            string          `json:"machine_or_rds_server_name,omitempty"`
	ApplicationNames       []string        `json:"application_names,omitempty"`
	PoolOrFarmName         string          `json:"desktop_pool_or_farm_name"`
	State                  string          `json:"session_state"`
	Type                   string          `json:"session_type"`
	Protocol               string          `json:"session_protocol,omitempty"`
	Client                 *restClientData `json:"client_data,omitempty"`
	BrokeredRemotely       bool            `json:"brokered_remotely"`
	ResourcedRemotely      bool            `json:"resourced_remotely"`
	StartTime              int64           `json:"start_time"`
	DisconnectedTime       int64           `json:"disconnected_time,omitempty"`
}

type restClientData struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

// The mappings of values that differ between cpactl and the API.

// restScope is an entitlement's scope as the API spells it.
func restScope(scope string) (string, error) {
	switch scope {
	case ldapschema.ScopeAny:
		return "ALL_SITES", nil
	case ldapschema.ScopeSite:
		return "WITHIN_SITE", nil
	case ldapschema.ScopeLocal:
		return "WITHIN_POD", nil
	}
	return "", fmt.Errorf("scope %q has no REST value", scope)
}

// restDomain is a user's domain as the API carries it: the DNS domain and
// the NetBIOS one. cpactl's Domain is the NetBIOS name when there is one,
// else the DNS name, else empty (import reads it back in that order).
func restDomain(domain string) (dns, netbios string) {
	switch {
	case domain == "":
		return "", ""
	case strings.Contains(domain, "."):
		return domain, ""
	case strings.EqualFold(domain, netbiosDomain):
		return dnsDomain, domain
	}
	return strings.ToLower(domain) + ".example.com", domain
}

// restLoad is a host's load index: cpactl's -1 (load balancing disabled on
// the host) is no load_index and a load_preference of UNKNOWN.
func restLoad(loadIndex int) (*int, string) {
	switch {
	case loadIndex < 0:
		return nil, "UNKNOWN"
	case loadIndex < 34:
		return &loadIndex, "LIGHT"
	case loadIndex < 67:
		return &loadIndex, "NORMAL"
	case loadIndex < 100:
		return &loadIndex, "HEAVY"
	}
	return &loadIndex, "BLOCK"
}

// restMaxSessions is a farm's session limit: cpactl's 0 is UNLIMITED.
func restMaxSessions(perHost int) (string, int) {
	if perHost <= 0 {
		return "UNLIMITED", 0
	}
	return "LIMITED", perHost
}

// fqdn is a Connection Server's or host's DNS name.
func fqdn(name string) string { return strings.ToLower(name) + "." + dnsDomain }

func (h *horizonWriter) fag() string { return h.id("federation-access-group", 0) }

func (h *horizonWriter) accessGroup() string { return h.id("access-group", 0) }

// writeGlobal writes the federation-wide reads, in the pull's order.
func (h *horizonWriter) writeGlobal(files *[]horizon.File) error {
	p := h.p
	// cpa
	cpa := restCPA{GUID: h.id("federation", 0), Name: fmt.Sprintf("cpa-seed-%d", p.cfg.Seed), Sites: []string{},
		Status: "ENABLED", Statuses: []restCSStatus{}}
	for s := range p.sites {
		cpa.Sites = append(cpa.Sites, h.id("site", s))
	}
	for c := 0; c < len(p.cs); c += len(p.pods) {
		cpa.Statuses = append(cpa.Statuses, restCSStatus{ID: h.id("connection-server", c), Name: p.cs[c].Name,
			Status: "ENABLED", MessageCode: "LMV_OP_OK"})
	}
	if err := h.writeObject(files, "cpa", "/federation/v2/cpa", cpa); err != nil {
		return err
	}
	// sites
	siteIndex := map[string]int{}
	for s, site := range p.sites {
		siteIndex[site.Name] = s
	}
	err := h.writeList(files, "global", "sites", "/federation/v3/sites", "", "", false, func(add func(any) error) error {
		for s, site := range p.sites {
			rs := restSite{ID: h.id("site", s), Name: site.Name, Description: site.Description, SiteURL: site.URL,
				Pods: []string{}, PreferredSites: []string{}}
			for i := range p.pods {
				if p.podOf[i] == s {
					rs.Pods = append(rs.Pods, h.id("pod", i))
				}
			}
			for _, name := range site.PreferredSites {
				rs.PreferredSites = append(rs.PreferredSites, h.id("site", siteIndex[name]))
			}
			if err := add(rs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := h.writePods(files, "global", "", 0); err != nil {
		return err
	}
	// monitor-pods: the remote pods, seen from the first.
	err = h.writeList(files, "global", "monitor-pods", "/monitor/v2/pods", "", "", false, func(add func(any) error) error {
		for i := 1; i < len(p.pods); i++ {
			status := "ONLINE"
			if !p.pods[i].Online {
				status = "OFFLINE"
			}
			mp := restMonitorPod{ID: h.id("pod", i), Name: p.pods[i].Name, SiteID: h.id("site", p.podOf[i]),
				Endpoints: []restMonitorEndpoint{}}
			for c := i; c < len(p.cs); c += len(p.pods) {
				mp.Endpoints = append(mp.Endpoints, restMonitorEndpoint{ID: h.id("connection-server", c), Name: p.cs[c].Name,
					URL: "https://" + fqdn(p.cs[c].Name) + ":8472", Enabled: true, Status: status, LastUpdated: epochMillis,
					Roundtrip: int64(10 + (i*37+c*11)%90)})
			}
			if err := add(mp); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, kind := range []string{ldapschema.TypeDesktop, ldapschema.TypeApplication} {
		if err := h.writeEntitlements(files, kind); err != nil {
			return err
		}
	}
	for _, kind := range []string{ldapschema.TypeDesktop, ldapschema.TypeApplication} {
		endpoint, path := "desktop-entitlement-members", "/entitlements/v1/global-desktop-entitlements"
		if kind == ldapschema.TypeApplication {
			endpoint, path = "application-entitlement-members", "/entitlements/v1/global-application-entitlements"
		}
		err := h.writeList(files, "global", endpoint, path, "", "", true, func(add func(any) error) error {
			for e, ge := range p.ges {
				if ge.rec.Type != kind {
					continue
				}
				rm := restMembers{ID: h.geID(e), Principals: []string{}}
				for _, m := range ge.members {
					rm.Principals = append(rm.Principals, h.memberSID(m))
				}
				if err := add(rm); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	row := 0
	err = h.writeList(files, "global", "home-sites", "/federation/v2/home-sites", "", "", true, func(add func(any) error) error {
		return p.eachHomeSite(func(principal member, ge, site int) error {
			hs := restHomeSite{ID: h.id("home-site", row), Principal: h.memberSID(principal), Group: principal.group,
				SiteID: h.id("site", site), SiteName: p.sites[site].Name}
			row++
			if principal.group {
				hs.UserName, hs.Domain = p.groups.name(principal.index), dnsDomain
			} else {
				u := p.user(principal.index)
				hs.UserName = u.UID
				hs.Domain, _ = restDomain(u.Domain)
			}
			if ge >= 0 {
				if p.ges[ge].rec.Type == ldapschema.TypeApplication {
					hs.AppEntitlement = h.geID(ge)
				} else {
					hs.DesktopEntitlement = h.geID(ge)
				}
			}
			return add(hs)
		})
	})
	if err != nil {
		return err
	}
	err = h.writeList(files, "global", "pod-assignments", "/federation/v1/pod-assignments", "", "", true, func(add func(any) error) error {
		for a := 0; a < p.cfg.Assignments; a++ {
			as := p.assignmentOf(a)
			if err := add(restPodAssignment{ID: h.id("pod-assignment", a), User: h.userSID(as.user),
				DesktopEntitlement: h.geID(as.ge), Pod: h.id("pod", p.poolAt[as.pool].pod)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = h.writeList(files, "global", "federation-access-groups", "/config/v2/federation-access-groups", "", "", false, func(add func(any) error) error {
		return add(restAccessGroup{ID: h.fag(), Name: "Root", Description: "Root federated access group", PermissionIDs: []string{}})
	})
	if err != nil {
		return err
	}
	return h.writeList(files, "global", "ad-users-or-groups", "/external/v4/ad-users-or-groups", "detailed_info=true", "", false, h.adEntries)
}

// writeObject writes an unpaged read whose answer is one object (cpa).
func (h *horizonWriter) writeObject(files *[]horizon.File, endpoint, path string, v any) error {
	name := horizon.PageName("global", endpoint, 0)
	fw, err := h.d.Create(name)
	if err != nil {
		return err
	}
	b, err := h.encode(v)
	if err == nil {
		_, err = fw.Write(b)
	}
	if err == nil {
		err = fw.Close()
	}
	if err != nil {
		fw.Abort()
		return err
	}
	h.addFiles(files, []horizon.File{{Name: name, Endpoint: endpoint, Path: path, Records: 1, Bytes: fw.Bytes(),
		Server: horizon.GeneratedURL, SHA256: fw.SHA256()}})
	return nil
}

// writePods writes /federation/v1/pods as pod local sees it, into dir.
func (h *horizonWriter) writePods(files *[]horizon.File, dir, pod string, local int) error {
	p := h.p
	return h.writeList(files, dir, "pods", "/federation/v1/pods", "", pod, false, func(add func(any) error) error {
		for i, pd := range p.pods {
			rp := restPod{ID: h.id("pod", i), Name: pd.Name, Description: pd.Description, SiteID: h.id("site", p.podOf[i]),
				LocalPod: i == local, Endpoints: []string{}, DesktopEntitlements: h.podGEs[i][0], AppEntitlements: h.podGEs[i][1]}
			if rp.DesktopEntitlements == nil {
				rp.DesktopEntitlements = []string{}
			}
			if rp.AppEntitlements == nil {
				rp.AppEntitlements = []string{}
			}
			for c := i; c < len(p.cs); c += len(p.pods) {
				rp.Endpoints = append(rp.Endpoints, h.id("connection-server", c))
			}
			if err := add(rp); err != nil {
				return err
			}
		}
		return nil
	})
}

// restEntitlementOf maps an entitlement; what the API cannot carry (an
// application entitlement with RDP or multiple sessions per user) is an
// error, never dropped.
func (h *horizonWriter) restEntitlementOf(e int) (restEntitlement, error) {
	p := h.p
	ge := p.ges[e]
	rec := ge.rec
	scope, err := restScope(rec.Scope)
	if err != nil {
		return restEntitlement{}, fmt.Errorf("entitlement %s: %w", rec.Name, err)
	}
	no, yes := false, true
	re := restEntitlement{ID: h.geID(e), Name: rec.Name, DisplayName: rec.Name, Description: rec.Description,
		Enabled: rec.Enabled, Scope: scope, UseHomeSite: rec.UseHomeSite, RequireHomeSite: rec.RequireHomeSite,
		UsePreferredSites: rec.UsePreferredSites, IgnoreHighLoad: rec.IgnoreHighLoad, SessionDistribution: rec.LoadDistribution,
		AutoClean: rec.AutoClean, ClientRestrictions: rec.ClientRestrictions, DefaultProtocol: rec.DefaultProtocol,
		ChooseProtocol: true, FederatedAccessGroup: h.fag(), Tags: rec.Tags, MemberPods: h.memberPods[e],
		ShortcutLocations: []string{}}
	if re.MemberPods == nil {
		re.MemberPods = []string{}
	}
	for _, m := range ge.members {
		if m.group {
			re.GroupCount++
		} else {
			re.UserCount++
		}
	}
	if rec.Type == ldapschema.TypeApplication {
		if rec.DefaultProtocol == ldapschema.ProtocolRDP || rec.MultipleSessionsPerUser || rec.Dedicated {
			return restEntitlement{}, fmt.Errorf("application entitlement %s: the REST API carries no RDP, multiple sessions per user or dedicated application entitlement", rec.Name)
		}
		re.SupportedProtocols = []string{ldapschema.ProtocolBlast, ldapschema.ProtocolPCoIP}
		re.MultiSessionMode, re.PreLaunch, re.LaunchLimit = "DISABLED", &no, &no
		return re, nil
	}
	re.SupportedProtocols = []string{ldapschema.ProtocolBlast, ldapschema.ProtocolPCoIP, ldapschema.ProtocolRDP}
	multi := rec.MultipleSessionsPerUser
	re.Dedicated, re.MultipleSessions = &rec.Dedicated, &multi
	re.ResetMachines, re.Collaboration, re.DisplayMachineName, re.DisplayMachineAlias = &no, &no, &no, &no
	re.CloudManaged, re.PCoIPUltra = &no, &no
	if rec.Dedicated {
		re.ResetMachines = &yes
	}
	return re, nil
}

func (h *horizonWriter) writeEntitlements(files *[]horizon.File, kind string) error {
	p := h.p
	endpoint, path := "global-desktop-entitlements", "/inventory/v7/global-desktop-entitlements"
	if kind == ldapschema.TypeApplication {
		endpoint, path = "global-application-entitlements", "/inventory/v7/global-application-entitlements"
	}
	return h.writeList(files, "global", endpoint, path, "", "", true, func(add func(any) error) error {
		for e, ge := range p.ges {
			if ge.rec.Type != kind {
				continue
			}
			re, err := h.restEntitlementOf(e)
			if err != nil {
				return err
			}
			if err := add(re); err != nil {
				return err
			}
		}
		return nil
	})
}

// adEntries adds every user, then every group, with the groups each is a
// direct member of (the API's direction: member to groups).
func (h *horizonWriter) adEntries(add func(any) error) error {
	p := h.p
	no := false
	for u := 0; u < p.cfg.Users; u++ {
		rec := p.user(u)
		dns, netbios := restDomain(rec.Domain)
		first, last, _ := strings.Cut(rec.FullName, " ")
		e := restADEntry{ID: h.userSID(u), LoginName: rec.UID, Name: rec.FullName, UserDisplayName: rec.FullName,
			FirstName: first, LastName: last, Domain: dns, NetBIOSDomain: netbios, DisplayName: rec.UID,
			GroupMembershipIDs: []string{}, KioskUser: &no, UnauthenticatedUser: &no}
		if dns != "" {
			e.DisplayName = dns + `\` + rec.UID
			e.UserPrincipalName = rec.UID + "@" + dns
		}
		for _, g := range p.groups.userGroups(u) {
			e.GroupMembershipIDs = append(e.GroupMembershipIDs, h.groupSID(g))
		}
		if err := add(e); err != nil {
			return err
		}
	}
	g := p.groups
	for idx := 0; idx < g.total(); idx++ {
		l, _ := g.level(idx)
		name := g.name(idx)
		e := restADEntry{ID: h.groupSID(idx), Group: true, LoginName: name, Name: name, Description: groupDescriptions[l],
			Domain: dnsDomain, NetBIOSDomain: netbiosDomain, DisplayName: dnsDomain + `\` + name, GroupMembershipIDs: []string{}}
		for _, parent := range g.parents(idx) {
			e.GroupMembershipIDs = append(e.GroupMembershipIDs, h.groupSID(parent))
		}
		if err := add(e); err != nil {
			return err
		}
	}
	return nil
}

// writePod writes pod i's reads (its sessions come later, from one pass
// over every session), in the pull's order.
func (h *horizonWriter) writePod(i int) error {
	p := h.p
	n := len(p.pods)
	dir := horizon.PodDir(i, p.pods[i].Name)
	podID := h.id("pod", i)
	files := &h.podFiles[i]
	if err := h.d.Mkdir(dir); err != nil {
		return err
	}
	if i > 0 {
		// Reached through its endpoints: where it is, then its own view
		// of the pods (the pull's check that it is this pod).
		path := "/federation/v1/pods/" + url.PathEscape(podID) + "/endpoints"
		err := h.writeList(files, dir, "pod-endpoints", path, "", podID, false, func(add func(any) error) error {
			for c := i; c < len(p.cs); c += n {
				if err := add(restPodEndpoint{ID: h.id("connection-server", c), Name: p.cs[c].Name,
					ServerAddress: "https://" + fqdn(p.cs[c].Name) + ":8472", Enabled: true}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := h.writePods(files, dir, podID, i); err != nil {
			return err
		}
	}
	err := h.writeList(files, dir, "connection-servers", "/config/v3/connection-servers", "", podID, false, func(add func(any) error) error {
		for c := i; c < len(p.cs); c += n {
			cs := p.cs[c]
			tags := cs.Tags
			if tags == nil {
				tags = []string{}
			}
			if err := add(restConnectionServer{ID: h.id("connection-server", c), Name: cs.Name, Enabled: true, Version: csVersion,
				FQHN: fqdn(cs.Name), ServerURL: "https://" + fqdn(cs.Name) + ":443", ExternalURL: "https://" + fqdn(cs.Name) + ":443",
				ClusterName: "cluster-" + strings.ToUpper(p.cs[i].Name), LocalConnectionServer: c == i, Tags: tags, IPMode: "IPv4",
				SmartCardSupport: "OFF", SmartCardForAdmin: "OFF"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var metrics []int // desktop pools (not RDS) with metrics
	err = h.writeList(files, dir, "desktop-pools", "/inventory/v12/desktop-pools", "", podID, true, func(add func(any) error) error {
		for _, j := range p.podPools[i] {
			pool := p.pools[j]
			if pool.Kind == ldapschema.KindApplication {
				continue
			}
			rp := restDesktopPool{ID: h.id("pool", j), Name: pool.Name, DisplayName: pool.Name, Description: pool.Description,
				Enabled: pool.Enabled, Type: "AUTOMATED", Source: "INSTANT_CLONE", UserAssignment: "FLOATING", SessionType: "DESKTOP",
				NumMachines: pool.Capacity, NumSessions: pool.Sessions, NamingMethod: "PATTERN", AccessGroupID: h.accessGroup()}
			if pool.Dedicated && pool.Kind == ldapschema.KindDesktop {
				rp.UserAssignment = "DEDICATED" // RDS desktop pools are floating
			}
			if pool.Kind == ldapschema.KindRDSDesktop {
				rp.Type, rp.Source, rp.NamingMethod = "RDS", "RDS", ""
				rp.FarmID = h.id("farm", p.poolAt[j].farm)
			} else {
				metrics = append(metrics, j)
			}
			if e := p.poolAt[j].ge; e >= 0 {
				rp.Entitlement, rp.EntitlementName = h.geID(e), p.ges[e].rec.Name
				rp.ClientRestrictions = p.ges[e].rec.ClientRestrictions
			}
			if err := add(rp); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for b := 0; b*horizon.MetricsBatch < len(metrics); b++ {
		batch := metrics[b*horizon.MetricsBatch : min(len(metrics), (b+1)*horizon.MetricsBatch)]
		l := h.list(dir, "desktop-pool-metrics", "/monitor/v3/desktop-pools/metrics", "", podID, false)
		l.batch = b + 1
		for _, j := range batch {
			if err := l.add(poolMetrics(h.id("pool", j), p.pools[j])); err != nil {
				l.fw.Abort()
				return err
			}
		}
		fls, err := l.done()
		if err != nil {
			return err
		}
		h.addFiles(files, fls)
	}
	err = h.writeList(files, dir, "farms", "/inventory/v9/farms", "", podID, true, func(add func(any) error) error {
		for f := i; f < len(p.farms); f += n {
			farm := p.farms[f]
			typ, limit := restMaxSessions(farm.MaxSessionsPerHost)
			if err := add(restFarm{ID: h.id("farm", f), Name: farm.Name, DisplayName: farm.Name, Description: farm.Description,
				Type: "AUTOMATED", Source: "INSTANT_CLONE", Enabled: true, MaxSessionType: typ, MaxSessionsPerHost: limit,
				LoadBalancer: restLoadBalancer{LoadIndexThreshold: farm.LoadIndexThreshold, ConnectingSessionThreshold: farm.ConnectingSessionThreshold,
					LoadIndexLBEnabled: true, IncludeSessionCount: true},
				AccessGroupID: h.accessGroup()}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := h.writeHosts(files, dir, podID, i); err != nil {
		return err
	}
	err = h.writeList(files, dir, "application-pools", "/inventory/v10/application-pools", "", podID, true, func(add func(any) error) error {
		for _, j := range p.podPools[i] {
			pool := p.pools[j]
			if pool.Kind != ldapschema.KindApplication {
				continue
			}
			status := "AVAILABLE"
			if !pool.Enabled {
				status = "DISABLED"
			}
			ra := restAppPool{ID: h.id("pool", j), Name: pool.Name, DisplayName: pool.Name, Description: pool.Description,
				Enabled: pool.Enabled, FarmID: h.id("farm", p.poolAt[j].farm), FarmName: pool.Farm,
				ExecutablePath: `C:\Program Files\` + pool.Name + `\` + pool.Name + ".exe", MultiSessionMode: "DISABLED",
				Status: status, AccessGroupID: h.accessGroup()}
			if e := p.poolAt[j].ge; e >= 0 {
				ra.Entitlement = h.geID(e)
			}
			if err := add(ra); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return h.writeList(files, dir, "machines", "/inventory/v10/machines", "", podID, true, func(add func(any) error) error {
		for a := 0; a < p.cfg.Assignments; a++ {
			as := p.assignmentOf(a)
			if p.poolAt[as.pool].pod != i {
				continue
			}
			if err := add(h.machine(a, as)); err != nil {
				return err
			}
		}
		return nil
	})
}

// poolMetrics are a desktop pool's counters: capacity as num_machines;
// sessions as connected plus disconnected (a quarter disconnected);
// occupancy, as Horizon defines it, the assigned machines of a dedicated
// pool and the sessions of a floating one.
func poolMetrics(id string, pool ldapschema.Pool) restPoolMetrics {
	m := restPoolMetrics{ID: id, NumMachines: pool.Capacity, NumConnectedSessions: pool.Sessions - pool.Sessions/4,
		NumDisconnectedSessions: pool.Sessions / 4, OccupancyCount: pool.Sessions}
	if pool.Dedicated {
		m.OccupancyCount = pool.Assigned
	}
	if pool.Capacity > 0 {
		m.LoadIndex = float64(100*m.OccupancyCount) / float64(pool.Capacity)
	}
	return m
}

// writeHosts writes pod i's RDS hosts, drawn in the order (and from the
// stream) the LDIF writes them in: pod by pod, farm by farm.
func (h *horizonWriter) writeHosts(files *[]horizon.File, dir, podID string, i int) error {
	p := h.p
	n := len(p.pods)
	return h.writeList(files, dir, "rds-servers", "/inventory/v6/rds-servers", "", podID, true, func(add func(any) error) error {
		for f := i; f < len(p.farms); f += n {
			farm := p.farms[f]
			typ, limit := restMaxSessions(farm.MaxSessionsPerHost)
			for k := 0; k < p.hostsOf(f); k++ {
				host := p.hostRecord(h.hosts, f, k)
				load, pref := restLoad(host.LoadIndex)
				state := "AVAILABLE"
				if !host.Enabled {
					state = "DISABLED"
				}
				if err := add(restRDSServer{ID: h.hostID(f, k), Name: host.Name, Description: host.Description, DNSName: fqdn(host.Name),
					FarmID: h.id("farm", f), FarmName: farm.Name, Enabled: host.Enabled, LoadIndex: load, LoadPreference: pref,
					SessionCount: host.Sessions, MaxSessionsType: typ, MaxSessionsCount: limit, MaxSessionsTypeConf: "UNCONFIGURED",
					State: state, OperatingSystem: "WINDOWS_SERVER_2016_OR_ABOVE", AccessGroupID: h.accessGroup(),
					AgentVersion: "2512", FarmType: "AUTOMATED", MessageSecurityMode: "ENHANCED", MessageSecurityEnhan: true}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// hostID is the id of host k of farm f: hosts are numbered h = f + k*F
// across the federation (the generator's spread of hosts over farms).
func (h *horizonWriter) hostID(f, k int) string { return h.id("rds-server", f+k*len(h.p.farms)) }

func (h *horizonWriter) machine(a int, as assignmentPlan) restMachine {
	p := h.p
	pool := p.pools[as.pool]
	u := p.user(as.user)
	return restMachine{ID: h.id("machine", a), Name: as.machine, DNSName: fqdn(as.machine), PoolID: h.id("pool", as.pool),
		PoolName: pool.Name, PoolType: "AUTOMATED", PoolSource: "INSTANT_CLONE", UserAssignment: "DEDICATED",
		UserIDs: []string{h.userSID(as.user)}, UserNames: []string{userName(u)}, State: "AVAILABLE", Type: "MANAGED_MACHINE",
		AccessGroupID: h.accessGroup()}
}

// userName is a user as Horizon shows it, DOMAIN\name.
func userName(u ldapschema.User) string {
	if u.Domain == "" {
		return u.UID
	}
	return u.Domain + `\` + u.UID
}

// writeSessions writes every pod's global sessions (asked with
// pod_id=<the pod>, so each is in its hosting pod's list) in one pass over
// the sessions: one list per pod, each page written as it fills.
func (h *horizonWriter) writeSessions() ([][]horizon.File, error) {
	p := h.p
	lists := make([]*list, len(p.pods))
	for i, pod := range p.pods {
		podID := h.id("pod", i)
		lists[i] = h.list(horizon.PodDir(i, pod.Name), "global-sessions", "/inventory/v3/global-sessions",
			url.Values{"pod_id": {podID}}.Encode(), podID, true)
	}
	abort := func() {
		for _, l := range lists {
			if l.fw != nil {
				l.fw.Abort()
			}
		}
	}
	err := p.eachSession(func(k int, sp sessionPlan) error {
		return lists[sp.pod].add(h.session(k, sp))
	})
	if err != nil {
		abort()
		return nil, err
	}
	out := make([][]horizon.File, len(p.pods))
	for i, l := range lists {
		if out[i], err = l.done(); err != nil {
			abort()
			return nil, err
		}
	}
	return out, nil
}

// session maps session k.
func (h *horizonWriter) session(k int, sp sessionPlan) restSession {
	p := h.p
	ge := p.ges[sp.ge].rec
	pool := p.pools[sp.pool]
	u := p.user(sp.user)
	site := p.podOf[sp.pod]
	s := restSession{ID: p.sessionID(k), UserID: h.userSID(sp.user), UserName: userName(u),
		PodID: h.id("pod", sp.pod), PodName: p.pods[sp.pod].Name,
		BrokeringPodID: h.id("pod", sp.brokering), BrokeringPodName: p.pods[sp.brokering].Name,
		SiteID: h.id("site", site), SiteName: p.sites[site].Name, PoolOrFarmName: pool.Name,
		State: ldapschema.StateConnected, Type: "DESKTOP", BrokeredRemotely: sp.brokering != sp.pod,
		ResourcedRemotely: sp.brokering != sp.pod, StartTime: epochMillis - int64(k%86400)*1000}
	if ge.Type == ldapschema.TypeApplication {
		s.Type = "APPLICATION"
		s.AppEntitlements, s.AppEntitlementNames = []string{h.geID(sp.ge)}, []string{ge.Name}
		// The API names no application pool: the pool is the application
		// the session runs.
		s.ApplicationNames = []string{pool.Name}
	} else {
		s.DesktopEntitlement, s.DesktopEntitlementName = h.geID(sp.ge), ge.Name
		s.DesktopPoolID = h.id("pool", sp.pool)
	}
	switch {
	case sp.host >= 0:
		f := p.poolAt[sp.pool].farm
		name, _ := p.host(f, sp.host)
		s.FarmID, s.RDSServerID, s.MachineName = h.id("farm", f), h.hostID(f, sp.host), name
		s.PoolOrFarmName = p.farms[f].Name
	case sp.assignment >= 0:
		as := p.assignmentOf(sp.assignment)
		s.MachineID, s.MachineName = h.id("machine", sp.assignment), as.machine
	}
	if sp.connected {
		s.Protocol = ge.DefaultProtocol
	} else {
		s.State = ldapschema.StateDisconnected
		s.DisconnectedTime = s.StartTime + 60000
	}
	if sp.client >= 0 {
		c := p.computer(sp.client)
		s.Client = &restClientData{Name: c.Name, Address: fmt.Sprintf("10.%d.%d.%d", sp.client>>16&255, sp.client>>8&255, sp.client&255),
			Type: "WINDOWS", Version: "8.17.0"}
	}
	return s
}
