package ldapschema

import "testing"

// TestExtendsMay: only a class gaining optional attributes is an in-place
// upgrade.
func TestExtendsMay(t *testing.T) {
	parse := func(def string) Description {
		d, err := ParseDescription(def)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	want := parse("( 1.2.3 NAME 'c' SUP top STRUCTURAL MUST cn MAY ( description $ pae-New ) )")
	for _, tc := range []struct {
		name, got string
		ok        bool
	}{
		{"fewer MAY attributes", "( 1.2.3 NAME 'c' SUP top STRUCTURAL MUST cn MAY description )", true},
		{"no MAY at all", "( 1.2.3 NAME 'c' SUP top STRUCTURAL MUST cn )", true},
		{"identical", "( 1.2.3 NAME 'c' SUP top STRUCTURAL MUST cn MAY ( description $ pae-New ) )", false},
		{"a MAY attribute cpactl does not have", "( 1.2.3 NAME 'c' SUP top STRUCTURAL MUST cn MAY ( description $ other ) )", false},
		{"another MUST", "( 1.2.3 NAME 'c' SUP top STRUCTURAL MUST ( cn $ sn ) MAY description )", false},
		{"another kind", "( 1.2.3 NAME 'c' SUP top AUXILIARY MUST cn MAY description )", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := want.ExtendsMay(parse(tc.got)); got != tc.ok {
				t.Fatalf("ExtendsMay = %t, want %t (differences %q)", got, tc.ok, want.Differences(parse(tc.got)))
			}
		})
	}
}
