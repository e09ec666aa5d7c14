package directory

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/ldif"
)

// Benchmarks of reading a snapshot and of a resolve-style read on it, on
// the synthetic federation at several sizes (sessions; the whole file has
// about 1.43 entries a session). Compare with `slapadd -u` on the file
// TestWriteSyntheticLDIF writes.

var benchSizes = []int{1000, 10000, 100000}

func benchText(b *testing.B, sessions int) (string, int) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	return syntheticOf(sessions).Text()
}

// BenchmarkLDIFRead: the LDIF reader alone (MB/s, ns an entry).
func BenchmarkLDIFRead(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			text, entries := benchText(b, n)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				r := ldif.NewReader(strings.NewReader(text))
				var rec ldif.Record
				for {
					err := r.Read(&rec)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*entries), "ns/entry")
		})
	}
}

// BenchmarkSnapshotLoad: reading a snapshot (parse, DNs normalized and
// indexed, values encoded).
func BenchmarkSnapshotLoad(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			text, entries := benchText(b, n)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := snapshot.ReadSnapshot(strings.NewReader(text)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*entries), "ns/entry")
		})
	}
}

// BenchmarkSnapshotResolve: what `resolve --from` costs beside the
// broker: load the file and read one request (cold: the indexes the read
// needs are built). It reports the heap in use afterwards, with the
// snapshot alive.
func BenchmarkSnapshotResolve(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			text, entries := benchText(b, n)
			q := syntheticOf(n).query()
			var snap *snapshot.Snapshot
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if snap, err = snapshot.ReadSnapshot(strings.NewReader(text)); err != nil {
					b.Fatal(err)
				}
				if _, err := NewStore(snap, dit.Base).ResolveFederation(q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*entries), "ns/entry")
			text = ""
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			b.ReportMetric(float64(m.HeapAlloc)/float64(1<<20), "MB-heap")
			runtime.KeepAlive(snap)
		})
	}
}

// BenchmarkSnapshotResolveWarm: one more request on a loaded snapshot,
// its indexes built (what simulate or impact pay per request).
func BenchmarkSnapshotResolveWarm(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			text, _ := benchText(b, n)
			snap, err := snapshot.ReadSnapshot(strings.NewReader(text))
			if err != nil {
				b.Fatal(err)
			}
			st := NewStore(snap, dit.Base)
			q := syntheticOf(n).query()
			if _, err := st.ResolveFederation(q); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.ResolveFederation(q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSnapshotResolveDecodesOnlyWhatItReads: a resolve on a large snapshot
// decodes about as many entries as its searches return, not the
// containers they search (250 times more here): the indexes find the
// candidates.
func TestSnapshotResolveDecodesOnlyWhatItReads(t *testing.T) {
	s := syntheticOf(20000)
	text, n := s.Text()
	snap, err := ParseSnapshot(text)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Len() != n || snap.Decodes() != 0 {
		t.Fatalf("%d entries, %d decoded by loading", snap.Len(), snap.Decodes())
	}
	counter := &countingClient{Client: snap}
	data, err := NewStore(counter, dit.Base).ResolveFederation(s.query())
	if err != nil {
		t.Fatal(err)
	}
	if len(data.Federation.Sessions) != 5 || len(data.Federation.Pools) == 0 || len(data.Federation.Hosts) == 0 {
		t.Fatalf("read %d sessions, %d pools, %d hosts: not the request's records", len(data.Federation.Sessions),
			len(data.Federation.Pools), len(data.Federation.Hosts))
	}
	returned := 0
	for _, q := range counter.searches {
		returned += q.entries
	}
	decoded := int(snap.Decodes())
	t.Logf("%d searches returned %d entries; %d of %d entries decoded", len(counter.searches), returned, decoded, n)
	if decoded > 2*returned+10 || decoded*100 > n {
		t.Errorf("%d entries decoded for %d returned (of %d):\n%s", decoded, returned, n, lines(counter.searches))
	}
	// The same read again uses the indexes built: it decodes what it
	// returns again, and nothing more.
	before := snap.Decodes()
	if _, err := NewStore(snap, dit.Base).ResolveFederation(s.query()); err != nil {
		t.Fatal(err)
	}
	if again := int(snap.Decodes() - before); again != decoded {
		t.Errorf("second read decoded %d, first %d", again, decoded)
	}
	// A search no index serves decodes its scope, and still answers.
	res, err := snap.Search(ldap.NewSearchRequest(dit.Sessions(), ldap.ScopeSingleLevel, 0, 0, 0, false,
		"(pae-SessionState=DISC*)", []string{"1.1"}, nil))
	if err != nil || len(res.Entries) != 20000/4 {
		t.Errorf("substring search: %d entries, %v", len(res.Entries), err)
	}
}

var ldifFile = flag.String("ldif-file", "", "an LDIF file for BenchmarkSnapshotFile (e.g. one -synthetic-ldif wrote)")

// BenchmarkSnapshotFile reads the file -ldif-file names as LoadSnapshot
// does, then resolves the synthetic federation's request on it: to compare
// with `slapadd -u` on the same file in the same run.
func BenchmarkSnapshotFile(b *testing.B) {
	if *ldifFile == "" {
		b.Skip("no -ldif-file")
	}
	fi, err := os.Stat(*ldifFile)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("load", func(b *testing.B) {
		b.SetBytes(fi.Size())
		entries := 0
		for b.Loop() {
			snap, err := snapshot.LoadSnapshot(*ldifFile)
			if err != nil {
				b.Fatal(err)
			}
			entries = snap.Len()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*entries), "ns/entry")
	})
	b.Run("load+resolve", func(b *testing.B) {
		for b.Loop() {
			snap, err := snapshot.LoadSnapshot(*ldifFile)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := NewStore(snap, dit.Base).ResolveFederation(syntheticOf(*syntheticSessions).query()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
