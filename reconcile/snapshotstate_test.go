package reconcile

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/ldapschema"
)

// snapshotOf writes entries as LDIF and reads them back as a snapshot.
func snapshotOf(t *testing.T, entries []*ldap.Entry) *snapshot.Snapshot {
	t.Helper()
	var b strings.Builder
	w := directory.NewLDIFWriter(&b)
	for _, e := range entries {
		attrs := ldapschema.Attrs{}
		for _, a := range e.Attributes {
			attrs[a.Name] = append(attrs[a.Name], a.Values...)
		}
		if err := w.WriteEntry(e.DN, attrs); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.ReadSnapshot(strings.NewReader(b.String()))
	if err != nil {
		// Random entries may repeat a DN: such a file is no snapshot.
		return nil
	}
	return snap
}

// NewStateFromSnapshot prepares entries on several goroutines: the state
// must be the one NewStateFrom builds entry by entry, problems in order.
func TestStateFromSnapshotIsStateFromEach(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	desired, _ := diffPair(3000)
	inputs := [][]*ldap.Entry{desired}
	for range 400 {
		inputs = append(inputs, randomEntries(r))
	}
	compared, withProblems, withForeign := 0, 0, 0
	for i, entries := range inputs {
		snap := snapshotOf(t, entries)
		if snap == nil {
			continue
		}
		compared++
		want, err := NewStateFrom(dit, snap.Each)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Problems) > 0 {
			withProblems++
		}
		if len(want.Foreign) > 0 {
			withForeign++
		}
		for _, workers := range []int{1, 3} {
			got := newStateFromSnapshot(dit, snap, workers)
			what := fmt.Sprintf("input %d, %d workers", i, workers)
			if !reflect.DeepEqual(got.entries, want.entries) {
				t.Fatalf("%s: entries differ", what)
			}
			if !reflect.DeepEqual(got.Problems, want.Problems) || !reflect.DeepEqual(got.Foreign, want.Foreign) {
				t.Fatalf("%s: problems %v foreign %v, want %v and %v", what, got.Problems, got.Foreign, want.Problems, want.Foreign)
			}
			if !reflect.DeepEqual(got.others, want.others) {
				t.Fatalf("%s: others %v, want %v", what, got.others, want.others)
			}
		}
	}
	// The inputs test something: problems and foreign entries to keep in
	// order, and a federation of many batches.
	if compared < 100 || withProblems < 50 || withForeign < 20 || len(inputs[0]) < 3000 {
		t.Fatalf("%d inputs compared, %d with problems, %d with foreign entries", compared, withProblems, withForeign)
	}
}
