package radiation

import "testing"

// TestRecords: every value of an interval record is the column element
// kernels/src/radiation.cu's header (and knots' comment) names, and the last
// knot's next knot time is zero.
func TestRecords(t *testing.T) {
	const n = 7
	col := func(k, w int) []float64 {
		c := make([]float64, w*n)
		for i := range c {
			c[i] = float64(k*1000 + i)
		}
		return c
	}
	k := &knots[float64]{n: n, t: col(1, 1), h: col(2, 1)}
	k.y0, k.y1, k.a1, k.a0 = col(3, 8), col(9, 8), col(4, 8), col(5, 8)
	k.ay0, k.ay1, k.aa1, k.aa0 = col(6, 4), col(10, 4), col(7, 4), col(8, 4)
	r := k.records()
	if len(r) != n*RecordLen {
		t.Fatalf("%d values, want %d", len(r), n*RecordLen)
	}
	for i := 0; i < n; i++ {
		v := r[i*RecordLen:]
		next := 0.0
		if i+1 < n {
			next = k.t[i+1]
		}
		want := map[int]float64{0: k.t[i], 1: next, 2: 0, 3: 0}
		for d := 0; d < nState; d++ {
			j := d*n + i
			want[4+d], want[12+d], want[20+d], want[28+d] = k.y0[j], k.y1[j], k.a1[j], k.a0[j]
		}
		for o := 36; o < RecordAccel; o++ {
			want[o] = 0
		}
		for d := 0; d < nAccel; d++ {
			j := d*n + i
			want[RecordAccel+d], want[RecordAccel+4+d], want[RecordAccel+8+d], want[RecordAccel+12+d] = k.ay0[j], k.ay1[j], k.aa1[j], k.aa0[j]
		}
		if len(want) != RecordLen {
			t.Fatalf("test covers %d offsets", len(want))
		}
		for o, w := range want {
			if v[o] != w {
				t.Fatalf("knot %d offset %d: %v, want %v", i, o, v[o], w)
			}
		}
		// fetch reads the record's position back into the columns' values.
		if i+1 < n {
			var iv interval[float64]
			k.rec = r
			k.fetch(&iv, i)
			ok := iv.t0 == k.t[i] && iv.t1 == k.t[i+1]
			for d := 0; d < 4; d++ {
				j := d*n + i
				ok = ok && iv.x.y0[d] == k.y0[j] && iv.x.y1[d] == k.y1[j] && iv.x.a1[d] == k.a1[j] && iv.x.a0[d] == k.a0[j]
			}
			if !ok {
				t.Fatalf("knot %d: fetch %+v does not match the columns", i, iv)
			}
		}
	}
}
