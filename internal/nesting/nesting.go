// Package nesting is the one walk through nested groups that cpactl has:
// breadth first, level by level, each group once, so that cycles end the
// walk and the first group found is reached by a shortest chain. It knows
// nothing of LDAP or of records: a node is whatever the caller walks
// (a group name, a DN, a node number, a record), and the caller says what
// lies one level on (the groups that list a node, or the members of a
// group) and when a node is reached twice.
//
// Up walks node by node and keeps the chain that led to each node (the
// broker's "through which groups is this user entitled?", membership's
// graph); Levels hands whole levels to the caller, for a walk that reads
// one level at a time (one directory search per level of nesting).
package nesting

// Step is a node reached by Up: the node and the index of the step it was
// reached from, -1 for a node of the first level.
type Step[N any] struct {
	Node N
	From int
}

// Up walks breadth first from the nodes first (the first level) through
// next: the nodes of each level in the order given, then those one level on
// in the order next gives them for each node in turn. A node is walked only
// when once says it is reached for the first time, so each is walked once
// and cycles end the walk. The walk stops after a step for which stop (when
// not nil) returns true: that step is then the last. Up returns the steps
// taken, in the order taken.
func Up[N any](first []N, next func(N) []N, once func(N) bool, stop func(N) bool) []Step[N] {
	var steps []Step[N]
	enqueue := func(nodes []N, from int) bool {
		for _, n := range nodes {
			if !once(n) {
				continue
			}
			steps = append(steps, Step[N]{Node: n, From: from})
			if stop != nil && stop(n) {
				return true
			}
		}
		return false
	}
	if enqueue(first, -1) {
		return steps
	}
	for i := 0; i < len(steps); i++ {
		if enqueue(next(steps[i].Node), i) {
			break
		}
	}
	return steps
}

// Chain returns the nodes from a node of the first level to steps[i]
// (steps[i] last): the chain by which Up reached it. Its length is the
// nesting depth of steps[i].
func Chain[N any](steps []Step[N], i int) []N {
	n := 0
	for j := i; j >= 0; j = steps[j].From {
		n++
	}
	chain := make([]N, n)
	for j := i; j >= 0; j = steps[j].From {
		n--
		chain[n] = steps[j].Node
	}
	return chain
}

// Levels walks level by level from the nodes first: it hands each level to
// next, which returns the nodes one level on (it may read them, and fail),
// and walks on with those that once says are reached for the first time.
// The nodes of first are marked with once before the walk, and those once
// refuses are left out of it. The walk ends when a level is empty, when
// next returns an error (returned) or when next returns stop true.
func Levels[N any](first []N, next func(level []N) (up []N, stop bool, err error), once func(N) bool) error {
	var level []N
	for _, n := range first {
		if once(n) {
			level = append(level, n)
		}
	}
	for len(level) > 0 {
		up, stop, err := next(level)
		if err != nil || stop {
			return err
		}
		level = level[:0:0]
		for _, n := range up {
			if once(n) {
				level = append(level, n)
			}
		}
	}
	return nil
}

// Once returns a once function for Up and Levels that tells nodes apart by
// key (a folded name, a normalized DN): it reports whether the node's key
// is new, and remembers it.
func Once[N any, K comparable](key func(N) K) func(N) bool {
	seen := map[K]bool{}
	return func(n N) bool {
		k := key(n)
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}
}
