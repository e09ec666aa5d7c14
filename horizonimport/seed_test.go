package horizonimport_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/horizonimport"
	"github.com/cpactl/cpactl/internal/horizontest"
	"github.com/cpactl/cpactl/ldapschema"
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

func TestSeedPrint(t *testing.T) {
	dir, _ := pullSeed000(t)
	var b bytes.Buffer
	rep, err := horizonimport.WriteLDIF(dir, horizonimport.Options{DIT: ldapschema.DIT{Base: ldapschema.DefaultBase}}, &b)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(b.String())
	t.Logf("%+v", rep)
}
