package horizonimport_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/horizonimport"
)

// fuzzEndpoints are the files a fuzzed body replaces (federation-wide, or
// pod-1's when pod is set).
var fuzzEndpoints = []struct{ endpoint, pod string }{
	{"sites", ""}, {"pods", ""}, {"monitor-pods", ""}, {"ad-users-or-groups", ""},
	{"global-desktop-entitlements", ""}, {"global-application-entitlements", ""},
	{"desktop-entitlement-members", ""}, {"home-sites", ""}, {"pod-assignments", ""},
	{"connection-servers", "p1"}, {"farms", "p1"}, {"rds-servers", "p1"}, {"desktop-pools", "p1"},
	{"desktop-pool-metrics", "p1"}, {"application-pools", "p1"}, {"machines", "p1"}, {"global-sessions", "p1"},
}

// FuzzImportRecords: whatever one endpoint's answer holds (in a pull
// that is otherwise the test federation), the import never panics: it
// fails with an error and writes nothing, or writes LDIF that reads back.
func FuzzImportRecords(f *testing.F) {
	f.Add(uint8(0), []byte(`[{"id":"sA","name":"A","preferred_sites":["sA","sA","x"]}]`))
	f.Add(uint8(4), []byte(`[{"id":"gd1","name":"Desk","scope":"EVERYWHERE","session_distribution_policy":"","default_display_protocol":"ULTRA","backup_gde_id":"gd1"}]`))
	f.Add(uint8(12), []byte(`[{"id":"dp1","name":"x,y=z+\\","type":"RDS","farm_id":"nope"},{"id":"dp1","name":"x,y=z+\\","type":"AUTOMATED"}]`))
	f.Add(uint8(16), []byte(`[{"id":"s1","user_id":"S-1-5-21-1-1101","pod_id":"p1","session_state":"PENDING"},{"id":"s1","user_id":"S-1-5-21-1-1101","pod_id":"p1","global_desktop_entitlement_id":"gd1","session_state":"CONNECTED"}]`))
	f.Add(uint8(3), []byte(`[{"id":"S-1","group":true,"login_name":"\u0000"},{"id":"S-2","login_name":" ","group_membership_ids":["S-2","S-1"]}]`))
	f.Add(uint8(11), []byte(`[{"id":"r1","name":"h","farm_id":"f1","load_index":-5,"session_count":-1,"state":null}]`))
	f.Add(uint8(10), []byte(`[{"id":"f1","name":"farm-1","max_session_type":"LIMITED","max_sessions_per_rds_server":-3,"load_balancer_settings":{"load_index_threshold":500}}]`))
	f.Add(uint8(1), []byte(`{"not":"an array"}`))
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		target := fuzzEndpoints[int(which)%len(fuzzEndpoints)]
		p := testFederation(t)
		kept := p.m.Files[:0]
		for _, fl := range p.m.Files {
			if fl.Endpoint != target.endpoint || fl.Pod != target.pod {
				kept = append(kept, fl)
			}
		}
		p.m.Files = kept
		records := 1
		var list []json.RawMessage
		if json.Unmarshal(body, &list) == nil {
			records = len(list)
		}
		p.raw(target.endpoint, target.pod, body, records)
		var out bytes.Buffer
		rep, err := horizonimport.WriteLDIF(p.done(), horizonimport.Options{DIT: dit}, &out)
		if err != nil {
			if out.Len() != 0 {
				t.Fatalf("failed (%v) after writing %d bytes", err, out.Len())
			}
			return
		}
		if _, err := snapshot.ReadSnapshot(&out); err != nil {
			t.Fatalf("the LDIF written does not read back: %v", err)
		}
		if rep.Entries == 0 {
			t.Fatal("no entry written")
		}
	})
}
