package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cpactl/cpactl/internal/slapdtest"
)

// TestReplicationProbe repeats the fault probe's reproductions of a
// consumer left short by a transaction (docs/replication.md has the
// counts), at the probe's sizes. It takes minutes and runs only when
// CPACTL_REPL_PROBE=1 (scripts/repl-probe); CI runs the deterministic
// TestStatusSeesShortConsumer and TestWaitReplicasCompletesShortConsumer.
//
//   - restart: `apply --atomic` of CPACTL_REPL_ENTRIES (15,000) entries,
//     the consumer restarted at a random moment 0.1-4 s in;
//   - new: a new (empty) consumer started at a random moment while
//     `apply` writes CPACTL_REPL_NEW_ENTRIES (3,129) entries in one
//     transaction;
//
// each CPACTL_REPL_TRIES times (8 and 26), without and with
// --wait-replicas. It logs, per try, the entries of the provider and the
// consumer once the consumer holds the provider's contextCSN, and what
// status says.
func TestReplicationProbe(t *testing.T) {
	if os.Getenv("CPACTL_REPL_PROBE") != "1" {
		t.Skip("set CPACTL_REPL_PROBE=1 (scripts/repl-probe) to run the probe's reproductions")
	}
	envInt := func(name string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
			return v
		}
		return def
	}
	for _, sc := range []struct {
		name    string
		entries int
		tries   int
		atomic  bool
		from    time.Duration
		to      time.Duration
	}{
		{"restart", envInt("CPACTL_REPL_ENTRIES", 15000), envInt("CPACTL_REPL_TRIES", 8), true, 100 * time.Millisecond, 4 * time.Second},
		{"new", envInt("CPACTL_REPL_NEW_ENTRIES", 3129), envInt("CPACTL_REPL_NEW_TRIES", 26), false, 0, 2 * time.Second},
	} {
		file := filepath.Join(t.TempDir(), "federation.ldif")
		if err := os.WriteFile(file, []byte(federationLDIF(sc.entries)), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, wait := range []bool{false, true} {
			short, total := 0, 0
			var lost []string
			for try := 0; try < sc.tries; try++ {
				ok, line := probeTry(t, file, sc.atomic, sc.name == "new", wait, sc.from+time.Duration(rand.Int64N(int64(sc.to-sc.from))))
				total++
				if !ok {
					short++
					lost = append(lost, line)
				}
				t.Logf("%s wait=%v try %d: %s", sc.name, wait, try+1, line)
			}
			t.Logf("SUMMARY %s (%d entries) wait-replicas=%v: consumer short or different in %d of %d tries %v", sc.name, sc.entries, wait, short, total, lost)
		}
	}
}

// probeTry runs one try; ok when the consumer ends with the provider's
// entries.
func probeTry(t *testing.T, file string, atomic, fresh, wait bool, at time.Duration) (bool, string) {
	r := slapdtest.StartReplicated(t, slapdtest.Config{WithBase: true}, slapdtest.ReplicaOptions{})
	p, c := r.Provider, r.Consumers[0]
	defer func() { _ = c.Stop(); _ = p.Stop() }()
	env := adminEnv(p)
	// The provider first: apply reads and writes there, as the probe did
	// (-H provider); --wait-replicas waits for the consumer after it.
	args := []string{"-H", p.URL + "," + c.URL, "apply", file}
	if atomic {
		args = append(args, "--atomic")
	}
	if wait {
		args = append(args, "--wait-replicas=60s")
	}
	c.Halt()
	if !fresh {
		if err := c.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		code int
		err  string
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		code, _, errOut := cpactlMain(args, env)
		done <- result{code, errOut}
	}()
	time.Sleep(at)
	if fresh {
		if err := c.Reinitialize(); err != nil {
			t.Fatal(err)
		}
	} else {
		c.Halt()
		if err := c.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	res := <-done
	took := time.Since(start)
	if err := r.WaitReplicated(60 * time.Second); err != nil {
		pDown, pErr := p.Exited()
		cDown, cErr := c.Exited()
		return false, fmt.Sprintf("not caught up (apply exit %d; provider exited: %v %v; consumer exited: %v %v): %v",
			res.code, pDown, pErr, cDown, cErr, err)
	}
	want, got := entryCount(t, p), entryCount(t, c)
	scode, _, _ := cpactlMain([]string{"-H", c.URL + "," + p.URL, "status"}, env)
	oldCode, _, _ := cpactlMain([]string{"-H", c.URL + "," + p.URL, "status", "--content=false"}, env)
	errLine := strings.ReplaceAll(strings.TrimSpace(res.err), "\n", " | ")
	if len(errLine) > 200 {
		errLine = errLine[len(errLine)-200:]
	}
	return got == want, fmt.Sprintf("restart at %s of %s: apply exit %d; provider %d entries, consumer %d; status exit %d (contextCSN only: %d); %s",
		at.Round(time.Millisecond), took.Round(time.Millisecond), res.code, want, got, scode, oldCode, errLine)
}
