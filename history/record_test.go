package history

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/cpactl/cpactl/ldapschema"
)

func TestParseControl(t *testing.T) {
	run := Run{ID: "0123456789ab", Command: "cpactl site create Mars", Version: "v1"}
	runValue := `"` + strings.ToUpper(hex.EncodeToString(run.Value())) + `"`
	for _, tc := range []struct {
		in      string
		want    Control
		wantErr string
	}{
		{in: `{0}{1.3.6.1.1.21.2 criticality TRUE controlValue ""}`, want: Control{OID: OIDTxnSpec, Critical: true, Value: []byte{}}},
		{in: `{1}{` + ldapschema.OIDRunControl + ` controlValue ` + runValue + `}`, want: Control{OID: ldapschema.OIDRunControl, Value: run.Value()}},
		{in: `{2}{1.2.3}`, want: Control{OID: "1.2.3"}},
		{in: `{x}{1.2.3}`, wantErr: "index is not a number"},
		{in: `{0}1.2.3`, wantErr: "not in braces"},
		{in: `{0}{}`, wantErr: "no OID"},
		{in: `{0}{1.2.3 controlValue}`, wantErr: "without its value"},
		{in: `{0}{1.2.3 controlValue 41}`, wantErr: "not quoted"},
		{in: `{0}{1.2.3 controlValue "4G"}`, wantErr: "not hex"},
		{in: `{0}{1.2.3 other 1}`, wantErr: "unknown keyword"},
	} {
		got, err := ParseControl(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.OID != tc.want.OID || got.Critical != tc.want.Critical || string(got.Value) != string(tc.want.Value) {
			t.Errorf("%s: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestRunOf(t *testing.T) {
	run := Run{ID: "0123456789ab", Command: "cpactl site create Mars", Version: "v1"}
	runCtl := `{1}{` + ldapschema.OIDRunControl + ` controlValue "` + hex.EncodeToString(run.Value()) + `"}`
	txn := `{0}{1.3.6.1.1.21.2 criticality TRUE controlValue ""}`
	for _, tc := range []struct {
		name     string
		controls []string
		run      Run
		inTxn    bool
		err      bool
	}{
		{name: "another client", controls: nil},
		{name: "one write", controls: []string{strings.Replace(runCtl, "{1}", "{0}", 1)}, run: run},
		{name: "in a transaction", controls: []string{txn, runCtl}, run: run, inTxn: true},
		{name: "a bad run", controls: []string{`{0}{` + ldapschema.OIDRunControl + ` controlValue "7b7d"}`}, err: true},
	} {
		got, inTxn, err := Record{Controls: tc.controls}.RunOf()
		if (err != nil) != tc.err || got != tc.run || inTxn != tc.inTxn {
			t.Errorf("%s: %+v %v %v", tc.name, got, inTxn, err)
		}
	}
}

func TestGeneralizedTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time
		err  bool
	}{
		{in: "20261203134512.000066Z", want: time.Date(2026, 12, 3, 13, 45, 12, 66000, time.UTC)},
		{in: "20261203134512Z", want: time.Date(2026, 12, 3, 13, 45, 12, 0, time.UTC)},
		{in: "2026-12-03", err: true},
	} {
		got, err := ParseGeneralizedTime(tc.in)
		if (err != nil) != tc.err || !got.Equal(tc.want) {
			t.Errorf("%s: %v %v", tc.in, got, err)
		}
		if err == nil {
			if back, _ := ParseGeneralizedTime(GeneralizedTime(got)); !back.Equal(got) {
				t.Errorf("%s: written back as %s", tc.in, GeneralizedTime(got))
			}
		}
	}
}

// FuzzParseControl: reqControls is outside input; the parser never
// panics, and what it accepts has an OID.
func FuzzParseControl(f *testing.F) {
	f.Add(`{0}{1.3.6.1.1.21.2 criticality TRUE controlValue ""}`)
	f.Add(`{1}{` + ldapschema.OIDRunControl + ` controlValue "7B7D"}`)
	f.Add(`{0}{1.2.3`)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseControl(s)
		if err == nil && c.OID == "" {
			t.Errorf("%q: accepted without an OID", s)
		}
		if err == nil {
			_, _ = ParseRun(c.Value)
		}
	})
}
