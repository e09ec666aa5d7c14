package commands

import (
	"reflect"
	"strings"
	"testing"
)

func intp(v int) *int { return &v }

// TestParseHostLoad: one row per rule of --host-load's syntax.
func TestParseHostLoad(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    hostLoadWhatIf
		wantErr string
	}{
		{in: "rds-01=85", want: hostLoadWhatIf{host: "rds-01", given: "85", loadIndex: 85}},
		{in: "rds-01=-1", want: hostLoadWhatIf{host: "rds-01", given: "-1", loadIndex: -1}},
		{in: "rds-01=5,connecting=3", want: hostLoadWhatIf{host: "rds-01", given: "5,connecting=3", loadIndex: 5, connecting: intp(3)}},
		{in: "rds-01=5,sessions=9,connecting=0",
			want: hostLoadWhatIf{host: "rds-01", given: "5,sessions=9,connecting=0", loadIndex: 5, connecting: intp(0), sessions: intp(9)}},
		// A name may hold "=" and ",": the first "=" that starts a valid tail ends it.
		{in: "a=b,c=7", want: hostLoadWhatIf{host: "a=b,c", given: "7", loadIndex: 7}},
		{in: "h=5=7", want: hostLoadWhatIf{host: "h=5", given: "7", loadIndex: 7}},
		{in: "a\nb=7", want: hostLoadWhatIf{host: "a\nb", given: "7", loadIndex: 7}}, // found by FuzzWhatIfShortcuts
		{in: "rds-01", wantErr: "is not HOST=LOADINDEX"},
		{in: "rds-01=high", wantErr: "is not HOST=LOADINDEX"},
		{in: "=5", wantErr: "is not HOST=LOADINDEX"},
		{in: "rds-01=5,connecting=1,connecting=2", wantErr: "gives connecting twice"},
		{in: "rds-01=99999999999999999999", wantErr: "99999999999999999999 is not an integer in range"}, // was read as 9223372036854775807
		{in: "rds-01=5,sessions=-99999999999999999999", wantErr: "sessions=-99999999999999999999 is not an integer in range"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseHostLoad(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestParsePoolSessions: the last "=" ends the pool's name.
func TestParsePoolSessions(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    poolSessionsWhatIf
		wantErr string
	}{
		{in: "uk-desktops=40", want: poolSessionsWhatIf{pool: "uk-desktops", sessions: 40}},
		{in: "a=b=3", want: poolSessionsWhatIf{pool: "a=b", sessions: 3}},
		{in: "uk-desktops=-1", want: poolSessionsWhatIf{pool: "uk-desktops", sessions: -1}}, // the range is the real command's, checked on the pool read
		{in: "uk-desktops", wantErr: "is not POOL=N"},
		{in: "=4", wantErr: "is not POOL=N"},
		{in: "uk-desktops=many", wantErr: `"many" is not an integer`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parsePoolSessions(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestParsePreferred: SITE=A,B with CSV quoting; an empty list clears.
func TestParsePreferred(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    preferredWhatIf
		wantErr string
	}{
		{in: "India=UK,US", want: preferredWhatIf{site: "India", sites: []string{"UK", "US"}}},
		{in: "India= UK , US ", want: preferredWhatIf{site: "India", sites: []string{"UK", "US"}}},
		{in: `India="R&D, West",UK`, want: preferredWhatIf{site: "India", sites: []string{"R&D, West", "UK"}}},
		{in: "India=", want: preferredWhatIf{site: "India"}},
		{in: `India=UK, "R&D, West"`, want: preferredWhatIf{site: "India", sites: []string{"UK", "R&D, West"}}}, // a blank before a quote, as --set takes it
		{in: "India", wantErr: "is not SITE=A,B"},
		{in: "=UK", wantErr: "is not SITE=A,B"},
		{in: "India=India", wantErr: "India"},
		{in: "India=UK\nUS", wantErr: "a newline outside quotes"}, // US was dropped
		{in: "India=UK,uk", wantErr: "given twice"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parsePreferred(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestWhatIfSettingsParseAsSettingsSet: --setting takes what `settings
// set` takes, with its messages.
func TestWhatIfSettingsParseAsSettingsSet(t *testing.T) {
	for _, pairs := range [][]string{{"pae-LoadThresholdForSite=99"}, {"load-threshold-for-site=99"}, {"pae-LoadThresholdForSite=101"},
		{"bogus=1"}, {"pae-LoadThresholdForSite=1", "load-threshold-for-site=2"}} {
		w := &whatIfFlags{Settings: pairs}
		got, err := w.parse()
		want, wantErr := parseSettingPairs(pairs)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("%q: %v, settings set says %v", pairs, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got.settings, want) {
			t.Fatalf("%q: %+v, want %+v", pairs, got.settings, want)
		}
	}
}

// TestOverlayWithoutDataWhatIfsIsTheBaseStore: offline pods alone change
// no data, so the store is the one given, and the list is never nil.
func TestOverlayWithoutDataWhatIfsIsTheBaseStore(t *testing.T) {
	g, _, _ := snapshotGlobals(t)
	st, _, err := g.Store()
	if err != nil {
		t.Fatal(err)
	}
	w := &whatIfFlags{}
	got, list, offline, err := w.overlay(st)
	if err != nil || got != st || list == nil || len(list) != 0 || offline != nil {
		t.Fatalf("overlay: %v %v %v %v", got == st, list, offline, err)
	}
	w.OfflinePods = []string{"uk-pod-1"}
	got, list, offline, err = w.overlay(st)
	if err != nil || got != st || len(list) != 1 || list[0].Kind != "offline_pod" || len(offline) != 1 {
		t.Fatalf("overlay: %v %v %v %v", got == st, list, offline, err)
	}
}

// TestParseWhatIfSettings: POD:KEY=VALUE goes to the pod (the last ":"
// before the "=" ends its name), KEY=VALUE to cn=Common; per-pod keys are
// the pae-RDS* ones only, as `settings set --pod`.
func TestParseWhatIfSettings(t *testing.T) {
	fed, pods, err := parseWhatIfSettings([]string{"pae-LoadThresholdForSite=99", "lon:1:rds-load-index-threshold=30",
		"LON:1:pae-MinRDSServersInLBQueue=2", "par:pae-RDSLoadIndexThreshold=10"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fed) != 1 || fed[0].set.Attr != "pae-LoadThresholdForSite" || fed[0].value != 99 {
		t.Fatalf("federation %+v", fed)
	}
	if len(pods) != 2 || pods[0].pod != "lon:1" || len(pods[0].changes) != 2 || pods[1].pod != "par" ||
		pods[0].changes[1].set.Attr != "pae-MinRDSServersInLBQueue" {
		t.Fatalf("pods %+v", pods)
	}
	for _, bad := range [][]string{{"lon:pae-LoadThresholdForSite=50"}, {"lon:pae-RDSLoadIndexThreshold=1", "LON:rds-load-index-threshold=2"},
		{"lon:pae-RDSLoadIndexThreshold=500"}} {
		if _, _, err := parseWhatIfSettings(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
