package directory

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/internal/dirtest"
	"github.com/cpactl/cpactl/ldapschema"
)

// TestRecordSorterSpills: whatever the memory limit (everything held, a
// spill every few records, a spill per record), records come out in key
// order, each once, and the run files are removed.
func TestRecordSorterSpills(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var keys []string
	for i := 0; i < 5000; i++ {
		keys = append(keys, fmt.Sprintf("%08x-%d", rng.Uint32(), i))
	}
	want := append([]string(nil), keys...)
	sort.Strings(want)
	for _, limit := range []int{1 << 30, 4096, 1} {
		s := newRecordSorter(limit)
		for _, k := range keys {
			if err := s.Add([]byte(k), []byte("data:"+k)); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		if err := s.Each(func(_, d []byte) error {
			got = append(got, string(bytes.TrimPrefix(d, []byte("data:"))))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		runs := append([]*os.File(nil), s.runs...)
		s.Close()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("limit %d: records out of order", limit)
		}
		if limit < 1<<30 && len(runs) < 2 {
			t.Errorf("limit %d: %d runs, want several", limit, len(runs))
		}
		for _, f := range runs {
			if _, err := os.Stat(f.Name()); !os.IsNotExist(err) {
				t.Errorf("run %s left behind", f.Name())
			}
		}
	}
}

// TestExportOrderWithSpills: a streamed export that spills writes exactly
// what WriteLDIF writes for the same entries.
func TestExportOrderWithSpills(t *testing.T) {
	snap, err := ParseSnapshot(dirtest.Sample())
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := WriteLDIF(&want, snap.Entries()); err != nil {
		t.Fatal(err)
	}
	defer func(old int) { exportSpillLimit = old }(exportSpillLimit)
	for _, limit := range []int{spillLimit, 200} {
		exportSpillLimit = limit
		var got bytes.Buffer
		n, err := NewStore(snap, dit.Base).Export(&got, func(e *ldap.Entry, _ string) *ldap.Entry { return e })
		if err != nil {
			t.Fatal(err)
		}
		if n != len(snap.Entries()) || got.String() != want.String() {
			t.Errorf("limit %d: %d entries, export differs from WriteLDIF:\n%s\nwant:\n%s", limit, n, got.String(), want.String())
		}
	}
}

// TestSortedLDIFOrder: entries added in any order, from several
// goroutines, with spills, come out as export writes them (WriteLDIF's
// order and encoding); a second entry of the same DN is left out and
// counted, the same one whatever the order of Add.
func TestSortedLDIFOrder(t *testing.T) {
	snap, err := ParseSnapshot(dirtest.Sample())
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := WriteLDIF(&want, snap.Entries()); err != nil {
		t.Fatal(err)
	}
	defer func(old int) { exportSpillLimit = old }(exportSpillLimit)
	for _, limit := range []int{spillLimit, 200} {
		exportSpillLimit = limit
		for seed := int64(1); seed <= 3; seed++ {
			entries := snap.Entries()
			rand.New(rand.NewSource(seed)).Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
			out := NewSortedLDIF()
			// The same DN twice, with other values (that sort after the
			// entry's own), added first or last: it is left out.
			dup := entries[len(entries)-1]
			addDup := func() {
				if err := out.Add(dup.DN, ldapschema.Attrs{ldapschema.AttrObjectClass: {"zzz"}}); err != nil {
					t.Fatal(err)
				}
			}
			if seed%2 == 0 {
				addDup()
			}
			done := make(chan error, 2)
			for half := 0; half < 2; half++ {
				go func(part []*ldap.Entry) {
					for _, e := range part {
						a := ldapschema.Attrs{}
						for _, at := range e.Attributes {
							a[at.Name] = at.Values
						}
						if err := out.Add(e.DN, a); err != nil {
							done <- err
							return
						}
					}
					done <- nil
				}(entries[half*len(entries)/2 : (half+1)*len(entries)/2])
			}
			for range 2 {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			if seed%2 == 1 {
				addDup()
			}
			var got bytes.Buffer
			n, err := out.Flush(&got)
			out.Close()
			if err != nil {
				t.Fatal(err)
			}
			if n != len(entries) || out.Duplicates != 1 || got.String() != want.String() {
				t.Errorf("limit %d seed %d: %d entries, %d duplicates; got:\n%s\nwant:\n%s", limit, seed, n, out.Duplicates, got.String(), want.String())
			}
		}
	}
}

// TestAddOrderedIsAdd: an entry given to AddOrdered as its lines in
// export's order is written as Add writes its attributes (values that
// need base64, a value left empty, names of any case); lines out of that
// order are refused and nothing is added.
func TestAddOrderedIsAdd(t *testing.T) {
	dn := `cn=R&D\, "West" <1>,ou=Sessions,` + dit.Base
	attrs := ldapschema.Attrs{
		ldapschema.AttrObjectClass: {"pae-Session", "top"},
		"cn":                       {`R&D, "West" <1>`},
		"pae-BrokeringPodDN":       {" leading space"},
		"pae-clientdn":             {"Zürich"},
		"PAE-HostDN":               {"line\nbreak"},
		"pae-PodDN":                {"a", "b"},
		"pae-SessionState":         {"CONNECTED"},
	}
	lines := []Line{
		{ldapschema.AttrObjectClass, "pae-Session"}, {ldapschema.AttrObjectClass, "top"},
		{"cn", `R&D, "West" <1>`}, {"pae-BrokeringPodDN", " leading space"}, {"pae-clientdn", "Zürich"},
		{"pae-EntitlementDN", ""}, {"PAE-HostDN", "line\nbreak"}, {"pae-PodDN", "a"}, {"pae-PodDN", "b"},
		{"pae-SessionState", "CONNECTED"}, {"pae-UserDN", ""},
	}
	flush := func(add func(*SortedLDIF) error) (string, error) {
		out := NewSortedLDIF()
		defer out.Close()
		if err := add(out); err != nil {
			return "", err
		}
		var b bytes.Buffer
		_, err := out.Flush(&b)
		return b.String(), err
	}
	want, err := flush(func(o *SortedLDIF) error { return o.Add(dn, attrs) })
	if err != nil {
		t.Fatal(err)
	}
	got, err := flush(func(o *SortedLDIF) error { return o.AddOrdered(dn, lines) })
	if err != nil {
		t.Fatal(err)
	}
	if got != want || !strings.Contains(want, "pae-BrokeringPodDN:: ") {
		t.Errorf("AddOrdered wrote:\n%s\nAdd:\n%s", got, want)
	}
	for name, bad := range map[string][]Line{
		"objectClass after cn":       {{"cn", "x"}, {ldapschema.AttrObjectClass, "top"}},
		"names out of order":         {{"pae-PodDN", "a"}, {"pae-HostDN", "b"}},
		"values out of order":        {{"pae-PodDN", "b"}, {"pae-PodDN", "a"}},
		"classes out of order":       {{ldapschema.AttrObjectClass, "top"}, {ldapschema.AttrObjectClass, "pae-Session"}},
		"case variant spelled after": {{"pae-podDN", "a"}, {"pae-PodDN", "b"}},
	} {
		out := NewSortedLDIF()
		if err := out.AddOrdered(dn, bad); err == nil || out.Len() != 0 {
			t.Errorf("%s: error %v, %d entries added", name, err, out.Len())
		}
		out.Close()
	}
}
