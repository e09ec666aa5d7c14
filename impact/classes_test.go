package impact

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/cpactl/cpactl/broker"
)

// TestSessionKeyTellsSessionsApart: sessionKey gives two user parts the
// same key exactly when their sessions are the same, field by field and
// in order, as the %#v rendering of the sessions it replaced did (the
// sessions' GEs, pools and farms follow from the sessions within one
// state and GE).
func TestSessionKeyTellsSessionsApart(t *testing.T) {
	if n := reflect.TypeOf(broker.Session{}).NumField(); n != sessionFields {
		t.Fatalf("broker.Session has %d fields, sessionKey encodes %d", n, sessionFields)
	}
	base := broker.Session{ID: sessionPlaceholder(0), User: placeholder, Entitlement: "Sales", Pod: "lon-1", BrokeringPod: "lon-2",
		Pool: "p1", Host: "h1", State: broker.StateConnected, Client: "pc1"}
	parts := []*userPart{
		{},
		{sessions: []broker.Session{base}},
		{sessions: []broker.Session{base, base}},
	}
	// Each field changed in turn, and text moved across two fields.
	for i := range sessionFields {
		x := base
		f := reflect.ValueOf(&x).Elem().Field(i)
		f.SetString(f.String() + "x")
		parts = append(parts, &userPart{sessions: []broker.Session{x}})
		y := base
		v := reflect.ValueOf(&y).Elem()
		if i+1 < sessionFields {
			a, b := v.Field(i), v.Field(i+1)
			s := a.String()
			a.SetString(s[:len(s)-1])
			b.SetString(s[len(s)-1:] + b.String())
			parts = append(parts, &userPart{sessions: []broker.Session{y}})
		}
	}
	second := base
	second.ID = sessionPlaceholder(1)
	parts = append(parts, &userPart{sessions: []broker.Session{base, second}}, &userPart{sessions: []broker.Session{second, base}},
		// Parts of their own with the same sessions as others.
		&userPart{sessions: []broker.Session{base}}, &userPart{sessions: []broker.Session{base, second}})
	for i, a := range parts {
		for j, b := range parts {
			same := fmt.Sprintf("%#v", a.sessions) == fmt.Sprintf("%#v", b.sessions)
			if got := sessionKey(a) == sessionKey(b); got != same {
				t.Errorf("parts %d and %d: same key %t, same sessions %t:\n%#v\n%#v", i, j, got, same, a.sessions, b.sessions)
			}
		}
	}
}
