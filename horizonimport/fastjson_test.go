package horizonimport

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeSession: decodeSession reads a record as encoding/json reads
// it into sessionJSON: both succeed with the same value, or both fail.
func FuzzDecodeSession(f *testing.F) {
	for _, seed := range []string{
		`{"id":"s1","user_id":"S-1","global_desktop_entitlement_id":"gd","pod_id":"p","brokering_pod_id":"p","desktop_pool_id":"dp","session_state":"CONNECTED","client_data":{"name":"pc","type":"WINDOWS"},"start_time":1767225600000,"brokered_remotely":false}`,
		`{"ID":"s1","Session_State":"PENDING","id":"s2","global_application_entitlement_ids":["a",null,"b"],"farm_id":"f","rds_server_id":"r"}`,
		`{"id":"\u00e9\ud83d\ude00","user_id":"a\"b","client_data":null,"global_application_entitlement_ids":null,"x":[1,2.5e-3,{"y":[true,false,null]}]}`,
		`{"id":5}`, `{"client_data":{"name":1}}`, `{"global_application_entitlement_ids":[1]}`, `null`, `[]`, `"s"`, `{"id":"a",}`,
		`{"client_data":{"name":"a"},"client_data":{}}`, `{"global_application_entitlement_ids":["a","b"],"global_application_entitlement_ids":[]}`,
		"{\"id\":\"\xff\xfe\"}", `{"id":"a"} x`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":"\x"}`, `{"ſession_state":"CONNECTED"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want, got sessionJSON
		wantErr := json.Unmarshal(b, &want)
		gotErr := decodeSession(b, &got)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%q: encoding/json %v, decodeSession %v", b, wantErr, gotErr)
		}
		if wantErr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("%q:\nencoding/json %+v\ndecodeSession %+v", b, want, got)
		}
	})
}

// FuzzEachElement: eachElement splits a page into the records
// encoding/json's Decoder finds, and accepts the pages it accepts.
func FuzzEachElement(f *testing.F) {
	for _, seed := range []string{`[]`, ` [ {"a":1} , [2] , "x" , null ] `, `[1,]`, `[`, `{}`, `[{"a":[[[]]]}] x`, `[0.5e+3,-0,true]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []json.RawMessage
		wantErr := json.Unmarshal(b, &want)
		var got []string
		_, gotErr := eachElement("page", b, func(s *scanner) error {
			e, err := s.element()
			got = append(got, string(e))
			return err
		})
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%q: encoding/json %v, eachElement %v", b, wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d elements, encoding/json %d", b, len(got), len(want))
		}
		for i := range got {
			if got[i] != string(want[i]) {
				t.Fatalf("%q: element %d %q, encoding/json %q", b, i, got[i], want[i])
			}
		}
	})
}
