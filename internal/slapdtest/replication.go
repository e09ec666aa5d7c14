package slapdtest

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// A replicated directory for tests: one provider (the syncprov overlay) and
// consumers that replicate the whole base from it with syncrepl
// refreshAndPersist, refer writes to it (updateref) and retry every second
// when it is gone. Every server has its own serverID, the project's
// schema, the same root DN and password and the same ACLs; syncrepl binds
// as the replication account (Replicator), which the ACLs let read every
// entry, passwords included (ldapschema.ACLOptions). On a slapd 2.5 syncrepl
// consumer only syncrepl itself writes: a write from any bind, the root
// DN's included, gets the referral (or 53 without updateref), as on a
// production consumer (measured here; slapd refuses updatedn next to
// syncrepl: "database already shadowed"). See docs/replication.md.

// replicaRole is what a server's configuration adds for replication.
type replicaRole struct {
	serverID int
	provider string // the provider's URL, for a consumer; "" on the provider
	// noUpdateRef leaves updateref out: the consumer then answers writes
	// with 53, "shadow context; no update referral".
	noUpdateRef bool
	// referTo replaces the provider's URL in updateref (a referral to a
	// server cpactl was not told about).
	referTo string
	// mirror: a provider that also replicates from provider, its peer
	// (multiprovider, mirror mode).
	mirror bool
	// syncFrom replaces the provider's URL in syncrepl.
	syncFrom string
}

func (r *replicaRole) global(b *strings.Builder) {
	if r == nil {
		return
	}
	b.WriteString(ReplicationGlobal(r.serverID, r.provider == "" || r.mirror))
}

func (r *replicaRole) database(b *strings.Builder, base string) {
	if r == nil {
		return
	}
	if r.provider == "" {
		b.WriteString(ProviderDatabase())
		return
	}
	if r.mirror {
		b.WriteString(Consumer{RID: r.serverID, Provider: r.provider, Base: base, BindDN: Replicator.DN(base),
			Credentials: Replicator.Password(), Retry: "1 +"}.Database())
		b.WriteString("multiprovider on\n" + syncprovLines)
		return
	}
	c := Consumer{RID: r.serverID, Provider: r.provider, UpdateRef: r.provider, Base: base,
		BindDN: Replicator.DN(base), Credentials: Replicator.Password(), Retry: "1 +"}
	if r.syncFrom != "" {
		c.Provider = r.syncFrom
	}
	if r.referTo != "" {
		c.UpdateRef = r.referTo
	}
	if r.noUpdateRef {
		c.UpdateRef = ""
	}
	b.WriteString(c.Database())
}

// The replication part of slapd.conf, generated here for the test
// harness and pasted into docker/slapd.conf and docker/slapd-consumer.conf
// (cmd/cpactl's compose test checks they match).

// ReplicationGlobal is the global part: the server's ID, and the syncprov
// module on a provider.
func ReplicationGlobal(serverID int, provider bool) string {
	s := fmt.Sprintf("serverID %d\n", serverID)
	if provider {
		s += "moduleload syncprov.so\n"
	}
	return s
}

// ProviderDatabase is the provider's database part: the indexes syncrepl
// searches with, and the syncprov overlay, which checkpoints the
// contextCSN often and keeps a session log so that a consumer coming back
// gets the changes, not a full refresh.
func ProviderDatabase() string {
	return "# Replication: the provider (docs/replication.md).\n" +
		"index entryCSN,entryUUID eq\n" + syncprovLines
}

const syncprovLines = "overlay syncprov\nsyncprov-checkpoint 10 1\nsyncprov-sessionlog 1000\n"

// Consumer is a consumer's syncrepl configuration.
type Consumer struct {
	RID         int    // replica ID (the harness uses the server ID)
	Provider    string // the URI syncrepl connects to
	UpdateRef   string // the provider's URI as clients reach it ("": none, writes get 53)
	Base        string
	BindDN      string // the DN syncrepl binds as on the provider
	Credentials string
	Retry       string // syncrepl's retry: "1 +" is every second, forever
}

// DockerConsumer is the consumer of docker-compose.yml: it replicates from
// the openldap service, binding as the demo's replication account (a demo
// password, public like the demo accounts'), and refers writes to the
// provider's port on the host, the URI cpactl is given.
func DockerConsumer() Consumer {
	return Consumer{RID: 2, Provider: "ldap://openldap:389", UpdateRef: "ldap://127.0.0.1:3389",
		Base: "dc=vdiglobal,dc=vmware,dc=int", BindDN: DockerReplicator, Credentials: "demo-replicator", Retry: "5 +"}
}

// DockerReplicator is the account the compose consumer's syncrepl binds
// as (docker/demo-accounts.ldif): the provider's ACLs let it read every
// entry (ldapschema.ACLOptions.Replicator).
const DockerReplicator = "uid=replicator,ou=Accounts,dc=vdiglobal,dc=vmware,dc=int"

// Database is the consumer's database part.
func (c Consumer) Database() string {
	var b strings.Builder
	b.WriteString("# Replication: a read-only consumer of the provider (docs/replication.md).\n")
	b.WriteString("index entryCSN,entryUUID eq\n")
	fmt.Fprintf(&b, "syncrepl rid=%03d provider=%s bindmethod=simple binddn=%q credentials=%s searchbase=%q type=refreshAndPersist retry=%q timeout=2 network-timeout=2\n",
		c.RID, c.Provider, c.BindDN, c.Credentials, c.Base, c.Retry)
	if c.UpdateRef != "" {
		fmt.Fprintf(&b, "updateref %s\n", c.UpdateRef)
	}
	return b.String()
}

// Replicated is a provider and its consumers.
type Replicated struct {
	Provider  *Server
	Consumers []*Server
}

// ReplicaOptions shape the consumers of StartReplicated.
type ReplicaOptions struct {
	// Consumers is how many consumers start (default 1).
	Consumers int
	// NoUpdateRef starts the consumers without updateref.
	NoUpdateRef bool
	// ReferTo makes the consumers' updateref name this URL instead of the
	// provider's.
	ReferTo string
	// SyncVia, when set, returns the URL the consumers' syncrepl connects
	// to instead of the provider's (a test's proxy, to cut replication
	// while both servers answer clients); updateref still names the
	// provider.
	SyncVia func(provider string) string
}

// StartReplicated starts a provider with cfg (its LDIF and base are loaded
// on the provider only) and opts.Consumers consumers, waits until every
// consumer holds what the provider holds, and stops them all when the
// test ends. Threads default to 2 (slapd 2.5.13 crashes in transactions
// with more, see directory/conn.go).
func StartReplicated(t testing.TB, cfg Config, opts ReplicaOptions) *Replicated {
	t.Helper()
	if opts.Consumers == 0 {
		opts.Consumers = 1
	}
	if cfg.Threads == 0 {
		cfg.Threads = 2
	}
	pcfg := cfg
	pcfg.replication = &replicaRole{serverID: 1}
	r := &Replicated{Provider: Start(t, pcfg)}
	for i := 0; i < opts.Consumers; i++ {
		ccfg := cfg
		ccfg.LDIF, ccfg.WithBase, ccfg.replica = "", false, true
		ccfg.AccessLog = false // the history's log lives on the provider
		ccfg.replication = &replicaRole{serverID: i + 2, provider: r.Provider.URL,
			noUpdateRef: opts.NoUpdateRef, referTo: opts.ReferTo}
		if opts.SyncVia != nil {
			ccfg.replication.syncFrom = opts.SyncVia(r.Provider.URL)
			if ccfg.replication.referTo == "" {
				ccfg.replication.referTo = r.Provider.URL
			}
		}
		r.Consumers = append(r.Consumers, Start(t, ccfg))
	}
	if !cfg.Bare {
		if err := r.WaitReplicated(30 * time.Second); err != nil {
			t.Fatalf("slapdtest: %v", err)
		}
	}
	return r
}

// StartMirror starts two providers in mirror mode (multiprovider: each
// takes writes and replicates the other's) with cfg, the LDIF loaded on
// the first; the second is Consumers[0], a provider too.
func StartMirror(t testing.TB, cfg Config) *Replicated {
	t.Helper()
	if cfg.Threads == 0 {
		cfg.Threads = 2
	}
	var ports [2]int
	for i := range ports {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	url := func(i int) string { return fmt.Sprintf("ldap://127.0.0.1:%d", ports[i]) }
	var servers [2]*Server
	for i := range servers {
		c := cfg
		if i == 1 {
			c.LDIF, c.WithBase, c.replica = "", false, true
		}
		c.port = ports[i]
		c.replication = &replicaRole{serverID: i + 1, provider: url(1 - i), mirror: true}
		servers[i] = Start(t, c)
	}
	r := &Replicated{Provider: servers[0], Consumers: []*Server{servers[1]}}
	if !cfg.Bare {
		if err := r.WaitReplicated(30 * time.Second); err != nil {
			t.Fatalf("slapdtest: %v", err)
		}
	}
	return r
}

// ContextCSN reads the contextCSN values of the server's base as the root
// DN, sorted.
func (s *Server) ContextCSN() ([]string, error) {
	c, err := s.DialRoot()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetTimeout(2 * time.Second)
	res, err := c.Search(ldap.NewSearchRequest(s.Base, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", []string{"contextCSN"}, nil))
	if err != nil {
		return nil, err
	}
	if len(res.Entries) == 0 {
		return nil, nil
	}
	csns := res.Entries[0].GetEqualFoldAttributeValues("contextCSN")
	sort.Strings(csns)
	return csns, nil
}

// WaitReplicated waits until every running consumer's base has the
// provider's contextCSN (every server ID's change), or fails after
// timeout.
func (r *Replicated) WaitReplicated(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		want, err := r.Provider.ContextCSN()
		if err == nil && len(want) > 0 {
			behind := ""
			for i, c := range r.Consumers {
				if c.cmd == nil {
					continue // halted
				}
				got, err := c.ContextCSN()
				if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
					behind = fmt.Sprintf("consumer %d (%s) has contextCSN %v, the provider %v (%v)", i+1, c.URL, got, want, err)
					break
				}
			}
			if behind == "" {
				return nil
			}
			err = errors.New(behind)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("replication did not catch up within %s: %v", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
