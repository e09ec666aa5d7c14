package horizonimport

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// likeJSON checks that decodeRecord reads b into a T as encoding/json
// does: both succeed with the same value, or both fail. The record is
// decoded over a value already filled by prior (when encoding/json reads
// it), as a repeated key decodes over what came before.
func likeJSON[T any](t *testing.T, prior, b []byte) {
	var want, got T
	if json.Unmarshal(prior, &want) != nil {
		// Only a record encoding/json reads comes before (what a
		// failed read leaves is not compared).
		want, prior = *new(T), nil
	}
	// One scanner reads both, as a page's records are read: what it
	// guessed of the keys of the first does not change the second.
	sc := &scanner{}
	decodeRecord := func(b []byte, v any) error {
		sc.b, sc.i = b, 0
		if err := sc.record(v); err != nil {
			return err
		}
		if sc.ws(); sc.i != len(sc.b) {
			return errSyntax
		}
		return nil
	}
	if err := decodeRecord(prior, &got); prior != nil && err != nil || !reflect.DeepEqual(want, got) {
		t.Fatalf("%T %q:\nencoding/json %+v\ndecodeRecord  %+v", want, prior, want, got)
	}
	wantErr := json.Unmarshal(b, &want)
	gotErr := decodeRecord(b, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%T %q over %q: encoding/json %v, decodeRecord %v", want, b, prior, wantErr, gotErr)
	}
	if wantErr == nil && !reflect.DeepEqual(want, got) {
		t.Fatalf("%T %q over %q:\nencoding/json %+v\ndecodeRecord  %+v", want, b, prior, want, got)
	}
}

// recordChecks are likeJSON of every record type the import reads.
var recordChecks = []struct {
	typ   reflect.Type
	check func(*testing.T, []byte, []byte)
}{
	{reflect.TypeFor[sessionJSON](), likeJSON[sessionJSON]},
	{reflect.TypeFor[adJSON](), likeJSON[adJSON]},
	{reflect.TypeFor[rdsServerJSON](), likeJSON[rdsServerJSON]},
	{reflect.TypeFor[machineJSON](), likeJSON[machineJSON]},
	{reflect.TypeFor[assignmentJSON](), likeJSON[assignmentJSON]},
	{reflect.TypeFor[homeSiteJSON](), likeJSON[homeSiteJSON]},
	{reflect.TypeFor[cpaJSON](), likeJSON[cpaJSON]},
	{reflect.TypeFor[siteJSON](), likeJSON[siteJSON]},
	{reflect.TypeFor[podJSON](), likeJSON[podJSON]},
	{reflect.TypeFor[podMonitorJSON](), likeJSON[podMonitorJSON]},
	{reflect.TypeFor[entitlementJSON](), likeJSON[entitlementJSON]},
	{reflect.TypeFor[membersJSON](), likeJSON[membersJSON]},
	{reflect.TypeFor[connectionServerJSON](), likeJSON[connectionServerJSON]},
	{reflect.TypeFor[desktopPoolJSON](), likeJSON[desktopPoolJSON]},
	{reflect.TypeFor[poolMetricsJSON](), likeJSON[poolMetricsJSON]},
	{reflect.TypeFor[farmJSON](), likeJSON[farmJSON]},
	{reflect.TypeFor[appPoolJSON](), likeJSON[appPoolJSON]},
}

// filled is a record of type t with every field set (strings named
// after the field, numbers, true, lists of two), as JSON; upper
// upper-cases its keys (matched case-insensitively).
func filled(t reflect.Type, upper bool) []byte {
	v := reflect.New(t).Elem()
	fill(v, "")
	b, err := json.Marshal(v.Interface())
	if err != nil {
		panic(err)
	}
	if upper {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			panic(err)
		}
		var parts []string
		for k, raw := range m {
			parts = append(parts, fmt.Sprintf("%q:%s", strings.ToUpper(k), raw))
		}
		b = []byte("{" + strings.Join(parts, ",") + "}")
	}
	return b
}

func fill(v reflect.Value, name string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("v-" + name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int:
		v.SetInt(int64(len(name)) - 3)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), name)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0), name+"0")
		fill(v.Index(1), name+"1")
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), v.Type().Field(i).Name)
		}
	}
}

// FuzzDecodeRecord: decodeRecord reads a record as encoding/json reads
// it into the record type (which picks one), decoded alone or over an
// earlier record of that type: the same value, or both fail.
func FuzzDecodeRecord(f *testing.F) {
	for i, rc := range recordChecks {
		f.Add(uint8(i), []byte(nil), filled(rc.typ, false))
		f.Add(uint8(i), filled(rc.typ, false), filled(rc.typ, true))
		f.Add(uint8(i), filled(rc.typ, false), []byte(`{"id":null,"name":5}`))
	}
	for _, seed := range []string{
		`{"id":"s1","user_id":"S-1","global_desktop_entitlement_id":"gd","pod_id":"p","brokering_pod_id":"p","desktop_pool_id":"dp","session_state":"CONNECTED","client_data":{"name":"pc","type":"WINDOWS"},"start_time":1767225600000,"brokered_remotely":false}`,
		`{"ID":"s1","Session_State":"PENDING","id":"s2","global_application_entitlement_ids":["a",null,"b"],"farm_id":"f","rds_server_id":"r"}`,
		`{"id":"\u00e9\ud83d\ude00","user_id":"a\"b","client_data":null,"global_application_entitlement_ids":null,"x":[1,2.5e-3,{"y":[true,false,null]}]}`,
		`{"id":5}`, `{"client_data":{"name":1}}`, `{"global_application_entitlement_ids":[1]}`, `null`, `[]`, `"s"`, `{"id":"a",}`,
		`{"client_data":{"name":"a"},"client_data":{}}`, `{"global_application_entitlement_ids":["a","b"],"global_application_entitlement_ids":[]}`,
		`{"global_application_entitlement_ids":["a","b"],"global_application_entitlement_ids":["c",null]}`,
		`{"application_names":["a","b"],"application_names":[],"application_names":[null,null]}`,
		"{\"id\":\"\xff\xfe\"}", `{"id":"a"} x`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":"\x"}`, `{"ſession_state":"CONNECTED"}`, `{"\u0069d":"x"}`,
	} {
		f.Add(uint8(0), []byte(nil), []byte(seed))
	}
	for _, seed := range []string{`{"load_index":1.0}`, `{"load_index":-0}`, `{"load_index":1e2}`, `{"load_index":99999999999999999999}`,
		`{"enabled":"x"}`, `{"enabled":null,"enabled":true}`, `{"load_index":"5"}`, `{"session_count":null}`} {
		f.Add(uint8(2), []byte(`{"load_index":3,"enabled":false}`), []byte(seed))
	}
	for _, seed := range []string{`{"endpoints":[{"name":"a"},{"status":"OK"}],"endpoints":[{"status":"x"},null]}`,
		`{"endpoints":[1]}`, `{"endpoints":{}}`, `{"endpoints":[],"endpoints":[{"enabled":true}]}`} {
		f.Add(uint8(9), []byte(`{"endpoints":[{"name":"n","enabled":false},{"name":"m"},{"name":"o"}]}`), []byte(seed))
	}
	f.Add(uint8(15), []byte(`{"load_balancer_settings":{"load_index_threshold":5}}`), []byte(`{"load_balancer_settings":{"connecting_session_threshold":6},"Max_Sessions_Per_RDS_Server":2}`))
	f.Add(uint8(6), []byte(nil), []byte(`{"site_redirection_settings":{"site_redirection_enabled":true},"site_redirection_settings":null}`))
	f.Fuzz(func(t *testing.T, which uint8, prior, b []byte) {
		recordChecks[int(which)%len(recordChecks)].check(t, prior, b)
	})
}

// TestRecordTypesHaveNames: every field of every record type is named
// by a lower-case ASCII json tag (what fieldOf's shortcut needs), and
// the decoder knows its kind (recordTypeOf panics otherwise).
func TestRecordTypesHaveNames(t *testing.T) {
	for _, rc := range recordChecks {
		rt := recordTypeOf(rc.typ)
		if len(rt.fields) != rc.typ.NumField() {
			t.Errorf("%s: %d fields known of %d", rc.typ, len(rt.fields), rc.typ.NumField())
		}
		// Every field is read from its JSON (filled sets each).
		v := reflect.New(rc.typ)
		if err := decodeRecord(filled(rc.typ, true), v.Interface()); err != nil {
			t.Fatal(err)
		}
		w := reflect.New(rc.typ).Elem()
		fill(w, "")
		if !reflect.DeepEqual(v.Elem().Interface(), w.Interface()) {
			t.Errorf("%s: read %+v, want %+v", rc.typ, v.Elem().Interface(), w.Interface())
		}
	}
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

// FuzzCheckSpan: checkSpan, eight bytes at a time, says what a loop over
// the bytes says: any control character (refused), any byte beyond ASCII.
func FuzzCheckSpan(f *testing.F) {
	for _, seed := range []string{"", "abc", "abcdefgh\x1f", "\x7f\x80", "0123456789abcdef\x00", "é", "\x20\x20\x20\x20\x20\x20\x20\x19", "\xff\xff\xff\xff\xff\xff\xff\xff\x1f"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		wantASCII, wantOK := true, true
		for _, c := range b {
			wantOK = wantOK && c >= 0x20
			wantASCII = wantASCII && c < 0x80
		}
		ascii, ok := checkSpan(b)
		if ok != wantOK || ok && ascii != wantASCII {
			t.Fatalf("%q: ascii %v ok %v, want %v %v", b, ascii, ok, wantASCII, wantOK)
		}
	})
}
