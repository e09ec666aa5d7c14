// Package generate writes synthetic Cloud Pod Architecture federations:
// every object cpactl's schema knows, linked the way a real federation is
// (pools of the right kind in their entitlements, farm-backed pools on
// farms of their own pod, sessions of entitled users on their entitlement's
// pools, pod assignments of dedicated users, home sites of entitled users
// and groups), in the directory layout of `cpactl init`. The output is
// deterministic (the same Config gives the same entries, byte for byte),
// passes `cpactl lint` without findings, and loads with slapadd or ldapadd
// into an empty database.
//
// Generation streams: only small per-kind tables (sites, pods, farms,
// pools, entitlements, group shapes) are held in memory; users, hosts,
// computers, sessions and assignments are computed from their index as they
// are written, so memory does not grow with them.
//
// The package imports neither cobra nor a directory connection: Generate
// hands each entry to a callback, and Write encodes them as LDIF.
package generate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
)

// Config says how much of each object to generate, under which base DN
// and from which seed.
type Config struct {
	// Base is the federation's base DN (default ldapschema.DefaultBase). Its
	// first RDN must be dc= or o=: the base entry is part of the output.
	Base string
	// Seed drives every random choice: the same Config gives the same output.
	Seed int64

	Sites             int
	Pods              int
	OfflinePods       int // of Pods, the last ones
	ConnectionServers int
	Entitlements      int
	Pools             int
	Farms             int
	Hosts             int
	Users             int
	Groups            int
	Computers         int
	HomeSites         int // home-site rows, global and per-entitlement overrides
	Sessions          int
	Assignments       int // pod assignments of dedicated entitlements
}

// Count describes one count of Config as the command line spells it.
type Count struct {
	Flag  string // the flag name, without dashes
	Usage string
	Field func(*Config) *int
}

// Counts lists every count of Config, in the order the output holds them.
var Counts = []Count{
	{"sites", "sites, each with a ranked preferred-site list", func(c *Config) *int { return &c.Sites }},
	{"pods", "pods, spread over the sites", func(c *Config) *int { return &c.Pods }},
	{"offline-pods", "pods (the last ones) that are OFFLINE", func(c *Config) *int { return &c.OfflinePods }},
	{"connection-servers", "Connection Servers, spread over the pods, some with restriction tags", func(c *Config) *int { return &c.ConnectionServers }},
	{"farms", "RDS farms, spread over the pods", func(c *Config) *int { return &c.Farms }},
	{"hosts", "RDS hosts, spread over the farms", func(c *Config) *int { return &c.Hosts }},
	{"pools", "desktop, RDS desktop and application pools", func(c *Config) *int { return &c.Pools }},
	{"entitlements", "global entitlements, desktop and application", func(c *Config) *int { return &c.Entitlements }},
	{"users", "users", func(c *Config) *int { return &c.Users }},
	{"groups", "groups, nested several levels deep", func(c *Config) *int { return &c.Groups }},
	{"computers", "client computers, members of groups", func(c *Config) *int { return &c.Computers }},
	{"home-sites", "home-site rows (global and per-entitlement, users and groups)", func(c *Config) *int { return &c.HomeSites }},
	{"assignments", "pod assignments of users of dedicated entitlements", func(c *Config) *int { return &c.Assignments }},
	{"sessions", "sessions of entitled users", func(c *Config) *int { return &c.Sessions }},
}

// Preset names.
const (
	PresetDemo   = "demo"
	PresetCPAMax = "cpa-max"
)

// presets are the named configurations (seed and base aside).
var presets = map[string]Config{
	// A federation small enough to read: a few sites and pods, tens of users.
	PresetDemo: {Sites: 4, Pods: 7, OfflinePods: 1, ConnectionServers: 10, Farms: 3, Hosts: 18, Pools: 20,
		Entitlements: 8, Users: 40, Groups: 12, Computers: 8, HomeSites: 16, Assignments: 10, Sessions: 60},
	// Horizon 8's Cloud Pod Architecture maximums (15 sites, 50 pods, 350
	// Connection Servers, 250,000 sessions), filled out with the objects a
	// federation of that size holds.
	PresetCPAMax: {Sites: 15, Pods: 50, OfflinePods: 2, ConnectionServers: 350, Farms: 1000, Hosts: 20000,
		Pools: 5000, Entitlements: 1000, Users: 50000, Groups: 5000, Computers: 2500, HomeSites: 3000,
		Assignments: 20000, Sessions: 250000},
}

// Presets returns the preset names, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset returns the named preset's counts, with the default base and seed 0.
func Preset(name string) (Config, error) {
	c, ok := presets[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Config{}, fmt.Errorf("unknown preset %q: use one of %s", name, strings.Join(Presets(), ", "))
	}
	c.Base = ldapschema.DefaultBase
	return c, nil
}

// Entries returns the number of entries the configuration generates: the
// layout of `cpactl init` (base entry, containers, cn=Common) and one entry
// per counted object.
func (c Config) Entries() int {
	n := len(ldapschema.DIT{Base: c.Base}.Containers()) + 2
	for _, k := range Counts {
		if k.Flag != "offline-pods" {
			n += *k.Field(&c)
		}
	}
	return n
}

// ConfigError is a configuration the generator refuses: a negative count,
// counts that do not fit together, or a base DN it cannot write. Its
// message is one line naming the flags (Counts) at fault.
type ConfigError struct{ msg string }

func (e *ConfigError) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &ConfigError{msg: fmt.Sprintf(format, args...)} }

// Validate checks the counts against each other: the rules that make a
// federation lint-clean (every site has a pod, every pod a Connection
// Server, every farm a host, every entitlement a pool it can use, a pod
// stays online). Each error is one line naming the flags.
func (c Config) Validate() error {
	for _, k := range Counts {
		if v := *k.Field(&c); v < 0 {
			return refuse("--%s is %d: counts are 0 or more", k.Flag, v)
		}
	}
	base := c.Base
	if base == "" {
		base = ldapschema.DefaultBase
	}
	layout, err := directory.Layout(ldapschema.DIT{Base: base})
	if err != nil {
		return refuse("%v", err)
	}
	if layout[0].DN != base {
		return refuse("base %q: generate writes the base entry, and only a dc= or o= base has one (as `cpactl init` creates it)", base)
	}
	needs := []struct {
		what  string
		n     int
		whose string
		m     int
	}{
		{"pods", c.Pods, "sites", c.Sites},
		{"connection-servers", c.ConnectionServers, "pods", c.Pods},
		{"farms", c.Farms, "pods", c.Pods},
		{"hosts", c.Hosts, "farms", c.Farms},
		{"pools", c.Pools, "pods", c.Pods},
		{"entitlements", c.Entitlements, "pools", c.Pools},
		{"home-sites", c.HomeSites, "sites", c.Sites},
		{"sessions", c.Sessions, "users", c.Users},
		{"sessions", c.Sessions, "entitlements", c.Entitlements},
		{"assignments", c.Assignments, "users", c.Users},
		{"assignments", c.Assignments, "entitlements", c.Entitlements},
	}
	for _, n := range needs {
		if n.n > 0 && n.m == 0 {
			return refuse("--%s %d needs --%s above 0", n.what, n.n, n.whose)
		}
	}
	switch {
	case c.Pods < c.Sites:
		return refuse("--pods (%d) is less than --sites (%d): every site gets at least one pod", c.Pods, c.Sites)
	case c.OfflinePods > 0 && c.OfflinePods >= c.Pods:
		return refuse("--offline-pods (%d) must be less than --pods (%d): at least one pod stays online", c.OfflinePods, c.Pods)
	case c.ConnectionServers < c.Pods:
		return refuse("--connection-servers (%d) is less than --pods (%d): every pod gets at least one", c.ConnectionServers, c.Pods)
	case c.Hosts < c.Farms:
		return refuse("--hosts (%d) is less than --farms (%d): every farm gets at least one host", c.Hosts, c.Farms)
	case c.Entitlements > c.Pools:
		return refuse("--entitlements (%d) is more than --pools (%d): every entitlement gets a pool of its own it can use", c.Entitlements, c.Pools)
	case c.HomeSites > c.Users+c.Groups:
		return refuse("--home-sites (%d) is more than --users plus --groups (%d): each user or group has at most one global home site",
			c.HomeSites, c.Users+c.Groups)
	}
	return nil
}
