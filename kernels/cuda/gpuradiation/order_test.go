package gpuradiation

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// TestHilbertOrderGroupsDirections: the observer schedule is a permutation,
// and observers in the same direction (at any distance) are adjacent in it.
func TestHilbertOrderGroupsDirections(t *testing.T) {
	var x, y, z []float64
	for i := 0; i < 500; i++ {
		// Directions alternate between +x-ish and -z-ish, distances vary.
		r := 1 + float64(i)
		if i%2 == 0 {
			x, y, z = append(x, r), append(y, 0.01*r), append(z, 0)
		} else {
			x, y, z = append(x, 0), append(y, 0), append(z, -r)
		}
	}
	x, y, z = append(x, 0), append(y, 0), append(z, 0) // the origin
	perm := HilbertOrder(x, y, z)
	checkPermutation(t, perm, len(x))
	changes := 0
	for i := 1; i < len(perm)-1; i++ {
		if perm[i]%2 != perm[i-1]%2 {
			changes++
		}
	}
	if changes > 2 {
		t.Fatalf("the two directions interleave (%d changes): not grouped", changes)
	}
}

// checkPermutation fails unless perm holds each of 0 .. n-1 once.
func checkPermutation(t *testing.T, perm []int32, n int) {
	t.Helper()
	seen := make([]bool, n)
	for _, o := range perm {
		if o < 0 || int(o) >= n || seen[o] {
			t.Fatalf("not a permutation of 0 .. %d: %d repeated or out of range", n-1, o)
		}
		seen[o] = true
	}
	if len(perm) != n {
		t.Fatalf("%d entries for %d observers", len(perm), n)
	}
}

// fibonacci is the benchmark's observers: n points on a sphere of radius 50.
func fibonacci(n int) (x, y, z []float64) {
	for o := 0; o < n; o++ {
		zz := 1 - 2*(float64(o)+0.5)/float64(n)
		r := math.Sqrt(1 - zz*zz)
		phi := float64(o) * math.Pi * (3 - math.Sqrt(5))
		x, y, z = append(x, 50*r*math.Cos(phi)), append(y, 50*r*math.Sin(phi)), append(z, 50*zz)
	}
	return
}

// warpSpread is the largest angle between an observer's direction and its
// warp's (32 consecutive observers of perm) mean direction.
func warpSpread(x, y, z []float64, perm []int32) float64 {
	worst := 0.0
	for w := 0; w+32 <= len(perm); w += 32 {
		var c [3]float64
		dirs := make([][3]float64, 32)
		for k, o := range perm[w : w+32] {
			r := math.Sqrt(x[o]*x[o] + y[o]*y[o] + z[o]*z[o])
			dirs[k] = [3]float64{x[o] / r, y[o] / r, z[o] / r}
			for d := range c {
				c[d] += dirs[k][d]
			}
		}
		cn := math.Sqrt(c[0]*c[0] + c[1]*c[1] + c[2]*c[2])
		for _, u := range dirs {
			cos := (u[0]*c[0] + u[1]*c[1] + u[2]*c[2]) / cn
			worst = math.Max(worst, math.Acos(math.Min(1, cos)))
		}
	}
	return worst
}

// TestHilbertOrder: a permutation (the origin and duplicated directions
// included) whose warps are compact on the benchmark's sphere of 32768
// observers: every 32 consecutive observers within 0.2 rad of their mean
// direction (a cap holding 32 of them has a radius of 0.0625 rad; a
// Morton curve of the direction has warps spanning 1.48 rad).
func TestHilbertOrder(t *testing.T) {
	x, y, z := fibonacci(32768)
	x, y, z = append(x, 0, 3, 6), append(y, 0, -4, -8), append(z, 0, 0, 0)
	checkPermutation(t, HilbertOrder(x, y, z), len(x))
	x, y, z = x[:32768], y[:32768], z[:32768]
	if h := warpSpread(x, y, z, HilbertOrder(x, y, z)); h > 0.2 {
		t.Fatalf("a warp of the Hilbert order spans %.3f rad, want at most 0.2", h)
	}
}

// TestOrderCache: the cache hands back HilbertOrder's schedule for the
// observers it is given, computing it again only for observers it does not
// hold (a moved observer, another count), and keeps the most recent
// orderCacheSize sets.
func TestOrderCache(t *testing.T) {
	var c orderCache
	x, y, z := fibonacci(1000)
	want := HilbertOrder(x, y, z)
	first := c.order(x, y, z, false)
	if !slices.Equal(first, want) {
		t.Fatal("the cached order is not HilbertOrder's")
	}
	if again := c.order(slices.Clone(x), slices.Clone(y), slices.Clone(z), false); &again[0] != &first[0] {
		t.Fatal("the same observers (copied) were sorted again")
	}
	x2 := slices.Clone(x)
	x2[17] = -x2[17]
	if moved := c.order(x2, y, z, false); &moved[0] == &first[0] || !slices.Equal(moved, HilbertOrder(x2, y, z)) {
		t.Fatal("a moved observer kept the old order")
	}
	if fewer := c.order(x[:999], y[:999], z[:999], false); len(fewer) != 999 {
		t.Fatalf("999 observers: an order of %d", len(fewer))
	}
	for k := 0; k < orderCacheSize; k++ {
		xs := slices.Clone(x)
		xs[0] += float64(k + 1)
		c.order(xs, y, z, false)
	}
	if len(c.entries) != orderCacheSize {
		t.Fatalf("%d sets kept, want %d", len(c.entries), orderCacheSize)
	}
	if again := c.order(x, y, z, false); &again[0] == &first[0] {
		t.Fatal("the oldest set was not evicted")
	}
}

// TestOrderCacheKnowsKeptSlices: observers a job keeps are found by their
// slices, with no pass over their values (so even a change the contract
// rules out, a kept array written in place, finds the old order); the
// same values in other slices are found by their hash, and then their
// slices are the ones held.
func TestOrderCacheKnowsKeptSlices(t *testing.T) {
	var c orderCache
	x, y, z := fibonacci(1000)
	first := c.order(x, y, z, true)
	x[3], x[4] = x[4], x[3] // written in place: the contract says it is not
	if again := c.order(x, y, z, true); &again[0] != &first[0] {
		t.Fatal("kept slices were not found by identity")
	}
	if hashed := c.order(x, y, z, false); &hashed[0] == &first[0] {
		t.Fatal("slices not kept were not hashed")
	}
	x[3], x[4] = x[4], x[3]
	x2, y2, z2 := slices.Clone(x), slices.Clone(y), slices.Clone(z)
	if copied := c.order(x2, y2, z2, true); &copied[0] != &first[0] {
		t.Fatal("the same observers in new slices were sorted again")
	}
	held := 0
	for _, e := range c.entries {
		if e.x != nil {
			held++
			if !sameSlice(e.x, x2) {
				t.Fatal("the entry holds the old slices")
			}
		}
	}
	if held != 1 {
		t.Fatalf("%d sets' slices held, want 1", held)
	}
	if fewer := c.order(x2[:999], y2[:999], z2[:999], true); len(fewer) != 999 {
		t.Fatalf("999 kept observers: an order of %d", len(fewer))
	}
}

// BenchmarkObserverOrder: the schedule's cost per call at the benchmark's
// 32768 observers and at 524288, sorted afresh and from the cache (by
// hash, and by the slices of kept observers) (docs/performance/radiation.md).
func BenchmarkObserverOrder(b *testing.B) {
	for _, n := range []int{32768, 524288} {
		x, y, z := fibonacci(n)
		b.Run(fmt.Sprintf("O=%d/sort", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				HilbertOrder(x, y, z)
			}
		})
		b.Run(fmt.Sprintf("O=%d/cached", n), func(b *testing.B) {
			var c orderCache
			c.order(x, y, z, false)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c.order(x, y, z, false)
			}
		})
		b.Run(fmt.Sprintf("O=%d/kept", n), func(b *testing.B) {
			var c orderCache
			c.order(x, y, z, true)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c.order(x, y, z, true)
			}
		})
	}
}
