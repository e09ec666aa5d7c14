package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/commands"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/slapdtest"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/reconcile"
)

// BenchmarkApplyEmpty compares, in one run, loading a federation of about
// 10,000 entries into an empty directory (no base entry), each on a fresh
// slapd with the default 16 threads:
//
//   - ldapadd: ldapadd of the LDIF (one add after the other, no
//     transaction);
//   - cpactl: `cpactl apply FILE` in process (parse, checks, lint, read,
//     compare, plan, write);
//   - cpactl-nolint: the same without the checks and lint;
//   - cpactl-write: only the write (Store.ApplyPlan of the plan);
//   - cpactl-old: with CPACTL_OLD_BINARY set to another cpactl build (one
//     from before a change), `apply FILE` with that binary.
//
// CPACTL_APPLY_ENTRIES sets the size, CPACTL_APPLY_DURABLE=1 makes the
// servers sync each commit to disk as a production server does (the
// harness default is dbnosync). Each sub-benchmark reports s/op; compare
// ratios within one run:
//
//	go test ./cmd/cpactl -run '^$' -bench ApplyEmpty -benchtime 3x
//	CPACTL_APPLY_ENTRIES=2000 go test ./cmd/cpactl -run '^$' -bench ApplyEmpty
func BenchmarkApplyEmpty(b *testing.B) {
	if err := slapdtest.Available(); err != nil {
		b.Skip(err)
	}
	if _, err := exec.LookPath("ldapadd"); err != nil {
		b.Skip("ldapadd not found: apt-get install ldap-utils")
	}
	entries := 10000
	if n := os.Getenv("CPACTL_APPLY_ENTRIES"); n != "" {
		var err error
		if entries, err = strconv.Atoi(n); err != nil {
			b.Fatal(err)
		}
	}
	file := filepath.Join(b.TempDir(), "federation.ldif")
	text := federationLDIF(entries)
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		b.Fatal(err)
	}
	// ldapadd gets the file without its base entry, which every harness
	// server has (the admin it binds as lives under it).
	_, rest, _ := strings.Cut(text, "\n\n")
	noBase := filepath.Join(b.TempDir(), "nobase.ldif")
	if err := os.WriteFile(noBase, []byte(rest), 0o600); err != nil {
		b.Fatal(err)
	}
	durable := os.Getenv("CPACTL_APPLY_DURABLE") == "1"
	fresh := func(b *testing.B) *slapdtest.Server {
		b.StopTimer()
		s, err := slapdtest.New(slapdtest.Config{Durable: durable})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		return s
	}
	stop := func(s *slapdtest.Server) {
		// Check that the server survived before stopping it.
		if exited, err := s.Exited(); exited {
			panic("slapd exited during the benchmark: " + errString(err))
		}
		_ = s.Stop()
	}
	b.Run("ldapadd", func(b *testing.B) {
		for b.Loop() {
			s := fresh(b)
			cmd := exec.Command("ldapadd", "-x", "-H", s.URL, "-D", s.AdminDN(), "-w", slapdtest.AdminPassword, "-f", noBase)
			cmd.Env = append(os.Environ(), "LDAPNOINIT=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("ldapadd: %v: %s", err, lastLine(out))
			}
			b.StopTimer()
			stop(s)
			b.StartTimer()
		}
	})
	b.Run("cpactl", func(b *testing.B) {
		for b.Loop() {
			s := fresh(b)
			var stderr bytes.Buffer
			env := append([]string{"LDAPNOINIT=1"}, s.Env()...)
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				b.Setenv(k, v)
			}
			if code := commands.Main([]string{"apply", file}, strings.NewReader(""), discard{}, &stderr); code != 0 {
				b.Fatalf("cpactl apply: exit %d: %s", code, lastLine(stderr.Bytes()))
			}
			b.StopTimer()
			stop(s)
			b.StartTimer()
		}
	})
	// What apply does, step by step, without its checks and lint; timed
	// from the file's parsing, or only the write.
	plan := func(b *testing.B, s *slapdtest.Server) (*directory.Store, *reconcile.Plan, func()) {
		snap, err := snapshot.LoadSnapshot(file)
		if err != nil {
			b.Fatal(err)
		}
		c, err := ldapconn.Dial(ldapconn.Options{URLs: []string{s.URL}, BindDN: s.AdminDN(), Password: slapdtest.AdminPassword})
		if err != nil {
			b.Fatal(err)
		}
		st := directory.NewStore(c, ldapschema.DefaultBase)
		entries, err := st.Find(st.DIT.Base, ldap.ScopeWholeSubtree, "(objectClass=*)")
		var missing *ldapconn.LayoutError
		if err != nil && !errors.As(err, &missing) {
			b.Fatal(err)
		}
		desired, err := reconcile.NewStateFrom(st.DIT, snap.Each)
		if err != nil {
			b.Fatal(err)
		}
		current, _ := reconcile.NewStateFrom(st.DIT, func(add func(*ldap.Entry) error) error {
			for _, e := range entries {
				_ = add(e)
			}
			return nil
		})
		p, problems := reconcile.PlanApply(desired, current, reconcile.Compare(desired, current), false)
		if len(problems) > 0 {
			b.Fatalf("plan: %v", problems)
		}
		return st, p, func() { c.Close() }
	}
	for _, writeOnly := range []bool{false, true} {
		name := "cpactl-nolint"
		if writeOnly {
			name = "cpactl-write"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				s := fresh(b)
				if writeOnly {
					b.StopTimer()
				}
				st, p, done := plan(b, s)
				b.StartTimer()
				if err := st.ApplyPlan(&p.Plan); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				done()
				stop(s)
				b.StartTimer()
			}
		})
	}
	if old := os.Getenv("CPACTL_OLD_BINARY"); old != "" {
		b.Run("cpactl-old", func(b *testing.B) {
			for b.Loop() {
				s := fresh(b)
				cmd := exec.Command(old, "apply", file)
				cmd.Env = append(append(os.Environ(), "LDAPNOINIT=1"), s.Env()...)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%s apply: %v: %s", old, err, lastLine(out))
				}
				b.StopTimer()
				stop(s)
				b.StartTimer()
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

func errString(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
