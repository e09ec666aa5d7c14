package commands

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cpactl/cpactl/internal/nearest"
	"github.com/cpactl/cpactl/ldapschema"
)

type settingChange struct {
	set   ldapschema.Setting
	value int
}

// parseSettingPairs validates every KEY=VALUE before anything is written.
func parseSettingPairs(pairs []string) ([]settingChange, error) {
	var out []settingChange
	seen := map[string]string{}
	for _, pair := range pairs {
		key, val, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, errorf("write KEY=VALUE, e.g. pae-LoadThresholdForSite=90", "%q is not KEY=VALUE", pair)
		}
		set, ok := ldapschema.LookupSetting(strings.TrimSpace(key))
		if !ok {
			return nil, unknownSetting(key, "cpactl settings set --help")
		}
		if prev, dup := seen[set.Attr]; dup {
			return nil, errorf("give each setting once", "%s is given twice (%s and %s)", set.Attr, prev, pair)
		}
		seen[set.Attr] = pair
		v, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil {
			return nil, errorf("", "%s=%q is not an integer: it takes an integer %s", set.Attr, val, set.Range())
		}
		if err := set.Check(v); err != nil {
			return nil, errorf("", "%v", err)
		}
		out = append(out, settingChange{set: set, value: v})
	}
	return out, nil
}

// unknownSetting refuses a key that names no setting: "did you mean" the
// nearest one, and where the five are listed.
func unknownSetting(key, help string) error {
	hint := "see `" + help + "` for the five settings"
	if near := ldapschema.NearestSetting(strings.TrimSpace(key)); near != "" {
		hint = nearest.Hint(near) + " (" + hint + ")"
	}
	return &Failure{Code: ExitError, Err: fmt.Errorf("unknown setting %q", key), Hint: hint}
}
