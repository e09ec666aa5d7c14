package directory

// apply --wait-replicas: after a write, wait until every replica of -H
// holds the provider's contextCSN and the provider's content, and make the
// provider send again what a replica lacks (docs/replication.md, "a
// consumer short of a transaction"). slapd 2.5 gives a consumer whose
// refresh starts while the provider commits a transaction the provider's
// contextCSN without the writes the commit had executed: the consumer
// stays short for good, restarts included. A plain write (no transaction)
// replicates to it as to any consumer, so the provider rewrites each
// entry the replica lacks or holds in an older version, one plain modify
// each, and the replica receives it.

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/ldapschema"
)

// ReplicaCheck is how one replica ended under WaitReplicas.
type ReplicaCheck struct {
	URL string
	// CaughtUp: the replica holds the provider's contextCSN and the same
	// entries (content compared container by container).
	CaughtUp bool
	// Entries is how many entries it holds (when its content was read).
	Entries int
	// Resent is how many entries the provider wrote again for it.
	Resent int
	// Extra are entries the replica holds and the provider does not (a
	// transaction the provider refused, or a delete it missed): only
	// re-initialising the replica removes them. The first MaxExtraListed
	// by DN; ExtraCount is how many there are.
	Extra      []string
	ExtraCount int
	// Differs are the containers that still differ when the wait ended.
	Differs []ContainerDiff
	// Err is why it could not be checked (unreachable, a bind refused),
	// or why the wait ended.
	Err error
}

// MaxExtraListed is how many of a replica's extra entries ReplicaCheck
// names.
const MaxExtraListed = 10

// ReplicasBehindError says that the write is done on the provider but a
// replica did not catch up, or holds other entries, when the wait ended
// (exit 2).
type ReplicasBehindError struct {
	Wait   time.Duration
	Checks []ReplicaCheck
}

func (e *ReplicasBehindError) Error() string {
	var parts []string
	for _, c := range e.Checks {
		if c.CaughtUp {
			continue
		}
		switch {
		case c.Err != nil:
			parts = append(parts, fmt.Sprintf("%s: %v", c.URL, ldapclient.Describe(c.Err)))
		case len(c.Extra) > 0:
			more := ""
			if n := c.ExtraCount - len(c.Extra); n > 0 {
				more = fmt.Sprintf("; and %d more", n)
			}
			parts = append(parts, fmt.Sprintf("%s holds entries the provider does not (%s%s)", c.URL, strings.Join(c.Extra, "; "), more))
		case len(c.Differs) > 0:
			var names []string
			for _, d := range c.Differs {
				names = append(names, fmt.Sprintf("%s (%d entries, the provider %d)", d.DN, d.Entries, d.ReferenceHas))
			}
			parts = append(parts, fmt.Sprintf("%s differs in %s", c.URL, strings.Join(names, ", ")))
		default:
			parts = append(parts, fmt.Sprintf("%s does not hold the provider's contextCSN", c.URL))
		}
	}
	return fmt.Sprintf("the change is written on the provider, but after %s: %s", e.Wait, strings.Join(parts, "; "))
}

// WaitReplicas waits, for at most wait, until each URI of opts.URLs other
// than the server the store writes to (the provider: the store moves to it
// first when it reads from a replica) holds the provider's contextCSN and
// content, making the provider send again the entries a replica lacks or
// holds in an older version (see resend). Replicas are reached with opts'
// bind and TLS settings. It returns each replica's outcome, and a
// *ReplicasBehindError when one did not catch up. The store must be on a
// live connection.
func (s *Store) WaitReplicas(opts ldapconn.Options, wait time.Duration) ([]ReplicaCheck, error) {
	provider, ok := s.Client.(*ldapconn.Conn)
	if !ok {
		return nil, errors.New("--wait-replicas needs a server, not a snapshot")
	}
	if err := provider.ToWritable(); err != nil {
		return nil, err
	}
	var replicas []string
	for _, u := range opts.URLs {
		if !ldapconn.SameServer(u, provider.URL) {
			replicas = append(replicas, u)
		}
	}
	deadline := time.Now().Add(wait)
	checks := make([]ReplicaCheck, len(replicas))
	behind := false
	for i, u := range replicas {
		checks[i] = waitReplica(opts, provider, s.DIT.Base, u, deadline)
		if !checks[i].CaughtUp {
			behind = true
		}
	}
	if behind {
		return checks, &ReplicasBehindError{Wait: wait, Checks: checks}
	}
	return checks, nil
}

// pollReplica is how often WaitReplicas compares contextCSNs.
const pollReplica = 100 * time.Millisecond

// maxResends is how many times WaitReplicas makes the provider send a
// replica's missing entries before it gives up on it.
const maxResends = 3

func waitReplica(opts ldapconn.Options, provider *ldapconn.Conn, base, u string, deadline time.Time) ReplicaCheck {
	check := ReplicaCheck{URL: u}
	one := opts
	one.URLs, one.Note, one.WriteURL = []string{u}, nil, ""
	var replica *ldapconn.Conn
	defer func() {
		if replica != nil {
			replica.Close()
		}
	}()
	resends := 0
	for {
		// A replica that does not answer (starting, restarting) is asked
		// again until the wait ends; a refused bind is final.
		if replica == nil {
			var err error
			var auth *ldapconn.AuthError
			if replica, err = ldapconn.Dial(one); errors.As(err, &auth) {
				check.Err = err
				return check
			} else if err != nil {
				check.Err, replica = err, nil
			}
		}
		if replica != nil {
			done, err := compareOnce(provider, replica, base, &check)
			switch {
			case err != nil:
				check.Err = err
				replica.Close()
				replica = nil // dial again
			case done:
				check.Err = nil
				return check
			case len(check.Differs) > 0 && resends < maxResends:
				// Same contextCSN, other entries: have them sent again.
				resends++
				res, err := resend(provider, replica, base, check.Differs)
				check.Resent += res.resent
				check.Extra, check.ExtraCount = res.extra, res.extraCount
				if err != nil {
					check.Err = err
					return check
				}
				if res.resent == 0 {
					return check // nothing a write can send: extra entries only
				}
			default:
				check.Err = nil
			}
		}
		if time.Now().After(deadline) {
			if check.Err == nil && len(check.Differs) == 0 {
				check.Err = fmt.Errorf("does not hold the provider's contextCSN")
			}
			return check
		}
		time.Sleep(pollReplica)
	}
}

// compareOnce compares the replica with the provider once: done when it
// holds the provider's contextCSN and content. check.Differs is set when
// both hold the same contextCSN (and the provider's stood still while its
// content was read) but not the same entries.
func compareOnce(provider, replica *ldapconn.Conn, base string, check *ReplicaCheck) (bool, error) {
	check.Differs = nil
	want, err := contextCSNs(provider, base)
	if err != nil {
		return false, err
	}
	got, err := contextCSNs(replica, base)
	if err != nil {
		return false, err
	}
	if len(want) == 0 || !sameCSNs(want, got) {
		return false, nil
	}
	pc, err := ReadContent(provider, base)
	if err != nil {
		return false, err
	}
	rc, err := ReadContent(replica, base)
	if err != nil {
		return false, err
	}
	check.Entries = ContentTotal(rc)
	if after, err := contextCSNs(provider, base); err != nil || !sameCSNs(want, after) {
		return false, err // written to meanwhile: compare again
	}
	if after, err := contextCSNs(replica, base); err != nil || !sameCSNs(want, after) {
		return false, err
	}
	check.Differs = CompareContent(pc, rc)
	check.CaughtUp = len(check.Differs) == 0
	return check.CaughtUp, nil
}

// entryVersion is what resend compares of one entry.
type entryVersion struct {
	dn, csn string
	classes []string
}

// versions reads the entries of the container dn (its subtree, or the
// entry alone for the base), by entryUUID.
func versions(c ldapclient.Client, dn, base string, classes bool) (map[string]entryVersion, error) {
	scope := ldap.ScopeWholeSubtree
	if ldapschema.EqualDN(dn, base) {
		scope = ldap.ScopeBaseObject
	}
	attrs := []string{attrEntryUUID, attrEntryCSN}
	if classes {
		attrs = append(attrs, ldapschema.AttrObjectClass)
	}
	out := map[string]entryVersion{}
	err := c.SearchEach(ldap.NewSearchRequest(dn, scope, ldap.NeverDerefAliases, 0, 0, false, ldapclient.AnyEntry, attrs, nil),
		func(e *ldap.Entry) error {
			v := entryVersion{dn: e.DN, csn: e.GetEqualFoldAttributeValue(attrEntryCSN)}
			if classes {
				v.classes = e.GetEqualFoldAttributeValues(ldapschema.AttrObjectClass)
			}
			out[e.GetEqualFoldAttributeValue(attrEntryUUID)] = v
			return nil
		})
	if IsNoSuchObject(err) {
		return out, nil
	}
	return out, err
}

type resendResult struct {
	resent     int
	extra      []string
	extraCount int
}

// resend compares, entry by entry, the containers that differ, and has
// the provider write again each entry the replica lacks, holds under
// another DN or in another version: a modify that replaces objectClass
// with the values it has, guarded by an assertion of the entryCSN read
// (an entry changed since is on its way to the replica anyway). The
// entry is unchanged but for its entryCSN, modifyTimestamp and
// modifiersName, and syncrepl sends it whole. Parents go before their
// children (shorter DNs first), so that the replica can add them.
// Entries the replica holds and the provider does not are listed: no
// write on the provider removes them.
func resend(provider, replica *ldapconn.Conn, base string, differs []ContainerDiff) (resendResult, error) {
	var res resendResult
	var touches []entryVersion
	for _, d := range differs {
		want, err := versions(provider, d.DN, base, true)
		if err != nil {
			return res, err
		}
		got, err := versions(replica, d.DN, base, false)
		if err != nil {
			return res, err
		}
		for uuid, v := range want {
			if g, ok := got[uuid]; !ok || g.csn != v.csn || !ldapschema.EqualDN(g.dn, v.dn) {
				touches = append(touches, v)
			}
		}
		for uuid, g := range got {
			if _, ok := want[uuid]; !ok {
				res.extra = append(res.extra, g.dn)
			}
		}
	}
	sort.Slice(touches, func(i, j int) bool {
		if len(touches[i].dn) != len(touches[j].dn) {
			return len(touches[i].dn) < len(touches[j].dn)
		}
		return touches[i].dn < touches[j].dn
	})
	// The first by DN, the same ones every run (got is a map).
	sort.Strings(res.extra)
	res.extraCount = len(res.extra)
	if len(res.extra) > MaxExtraListed {
		res.extra = res.extra[:MaxExtraListed]
	}
	for _, v := range touches {
		ctl, err := ldapconn.AssertionControl("(" + attrEntryCSN + "=" + ldap.EscapeFilter(v.csn) + ")")
		if err != nil {
			return res, err
		}
		req := ldap.NewModifyRequest(v.dn, []ldap.Control{ctl})
		req.Replace(ldapschema.AttrObjectClass, v.classes)
		err = provider.Modify(req)
		switch {
		case err == nil:
			res.resent++
		case IsAssertionFailed(err), IsNoSuchObject(err):
			// Changed or deleted since it was read: that change replicates.
		default:
			return res, fmt.Errorf("writing %s again for the replica: %w", v.dn, err)
		}
	}
	return res, nil
}
