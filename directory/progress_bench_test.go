package directory

import (
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/progress"
)

// BenchmarkEachProgress: a whole-subtree Store.Each over a snapshot of
// 100,000 sessions (about 143,000 entries), as export reads, with progress
// off (no counter) and on (an atomic add an entry): the two must not
// differ measurably.
func BenchmarkEachProgress(b *testing.B) {
	text, _ := benchText(b, 100000)
	snap, err := snapshot.ReadSnapshot(strings.NewReader(text))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		counter *progress.Counter
	}{{"off", nil}, {"on", &progress.Counter{}}} {
		b.Run(c.name, func(b *testing.B) {
			st := NewStore(snap, dit.Base)
			st.Progress = c.counter
			for b.Loop() {
				n := 0
				if err := st.Each(dit.Base, ldap.ScopeWholeSubtree, ldapclient.AnyEntry, nil, func(*ldap.Entry) error { n++; return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
