package broker

// Seeded random orders (docs/resolve.md "Randomness").

import (
	"hash/fnv"
	"math/rand/v2"
)

// randomOrder returns names in the random order for seed and label: the
// names are sorted by name, then shuffled by a generator of their own,
// seeded from the seed and the label (a site's name for the pods of that
// site, "remaining" for tier (d)). One random order therefore never shifts
// another, and the same data in another order (a live directory, an LDIF
// snapshot) gives the same result.
func randomOrder(seed int64, label string, names []string) []string {
	out := sortedCopy(names)
	h := fnv.New64a()
	h.Write([]byte(label))
	r := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// remainingLabel labels the random order of tier (d).
const remainingLabel = "remaining"
