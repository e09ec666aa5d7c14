package output

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestLargeTablesLookTheSame: the layout of large tables (plainRows)
// is byte for byte tablewriter's, on random tables of names with spaces,
// LDAP specials, non-ASCII letters, empty and dash cells.
func TestLargeTablesLookTheSame(t *testing.T) {
	words := []string{"UK", "India", `R&D, "West" <1>+;=*()\ Zürich`, "-", "sales desktops", "a", "blr-desktops",
		"", "ÉÀÖ", "0", "12345678901234567890", "x y  z"}
	header := headerCells([]string{"name", "pod", "full name", "brokering pod", "state", "old.ldif"}, []bool{5: true})
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 300; round++ {
		rows := make([][]string, 1+rng.Intn(20))
		for i := range rows {
			rows[i] = make([]string, len(header))
			for j := range rows[i] {
				rows[i][j] = words[rng.Intn(len(words))]
			}
		}
		var a, b bytes.Buffer
		if err := tableRows(&a, header, rows, 0); err != nil {
			t.Fatal(err)
		}
		if err := plainRows(&b, header, rows); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Fatalf("round %d differs:\ntablewriter:\n%s\nplainRows:\n%s", round, a.String(), b.String())
		}
	}
}

func BenchmarkRows(b *testing.B) {
	rows := make([][]string, 250000)
	for i := range rows {
		rows[i] = []string{fmt.Sprintf("s%020d", i), "user12345", "Engineering Workstations 0002", "yyz-3", "pool-123",
			"host-1", "-", "connected", "-"}
	}
	header := strings.Fields("id user entitlement pod pool host brokering state client")
	for b.Loop() {
		var buf bytes.Buffer
		if err := Rows(&buf, header, rows); err != nil {
			b.Fatal(err)
		}
	}
}
