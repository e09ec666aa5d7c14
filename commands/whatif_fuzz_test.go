package commands

import (
	"bytes"
	"encoding/csv"
	"errors"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/rules"
)

// csvField is name as one field of a CSV record (quoted when it must be).
func csvField(name string) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{name, ""}) // two fields: a lone "" would write an empty line
	w.Flush()
	return strings.TrimSuffix(strings.TrimSuffix(b.String(), "\n"), ",")
}

// sameNumber reports whether text (an integer as typed) is v.
func sameNumber(text string, v int) bool {
	n, ok := new(big.Int).SetString(strings.TrimSpace(text), 10)
	return ok && n.Cmp(big.NewInt(int64(v))) == 0
}

// hostLoadTail is what may follow a host's name: an "=" in a name that
// starts one makes the name ambiguous (the syntax takes the first).
var hostLoadTail = regexp.MustCompile(`^=-?[0-9]+(?:,(?:connecting|sessions)=-?[0-9]+)*$`)

func assertFuzzOneLine(t *testing.T, what, in string, err error, names string) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, "\n") || (names != "" && !strings.Contains(msg, names)) {
		t.Fatalf("%s %q: error %q, want one line naming %s", what, in, msg, names)
	}
}

// FuzzWhatIfShortcuts: --pool-sessions, --host-load, --preferred and
// --setting built from parts (a name, numbers, a list of names cut at
// NUL) parse back to those parts; any value parses without a panic, a
// refusal is one line naming the flag, and what is accepted holds the
// numbers it was given.
func FuzzWhatIfShortcuts(f *testing.F) {
	f.Add("rds-01", 85, 3, 9, true, false, "rds-01=85,connecting=3")
	f.Add("a=b,c", 7, 0, 0, false, false, "h=5=7")
	f.Add("uk-desktops", 40, 0, 0, false, true, "a=b=3")
	f.Add("India", 0, 1, 2, true, true, `India="R&D, West",UK`)
	f.Add("India", 99, 0, 30, false, true, "UK\x00US\x00R&D, West")
	f.Add("lon:1", 1, 2, 30, true, true, "lon:1:rds-load-index-threshold=30")
	f.Add("par", 4, 4, 101, false, true, "pae-LoadThresholdForSite=101")
	f.Add("rds-01", 5, 1, 2, true, true, "rds-01=5,connecting=1,connecting=2")
	f.Add("h", 1, 2, 3, false, false, "h=99999999999999999999")
	f.Fuzz(func(t *testing.T, name string, a, b, c int, flagB, flagC bool, raw string) {
		// --pool-sessions POOL=N
		if name != "" {
			in := name + "=" + strconv.Itoa(a)
			got, err := parsePoolSessions(in)
			if err != nil || got != (poolSessionsWhatIf{pool: name, sessions: a}) {
				t.Fatalf("--pool-sessions %q: %+v, %v", in, got, err)
			}
		}
		if p, err := parsePoolSessions(raw); err != nil {
			assertFuzzOneLine(t, "--pool-sessions", raw, err, "--pool-sessions")
		} else if i := strings.LastIndex(raw, "="); p.pool != raw[:i] || !sameNumber(raw[i+1:], p.sessions) {
			t.Fatalf("--pool-sessions %q: %+v", raw, p)
		}

		// --host-load HOST=LI[,connecting=N][,sessions=N]
		ambiguous := name == ""
		for i := range len(name) {
			if name[i] == '=' && hostLoadTail.MatchString(name[i:]+"="+strconv.Itoa(a)) {
				ambiguous = true
			}
		}
		if !ambiguous {
			in := name + "=" + strconv.Itoa(a)
			want := hostLoadWhatIf{host: name, loadIndex: a}
			if flagB {
				in += ",connecting=" + strconv.Itoa(b)
				want.connecting = &b
			}
			if flagC {
				in += ",sessions=" + strconv.Itoa(c)
				want.sessions = &c
			}
			want.given = in[len(name)+1:]
			got, err := parseHostLoad(in)
			if err != nil || got.host != want.host || got.given != want.given || got.loadIndex != a ||
				(got.connecting == nil) != !flagB || (flagB && *got.connecting != b) ||
				(got.sessions == nil) != !flagC || (flagC && *got.sessions != c) {
				t.Fatalf("--host-load %q: %+v, %v; want %+v", in, got, err, want)
			}
		}
		if h, err := parseHostLoad(raw); err != nil {
			assertFuzzOneLine(t, "--host-load", raw, err, "--host-load")
		} else {
			if !strings.HasPrefix(raw, h.host+"=") || h.given != raw[len(h.host)+1:] {
				t.Fatalf("--host-load %q: %+v", raw, h)
			}
			figures := strings.Split(h.given, ",")
			if !sameNumber(figures[0], h.loadIndex) {
				t.Fatalf("--host-load %q: load index %d", raw, h.loadIndex)
			}
			for _, fig := range figures[1:] {
				key, val, _ := strings.Cut(fig, "=")
				v := h.connecting
				if key == "sessions" {
					v = h.sessions
				}
				if v == nil || !sameNumber(val, *v) {
					t.Fatalf("--host-load %q: %s is not %s", raw, key, val)
				}
			}
		}

		// --preferred SITE=A,B: the list as a user types it, CSV with
		// or without a blank after each comma.
		if strings.TrimSpace(name) != "" && !strings.Contains(name, "=") && !strings.Contains(raw, "\r") {
			names := strings.Split(raw, "\x00")
			fields := make([]string, len(names))
			for i, n := range names {
				fields[i] = csvField(n)
			}
			sep := ","
			if flagB {
				sep = ", "
			}
			in := name + "=" + strings.Join(fields, sep)
			got, err := parsePreferred(in)
			var re *rules.Error
			switch {
			case errors.As(err, &re): // the site itself, or one twice
			case err != nil || got.site != name || !slices.Equal(got.sites, cleanList(names)):
				t.Fatalf("--preferred %q: %+v, %v; want %q", in, got, err, cleanList(names))
			}
		}
		if p, err := parsePreferred(raw); err != nil {
			assertFuzzOneLine(t, "--preferred", raw, err, "")
		} else if !strings.HasPrefix(raw, p.site+"=") || slices.Contains(p.sites, "") {
			t.Fatalf("--preferred %q: %+v", raw, p)
		}

		// --setting [POD:]KEY=V
		set := ldapschema.Settings[(a%len(ldapschema.Settings)+len(ldapschema.Settings))%len(ldapschema.Settings)]
		key := set.Attr
		if flagB {
			key = set.Alias
		}
		in := key + "=" + strconv.Itoa(b)
		pod := flagC && name != "" && !strings.Contains(name, "=")
		if pod {
			in = name + ":" + in
		}
		fed, pods, err := parseWhatIfSettings([]string{in})
		switch {
		case set.Check(b) != nil || (pod && !set.PerPod):
			if err == nil {
				t.Fatalf("--setting %q accepted", in)
			}
			assertFuzzOneLine(t, "--setting", in, err, set.Attr)
		case err != nil:
			t.Fatalf("--setting %q: %v", in, err)
		case pod:
			if len(fed) != 0 || len(pods) != 1 || pods[0].pod != name || len(pods[0].changes) != 1 ||
				pods[0].changes[0] != (settingChange{set: set, value: b}) {
				t.Fatalf("--setting %q: %+v %+v", in, fed, pods)
			}
		default:
			if len(pods) != 0 || len(fed) != 1 || fed[0] != (settingChange{set: set, value: b}) {
				t.Fatalf("--setting %q: %+v %+v", in, fed, pods)
			}
		}
		if _, _, err := parseWhatIfSettings(strings.Split(raw, "\x00")); err != nil {
			assertFuzzOneLine(t, "--setting", raw, err, "")
		}
	})
}
