package directory

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/cpactl/cpactl/directory/internal/dirtest"
)

// synthetic is the benchmarks' federation (dirtest.Synthetic), sized by
// its number of sessions.
type synthetic struct{ dirtest.Synthetic }

func syntheticOf(sessions int) synthetic { return synthetic{dirtest.Synthetic{Sessions: sessions}} }

// query is the request a resolve-style read asks: a user in the middle.
func (s synthetic) query() ResolveQuery {
	u := s.Users() / 2
	return ResolveQuery{User: `CORP\` + s.UID(u), Entitlement: s.GE(s.UserGE(u)), ConnectionServer: s.Pod(1) + "-cs1",
		Client: fmt.Sprintf("pc-%05d", 1)}
}

var syntheticOut = flag.String("synthetic-ldif", "",
	"write the synthetic federation of -synthetic-sessions sessions to this file (to compare with slapadd -u or run cpactl on it)")
var syntheticSessions = flag.Int("synthetic-sessions", 250000, "sessions of the federation -synthetic-ldif writes")

// TestWriteSyntheticLDIF writes the benchmarks' federation to a file when
// asked: go test ./directory -run TestWriteSyntheticLDIF -synthetic-ldif=/tmp/cpa.ldif
func TestWriteSyntheticLDIF(t *testing.T) {
	if *syntheticOut == "" {
		t.Skip("no -synthetic-ldif")
	}
	f, err := os.Create(*syntheticOut)
	if err != nil {
		t.Fatal(err)
	}
	s := syntheticOf(*syntheticSessions)
	n, err := s.Write(f)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	q := s.query()
	t.Logf("%d entries; a request: cpactl resolve --from %s --user '%s' --entitlement '%s' --cs %s --client %s",
		n, *syntheticOut, q.User, q.Entitlement, q.ConnectionServer, q.Client)
}
