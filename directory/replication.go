package directory

// Replication health, as `cpactl status` reports it (docs/replication.md):
// what every URI says with a normal bind, no cn=config or cn=Monitor.

import (
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/ldapschema"
)

// Roles of a server in a replicated directory.
const (
	RoleProvider = "provider" // takes writes; the only one that does
	RoleConsumer = "consumer" // read-only replica: refers or refuses writes
	RoleMirror   = "mirror"   // takes writes, and so does another (multi-provider, mirror mode)
)

// CSN is one value of a contextCSN: the newest change the server holds
// that the server of ServerID made.
type CSN struct {
	ServerID int
	Time     time.Time
	Raw      string
}

// ParseCSN reads a change sequence number,
// "YYYYmmddHHMMSS.uuuuuuZ#count#sid#mod" (sid in hex).
func ParseCSN(raw string) (CSN, bool) {
	parts := strings.Split(raw, "#")
	if len(parts) != 4 {
		return CSN{}, false
	}
	t, err := time.Parse("20060102150405.999999Z", parts[0])
	if err != nil {
		return CSN{}, false
	}
	sid, err := strconv.ParseInt(parts[2], 16, 32)
	if err != nil {
		return CSN{}, false
	}
	return CSN{ServerID: int(sid), Time: t.UTC(), Raw: raw}, true
}

// ServerStatus is what one URI says about replication.
type ServerStatus struct {
	URL string
	// Reachable: the server took the connection and answered (a frozen
	// server that answers nothing within the timeout is not reachable).
	Reachable bool
	// Bound: the bind succeeded.
	Bound bool
	// Role is RoleProvider, RoleConsumer, RoleMirror, or "" when unknown.
	Role string
	// Referral is where a consumer refers writes ("" without updateref).
	Referral string
	// ContextCSN are the base's contextCSN values, by server ID.
	ContextCSN []CSN
	// Lag is how far the server's newest change of a provider's server ID
	// is behind that provider's (0 when caught up); LagKnown is false when
	// no provider answered or the server holds none of its changes.
	Lag      time.Duration
	LagKnown bool
	// CaughtUp: the server holds every provider's newest change.
	CaughtUp bool
	// Err is why it is not reachable or not bound, or why the base could
	// not be read.
	Err error

	// Content is what the server holds under the base, by container
	// (read when asked: ReplicationStatus's content); nil when not read.
	Content []ContainerContent
	// ContentStable: the server's contextCSN was the same before and after
	// its content was read, so the content is that of ContextCSN.
	ContentStable bool
	// ContentCompared: the content was compared with a provider's that
	// holds the same contextCSN (a replica that lags is not compared: its
	// content differs until it catches up). Differs lists the containers
	// whose entries differ (empty when the content matches).
	ContentCompared bool
	Differs         []ContainerDiff
	// Reference is the URL of the provider the content was compared with.
	Reference string
}

// ReplicationStatus asks every URI of opts, at the same time, whether it
// answers, binds, takes writes and which changes it holds under base,
// then works out roles and lags. Each URI gets opts.Timeout for each step.
// With content, it also reads what each holds (ReadContent) and compares
// every server that holds a provider's contextCSN with that provider.
func ReplicationStatus(opts ldapconn.Options, base string, content bool) []ServerStatus {
	out := make([]ServerStatus, len(opts.URLs))
	var wg sync.WaitGroup
	for i, u := range opts.URLs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = serverStatus(opts, u, base, content)
		}()
	}
	wg.Wait()
	writable := 0
	for _, s := range out {
		if s.Role == RoleProvider {
			writable++
		}
	}
	for i := range out {
		if out[i].Role == RoleProvider && (writable > 1 || len(serverIDs(out[i].ContextCSN)) > 1) {
			out[i].Role = RoleMirror
		}
	}
	lags(out)
	if content {
		compareContents(out)
	}
	return out
}

// compareContents compares the content of each server with that of the
// first provider (or mirror) whose content was read while its contextCSN
// stood still, when the server holds the same contextCSN.
func compareContents(out []ServerStatus) {
	var ref *ServerStatus
	for i := range out {
		s := &out[i]
		if (s.Role == RoleProvider || s.Role == RoleMirror) && s.ContentStable {
			ref = s
			break
		}
	}
	if ref == nil {
		return
	}
	for i := range out {
		s := &out[i]
		if s == ref || !s.ContentStable || !sameCSNs(s.ContextCSN, ref.ContextCSN) {
			continue
		}
		s.ContentCompared, s.Reference = true, ref.URL
		s.Differs = CompareContent(ref.Content, s.Content)
	}
}

func sameCSNs(a, b []CSN) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Raw != b[i].Raw {
			return false
		}
	}
	return true
}

// contextCSNs reads the base's contextCSN values, sorted by server ID.
func contextCSNs(c *ldapconn.Conn, base string) ([]CSN, error) {
	e, err := c.BaseEntry(base, "contextCSN")
	if err != nil {
		return nil, err
	}
	var out []CSN
	if e != nil {
		for _, raw := range e.GetEqualFoldAttributeValues("contextCSN") {
			if csn, ok := ParseCSN(raw); ok {
				out = append(out, csn)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].ServerID < out[j].ServerID })
	}
	return out, nil
}

// readsBase returns a *RefusedError when the connection may not read the
// base: slapd refused the read (50), or shows an anonymous connection
// nothing of a base inside its naming contexts. A base that is missing
// for a bound identity, or outside every naming context, is not its
// business: the caller reports those.
func readsBase(c *ldapconn.Conn, base string) error {
	st := NewStore(c, base)
	e, err := st.Entry(base, "1.1")
	if err != nil || e != nil || !c.Anonymous() {
		return err
	}
	if contexts, err := c.NamingContexts(); err == nil && !ldapconn.UnderAny(base, contexts) {
		return nil
	}
	return &RefusedError{Who: Identity{Anonymous: true}, Action: "read", Object: st.DIT.Describe(base),
		Needs: ldapschema.RoleToRead, Hidden: true, Err: ldap.NewError(ldap.LDAPResultNoSuchObject, errors.New(""))}
}

func serverStatus(opts ldapconn.Options, u, base string, content bool) ServerStatus {
	st := ServerStatus{URL: u}
	one := opts
	one.URLs, one.Note, one.WriteURL = []string{u}, nil, ""
	c, err := ldapconn.Dial(one)
	var auth *ldapconn.AuthError
	switch {
	case errors.As(err, &auth):
		st.Reachable, st.Err = true, err
		return st
	case err != nil:
		st.Err = err
		return st
	}
	defer c.Close()
	st.Reachable, st.Bound = true, true
	if err := readsBase(c, base); err != nil {
		// An identity that cannot read the base sees no contextCSN: it
		// cannot tell whether the server is healthy, so it is not.
		st.Err = err
		return st
	}
	if st.ContextCSN, err = contextCSNs(c, base); err != nil {
		st.Err = err
		return st
	}
	// The role first: a base the server does not hold (outside its naming
	// contexts) is said by the probe, before the content is read.
	refs, shadow, err := c.Probe(base)
	switch {
	case err != nil:
		st.Err = err
		return st
	case shadow:
		st.Role = RoleConsumer
		if len(refs) > 0 {
			st.Referral = ldapclient.ServerOf(refs[0])
		}
	default:
		st.Role = RoleProvider
	}
	if content {
		if st.Content, err = ReadContent(c, base); err != nil {
			st.Err = err
			return st
		}
		after, err := contextCSNs(c, base)
		if err != nil {
			st.Err = err
			return st
		}
		st.ContentStable = sameCSNs(st.ContextCSN, after)
	}
	return st
}

func serverIDs(csns []CSN) map[int]bool {
	ids := map[int]bool{}
	for _, c := range csns {
		ids[c.ServerID] = true
	}
	return ids
}

// lags compares each server's contextCSN with the newest change of each
// server ID that the providers (and mirrors) hold.
func lags(out []ServerStatus) {
	newest := map[int]time.Time{}
	for _, s := range out {
		if s.Role != RoleProvider && s.Role != RoleMirror {
			continue
		}
		for _, c := range s.ContextCSN {
			if c.Time.After(newest[c.ServerID]) {
				newest[c.ServerID] = c.Time
			}
		}
	}
	if len(newest) == 0 {
		return
	}
	for i := range out {
		s := &out[i]
		if !s.Bound || s.Err != nil {
			continue
		}
		have := map[int]time.Time{}
		for _, c := range s.ContextCSN {
			have[c.ServerID] = c.Time
		}
		var own time.Time // the server's newest change, for a server ID it lacks
		for _, c := range s.ContextCSN {
			if c.Time.After(own) {
				own = c.Time
			}
		}
		if own.IsZero() {
			continue // it holds no change at all: lag unknown
		}
		s.CaughtUp, s.LagKnown = true, true
		for sid, t := range newest {
			got, ok := have[sid]
			if !ok {
				s.CaughtUp = false
				got = own
			}
			if got.Before(t) {
				s.CaughtUp = false
				if d := t.Sub(got); d > s.Lag {
					s.Lag = d
				}
			}
		}
	}
}
