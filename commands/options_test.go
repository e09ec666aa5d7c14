package commands

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/ldapschema"
)

// TestAttrWord: one word per attribute, the flag's that sets it.
func TestAttrWord(t *testing.T) {
	for attr, want := range map[string]string{
		ldapschema.AttrUseHomeSite:                    "use-home-site",
		ldapschema.AttrIgnoreHighLoadPreferredSites:   "ignore-high-load-preferred-sites",
		ldapschema.AttrMultipleSessionAutoClean:       "multiple-session-auto-clean",
		ldapschema.AttrHostConnectingSessionThreshold: "host-connecting-session-threshold",
		ldapschema.AttrMaxSessionsPerHost:             "max-sessions-per-host",
		ldapschema.AttrBrokeringPodDN:                 "brokering-pod",
		ldapschema.AttrPodDN:                          "pod",
		ldapschema.AttrFarmDN:                         "farm",
		ldapschema.AttrTag:                            "tags",
		ldapschema.AttrHostFeature:                    "features",
		ldapschema.AttrConnectingSessions:             "connecting",
		ldapschema.AttrSessionState:                   "state",
		ldapschema.AttrDescription:                    "description",
		ldapschema.AttrSiteURL:                        "site-url",
		ldapschema.AttrPodStatus:                      "status",
		ldapschema.AttrCN:                             "name",
		ldapschema.AttrSN:                             "name",
		ldapschema.AttrSiteDN:                         "site",
		ldapschema.AttrMember:                         "members",
	} {
		if got := attrWord(attr); got != want {
			t.Errorf("attrWord(%s) = %q, want %q", attr, got, want)
		}
	}
}

func TestToggle(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // "nil", "true", "false" or "error"
	}{
		{"neither", nil, "nil"},
		{"on", []string{"--use-home-site"}, "true"},
		{"off", []string{"--no-use-home-site"}, "false"},
		{"on=false", []string{"--use-home-site=false"}, "false"},
		{"both", []string{"--use-home-site", "--no-use-home-site"}, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := &cobra.Command{Use: "x"}
			tg := addToggle(cmd, "use-home-site", "no-use-home-site", "")
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			err := tg.resolve(cmd)
			got := "nil"
			switch {
			case err != nil:
				got = "error"
			case tg.value != nil && *tg.value:
				got = "true"
			case tg.value != nil:
				got = "false"
			}
			if got != tt.want {
				t.Fatalf("got %s, want %s (err %v)", got, tt.want, err)
			}
		})
	}
}

func TestParseFeatures(t *testing.T) {
	got, err := parseFeatures([]string{"blast", " RDP ", "blast"})
	if err != nil || len(got) != 2 || got[0] != ldapschema.FeatureRDP || got[1] != ldapschema.FeatureBlast {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := parseFeatures([]string{"teleport"}); err == nil {
		t.Fatal("unknown feature accepted")
	}
	if _, err := parseFeatures([]string{" "}); err == nil {
		t.Fatal("empty list accepted")
	}
}
