package ldapconn

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/internal/slapdtest"
)

// TestTxnRaceExperiment reproduces slapd 2.5's End Transaction race with
// raw transactions (two adds, a modify, two deletes each), counting the
// crashes (slapd is restarted after each). It is the experiment behind the
// pacing in conn.go; set CPACTL_TXN_RACE=MODE,THREADS,PAUSE,N where MODE
// says where the pause goes: none, between (after Start and between the
// writes, not before End), end (before End only); THREADS is slapd's
// thread count (0: its default, 16); PAUSE a duration; N the number of
// transactions:
//
//	CPACTL_TXN_RACE=between,0,5ms,1000 go test ./directory -run TestTxnRaceExperiment -v
//	CPACTL_TXN_RACE=none,2,0s,2000 go test ./directory -run TestTxnRaceExperiment -v
//
// With SLAPDTEST_CORES=DIR (and `ulimit -c unlimited`) the cores are kept.
func TestTxnRaceExperiment(t *testing.T) {
	spec := os.Getenv("CPACTL_TXN_RACE")
	if spec == "" {
		t.Skip("set CPACTL_TXN_RACE=MODE,THREADS,PAUSE,N to run")
	}
	parts := strings.Split(spec, ",")
	if len(parts) != 4 {
		t.Fatalf("CPACTL_TXN_RACE=%q: want MODE,THREADS,PAUSE,N", spec)
	}
	mode := parts[0]
	threads, err1 := strconv.Atoi(parts[1])
	pause, err2 := time.ParseDuration(parts[2])
	n, err3 := strconv.Atoi(parts[3])
	if err1 != nil || err2 != nil || err3 != nil || (mode != "none" && mode != "between" && mode != "end") {
		t.Fatalf("CPACTL_TXN_RACE=%q: want MODE (none, between, end),THREADS,PAUSE,N", spec)
	}
	const base = "dc=x"
	seed := "dn: dc=x\nobjectClass: top\nobjectClass: domain\ndc: x\n\n" +
		"dn: ou=T,dc=x\nobjectClass: top\nobjectClass: organizationalUnit\nou: T\n\n" +
		"dn: ou=keep,ou=T,dc=x\nobjectClass: top\nobjectClass: organizationalUnit\nou: keep\n"
	var srv *slapdtest.Server
	var c *ldap.Conn
	start := func() {
		var err error
		if srv, err = slapdtest.New(slapdtest.Config{Base: base, LDIF: seed, Threads: threads}); err != nil {
			t.Fatal(err)
		}
		if c, err = srv.Dial(); err != nil {
			t.Fatal(err)
		}
	}
	start()
	defer func() { c.Close(); _ = srv.Stop() }()
	sleep := func(on bool) {
		if on {
			time.Sleep(pause)
		}
	}
	ctl := []ldap.Control{txnControl{}}
	ou := func(i, j int) string { return fmt.Sprintf("ou=m%d-%d,ou=T,%s", i, j, base) }
	crashes, prev := 0, -1
	began := time.Now()
	for i := range n {
		var writes []func() error
		for j := range 2 {
			writes = append(writes, func() error {
				a := ldap.NewAddRequest(ou(i, j), ctl)
				a.Attribute("objectClass", []string{"top", "organizationalUnit"})
				return c.Add(a)
			})
		}
		writes = append(writes, func() error {
			m := ldap.NewModifyRequest("ou=keep,ou=T,"+base, ctl)
			m.Replace("description", []string{"round " + strconv.Itoa(i)})
			return c.Modify(m)
		})
		if p := prev; p >= 0 {
			for j := range 2 {
				writes = append(writes, func() error { return c.Del(ldap.NewDelRequest(ou(p, j), ctl)) })
			}
		}
		_, err := c.Extended(ldap.NewExtendedRequest(oidStartTxn, nil))
		sleep(mode == "between")
		for k, w := range writes {
			if err == nil {
				err = w()
			}
			sleep(mode == "between" && k < len(writes)-1)
		}
		sleep(mode == "end")
		if err == nil {
			end := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "Txn End Request")
			end.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", "Identifier"))
			_, err = c.Extended(ldap.NewExtendedRequest(oidEndTxn, end))
		}
		if err == nil {
			prev = i
			continue
		}
		time.Sleep(200 * time.Millisecond) // let a crash be seen
		exited, how := srv.Exited()
		if !exited {
			t.Fatalf("transaction %d failed, slapd alive: %v", i, err)
		}
		crashes++
		t.Logf("transaction %d: slapd exited (%v)", i, how)
		c.Close()
		_ = srv.Stop()
		start()
		prev = -1
	}
	t.Logf("pause %v %s, threads %d: %d crashes in %d transactions (%v)", pause, mode, threads, crashes, n,
		time.Since(began).Round(time.Millisecond))
}
