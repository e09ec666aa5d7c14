package horizonimport_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/horizonimport"
	"github.com/cpactl/cpactl/ldapschema"
)

// fakePull writes a pull directory as `cpactl horizon pull` lays it out
// (docs/horizon.md), from records given as Go values: what the import
// reads, without a server.
type fakePull struct {
	t   testing.TB
	dir string
	m   horizon.Manifest
}

func newFakePull(t testing.TB) *fakePull {
	dir := filepath.Join(t.TempDir(), "pull")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return &fakePull{t: t, dir: dir, m: horizon.Manifest{Format: horizon.FormatName, Version: horizon.FormatVersion,
		PreferredSites: true, Counts: map[string]int{}}}
}

// pod adds a pod to the manifest (its pod-local files go under its dir).
func (p *fakePull) pod(id, name, siteID string) {
	p.m.Pods = append(p.m.Pods, horizon.Pod{ID: id, Name: name, SiteID: siteID, Dir: fmt.Sprintf("pods/%02d-%s", len(p.m.Pods)+1, name)})
}

// raw adds one file of endpoint (pod "" for federation-wide) holding body
// as it is, which counts records.
func (p *fakePull) raw(endpoint, pod string, body []byte, records int) {
	dir := "global"
	for _, pd := range p.m.Pods {
		if pd.ID == pod {
			dir = pd.Dir
		}
	}
	page := 0
	for _, f := range p.m.Files {
		if f.Endpoint == endpoint && f.Pod == pod {
			page = max(page, f.Page) + 1
		}
	}
	name := path.Join(dir, endpoint+".json")
	if page > 0 {
		name = path.Join(dir, fmt.Sprintf("%s.%04d.json", endpoint, page))
	}
	full := filepath.Join(p.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(full, body, 0o600); err != nil {
		p.t.Fatal(err)
	}
	p.m.Files = append(p.m.Files, horizon.File{Name: name, Endpoint: endpoint, Pod: pod, Page: page, Records: records, Bytes: int64(len(body))})
	p.m.Counts[endpoint] += records
}

// add adds a file of endpoint holding records as a JSON array.
func (p *fakePull) add(endpoint, pod string, records ...any) {
	if records == nil {
		records = []any{}
	}
	b, err := json.Marshal(records)
	if err != nil {
		p.t.Fatal(err)
	}
	p.raw(endpoint, pod, b, len(records))
}

// object adds a file of endpoint holding one object (cpa).
func (p *fakePull) object(endpoint string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	p.raw(endpoint, "", b, 1)
}

// done writes the manifest and returns the directory.
func (p *fakePull) done() string {
	b, err := json.MarshalIndent(p.m, "", "  ")
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, horizon.ManifestFile), b, 0o600); err != nil {
		p.t.Fatal(err)
	}
	return p.dir
}

// obj is a JSON object.
type obj = map[string]any

// importInto imports dir and returns a store on the result (a snapshot of
// the LDIF written) and the report.
func importInto(t testing.TB, dir string, base *horizonimport.Base) (*directory.Store, *horizonimport.Report) {
	t.Helper()
	var b bytes.Buffer
	rep, err := horizonimport.WriteLDIF(dir, horizonimport.Options{DIT: ldapschema.DIT{Base: ldapschema.DefaultBase}, Base: base}, &b)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.ReadSnapshot(&b)
	if err != nil {
		t.Fatalf("the import's LDIF does not read back: %v", err)
	}
	return directory.NewStore(snap, ldapschema.DefaultBase), rep
}

// record is an entry of a base.
type record struct {
	dn    string
	attrs ldapschema.Attrs
}

// baseOf reads a Base, as ReadBase reads it, from a snapshot of the
// layout and the records given.
func baseOf(t testing.TB, source string, records ...record) *horizonimport.Base {
	t.Helper()
	var b bytes.Buffer
	lw := directory.NewLDIFWriter(&b)
	layout, err := directory.Layout(dit)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range layout {
		if e.DN == dit.Settings() {
			continue
		}
		_ = lw.WriteEntry(e.DN, e.Attrs)
	}
	for _, r := range records {
		_ = lw.WriteEntry(r.dn, r.attrs)
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.ReadSnapshot(&b)
	if err != nil {
		t.Fatal(err)
	}
	base, err := horizonimport.ReadBase(directory.NewStore(snap, dit.Base), source)
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// settingsRecord is cn=Common with values.
func settingsRecord(values map[string]int) record {
	a := ldapschema.Attrs{ldapschema.AttrObjectClass: {ldapschema.ClassTop, ldapschema.ClassGlobalSettings}, ldapschema.AttrCN: {"Common"}}
	for k, v := range values {
		a.SetInt(k, v)
	}
	return record{dit.Settings(), a}
}
