package broker

import (
	"reflect"
	"testing"
)

// TestSameSearchedAsDeepEqual: sameSearched, field by field, says what
// reflect.DeepEqual of the two records with their members left out says,
// for a record and each of its fields changed in turn (a list also from
// nil to empty), every field of Entitlement included.
func TestSameSearchedAsDeepEqual(t *testing.T) {
	base := Entitlement{Name: "Sales", Type: TypeDesktop, Scope: ScopeAny, Policy: PolicyNone, Tags: []string{"dmz"},
		Enabled: true, DefaultProtocol: ProtocolBlast, Members: []Member{{Kind: MemberGroup, Name: "g"}}, Pools: []string{"p1"},
		Backup: "B", BackupNamed: "B", BackedUpBy: []string{"A"}}
	variants := []Entitlement{base}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		for _, change := range []string{"value", "nil", "empty"} {
			v := base
			v.Tags, v.Pools, v.BackedUpBy = append([]string(nil), base.Tags...), append([]string(nil), base.Pools...), append([]string(nil), base.BackedUpBy...)
			v.Members = append([]Member(nil), base.Members...)
			f := reflect.ValueOf(&v).Elem().Field(i)
			switch f.Kind() {
			case reflect.String:
				if change != "value" {
					continue
				}
				f.SetString(f.String() + "x")
			case reflect.Bool:
				if change != "value" {
					continue
				}
				f.SetBool(!f.Bool())
			case reflect.Slice:
				switch change {
				case "value":
					f.Set(reflect.Append(f, reflect.New(f.Type().Elem()).Elem()))
				case "nil":
					f.Set(reflect.Zero(f.Type()))
				case "empty":
					f.Set(reflect.MakeSlice(f.Type(), 0, 0))
				}
			default:
				t.Fatalf("field %s of kind %s: the test does not change it", typ.Field(i).Name, f.Kind())
			}
			variants = append(variants, v)
		}
	}
	for i := range variants {
		for j := range variants {
			a, b := variants[i], variants[j]
			a.Members, b.Members = nil, nil
			if got, want := sameSearched(&variants[i], &variants[j]), reflect.DeepEqual(a, b); got != want {
				t.Errorf("%+v and %+v: sameSearched %t, DeepEqual without members %t", variants[i], variants[j], got, want)
			}
		}
	}
}
