package impact

import (
	"reflect"
	"testing"
)

// TestOfflinePodFastPathOnGenerated: on generated federations of the CPA
// maximum's topology (15 sites, 50 pods, sessions, home sites and
// assignments in its proportions), each of several pods taken offline,
// impact with its shortcuts (probes, the site searches remembered per GE
// and state, broker.Searches) reports exactly what the straightforward
// comparison reports (every class resolved before and after, each search
// run): the same summary and the same moves, texts and first differences
// included.
func TestOfflinePodFastPathOnGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a federation")
	}
	f := generated(t, 1)
	var online []string
	for _, p := range f.Pods {
		if p.Online {
			online = append(online, p.Name)
		}
	}
	// Every tenth online pod: sites of every size.
	tried, saved, moved := 0, 0, 0
	for i := 0; i < len(online); i += 10 {
		offline := []string{online[i]}
		points, err := DefaultPoints(f, f, offline, "")
		if err != nil {
			t.Fatal(err)
		}
		opt := Options{Points: points, Offline: offline, Seed: int64(i % 3)}
		fast, err := Run(f, f, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.full = true
		full, err := Run(f, f, opt)
		if err != nil {
			t.Fatal(err)
		}
		fs, ws := fast.Summary, full.Summary
		saved += ws.Resolved - fs.Resolved
		fs.Resolved, ws.Resolved = 0, 0
		if !reflect.DeepEqual(fs, ws) {
			t.Errorf("offline %s: summary %+v, straightforward %+v", offline[0], fs, ws)
		}
		if !reflect.DeepEqual(fast.Moves, full.Moves) {
			for j := 0; j < len(fast.Moves) && j < len(full.Moves); j++ {
				if !reflect.DeepEqual(fast.Moves[j], full.Moves[j]) {
					t.Errorf("offline %s: move %d of %d/%d:\n%+v\nstraightforward\n%+v", offline[0], j, len(fast.Moves), len(full.Moves), fast.Moves[j], full.Moves[j])
					break
				}
			}
			t.Errorf("offline %s: %d moves, straightforward %d", offline[0], len(fast.Moves), len(full.Moves))
		}
		moved += len(full.Moves)
		tried++
	}
	if moved == 0 {
		t.Errorf("nothing moves with any of the pods offline: the comparison shows nothing")
	}
	if saved <= 0 {
		t.Errorf("the shortcuts saved no resolution (%d)", saved)
	}
	t.Logf("%d pods taken offline in turn: %d moves; the shortcuts saved %d resolutions", tried, moved, saved)
}
