package commands

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/objkind"
)

// Run-function tests: each builds a command's options struct directly, with
// a store on the demo snapshot handed in through the store factory
// (Globals.OpenStore), and calls run: no cobra, no slapd. Writes meet a
// read-only snapshot, so a test that expects "unchanged" or a refusal also
// proves that nothing was written (a write would fail with ErrReadOnly).

var (
	demoOnce sync.Once
	demoText string
)

// snapshotGlobals returns shared options whose store is the demo fixture,
// and the buffers of stdout and stderr.
func snapshotGlobals(t testing.TB) (*Globals, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	demoOnce.Do(func() {
		b, err := os.ReadFile("../fixtures/demo.ldif")
		if err != nil {
			panic(err)
		}
		demoText = string(b)
	})
	var out, errOut bytes.Buffer
	g := &Globals{IO: IOStreams{In: strings.NewReader(""), Out: &out, Err: &errOut},
		Interactive: func() bool { return false }, Getenv: func(string) string { return "" }}
	g.OpenStore = func() (*directory.Store, func(), error) {
		snap, err := snapshot.ReadSnapshot(strings.NewReader(demoText))
		if err != nil {
			return nil, nil, err
		}
		return directory.NewStore(snap, snap.Base()), func() {}, nil
	}
	return g, &out, &errOut
}

func jsonOut() readFlags { return readFlags{Output: "json"} }

// decode reads the JSON a run printed.
func decode[T any](t *testing.T, out *bytes.Buffer) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return v
}

func names(t *testing.T, out *bytes.Buffer) []string {
	t.Helper()
	var got []string
	for _, v := range decode[[]map[string]any](t, out) {
		got = append(got, v["name"].(string))
	}
	return got
}

func wantExit(t *testing.T, err error, code int, contains string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want exit %d", code)
	}
	if got := ExitCode(err); got != code {
		t.Fatalf("exit %d (%v), want %d", got, err, code)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Fatalf("error %q does not say %q", err, contains)
	}
}

func TestRunTopology(t *testing.T) {
	t.Run("site list", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&siteListOptions{g: g, listFlags: listFlags{readFlags: jsonOut()}}).run(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(t, out), ","); got != "Germany,India,UK,US" {
			t.Errorf("sites %s", got)
		}
	})
	t.Run("site show", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&siteShowOptions{g: g, readFlags: jsonOut(), Name: "uk"}).run(); err != nil {
			t.Fatal(err)
		}
		v := decode[SiteView](t, out)
		if v.Name != "UK" || strings.Join(v.Pods, ",") != "London-1,Manchester-1" {
			t.Errorf("site %+v", v)
		}
	})
	t.Run("site show missing", func(t *testing.T) {
		g, _, _ := snapshotGlobals(t)
		wantExit(t, (&siteShowOptions{g: g, readFlags: jsonOut(), Name: "Mars"}).run(), ExitNotFound, "Mars")
	})
	t.Run("site create identical is unchanged", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		g2, showOut, _ := snapshotGlobals(t)
		if err := (&siteShowOptions{g: g2, readFlags: jsonOut(), Name: "UK"}).run(); err != nil {
			t.Fatal(err)
		}
		uk := decode[SiteView](t, showOut)
		o := &siteCreateOptions{g: g, Name: "UK", Description: uk.Description, URL: uk.URL}
		if err := o.run(); err != nil {
			t.Fatal(err)
		}
		if out.String() != "site UK: unchanged\n" {
			t.Errorf("stdout %q", out)
		}
	})
	t.Run("site create different is refused", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		err := (&siteCreateOptions{g: g, Name: "UK", Description: "another"}).run()
		wantExit(t, err, ExitError, "site UK exists with a different description")
		if out.Len() != 0 {
			t.Errorf("stdout %q", out)
		}
	})
	t.Run("site create new, dry run", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&siteCreateOptions{g: g, Name: "Lab", writeFlags: writeFlags{DryRun: true}}).run(); err != nil {
			t.Fatal(err)
		}
		if out.String() != "would create site Lab\n" {
			t.Errorf("stdout %q", out)
		}
	})
	t.Run("site create new reaches the store", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		err := (&siteCreateOptions{g: g, Name: "Lab"}).run()
		if !errors.Is(err, ldapclient.ErrReadOnly) {
			t.Fatalf("err %v, want the snapshot's read-only refusal", err)
		}
		if out.Len() != 0 {
			t.Errorf("stdout %q before any write was confirmed", out)
		}
	})
	t.Run("pod list", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&podListOptions{g: g, listFlags: listFlags{readFlags: jsonOut()}}).run(); err != nil {
			t.Fatal(err)
		}
		if n := len(names(t, out)); n != 7 {
			t.Errorf("%d pods, want 7", n)
		}
	})
	t.Run("cs show", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&csShowOptions{g: g, readFlags: jsonOut(), Name: "cs-lon-1"}).run(); err != nil {
			t.Fatal(err)
		}
		if v := decode[map[string]any](t, out); v["pod"] != "London-1" {
			t.Errorf("cs %v", v)
		}
	})
	t.Run("site delete refuses without --yes off a terminal", func(t *testing.T) {
		// --force, so that Germany's referrers do not refuse it first:
		// what is left to refuse it is the missing --yes.
		g, out, _ := snapshotGlobals(t)
		o := &namedDeleteOptions{g: g, deleteFlags: deleteFlags{Force: true}, spec: namedDelete{kind: objkind.Site,
			hint: func(string) string { return "" },
			lookup: func(st *directory.Store, name string) (string, string, error) {
				s, err := st.Site(name)
				return s.Name, s.DN, err
			}}, Name: "Germany"}
		err := o.run()
		var f *Failure
		if !errors.As(err, &f) || f.Code != ExitError || !strings.Contains(f.Error(), `deleting site Germany needs confirmation`) ||
			!strings.Contains(f.Hint, "pass --yes") || out.Len() != 0 {
			t.Fatalf("err %v, stdout %q: want a refusal that asks for --yes and nothing printed", err, out)
		}
		// With --yes the same run gets past the question to the write,
		// which the read-only snapshot refuses.
		o.Yes = true
		if err := o.run(); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Fatalf("with --yes: err %v, want the snapshot's refusal of the write", err)
		}
	})
}

func TestRunPoolsFarmsHosts(t *testing.T) {
	t.Run("pool show", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&poolShowOptions{g: g, readFlags: jsonOut(), Name: "lon-desktops"}).run(); err != nil {
			t.Fatal(err)
		}
		if v := decode[map[string]any](t, out); v["pod"] != "London-1" {
			t.Errorf("pool %v", v)
		}
	})
	t.Run("farm list", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&farmListOptions{g: g, listFlags: listFlags{readFlags: jsonOut()}}).run(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(t, out), ","); got != "dal-farm,lon-farm,nyc-farm" {
			t.Errorf("farms %s", got)
		}
	})
	t.Run("host show", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&hostShowOptions{g: g, readFlags: jsonOut(), Name: "rds-nyc-03"}).run(); err != nil {
			t.Fatal(err)
		}
		if v := decode[map[string]any](t, out); v["farm"] != "nyc-farm" {
			t.Errorf("host %v", v)
		}
	})
	t.Run("host show missing", func(t *testing.T) {
		g, _, _ := snapshotGlobals(t)
		wantExit(t, (&hostShowOptions{g: g, readFlags: jsonOut(), Name: "rds-mars"}).run(), ExitNotFound, "rds-mars")
	})
}

func TestRunEntitlements(t *testing.T) {
	t.Run("entitlement show", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&entitlementShowOptions{g: g, readFlags: jsonOut(), Name: "desktops"}).run(); err != nil {
			t.Fatal(err)
		}
		if v := decode[map[string]any](t, out); v["name"] != "Desktops" {
			t.Errorf("entitlement %v", v)
		}
	})
	t.Run("entitlement show missing", func(t *testing.T) {
		g, _, _ := snapshotGlobals(t)
		wantExit(t, (&entitlementShowOptions{g: g, readFlags: jsonOut(), Name: "Nope"}).run(), ExitNotFound, "Nope")
	})
}

func TestRunUsersGroupsComputers(t *testing.T) {
	t.Run("user show by DOMAIN\\uid form", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&userShowOptions{g: g, readFlags: jsonOut(), Name: "alice"}).run(); err != nil {
			t.Fatal(err)
		}
		if v := decode[map[string]any](t, out); v["uid"] != "alice" {
			t.Errorf("user %v", v)
		}
	})
	t.Run("group show", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&groupShowOptions{g: g, readFlags: jsonOut(), Name: "Everyone"}).run(); err != nil {
			t.Fatal(err)
		}
		if v := decode[map[string]any](t, out); v["name"] != "Everyone" {
			t.Errorf("group %v", v)
		}
	})
	t.Run("computer list", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&computerListOptions{g: g, listFlags: listFlags{readFlags: jsonOut()}}).run(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(t, out), ","); got != "KIOSK-01,LAPTOP-ALICE" {
			t.Errorf("computers %s", got)
		}
	})
}

func TestRunSessionsAndSettings(t *testing.T) {
	t.Run("session list of a user", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&sessionListOptions{g: g, listFlags: listFlags{readFlags: jsonOut()}, User: "dave"}).run(); err != nil {
			t.Fatal(err)
		}
		if n := len(decode[[]map[string]any](t, out)); n != 2 {
			t.Errorf("%d sessions of dave, want 2", n)
		}
	})
	t.Run("settings show", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&settingsShowOptions{g: g, readFlags: jsonOut()}).run(); err != nil {
			t.Fatal(err)
		}
		got := decode[[]map[string]any](t, out)
		if len(got) != 5 || got[0]["name"] != "pae-LoadThresholdForSite" || got[0]["value"] != 98.0 {
			t.Errorf("settings %v", got)
		}
	})
}

func TestRunResolveAndLint(t *testing.T) {
	t.Run("resolve places alice from London", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		o := &resolveOptions{g: g, readFlags: jsonOut(), User: "alice", Entitlement: "Desktops", ConnectionServer: "cs-lon-1"}
		if err := o.run(); err != nil {
			t.Fatal(err)
		}
		v := decode[map[string]any](t, out)
		if v["outcome"] != "PLACED" || v["placement"].(map[string]any)["pool"] != "nyc-desktops" {
			t.Errorf("resolve %v", v)
		}
	})
	t.Run("resolve of an unknown Connection Server", func(t *testing.T) {
		g, _, _ := snapshotGlobals(t)
		o := &resolveOptions{g: g, readFlags: jsonOut(), User: "alice", Entitlement: "Desktops", ConnectionServer: "cs-mars"}
		if err := o.run(); err == nil || ExitCode(err) == ExitOK {
			t.Fatalf("err %v, want a failure naming cs-mars", err)
		} else if !strings.Contains(err.Error(), "cs-mars") {
			t.Errorf("error %q does not name cs-mars", err)
		}
	})
	t.Run("lint of the demo is clean", func(t *testing.T) {
		g, out, _ := snapshotGlobals(t)
		if err := (&lintOptions{g: g, readFlags: jsonOut()}).run(); err != nil {
			t.Fatal(err)
		}
		if got := decode[[]map[string]any](t, out); len(got) != 0 {
			t.Errorf("findings %v", got)
		}
	})
}
