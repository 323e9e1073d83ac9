package gpuradiation

import "testing"

// TestDirectionOrder: the observer schedule is a permutation, and observers
// in the same direction (at any distance) are adjacent in it.
func TestDirectionOrder(t *testing.T) {
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
	perm := DirectionOrder(x, y, z)
	seen := make([]bool, len(x))
	for _, o := range perm {
		if o < 0 || int(o) >= len(x) || seen[o] {
			t.Fatalf("not a permutation: %v", perm)
		}
		seen[o] = true
	}
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
