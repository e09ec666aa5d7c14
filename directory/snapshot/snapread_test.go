package snapshot

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/internal/dirtest"
)

// snapText is what a snapshot holds, entry by entry, for comparing two
// reads of one input.
func snapText(s *Snapshot) string {
	var b strings.Builder
	for _, e := range s.Entries() {
		fmt.Fprintf(&b, "dn %q\n", e.DN)
		for _, a := range e.Attributes {
			fmt.Fprintf(&b, "  %s %q\n", a.Name, a.Values)
		}
	}
	return b.String()
}

// readBoth reads text in one piece and cut as c says (from a reader that
// does not tell its size, as standard input), and returns what each read
// and the errors.
func readBoth(text string, c snapCut) (whole, cut string, wholeErr, cutErr error) {
	one, wholeErr := readSnapshot(strings.NewReader(text), snapCut{workers: 1})
	many, cutErr := readSnapshot(struct{ io.Reader }{strings.NewReader(text)}, c)
	if wholeErr == nil {
		whole = snapText(one)
	}
	if cutErr == nil {
		cut = snapText(many)
	}
	return whole, cut, wholeErr, cutErr
}

func TestReadSnapshotInBlocksReadsAsOnePiece(t *testing.T) {
	mixed := "version: 1\n\n\n" +
		"# a comment\n#  folded\n dn: not a record\n" +
		"dn: dc=vdiglobal,dc=vmware,dc=int\nobjectClass: top\nobjectClass: dcObject\nobjectClass: organization\ndc: vdiglobal\no: x\n\n" +
		"dn: ou=Sites,dc=vdiglobal,dc=vmware,dc=int\r\nobjectClass: organizationalUnit\r\nou: Sites\r\n\r\n" +
		"dn:: Y249TG9uZG9uLG91PVNpdGVzLGRjPXZkaWdsb2JhbCxkYz12bXdhcmUsZGM9aW50\ncn: Lon\n don\nobjectClass: pae-Site\ndescription:: w6lsw6k=\nCN: london\n\n\n\n" +
		"dn: cn=Paris,ou=Sites,dc=vdiglobal,dc=vmware,dc=int\nobjectClass: pae-Site\ncn: Paris\n"
	inputs := map[string]string{
		"sample": dirtest.Sample(),
		"mixed":  mixed,
		// Errors: each is the first in the file, whichever block it is in.
		"syntax error late":      mixed + "\ndn: cn=x,ou=Sites,dc=vdiglobal,dc=vmware,dc=int\nno colon here\n",
		"bad DN late":            mixed + "\ndn: cn=x,,dc=int\ncn: x\n",
		"entry twice":            mixed + "\n" + strings.SplitN(mixed, "\n\n\n", 2)[1],
		"change record":          mixed + "\ndn: cn=Paris,ou=Sites,dc=vdiglobal,dc=vmware,dc=int\nchangetype: delete\n",
		"version not first":      mixed + "\nversion: 1\n",
		"two errors":             mixed + "\ndn: cn=y,,dc=int\ncn: y\n\n" + mixed + "\nbroken\n",
		"continuation at a cut":  mixed + "\n continued\n",
		"no final line end":      strings.TrimSuffix(mixed, "\n"),
		"only comments":          "# one\n# two\n\n# three\n",
		"empty":                  "",
		"record without values":  mixed + "\ndn: cn=z,ou=Sites,dc=vdiglobal,dc=vmware,dc=int\n",
		"many small records":     strings.Repeat("dn: cn=a,dc=int\ncn: a\n\n", 1) + manyRecords(300),
		"a long record at a cut": mixed + "\ndn: cn=long,dc=int\ndescription: " + strings.Repeat("x", 5000) + "\n",
	}
	for name, text := range inputs {
		for _, c := range []snapCut{
			{workers: 2, block: 1, max: 1 << 20},
			{workers: 2, block: 7, max: 1 << 20},
			{workers: 3, block: 64, max: 1 << 20},
			{workers: 2, block: 1000, max: 1 << 20},
			{workers: 2, block: 16, max: 200}, // the rest read in one piece when a block holds no empty line
		} {
			whole, cut, wholeErr, cutErr := readBoth(text, c)
			if fmt.Sprint(wholeErr) != fmt.Sprint(cutErr) {
				t.Errorf("%s, %+v: error %v, in one piece %v", name, c, cutErr, wholeErr)
				continue
			}
			if whole != cut {
				t.Errorf("%s, %+v: read\n%s\nin one piece\n%s", name, c, cut, whole)
			}
		}
	}
	// The inputs test something: the mixed one reads, and the errors are
	// errors with their line.
	if _, _, err, _ := readBoth(mixed, snapCut{workers: 1}); err != nil {
		t.Fatalf("mixed: %v", err)
	}
	want := fmt.Sprintf("line %d:", strings.Count(mixed, "\n")+2)
	if _, _, err, _ := readBoth(inputs["two errors"], snapCut{workers: 1}); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("two errors: %v, want the bad DN at %s", err, want)
	}
}

func manyRecords(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "dn: cn=r%d,dc=int\ncn: r%d\ndescription: %s\n\n", i, i, strings.Repeat("v", i%37))
	}
	return b.String()
}

// failingReader reads text, then fails.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

func TestReadSnapshotInBlocksReportsAReadError(t *testing.T) {
	broken := errors.New("disk on fire")
	text := manyRecords(200)
	for _, c := range []snapCut{{workers: 1}, {workers: 2, block: 100, max: 1 << 20}} {
		// The read error comes after the whole records, cut in the middle
		// of one: the error is the read's, not a syntax error of the
		// broken record.
		_, err := readSnapshot(&failingReader{r: strings.NewReader(text[:len(text)-20]), err: broken}, c)
		if !errors.Is(err, broken) {
			t.Errorf("%+v: error %v, want the read error", c, err)
		}
	}
}

// FuzzSnapshotBlocks checks that any input reads the same in blocks as in
// one piece: the same entries, or the same error.
func FuzzSnapshotBlocks(f *testing.F) {
	f.Add(dirtest.Sample(), 7)
	f.Add("dn: dc=x\nobjectClass: top\n\n\ndn: cn=a,dc=x\ncn: a\n", 3)
	f.Add("version: 1\r\n\r\ndn: dc=x\r\n objectClass: top\r\n\r\n", 1)
	f.Fuzz(func(t *testing.T, text string, block int) {
		c := snapCut{workers: 2, block: 1 + (block&0xffff)%512, max: 600}
		whole, cut, wholeErr, cutErr := readBoth(text, c)
		if fmt.Sprint(wholeErr) != fmt.Sprint(cutErr) {
			t.Fatalf("%+v: error %v, in one piece %v", c, cutErr, wholeErr)
		}
		if whole != cut {
			t.Fatalf("%+v: read\n%s\nin one piece\n%s", c, cut, whole)
		}
	})
}

// EachPrepared hands prepare the entries Each does, each whole while
// prepare runs, though their memory is reused afterwards, and commits the
// results in file order.
func TestEachPreparedReadsAsEach(t *testing.T) {
	text := dirtest.Sample() + "\n" + manyRecords(2000)
	s, err := ReadSnapshot(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := s.Entries()
	for _, workers := range []int{1, 2, 5} {
		var got []string
		EachPrepared(s, workers, func(w int, e *ldap.Entry) string {
			if w < 0 || w >= workers {
				t.Errorf("worker %d of %d", w, workers)
			}
			return fmt.Sprintf("%s %v", e.DN, attrsText(e))
		}, func(x string) { got = append(got, x) })
		if len(got) != len(want) || len(want) < 2000 {
			t.Fatalf("%d workers: %d entries, want %d", workers, len(got), len(want))
		}
		for i, e := range want {
			if w := fmt.Sprintf("%s %v", e.DN, attrsText(e)); got[i] != w {
				t.Fatalf("%d workers: entry %d: %s, want %s", workers, i, got[i], w)
			}
		}
	}
}

func attrsText(e *ldap.Entry) string {
	var b strings.Builder
	for _, a := range e.Attributes {
		fmt.Fprintf(&b, "%s=%q;", a.Name, a.Values)
	}
	return b.String()
}
