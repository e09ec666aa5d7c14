package slapdtest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestEntryGroupsValuesByName(t *testing.T) {
	entries, err := ReadEntries("dn: cn=a\nobjectClass: top\ncn: a\nCN: b\nobjectclass: device\ncn;lang-fr: c\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range entries[0].Attributes {
		got = append(got, a.Name+"="+strings.Join(a.Values, ","))
		if !reflect.DeepEqual(len(a.ByteValues), len(a.Values)) {
			t.Errorf("%s: byte values %q", a.Name, a.ByteValues)
		}
	}
	want := []string{"objectClass=top,device", "cn=a,b", "cn;lang-fr=c"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestReadEntries(t *testing.T) {
	entries, err := ReadEntries("dn: cn=a\ncn: a\n\ndn: cn=b\nchangetype: add\ncn: b\n")
	if err != nil || len(entries) != 2 || entries[1].GetAttributeValue("cn") != "b" {
		t.Fatalf("%v %v", entries, err)
	}
	_, err = ReadEntries("dn: cn=a\ncn: a\n\ndn: cn=b\nchangetype: delete\n")
	if !errors.Is(err, errNotEntry) || !strings.HasPrefix(err.Error(), "line 4: ") {
		t.Errorf("err %v", err)
	}
}
