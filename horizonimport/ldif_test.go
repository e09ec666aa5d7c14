package horizonimport_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/generate"
	"github.com/cpactl/cpactl/horizonimport"
	"github.com/cpactl/cpactl/ldapschema"
)

// referenceLDIF writes what WriteLDIF must write, the simple way: every
// entry Import hands over (sessions as their Attrs), held in memory,
// sorted as export sorts (parents first, then by normalized DN), each
// attribute's values sorted, written by directory.LDIFWriter (the writer
// of `cpactl generate`, which encodes values as export does).
func referenceLDIF(t *testing.T, dir string, opts horizonimport.Options) []byte {
	t.Helper()
	type entry struct {
		depth int
		norm  string
		dn    string
		attrs ldapschema.Attrs
	}
	var mu sync.Mutex
	var entries []entry
	_, err := horizonimport.Import(dir, opts, func(dn string, attrs ldapschema.Attrs) error {
		parsed, err := ldap.ParseDN(dn)
		if err != nil {
			return err
		}
		a := ldapschema.Attrs{}
		for name, vals := range attrs {
			a[name] = slices.Sorted(slices.Values(vals))
		}
		mu.Lock()
		entries = append(entries, entry{len(parsed.RDNs), ldapschema.NormalizeDN(dn), dn, a})
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if a.depth != b.depth {
			return a.depth - b.depth
		}
		return strings.Compare(a.norm, b.norm)
	})
	var b bytes.Buffer
	w := directory.NewLDIFWriter(&b)
	for i, e := range entries {
		if i > 0 && e.norm == entries[i-1].norm {
			t.Fatalf("%s: two entries", e.dn)
		}
		if err := w.WriteEntry(e.dn, e.attrs); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWriteLDIFIsTheReference: the import's LDIF (sessions encoded from
// their records with no map, every entry through export's slab sorter,
// sessions decoded on every processor) is, byte for byte, the simple
// reference's on generated federations (with client computers from a
// base, and without), on the test federation of every mapping case and
// on a synthesized pull.
func TestWriteLDIFIsTheReference(t *testing.T) {
	type pull struct {
		name string
		dir  string
		base *horizonimport.Base
	}
	var pulls []pull
	for _, seed := range []int64{1, 2} {
		cfg, err := generate.Preset(generate.PresetCPAMax)
		if err != nil {
			t.Fatal(err)
		}
		// cpa-max's proportions at about 6,000 entries.
		cfg.Seed, cfg.Farms, cfg.Hosts, cfg.Pools, cfg.Entitlements = seed, 60, 600, 200, 60
		cfg.Users, cfg.Groups, cfg.Computers, cfg.HomeSites, cfg.Assignments, cfg.Sessions = 1500, 150, 80, 90, 600, 4000
		dir := filepath.Join(t.TempDir(), "pull")
		if _, err := generate.WriteHorizon(dir, cfg, generate.HorizonOptions{PageSize: 300}); err != nil {
			t.Fatal(err)
		}
		var ldif bytes.Buffer
		if _, err := generate.Write(&ldif, cfg); err != nil {
			t.Fatal(err)
		}
		snap, err := snapshot.ReadSnapshot(&ldif)
		if err != nil {
			t.Fatal(err)
		}
		base, err := horizonimport.ReadBase(directory.NewStore(snap, dit.Base), "the generated LDIF")
		if err != nil {
			t.Fatal(err)
		}
		pulls = append(pulls, pull{fmt.Sprintf("generated seed %d", seed), dir, nil},
			pull{fmt.Sprintf("generated seed %d, base", seed), dir, base})
	}
	pulls = append(pulls, pull{"test federation", testFederation(t).done(), nil},
		pull{"synthesized", syntheticPull(t, 6, 300, 2500), nil})
	for _, p := range pulls {
		opts := horizonimport.Options{DIT: dit, Base: p.base}
		want := referenceLDIF(t, p.dir, opts)
		for _, workers := range []int{1, 3} {
			opts.Workers = workers
			var got bytes.Buffer
			rep, err := horizonimport.WriteLDIF(p.dir, opts, &got)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Counts["sessions"] == 0 {
				t.Fatalf("%s: no session imported", p.name)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s, %d workers: the LDIF differs from the reference at byte %d:\n%s", p.name, workers,
					firstDiff(got.Bytes(), want), excerpt(got.Bytes(), want))
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// excerpt shows both around their first difference.
func excerpt(got, want []byte) string {
	i := firstDiff(got, want)
	cut := func(b []byte) string { return string(b[max(0, i-300):min(len(b), i+300)]) }
	return "got:\n" + cut(got) + "\nwant:\n" + cut(want)
}
