package ldapconn

import (
	"fmt"
	"testing"
	"time"

	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
)

var dit = ldapschema.DIT{Base: ldapschema.DefaultBase}

func TestCommitTimeout(t *testing.T) {
	for _, tc := range []struct {
		timeout, want time.Duration
	}{
		{0, MinCommitTimeout},               // the default request timeout, 10s
		{time.Second, MinCommitTimeout},     // never less than a minute
		{30 * time.Second, 3 * time.Minute}, // six request timeouts
	} {
		if got := CommitTimeout(tc.timeout); got != tc.want {
			t.Errorf("CommitTimeout(%v) = %v, want %v", tc.timeout, got, tc.want)
		}
	}
}

// TestEndSettle: cpactl pauses before End Transaction unless the server
// says it runs few enough threads to serialize a connection's requests
// (readable in cn=config over ldapi with SASL EXTERNAL, not as the
// database's root DN).
func TestEndSettle(t *testing.T) {
	for _, tc := range []struct {
		threads int
		ldapi   bool
		want    time.Duration
	}{
		{threads: 2, ldapi: true, want: 0},
		{threads: 3, ldapi: true, want: 0},
		{threads: 4, ldapi: true, want: txnSettle},
		{threads: 0, ldapi: true, want: txnSettle},  // slapd's default, 16
		{threads: 2, ldapi: false, want: txnSettle}, // cn=config unreadable
	} {
		t.Run(fmt.Sprintf("threads %d ldapi %v", tc.threads, tc.ldapi), func(t *testing.T) {
			s := slapdtest.Start(t, slapdtest.Config{Threads: tc.threads})
			opts := Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword}
			if tc.ldapi {
				opts = Options{URLs: []string{s.LDAPIURL}}
			}
			c, err := Dial(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got := c.endSettle(); got != tc.want {
				t.Errorf("pause before End: %v, want %v", got, tc.want)
			}
		})
	}
}
