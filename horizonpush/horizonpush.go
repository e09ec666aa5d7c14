// Package horizonpush maps cpactl's records to what `cpactl horizon push`
// makes Horizon match (horizon.Desired, by name, in the API's terms), lists
// what cpactl holds that the API cannot write, and checks cpactl's rules on
// what a push would leave in Horizon. The REST side (reading Horizon,
// planning and making the writes) is package horizon's; this package
// speaks no HTTP, no LDAP and no command line (docs/horizon.md, "push").
package horizonpush

import (
	"fmt"
	"strconv"

	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/rules"
)

// Store is the typed reads push needs of the desired state:
// directory.Store has them, on the live directory or on a snapshot.
type Store interface {
	Settings() (ldapschema.SettingsRecord, error)
	Sites() ([]ldapschema.Site, error)
	Pods() ([]ldapschema.Pod, error)
	Entitlements() ([]ldapschema.Entitlement, error)
	HomeSites(filter string) ([]ldapschema.HomeSite, error)
	Users() ([]ldapschema.User, error)
	Groups() ([]ldapschema.Group, error)
}

// Records is the part of a federation push reads.
type Records struct {
	Settings     ldapschema.SettingsRecord
	Sites        []ldapschema.Site
	Pods         []ldapschema.Pod
	Entitlements []ldapschema.Entitlement
	HomeSites    []ldapschema.HomeSite
	Users        []ldapschema.User
	Groups       []ldapschema.Group
}

// Read reads the records push needs from st.
func Read(st Store) (*Records, error) {
	r := &Records{}
	var err error
	if r.Settings, err = st.Settings(); err != nil {
		return nil, err
	}
	if r.Sites, err = st.Sites(); err != nil {
		return nil, err
	}
	if r.Pods, err = st.Pods(); err != nil {
		return nil, err
	}
	if r.Entitlements, err = st.Entitlements(); err != nil {
		return nil, err
	}
	if r.HomeSites, err = st.HomeSites(""); err != nil {
		return nil, err
	}
	if r.Users, err = st.Users(); err != nil {
		return nil, err
	}
	if r.Groups, err = st.Groups(); err != nil {
		return nil, err
	}
	return r, nil
}

// Scopes: cpactl's (the View API's) names and the REST API's.
var scopeToAPI = map[string]string{
	ldapschema.ScopeAny:   "ALL_SITES",
	ldapschema.ScopeSite:  "WITHIN_SITE",
	ldapschema.ScopeLocal: "WITHIN_POD",
}

// ScopeToAPI turns cpactl's scope (ANY, SITE, LOCAL) into the API's.
func ScopeToAPI(scope string) string {
	if s, ok := scopeToAPI[scope]; ok {
		return s
	}
	return scopeToAPI[ldapschema.ScopeAny]
}

// ScopeFromAPI turns the API's scope into cpactl's ("" when unknown).
func ScopeFromAPI(scope string) string {
	for k, v := range scopeToAPI {
		if v == scope {
			return k
		}
	}
	return ""
}

// notPushedReason says why the pae-* thresholds are not pushed.
const notPushedReason = "the REST API has no call that writes it (NOTES b.12): set it in Horizon's LDAP or console"

// Desired is what push makes Horizon match: every site's preferred
// sites, every global entitlement's pushed fields, every home-site row,
// and the users and groups cpactl holds; with what cpactl holds that the
// API cannot write (the four pae-* thresholds, federation-wide and per
// pod, when not at their defaults). A preferred-site list that breaks a
// rule (the site itself, a site twice) is refused (*rules.Error).
func Desired(r *Records) (horizon.Desired, error) {
	var d horizon.Desired
	for _, s := range r.Sites {
		if probs := rules.PreferredSiteProblems(s.Name, s.PreferredSites); len(probs) > 0 {
			what := "itself"
			if probs[0].Check == rules.CheckPreferredDuplicate {
				what = s.PreferredSites[probs[0].Index] + " twice"
			}
			return d, &rules.Error{Rule: probs[0].Check, Hint: "fix the list: cpactl site preferred " + s.Name + " --set A,B (cpactl lint lists such problems)",
				Message: fmt.Sprintf("site %s: its preferred sites name %s", s.Name, what)}
		}
		d.Sites = append(d.Sites, horizon.DesiredSite{Name: s.Name, PreferredSites: s.PreferredSites})
	}
	geByDN := make(map[string]ldapschema.Entitlement, len(r.Entitlements))
	for _, g := range r.Entitlements {
		geByDN[ldapschema.NormalizeDN(g.DN)] = g
	}
	for _, g := range r.Entitlements {
		de := horizon.DesiredEntitlement{Name: g.Name, Application: g.Type == ldapschema.TypeApplication,
			Scope: ScopeToAPI(g.Scope), UseHomeSite: g.UseHomeSite, RequireHomeSite: g.RequireHomeSite,
			UsePreferredSites: g.UsePreferredSites, IgnoreHighLoad: g.IgnoreHighLoad, Policy: policy(g.LoadDistribution),
			Enabled: g.Enabled}
		if g.BackupDN != "" {
			de.Backup = ldapschema.NameOf(g.BackupDN)
			if b, ok := geByDN[ldapschema.NormalizeDN(g.BackupDN)]; ok {
				de.Backup = b.Name
			}
		}
		d.Entitlements = append(d.Entitlements, de)
	}
	users := make(map[string]ldapschema.User, len(r.Users))
	for _, u := range r.Users {
		users[ldapschema.NormalizeDN(u.DN)] = u
		d.Users = append(d.Users, horizon.Member{Domain: u.Domain, Name: u.UID})
	}
	groups := make(map[string]ldapschema.Group, len(r.Groups))
	for _, g := range r.Groups {
		groups[ldapschema.NormalizeDN(g.DN)] = g
		d.Groups = append(d.Groups, horizon.Member{Name: g.Name, Group: true})
	}
	for _, h := range r.HomeSites {
		dh := horizon.DesiredHomeSite{Site: ldapschema.NameOf(h.SiteDN)}
		switch {
		case h.UserDN != "":
			u, ok := users[ldapschema.NormalizeDN(h.UserDN)]
			if !ok {
				d.NotPushed = append(d.NotPushed, horizon.NotPushed{Object: "home site " + ldapschema.NameOf(h.DN),
					Reason: "its user " + ldapschema.NameOf(h.UserDN) + " is not in the directory (cpactl lint reports it)"})
				continue
			}
			dh.Member = horizon.Member{Domain: u.Domain, Name: u.UID}
		default:
			g, ok := groups[ldapschema.NormalizeDN(h.GroupDN)]
			if !ok {
				d.NotPushed = append(d.NotPushed, horizon.NotPushed{Object: "home site " + ldapschema.NameOf(h.DN),
					Reason: "its group " + ldapschema.NameOf(h.GroupDN) + " is not in the directory (cpactl lint reports it)"})
				continue
			}
			dh.Member = horizon.Member{Name: g.Name, Group: true}
		}
		if h.EntitlementDN != "" {
			dh.Entitlement = ldapschema.NameOf(h.EntitlementDN)
			if g, ok := geByDN[ldapschema.NormalizeDN(h.EntitlementDN)]; ok {
				dh.Entitlement, dh.Application = g.Name, g.Type == ldapschema.TypeApplication
			}
		}
		d.HomeSites = append(d.HomeSites, dh)
	}
	d.NotPushed = append(d.NotPushed, notPushed(r)...)
	return d, nil
}

// policy is the API's session_distribution_policy of cpactl's load
// distribution (the same names; none stored is NONE).
func policy(p string) string {
	if p == "" {
		return ldapschema.PolicyNone
	}
	return p
}

// notPushed lists the pae-* thresholds cpactl holds away from their
// defaults: the API cannot write them. pae-EnableSiteRedirection can be
// written (PUT /federation/v2/cpa) but push does not write CPA settings.
func notPushed(r *Records) []horizon.NotPushed {
	var out []horizon.NotPushed
	for _, set := range ldapschema.Settings {
		v, isDefault := r.Settings.Value(set)
		if isDefault || v == set.Default {
			continue
		}
		reason := notPushedReason
		if set.Attr == ldapschema.AttrEnableSiteRedirection {
			reason = "push does not write the CPA settings (site_redirection_enabled of PUT /federation/v2/cpa): set it in Horizon's console"
		}
		out = append(out, horizon.NotPushed{Object: "settings", Field: set.Attr,
			Value: fmt.Sprintf("%d (default %d)", v, set.Default), Reason: reason})
	}
	for _, p := range r.Pods {
		for _, set := range ldapschema.Settings {
			if v, ok := p.RDS[set.Attr]; ok && set.PerPod {
				out = append(out, horizon.NotPushed{Object: "pod " + p.Name, Field: set.Attr,
					Value: strconv.Itoa(v), Reason: notPushedReason})
			}
		}
	}
	return out
}

// Check refuses a plan that would leave an entitlement breaking cpactl's
// rules in Horizon (rules.Entitlement on the entitlement as the write
// leaves it: the pushed fields from cpactl, the others as Horizon holds
// them): ignore-high-load needs a policy other than NONE, require-home-site
// needs use-home-site, and preferred sites apply only with scope ALL_SITES
// (a warning in cpactl, a refusal here: Horizon's rule is not documented,
// NOTES c.2). A backup it sets must pass rules.Backup. The error is a
// *rules.Error naming the entitlement and the fix.
func Check(p *horizon.Plan, r *Records) error {
	byName := map[string]ldapschema.Entitlement{}
	backupOf := map[string][]string{}
	for _, g := range r.Entitlements {
		byName[fold.Key(g.Name)] = g
		if g.BackupDN != "" {
			b := fold.Key(ldapschema.NameOf(g.BackupDN))
			backupOf[b] = append(backupOf[b], g.Name)
		}
	}
	for _, c := range p.Changes {
		if c.Result == nil {
			continue
		}
		ge := fromAPI(*c.Result)
		vs := rules.Entitlement(ge)
		for i := range vs {
			if vs[i].Check == rules.CheckPreferredSitesScope {
				vs[i].Warning = false
				vs[i].Message = fmt.Sprintf("use_preferred_sites with scope %s: Horizon applies preferred sites only with ALL_SITES", c.Result.Scope)
			}
		}
		if err := rules.Refusal(c.Kind, c.Object, vs); err != nil {
			return err
		}
		for _, f := range c.Fields {
			if f.Field != "backup_gde_id" || f.After == nil {
				continue
			}
			primary, okP := byName[fold.Key(c.Object)]
			backup, okB := byName[fold.Key(fmt.Sprint(f.After))]
			if !okP || !okB {
				continue
			}
			if err := rules.Refusal(c.Kind, c.Object, rules.Backup(primary, backup, backupOf[fold.Key(primary.Name)])); err != nil {
				return err
			}
		}
	}
	return nil
}

// fromAPI is the entitlement as cpactl's rules read it.
func fromAPI(e horizon.Entitlement) ldapschema.Entitlement {
	t := ldapschema.TypeDesktop
	if e.Application {
		t = ldapschema.TypeApplication
	}
	return ldapschema.Entitlement{Name: e.Name, Type: t, Scope: ScopeFromAPI(e.Scope), Dedicated: e.Dedicated,
		UseHomeSite: e.UseHomeSite, RequireHomeSite: e.RequireHomeSite, UsePreferredSites: e.UsePreferredSites,
		IgnoreHighLoad: e.IgnoreHighLoad, LoadDistribution: e.Policy, AutoClean: e.AutoClean,
		MultipleSessionsPerUser: e.MultipleSessions, ClientRestrictions: e.ClientRestriction, Enabled: e.Enabled}
}
