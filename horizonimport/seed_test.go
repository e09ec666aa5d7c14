package horizonimport_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/horizonimport"
	"github.com/cpactl/cpactl/internal/horizontest"
	"github.com/cpactl/cpactl/reconcile"
)

// pullSeed000 pulls the test Horizon's seed-000 federation into a
// directory, as `cpactl horizon pull` does.
func pullSeed000(t *testing.T) (string, *horizontest.Federation) {
	t.Helper()
	f := horizontest.Start(t, "seed-000")
	dir := filepath.Join(t.TempDir(), "pull")
	c, err := horizon.NewClient(horizon.Config{CAFile: f.CAFile, Timeout: 10 * time.Second},
		horizon.Credentials{Domain: horizontest.Domain, User: horizontest.User, Password: horizontest.Password})
	if err != nil {
		t.Fatal(err)
	}
	opts := horizon.PullOptions{URL: f.URL("india-pod-1") + "/rest", PodURLs: map[string]string{}}
	for _, p := range f.Pods()[1:] {
		opts.PodURLs[p] = f.URL(p) + "/rest"
	}
	if _, err := c.Pull(context.Background(), dir, opts); err != nil {
		t.Fatal(err)
	}
	return dir, f
}

// TestSeed000MatchesFixture: the seed-000 REST fixtures, pulled from the
// test Horizon and imported, are the federation of
// fixtures/resolve-seed-000.ldif entry for entry, attribute for
// attribute; the one difference is that Horizon states site redirection
// (off), which the fixture leaves at its default (0).
func TestSeed000MatchesFixture(t *testing.T) {
	dir, _ := pullSeed000(t)
	var b bytes.Buffer
	if _, err := horizonimport.WriteLDIF(dir, horizonimport.Options{DIT: dit}, &b); err != nil {
		t.Fatal(err)
	}
	imported, err := snapshot.ReadSnapshot(&b)
	if err != nil {
		t.Fatal(err)
	}
	fixture, err := snapshot.LoadSnapshot("../fixtures/resolve-seed-000.ldif")
	if err != nil {
		t.Fatal(err)
	}
	desired := reconcile.NewStateFromSnapshot(dit, imported)
	current, err := reconcile.NewStateFrom(dit, fixture.Each)
	if err != nil {
		t.Fatal(err)
	}
	r := reconcile.Compare(desired, current)
	var diffs []string
	for _, e := range r.Entries {
		for _, a := range e.Attributes {
			diffs = append(diffs, fmt.Sprintf("%s %s %s %v -> %v", e.Change, e.Object(), a.Attribute, a.Current, a.Desired))
		}
		if len(e.Attributes) == 0 {
			diffs = append(diffs, e.Change+" "+e.Object())
		}
	}
	want := []string{"changed settings cn=Common pae-EnableSiteRedirection [] -> [0]"}
	if !reflect.DeepEqual(diffs, want) {
		t.Errorf("the import differs from the fixture:\n%s\nwant:\n%s", strings.Join(diffs, "\n"), strings.Join(want, "\n"))
	}
}
