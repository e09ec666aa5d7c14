package horizonimport

import (
	"errors"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/ldapschema"
)

// Base holds what the REST API does not carry, as a directory (or a
// snapshot of one) holds it: the import takes these values from it instead
// of inventing them, and keeps them instead of wiping them (docs/horizon.md,
// "What the API does not carry"). Maps are keyed by fold.Key of the names.
type Base struct {
	// Source says where it came from, for the report ("the directory at
	// ldap://...", "snapshot base.ldif").
	Source string
	// Settings: the four pae-* thresholds (and site redirection when the
	// pull has no CPA settings).
	Settings ldapschema.SettingsRecord
	// Sites: the preferred sites when the server had no v3 sites.
	Sites map[string]ldapschema.Site
	// Pods: the per-pod pae-RDS* values; the status when the pull has no
	// monitor data.
	Pods map[string]ldapschema.Pod
	// ConnectionServers (key pod\x00name): descriptions.
	ConnectionServers map[string]ldapschema.ConnectionServer
	// Hosts (key pod\x00farm\x00name): connecting sessions, features and
	// policy thresholds.
	Hosts map[string]ldapschema.Host
	// Entitlements: the default protocol where Horizon's has no cpactl
	// value, multiple sessions per user of application entitlements, the
	// values of fields whose Horizon value is unknown.
	Entitlements map[string]ldapschema.Entitlement
	// Computers and the computers each group holds (by group name): the
	// API has no client computers.
	Computers      []ldapschema.Computer
	GroupComputers map[string][]string
	// Pools and Farms of every pod, for pods missing from the pull.
	Pools []ldapschema.Pool
	Farms []ldapschema.Farm
}

func key(parts ...string) string {
	k := ""
	for i, p := range parts {
		if i > 0 {
			k += "\x00"
		}
		k += fold.Key(p)
	}
	return k
}

// ReadBase reads what Base holds from a store (the live directory or a
// snapshot): sites, pods and what lies below them, entitlements, groups
// and computers; never users, sessions or other per-user rows, so its size
// does not grow with sessions. A store without cpactl's layout is an
// empty base.
func ReadBase(st *directory.Store, source string) (*Base, error) {
	b := &Base{Source: source, Sites: map[string]ldapschema.Site{}, Pods: map[string]ldapschema.Pod{},
		ConnectionServers: map[string]ldapschema.ConnectionServer{}, Hosts: map[string]ldapschema.Host{},
		Entitlements: map[string]ldapschema.Entitlement{}, GroupComputers: map[string][]string{}}
	settings, err := st.Settings()
	if empty(err) {
		return b, nil
	}
	if err != nil {
		return nil, err
	}
	b.Settings = settings
	sites, err := st.Sites()
	if empty(err) {
		return b, nil // a base entry and cn=Common, no layout yet
	}
	if err != nil {
		return nil, err
	}
	for _, s := range sites {
		b.Sites[key(s.Name)] = s
	}
	pods, err := st.Pods()
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		b.Pods[key(p.Name)] = p
	}
	css, err := st.ConnectionServers()
	if err != nil {
		return nil, err
	}
	for _, c := range css {
		b.ConnectionServers[key(c.Pod, c.Name)] = c
	}
	hosts, err := st.Hosts("")
	if err != nil {
		return nil, err
	}
	for _, h := range hosts {
		b.Hosts[key(h.Pod, h.Farm, h.Name)] = h
	}
	if b.Pools, err = st.Pools(); err != nil {
		return nil, err
	}
	if b.Farms, err = st.Farms(); err != nil {
		return nil, err
	}
	ges, err := st.Entitlements()
	if err != nil {
		return nil, err
	}
	for _, g := range ges {
		b.Entitlements[key(g.Name)] = g
	}
	if b.Computers, err = st.Computers(); err != nil {
		return nil, err
	}
	computers := map[string]bool{}
	for _, c := range b.Computers {
		computers[ldapschema.NormalizeDN(c.DN)] = true
	}
	groups, err := st.Groups()
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		for _, m := range g.Members {
			if computers[ldapschema.NormalizeDN(m)] {
				b.GroupComputers[key(g.Name)] = append(b.GroupComputers[key(g.Name)], ldapschema.NameOf(m))
			}
		}
	}
	return b, nil
}

// empty reports an error that means the store holds no federation yet:
// no base entry, or not the layout `cpactl init` creates.
func empty(err error) bool {
	// A refusal is not an empty directory: slapd hides from an account
	// that may not read (anonymous) what is there, answering "no such
	// object" (directory.RefusedError wraps it).
	var refused *directory.RefusedError
	if errors.As(err, &refused) {
		return false
	}
	var layout *ldapconn.LayoutError
	return errors.As(err, &layout) || directory.IsNoSuchObject(err)
}
