package gpuradiation

import (
	"testing"

	"github.com/fieldgo/fieldgo/core/radiation"
)

// TestRecords: every value of an interval record is the column-major array
// element radiation.cu's header names, and the last knot's next knot time is
// zero (no CUDA needed).
func TestRecords(t *testing.T) {
	const n = 7
	x := &radiation.DeviceArrays[float64]{}
	col := func(k, w int) []float64 {
		c := make([]float64, w*n)
		for i := range c {
			c[i] = float64(k*1000 + i)
		}
		return c
	}
	x.T, x.H = col(1, 1), col(2, 1)
	x.Y0, x.Y1, x.C1, x.C2 = col(3, 8), col(9, 8), col(4, 8), col(5, 8)
	x.AY0, x.AY1, x.AC1, x.AC2 = col(6, 4), col(10, 4), col(7, 4), col(8, 4)
	r := Records(x, n)
	if len(r) != n*RecordLen {
		t.Fatalf("%d values, want %d", len(r), n*RecordLen)
	}
	for i := 0; i < n; i++ {
		v := r[i*RecordLen:]
		next := func(a []float64, j int) float64 {
			if i+1 < n {
				return a[j+1]
			}
			return 0
		}
		want := map[int]float64{0: x.T[i], 1: next(x.T, i), 2: 0, 3: 0}
		for d := 0; d < 8; d++ {
			j := d*n + i
			want[4+d], want[12+d], want[20+d], want[28+d] = x.Y0[j], x.Y1[j], x.C1[j], x.C2[j]
		}
		for k := 36; k < RecordAccel; k++ {
			want[k] = 0
		}
		for d := 0; d < 4; d++ {
			j := d*n + i
			want[RecordAccel+d], want[RecordAccel+4+d], want[RecordAccel+8+d], want[RecordAccel+12+d] = x.AY0[j], x.AY1[j], x.AC1[j], x.AC2[j]
		}
		if len(want) != RecordLen {
			t.Fatalf("test covers %d offsets", len(want))
		}
		for k, w := range want {
			if v[k] != w {
				t.Fatalf("knot %d offset %d: %v, want %v", i, k, v[k], w)
			}
		}
	}
}

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
