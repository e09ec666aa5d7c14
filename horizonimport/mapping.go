// Package horizonimport turns a Horizon pull directory (package horizon,
// docs/horizon.md) into a cpactl federation: the records of ldapschema,
// named by names and not by Horizon's ids, written as the LDIF `cpactl
// export` writes (directory.SortedLDIF). It is the one place the mapping
// of docs/horizon.md ("The field mapping") lives. What the REST API does
// not carry (the pae-* thresholds, host features and connecting sessions,
// per-host policy thresholds, client computers, ...) is taken from a Base
// (the directory, or a snapshot) or left at cpactl's defaults; what cpactl
// cannot hold is counted and named in the Report, never dropped silently.
//
// It streams: sessions (250,000 at the CPA maximum) are decoded a page at
// a time on every processor and written to the sorted output as they
// come; what is held in memory grows with the federation's objects
// (users, pools, entitlements), never with its sessions. Joins are map
// look-ups by id.
package horizonimport

import (
	"strings"

	"github.com/cpactl/cpactl/ldapschema"
)

// The answers' fields the import reads, as the 2512 swagger names them
// (docs/horizon.md lists each with its cpactl field). Every other field is
// ignored. A pointer is a field whose absence matters (an older server,
// a value to take from the base instead).

type cpaJSON struct {
	SiteRedirection *struct {
		Enabled bool `json:"site_redirection_enabled"`
	} `json:"site_redirection_settings"`
}

type siteJSON struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Description    string   `json:"description"`
	URL            string   `json:"site_url"`
	PreferredSites []string `json:"preferred_sites"`
}

type podJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	SiteID      string `json:"site_id"`
}

type podMonitorJSON struct {
	ID        string `json:"id"`
	Endpoints []struct {
		Name    string `json:"name"`
		Enabled *bool  `json:"enabled"`
		Status  string `json:"status"`
	} `json:"endpoints"`
}

type entitlementJSON struct {
	ID                 string   `json:"id"`
	Name               string   `json:"name"`
	Description        string   `json:"description"`
	Enabled            *bool    `json:"enabled"`
	Dedicated          *bool    `json:"dedicated"`
	Scope              string   `json:"scope"`
	UseHomeSite        bool     `json:"use_home_site"`
	RequireHomeSite    bool     `json:"require_home_site"`
	UsePreferredSites  *bool    `json:"use_preferred_sites"`
	IgnoreHighLoad     *bool    `json:"ignore_preferred_sites_with_high_load"`
	Policy             string   `json:"session_distribution_policy"`
	AutoClean          bool     `json:"multiple_session_auto_clean"`
	MultipleSessions   *bool    `json:"allow_multiple_sessions_per_user"`
	Tags               []string `json:"cs_restriction_tags"`
	ClientRestrictions bool     `json:"enable_client_restrictions"`
	DefaultProtocol    string   `json:"default_display_protocol"`
	BackupGDE          string   `json:"backup_gde_id"`
	BackupGAE          string   `json:"backup_gae_id"`
}

type membersJSON struct {
	ID      string   `json:"id"`
	Members []string `json:"ad_user_or_group_ids"`
}

type homeSiteJSON struct {
	ID     string `json:"id"`
	SID    string `json:"ad_user_or_group_id"`
	Group  bool   `json:"group"`
	GDE    string `json:"global_desktop_entitlement_id"`
	GAE    string `json:"global_application_entitlement_id"`
	SiteID string `json:"site_id"`
}

type assignmentJSON struct {
	ID     string `json:"id"`
	UserID string `json:"user_id"`
	GDE    string `json:"global_desktop_entitlement_id"`
	GAE    string `json:"global_application_entitlement_id"`
	PodID  string `json:"pod_id"`
}

type adJSON struct {
	ID          string   `json:"id"`
	Group       bool     `json:"group"`
	LoginName   string   `json:"login_name"`
	Domain      string   `json:"domain"`
	NetBIOS     string   `json:"domain_net_biosname"`
	Name        string   `json:"name"`
	DisplayName string   `json:"user_display_name"`
	FirstName   string   `json:"first_name"`
	LastName    string   `json:"last_name"`
	Description string   `json:"description"`
	MemberOf    []string `json:"group_membership_ids"`
}

type connectionServerJSON struct {
	ID   string   `json:"id"`
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

type desktopPoolJSON struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Description    string `json:"description"`
	Enabled        *bool  `json:"enabled"`
	Type           string `json:"type"`
	UserAssignment string `json:"user_assignment"`
	GDE            string `json:"global_desktop_entitlement_id"`
	FarmID         string `json:"farm_id"`
	NumMachines    *int   `json:"num_machines"`
	NumSessions    *int   `json:"num_sessions"`
}

type poolMetricsJSON struct {
	ID           string `json:"id"`
	NumMachines  *int   `json:"num_machines"`
	Occupancy    *int   `json:"occupancy_count"`
	Connected    *int   `json:"num_connected_sessions"`
	Disconnected *int   `json:"num_disconnected_sessions"`
}

type farmJSON struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Description    string `json:"description"`
	MaxSessionType string `json:"max_session_type"`
	MaxPerHost     *int   `json:"max_sessions_per_rds_server"`
	LoadBalancer   *struct {
		LoadIndexThreshold         *int `json:"load_index_threshold"`
		ConnectingSessionThreshold *int `json:"connecting_session_threshold"`
	} `json:"load_balancer_settings"`
}

type rdsServerJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	FarmID      string `json:"farm_id"`
	Enabled     *bool  `json:"enabled"`
	LoadIndex   *int   `json:"load_index"`
	LoadPref    string `json:"load_preference"`
	Sessions    *int   `json:"session_count"`
	State       string `json:"state"`
}

type appPoolJSON struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Description   string `json:"description"`
	Enabled       *bool  `json:"enabled"`
	FarmID        string `json:"farm_id"`
	DesktopPoolID string `json:"desktop_pool_id"`
	GAE           string `json:"global_application_entitlement_id"`
}

type machineJSON struct {
	Name          string   `json:"name"`
	DesktopPoolID string   `json:"desktop_pool_id"`
	UserIDs       []string `json:"user_ids"`
}

type sessionJSON struct {
	ID             string   `json:"id"`
	UserID         string   `json:"user_id"`
	GDE            string   `json:"global_desktop_entitlement_id"`
	GAEs           []string `json:"global_application_entitlement_ids"`
	Apps           []string `json:"application_names"`
	PodID          string   `json:"pod_id"`
	BrokeringPodID string   `json:"brokering_pod_id"`
	DesktopPoolID  string   `json:"desktop_pool_id"`
	FarmID         string   `json:"farm_id"`
	RDSServerID    string   `json:"rds_server_id"`
	State          string   `json:"session_state"`
	Client         *struct {
		Name string `json:"name"`
	} `json:"client_data"`
}

// An enum maps Horizon's values of one field to cpactl's. A value in
// Unsupported is one Horizon has and cpactl cannot hold (reported as
// such); any other value not in Values is unknown (a newer server).
type enum struct {
	Field       string
	Values      map[string]string
	Unsupported []string
}

// Map returns cpactl's value of v; ok is false when cpactl has none
// (unsupported reports whether Horizon documents it).
func (e enum) Map(v string) (mapped string, ok, unsupported bool) {
	if m, found := e.Values[v]; found {
		return m, true, false
	}
	for _, u := range e.Unsupported {
		if u == v {
			return "", false, true
		}
	}
	return "", false, false
}

// The enumerations of docs/horizon.md, Horizon's spelling to cpactl's.
var (
	scopeEnum = enum{Field: "scope", Values: map[string]string{
		"ALL_SITES": ldapschema.ScopeAny, "WITHIN_SITE": ldapschema.ScopeSite, "WITHIN_POD": ldapschema.ScopeLocal}}
	policyEnum = enum{Field: "session_distribution_policy", Values: map[string]string{
		"LOAD": ldapschema.PolicyLoad, "NONE": ldapschema.PolicyNone, "SESSION": ldapschema.PolicySession}}
	protocolEnum = enum{Field: "default_display_protocol", Values: map[string]string{
		"BLAST": ldapschema.ProtocolBlast, "PCOIP": ldapschema.ProtocolPCoIP, "RDP": ldapschema.ProtocolRDP},
		Unsupported: []string{"ULTRA"}}
	poolTypeEnum = enum{Field: "type", Values: map[string]string{
		"AUTOMATED": ldapschema.KindDesktop, "MANUAL": ldapschema.KindDesktop, "RDS": ldapschema.KindRDSDesktop}}
	assignmentEnum   = enum{Field: "user_assignment", Values: map[string]string{"DEDICATED": "DEDICATED", "FLOATING": "FLOATING"}}
	sessionStateEnum = enum{Field: "session_state", Values: map[string]string{
		"CONNECTED": ldapschema.StateConnected, "DISCONNECTED": ldapschema.StateDisconnected},
		Unsupported: []string{"PENDING"}}
	maxSessionEnum     = enum{Field: "max_session_type", Values: map[string]string{"UNLIMITED": "UNLIMITED", "LIMITED": "LIMITED"}}
	endpointStatusEnum = enum{Field: "status", Values: map[string]string{
		"ONLINE": ldapschema.PodOnline, "UNCHECKED": ldapschema.PodOnline, "OFFLINE": ldapschema.PodOffline}}
	// hostStateEnum: the RDS server states in which a host serves
	// sessions; cpactl models only the enabled flag, so every other state
	// (AGENT_UNREACHABLE, MAINTENANCE, ... of 29) is reported.
	hostStateEnum = enum{Field: "state", Values: map[string]string{
		"AVAILABLE": "AVAILABLE", "CONNECTED": "CONNECTED", "DISCONNECTED": "DISCONNECTED"}}
)

// podOnline derives a pod's status from its endpoints in /monitor/v2/pods:
// OFFLINE when it has enabled endpoints and every one of them is OFFLINE
// (ONLINE and UNCHECKED count as up); unknown statuses are returned for
// the report and count as up.
func podOnline(m podMonitorJSON) (online bool, unknown []string) {
	enabled, offline := 0, 0
	for _, ep := range m.Endpoints {
		if ep.Enabled != nil && !*ep.Enabled {
			continue
		}
		enabled++
		v, ok, _ := endpointStatusEnum.Map(ep.Status)
		if !ok {
			unknown = append(unknown, ep.Status)
			continue
		}
		if v == ldapschema.PodOffline {
			offline++
		}
	}
	return enabled == 0 || offline < enabled, unknown
}

// fullName is a user's full name (cn): AD's name, else the display name,
// else first and last names, else the login name.
func fullName(a adJSON) string {
	for _, s := range []string{a.Name, a.DisplayName, strings.TrimSpace(a.FirstName + " " + a.LastName)} {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return a.LoginName
}

// domainOf is the domain cpactl keeps for a user: the NetBIOS name
// (CORP\alice), else the DNS domain as Horizon gives it.
func domainOf(a adJSON) string {
	if a.NetBIOS != "" {
		return a.NetBIOS
	}
	return a.Domain
}

// qualified renders DOMAIN\name for messages.
func qualified(domain, name string) string {
	if domain == "" {
		return name
	}
	return domain + `\` + name
}
