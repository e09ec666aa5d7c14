package generate

import (
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
)

// rng draws the generator's random choices. It uses only PCG's raw 64-bit
// output (a specified algorithm) and its own reductions, so a seed gives
// the same federation whatever the Go release.
//
// Each kind of object draws from a stream of its own, seeded from the seed
// and a label ("sites", "pools", ...): changing one count does not reshuffle
// the other kinds. Objects that others refer to by index (users,
// assignments) are drawn from a stream seeded by their index, so they can
// be recomputed anywhere without being kept.
type rng struct {
	pcg  rand.PCG
	seed uint64
	hash uint64
}

func newRng(seed int64, label string) *rng {
	h := fnv.New64a()
	h.Write([]byte(label))
	r := &rng{seed: uint64(seed), hash: h.Sum64()}
	r.pcg.Seed(mix(r.seed), mix(r.hash))
	return r
}

// at reseeds the stream for the object with this index.
func (r *rng) at(index int) *rng {
	r.pcg.Seed(mix(r.seed^r.hash), mix(uint64(index)+r.hash))
	return r
}

// mix is splitmix64's finalizer: nearby seeds give unrelated streams.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// intn returns a number in [0, n); 0 when n <= 0.
func (r *rng) intn(n int) int {
	if n <= 0 {
		return 0
	}
	hi, _ := bits.Mul64(r.pcg.Uint64(), uint64(n))
	return int(hi)
}

// between returns a number in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// percent reports true p times in 100.
func (r *rng) percent(p int) bool { return r.intn(100) < p }

// pick returns one of the values.
func pick[T any](r *rng, values []T) T { return values[r.intn(len(values))] }

// shuffle permutes the first n indexes with Fisher-Yates.
func (r *rng) shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, r.intn(i+1))
	}
}

// coprimeStride returns a step s with gcd(s, n) = 1 near n*0.618, so that
// i*s mod n visits 0..n-1 once each in a scattered order.
func coprimeStride(n int) int {
	if n <= 2 {
		return 1
	}
	s := n * 618 / 1000
	if s < 1 {
		s = 1
	}
	for gcd(s, n) != 1 {
		s++
	}
	return s
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
