package directory

// How Store.ApplyPlan cuts a plan: into transactions of bounded size
// (chunks), and, inside one transaction, into waves of writes that may be
// sent together (pipelined).

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/directory/ldapconn"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/progress"
)

// TxnWrites is the most writes ApplyPlan puts in one transaction unless
// the store asks for one transaction (Store.OneTransaction). slapd 2.5's
// back-mdb commits a transaction in time that grows with the square of
// its size: measured here, 10,438 adds of a generated federation (16
// threads, dbnosync) commit in 1.5 s as one transaction, as long as
// ldapadd takes to add them one by one outside any transaction (and
// `ldapadd -E txn=commit` of the same file takes as long as cpactl), but
// in 0.3 s as three of at most 4,000 (3,000 writes: 0.06 s; 6,000: 0.31
// s; 9,000: 0.79 s). The whole apply is fastest between 3,000 and 4,000
// writes a transaction; smaller ones pay the round trips and the pause
// before each commit. A larger plan goes in several transactions, cut
// where no dangling reference is left between two of them.
const TxnWrites = 4000

// MaxTxnWrites is the largest transaction ApplyPlan sends, even for a
// store that asks for one transaction: slapd holds every queued write in
// memory until the commit, and a commit that outlasts the client's
// deadline crashes slapd (ldapconn.MinCommitTimeout); 20,000 adds commit in about
// 4 s, 50,000 in 19 s.
const MaxTxnWrites = 20000

// txnWrites and maxTxnWrites are TxnWrites and MaxTxnWrites, lowered by
// tests.
var txnWrites, maxTxnWrites = TxnWrites, MaxTxnWrites

// txnLimit is the most writes this store puts in one transaction.
func (s *Store) txnLimit() int {
	if s.OneTransaction {
		return maxTxnWrites
	}
	return txnWrites
}

// Atomic reports whether ApplyPlan writes p in one transaction (or one
// request), and when not, why, in words for a warning.
func (s *Store) Atomic(p *Plan) (bool, string) {
	if s.OneTransaction && len(p.Writes) > maxTxnWrites {
		return false, fmt.Sprintf("the plan holds %d writes, more than the largest transaction cpactl sends (%d): "+
			"slapd holds a transaction's writes in memory and commits them in time that grows with the square of their number", len(p.Writes), maxTxnWrites)
	}
	chunks := s.chunks(p.Writes)
	if len(chunks) > 1 {
		return false, splitReason(len(p.Writes), s.txnLimit(), len(chunks))
	}
	if len(deleteSteps(p.Writes)) > 1 {
		return false, stepwiseReason
	}
	return true, ""
}

// NotAtomicError refuses a plan that cannot go in one transaction to a
// store that asks for one (Store.OneTransaction): nothing was written.
type NotAtomicError struct{ Why string }

func (e *NotAtomicError) Error() string {
	return "cannot write the change in one transaction, so nothing was written: " + e.Why
}

// stepwiseReason says why a plan that deletes a subtree is applied in
// steps.
const stepwiseReason = "the server cannot delete an entry with children in a transaction: the other writes go in transactions, and each such entry is moved out with its children in one operation, referrers first"

func splitReason(writes, limit, transactions int) string {
	return fmt.Sprintf("the plan holds %d writes, more than one transaction takes (%d): it goes in %d transactions, "+
		"each of which leaves no dangling reference (a failure half-way leaves a consistent directory; run the command again to finish)",
		writes, limit, transactions)
}

// step is a part of a plan applied on its own: writes for one
// transaction, or the move of a deleted subtree to the trash.
type step struct {
	writes []Write
	move   *Write // the subtree's root
}

// deleteSteps cuts writes into steps: the deletes of a subtree (an entry
// deleted with entries below it) become one move of its root, at the
// root's place in the plan (after its children, and after what refers to
// it); the writes between two moves go in one transaction.
func deleteSteps(writes []Write) []step {
	deleted := map[string]bool{}
	for _, w := range writes {
		if w.req.Del != nil {
			deleted[w.normal().Key()] = true
		}
	}
	// The root of each deleted entry: its highest deleted ancestor.
	hasChildren := map[string]bool{}
	rootOf := map[string]string{}
	for _, w := range writes {
		if w.req.Del == nil {
			continue
		}
		dn := w.normal()
		k := dn.Key()
		root := k
		for p := dn.ParentKey(); p != ""; p = ldapschema.ParentKey(p) {
			if !deleted[p] {
				break
			}
			root = p
		}
		rootOf[k] = root
		if root != k {
			hasChildren[root] = true
		}
	}
	var out []step
	var group []Write
	for _, w := range writes {
		if w.req.Del == nil {
			group = append(group, w)
			continue
		}
		k := w.normal().Key()
		root := rootOf[k]
		switch {
		case !hasChildren[root]:
			group = append(group, w) // a leaf
		case root == k:
			if len(group) > 0 {
				out = append(out, step{writes: group})
				group = nil
			}
			out = append(out, step{move: &w})
		}
		// Entries below a subtree's root go with it.
	}
	if len(group) > 0 {
		out = append(out, step{writes: group})
	}
	return out
}

// chunks cuts writes, in order, into runs of at most txnLimit, each
// cut placed where no write before it refers to an entry that a write
// after it adds (the plan's order already puts parents before children,
// referred entries before referrers on add and referrers before referred
// entries on delete; only a reference cycle among added entries, cut by
// the planner, points forward). A run with no such place is left longer.
func (s *Store) chunks(writes []Write) [][]Write {
	limit := s.txnLimit()
	if len(writes) <= limit {
		return [][]Write{writes}
	}
	future := map[string]bool{} // entries a later write adds
	for _, w := range writes {
		if w.req.Add != nil {
			future[w.normal().Key()] = true
		}
	}
	pending := map[string]bool{} // forward references so far
	var out [][]Write
	start, safe := 0, -1 // safe: the last index after which a cut is safe
	for i, w := range writes {
		if w.req.Add != nil {
			k := w.normal().Key()
			delete(future, k)
			delete(pending, k)
		}
		for _, dn := range s.referredDNs(w) {
			if r := ldapschema.NormalizeDN(dn); future[r] {
				pending[r] = true
			}
		}
		if len(pending) == 0 {
			safe = i
		}
		if i-start+1 >= limit && safe >= start {
			out = append(out, writes[start:safe+1])
			start = safe + 1
		}
	}
	if start < len(writes) {
		out = append(out, writes[start:])
	}
	return out
}

var dnAttributes = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, a := range DNAttributes() {
		out[strings.ToLower(a)] = true
	}
	return out
})

func isDNAttribute(attr string) bool { return dnAttributes()[strings.ToLower(attr)] }

// waves cuts writes, in order, into runs whose writes are independent: no
// two of them touch the same entry, or an entry and one above or below it
// (the entry a rename makes counts as touched too). Inside a wave the
// server may queue the writes in any order and end with the same result;
// between waves the order holds, as each wave is queued before the next is
// sent.
func waves(writes []Write) [][]Write {
	var out [][]Write
	touched := map[string]bool{} // DNs the current wave touches
	above := map[string]bool{}   // their ancestors
	start := 0
	for i, w := range writes {
		keys := touchedDNs(w)
		conflict := false
		for _, k := range keys {
			if touched[k[0]] || above[k[0]] {
				conflict = true
			}
			for _, a := range k[1:] {
				if touched[a] {
					conflict = true
				}
			}
		}
		if conflict {
			out = append(out, writes[start:i])
			start = i
			clear(touched)
			clear(above)
		}
		for _, k := range keys {
			touched[k[0]] = true
			for _, a := range k[1:] {
				above[a] = true
			}
		}
	}
	if start < len(writes) {
		out = append(out, writes[start:])
	}
	return out
}

// touchedDNs returns, for each entry a write touches (its DN, and for a
// rename the new DN), the entry's key followed by its ancestors' keys.
func touchedDNs(w Write) [][]string {
	dns := []string{w.DN}
	if w.req.Rename != nil {
		parent := w.req.Rename.NewSuperior
		if parent == "" {
			parent = ldapschema.ParentOf(w.DN)
		}
		dns = append(dns, w.req.Rename.NewRDN+","+parent)
	}
	out := make([][]string, 0, len(dns))
	for _, dn := range dns {
		k, err := ldapschema.NormalizeDNChecked(dn)
		if err != nil {
			// Not a DN the server takes either: keep it apart from all.
			out = append(out, []string{strings.ToLower(dn)})
			continue
		}
		keys := []string{k}
		for p := ldapschema.ParentOf(k); p != ""; p = ldapschema.ParentOf(p) {
			keys = append(keys, ldapschema.NormalizeDN(p))
		}
		out = append(out, keys)
	}
	return out
}

// waveSender is a transaction's Writer that sends the writes of a wave
// together, pipelined (ldapconn's bulkTxn). It returns the first failing write in
// plan order (its index in wave) and its error, adds 1 to sent for each
// write answered with success, and has had every write it sent answered
// when it returns.
type waveSender interface {
	ldapclient.Writer
	sendWave(wave []ldapconn.Request, sent *progress.Counter) (int, error)
}

// sendAll queues writes in the transaction tx, wave by wave when tx takes
// waves, else one at a time. fail turns the error of a write into the one
// returned; with several failing writes in a wave, the first in plan
// order counts. Every write sent has been answered when it returns. On
// StopChanges it sends no more writes and fails with ErrStopped.
func sendAll(tx ldapclient.Writer, writes []Write, fail func(Write, error) error, sent *progress.Counter) error {
	p, ok := tx.(waveSender)
	if !ok {
		for _, w := range writes {
			if ldapconn.Stopped() {
				return fail(w, ldapconn.ErrStopped)
			}
			if err := w.apply(tx); err != nil {
				return fail(w, err)
			}
			sent.Add(1)
		}
		return nil
	}
	for _, wave := range waves(writes) {
		if i, err := p.sendWave(requests(wave), sent); err != nil {
			return fail(wave[i], err)
		}
	}
	return nil
}

// requests returns the requests writes send, in order.
func requests(writes []Write) []ldapconn.Request {
	out := make([]ldapconn.Request, len(writes))
	for i, w := range writes {
		out[i] = w.req
	}
	return out
}
