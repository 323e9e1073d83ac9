package gpuradiation

import (
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"unsafe"
)

// HilbertOrder is the tiled kernels' observer schedule: the observers
// sorted by the Hilbert index (16 bits per axis) of their direction's
// octahedral map (the unit sphere folded onto a square: the upper half as
// |x|+|y| <= 1, the lower half's triangles folded out to the corners, so
// that the map is continuous and a curve through the square passes through
// neighbouring directions), index breaking ties. A warp's observers then
// look at the particles from similar directions: their retarded times, and
// the spline intervals they read, are close, and the records a warp fetches
// are mostly shared. The order does not change any observer's numbers. On
// the benchmark's 32768 observers (a Fibonacci sphere) each 32 consecutive
// observers lie within 0.168 rad of their centre; a Morton curve of the
// direction jumps, its warps spanning up to 1.48 rad, and ran the benchmark
// x0.96 at 16 knots per period, x0.92 at 1024 (docs/performance/radiation.md).
func HilbertOrder(x, y, z []float64) []int32 {
	const bits = 16
	const n = 1 << bits
	keys := make([]uint64, len(x))
	cell := func(v float64) uint32 { return uint32(math.Min(n-1, math.Max(0, math.Floor((v+1)/2*n)))) }
	for i := range x {
		var u, v float64
		if s := math.Abs(x[i]) + math.Abs(y[i]) + math.Abs(z[i]); s > 0 {
			u, v = x[i]/s, y[i]/s
			if z[i] < 0 {
				u, v = math.Copysign(1-math.Abs(v), u), math.Copysign(1-math.Abs(u), v)
			}
		}
		keys[i] = uint64(hilbertIndex(n, cell(u), cell(v)))<<32 | uint64(i)
	}
	return byKey(keys)
}

// hilbertIndex is the distance along the Hilbert curve of the n x n grid (n
// a power of two) of cell (x, y).
func hilbertIndex(n, x, y uint32) uint32 {
	var d uint32
	for s := n / 2; s > 0; s /= 2 {
		var rx, ry uint32
		if x&s != 0 {
			rx = 1
		}
		if y&s != 0 {
			ry = 1
		}
		d += s * s * ((3 * rx) ^ ry)
		if ry == 0 { // rotate the quadrant
			if rx == 1 {
				x, y = n-1-x, n-1-y
			}
			x, y = y, x
		}
	}
	return d
}

// byKey is the observers sorted by their keys: each key holds the observer's
// sort value in its high 32 bits and its index in the low 32 (so the index
// breaks ties).
func byKey(keys []uint64) []int32 {
	slices.Sort(keys)
	perm := make([]int32, len(keys))
	for i, k := range keys {
		perm[i] = int32(uint32(k))
	}
	return perm
}

// orderCache keeps the last few observer sets' HilbertOrder, keyed by a hash
// of their coordinates' bits: a notebook or benchmark calls with the same
// observers again and again (and float32's scaled copies of them), and the
// sort costs 10 ms at 32768 observers and 0.13-0.26 s at 524288 (one
// thread), the hash of their coordinates 0.1 ms and 2 ms. A hash collision between two sets of as many observers
// would hand one the other's schedule: still a permutation of its slots, so
// the cube's bits are the same, only its warps' directions less alike.
// Observers a job keeps (kernels.RadiationJob.Kept: arrays never written
// again) are found by their slices before any hash: a repeated call on the
// same observers then costs no pass over them.
type orderCache struct {
	mu      sync.Mutex
	seed    maphash.Seed
	entries []orderEntry // most recent last
}

type orderEntry struct {
	key     uint64
	n       int
	perm    []int32
	x, y, z []float64 // the last kept slices of these observers, or nil
}

// orderCacheSize is the observer sets kept.
const orderCacheSize = 4

// order is HilbertOrder(x, y, z), from the cache when it holds these
// observers; kept says x, y and z are never written again (their slices
// then identify them).
func (c *orderCache) order(x, y, z []float64, kept bool) []int32 {
	c.mu.Lock()
	if kept {
		for i, e := range c.entries {
			if e.x != nil && sameSlice(e.x, x) && sameSlice(e.y, y) && sameSlice(e.z, z) {
				c.entries = append(append(c.entries[:i:i], c.entries[i+1:]...), e)
				c.mu.Unlock()
				return e.perm
			}
		}
	}
	if len(c.entries) == 0 && c.seed == (maphash.Seed{}) {
		c.seed = maphash.MakeSeed()
	}
	seed := c.seed
	c.mu.Unlock()
	var h maphash.Hash
	h.SetSeed(seed)
	for _, v := range [][]float64{x, y, z} {
		h.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v)))
	}
	key, n := h.Sum64(), len(x)
	c.mu.Lock()
	var kx, ky, kz []float64
	if kept {
		// One set's slices are held (the ones a radiation.Prepared holds
		// too): older ones would keep arrays alive that nothing else does.
		kx, ky, kz = x, y, z
		for i := range c.entries {
			c.entries[i].x, c.entries[i].y, c.entries[i].z = nil, nil, nil
		}
	}
	for i, e := range c.entries {
		if e.key == key && e.n == n {
			e.x, e.y, e.z = kx, ky, kz
			c.entries = append(append(c.entries[:i:i], c.entries[i+1:]...), e)
			c.mu.Unlock()
			return e.perm
		}
	}
	c.mu.Unlock()
	perm := HilbertOrder(x, y, z)
	c.mu.Lock()
	c.entries = append(c.entries, orderEntry{key: key, n: n, perm: perm, x: kx, y: ky, z: kz})
	if len(c.entries) > orderCacheSize {
		c.entries = append([]orderEntry(nil), c.entries[len(c.entries)-orderCacheSize:]...)
	}
	c.mu.Unlock()
	return perm
}

// sameSlice reports whether a and b are the same slice of the same array.
func sameSlice(a, b []float64) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}
