package commands

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
)

// deepNesting is the demo federation and a chain of depth groups, each a
// member of the one before, with bob in the first and alice in the last,
// and the entitlement Deep whose member is the first.
func deepNesting(t testing.TB, depth int) *directory.Store {
	t.Helper()
	g, _, _ := snapshotGlobals(t)
	st, _, err := g.OpenStore()
	if err != nil {
		t.Fatal(err)
	}
	base := st.DIT.Base
	var b strings.Builder
	b.WriteString(demoText)
	group := func(i int) string { return fmt.Sprintf("cn=deep-%05d,ou=Groups,%s", i, base) }
	for i := range depth {
		fmt.Fprintf(&b, "\ndn: %s\nobjectClass: top\nobjectClass: pae-Group\ncn: deep-%05d\n", group(i), i)
		if i == 0 {
			fmt.Fprintf(&b, "member: uid=bob,ou=People,%s\n", base)
		}
		if i+1 < depth {
			fmt.Fprintf(&b, "member: %s\n", group(i+1))
		} else {
			fmt.Fprintf(&b, "member: uid=alice,ou=People,%s\n", base)
		}
	}
	fmt.Fprintf(&b, "\ndn: cn=Deep,ou=Entitlements,%s\nobjectClass: top\nobjectClass: pae-GlobalEntitlement\ncn: Deep\n"+
		"pae-EntitlementType: DESKTOP\npae-Scope: ANY\nmember: %s\n", base, group(0))
	snap, err := snapshot.ReadSnapshot(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return directory.NewStore(snap, snap.Base())
}

// effectiveMembers returns `entitlement members Deep --effective -o
// json` on st, ready to run, and what it prints.
func effectiveMembers(t testing.TB, st *directory.Store) (*entitlementMembersOptions, *bytes.Buffer) {
	t.Helper()
	g, out, _ := snapshotGlobals(t)
	g.OpenStore = func() (*directory.Store, func(), error) { return st, func() {}, nil }
	return &entitlementMembersOptions{g: g, readFlags: jsonOut(), Name: "Deep", Effective: true}, out
}

// allocated runs `entitlement members Deep --effective -o json` on st and
// returns the bytes it allocated and what it printed.
func allocated(t *testing.T, st *directory.Store) (uint64, *bytes.Buffer) {
	t.Helper()
	o, out := effectiveMembers(t, st)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := o.run(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, out
}

// entitlement members --effective grows linearly with the nesting depth:
// four times as deep allocates about four times as much, not sixteen
// (issue 22: 20,000 nested groups took 14.4 GB, a chain kept for every
// group reached). Bytes allocated are counted, not time: the same run
// allocates the same.
func TestEffectiveMembersLinearInDepth(t *testing.T) {
	const depth = 500
	small, large := deepNesting(t, depth), deepNesting(t, 4*depth)
	allocated(t, small) // decodes the snapshot's entries once, as a warm-up
	allocated(t, large)
	a, outSmall := allocated(t, small)
	b, outLarge := allocated(t, large)
	for i, out := range []*bytes.Buffer{outSmall, outLarge} {
		views := decode[[]EffectiveMemberView](t, out)
		if len(views) != 2 || views[0].User != "alice" || views[1].User != "bob" ||
			len(views[0].Via) != depth<<(2*i) || views[0].Via[0] != "deep-00000" ||
			strings.Join(views[1].Via, ">") != "deep-00000" {
			t.Fatalf("effective members %+v", views)
		}
	}
	// alice's path alone is as long as the chain: it is in the output,
	// so it is linear too.
	ratio := float64(b) / float64(a)
	t.Logf("depth %d: %d bytes, depth %d: %d bytes (x%.1f)", depth, a, 4*depth, b, ratio)
	if ratio > 8 {
		t.Errorf("four times as deep allocates %.1f times as much (%d bytes, then %d): it grows faster than the depth", ratio, a, b)
	}
}

func BenchmarkEffectiveMembersDeep(b *testing.B) {
	for _, depth := range []int{1000, 4000} {
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			st := deepNesting(b, depth)
			b.ReportAllocs()
			for range b.N {
				o, _ := effectiveMembers(b, st)
				if err := o.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
