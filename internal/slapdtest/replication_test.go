package slapdtest

import (
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
)

const replicaLDIF = `dn: ou=Sites,dc=vdiglobal,dc=vmware,dc=int
objectClass: organizationalUnit
ou: Sites
`

// TestReplicated: what is written on the provider reaches the consumer; a
// write sent to the consumer is referred to the provider (or refused with
// 53 without updateref); a halted provider comes back and the consumer
// catches up.
func TestReplicated(t *testing.T) {
	r := StartReplicated(t, Config{WithBase: true, LDIF: replicaLDIF}, ReplicaOptions{})
	p, c := r.Provider, r.Consumers[0]
	if err := p.Load("dn: ou=Pods,dc=vdiglobal,dc=vmware,dc=int\nobjectClass: organizationalUnit\nou: Pods\n"); err != nil {
		t.Fatal(err)
	}
	if err := r.WaitReplicated(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	conn, err := c.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Add(ouAdd("X"))
	if !ldap.IsErrorWithCode(err, ldap.LDAPResultReferral) {
		t.Fatalf("a write to the consumer: %v, want a referral", err)
	}
	p.Halt()
	if _, err := c.ContextCSN(); err != nil {
		t.Fatalf("the consumer does not answer while the provider is down: %v", err)
	}
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := p.Load("dn: ou=Farms,dc=vdiglobal,dc=vmware,dc=int\nobjectClass: organizationalUnit\nou: Farms\n"); err != nil {
		t.Fatal(err)
	}
	if err := r.WaitReplicated(15 * time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestReplicatedNoUpdateRef(t *testing.T) {
	r := StartReplicated(t, Config{WithBase: true}, ReplicaOptions{NoUpdateRef: true})
	conn, err := r.Consumers[0].Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Add(ouAdd("X"))
	if !ldap.IsErrorWithCode(err, ldap.LDAPResultUnwillingToPerform) {
		t.Fatalf("a write to a consumer without updateref: %v, want 53", err)
	}
}

func ouAdd(name string) *ldap.AddRequest {
	req := ldap.NewAddRequest("ou="+name+",dc=vdiglobal,dc=vmware,dc=int", nil)
	req.Attribute("objectClass", []string{"organizationalUnit"})
	req.Attribute("ou", []string{name})
	return req
}
