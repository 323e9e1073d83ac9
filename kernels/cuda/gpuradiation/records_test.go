package gpuradiation

import (
	"testing"

	"github.com/fieldgo/fieldgo/core/radiation"
)

// TestRecords: every value of an interval record is the column-major array
// element radiation.cu's header names, and the last knot's "next" values are
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
	x.Z, x.C1, x.C2 = col(3, 8), col(4, 8), col(5, 8)
	x.AZ, x.AC1, x.AC2 = col(6, 4), col(7, 4), col(8, 4)
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
		want := map[int]float64{0: x.T[i], 1: next(x.T, i), 2: next(x.H, i), 3: 0}
		for d := 0; d < 8; d++ {
			j := d*n + i
			want[4+d], want[12+d], want[20+d], want[28+d] = x.Z[j], next(x.Z, j), x.C1[j], x.C2[j]
		}
		for k := 36; k < RecordAccel; k++ {
			want[k] = 0
		}
		for d := 0; d < 4; d++ {
			j := d*n + i
			want[RecordAccel+d], want[RecordAccel+4+d], want[RecordAccel+8+d], want[RecordAccel+12+d] = x.AZ[j], next(x.AZ, j), x.AC1[j], x.AC2[j]
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
