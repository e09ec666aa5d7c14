package ldapschema

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/internal/nearest"
)

// Setting describes one global setting of cn=Common (docs/schema.md).
type Setting struct {
	Attr    string // Horizon's attribute name, e.g. pae-LoadThresholdForSite
	Alias   string // kebab-case alias accepted on the command line
	Min     int
	Max     int
	Default int
	UsedBy  string
	// PerPod is set for the three pae-RDS* values, which a pod's entry may
	// also hold (docs/storm.md); the others are federation-wide only.
	PerPod bool
}

// Settings lists the five global settings in the order docs/schema.md gives.
var Settings = []Setting{
	{Attr: AttrLoadThresholdForSite, Alias: "load-threshold-for-site", Min: 0, Max: 100, Default: 98,
		UsedBy: "skipping overloaded preferred sites"},
	{Attr: AttrRDSLoadIndexThreshold, Alias: "rds-load-index-threshold", Min: 0, Max: 100, Default: 20,
		UsedBy: "RDS host buckets", PerPod: true},
	{Attr: AttrRDSConnectingSessionThreshold, Alias: "rds-connecting-session-threshold", Min: 0, Max: 150, Default: 20,
		UsedBy: "RDS host buckets", PerPod: true},
	{Attr: AttrMinRDSServersInLBQueue, Alias: "min-rds-servers-in-lb-queue", Min: 0, Max: 1000, Default: 4,
		UsedBy: "dynamic raise of the load index threshold", PerPod: true},
	{Attr: AttrEnableSiteRedirection, Alias: "enable-site-redirection", Min: 0, Max: 1, Default: 0,
		UsedBy: "home site redirection"},
}

// LookupSetting finds a setting by its attribute name or alias,
// case-insensitively.
func LookupSetting(key string) (Setting, bool) {
	for _, s := range Settings {
		if strings.EqualFold(s.Attr, key) || strings.EqualFold(s.Alias, key) {
			return s, true
		}
	}
	return Setting{}, false
}

// NearestSetting returns the attribute name of the setting nearest to a
// key that names none (LoadThresholdForSite: pae-LoadThresholdForSite),
// compared with the attribute names and the aliases; "" when none is near.
func NearestSetting(key string) string {
	f := nearest.New(key)
	byName := map[string]string{}
	for _, s := range Settings {
		for _, n := range []string{s.Attr, s.Alias} {
			f.Add(n)
			byName[n] = s.Attr
		}
	}
	best, _ := f.Best()
	return byName[best]
}

// Range returns the setting's accepted range for messages, e.g. "0..100" (docs/conventions.md: ranges are written A..B).
func (s Setting) Range() string { return fmt.Sprintf("%d..%d", s.Min, s.Max) }

// Check validates a value of the setting.
func (s Setting) Check(v int) error {
	if v < s.Min || v > s.Max {
		return fmt.Errorf("%s=%d is out of range: it takes an integer %s", s.Attr, v, s.Range())
	}
	return nil
}
