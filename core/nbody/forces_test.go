package nbody

import (
	"math"
	"testing"
)

// plummer returns a Plummer sphere (no exact rescaling) or fails the test.
func plummer(t testing.TB, n int, seed uint64) *Bodies {
	t.Helper()
	b, err := Plummer(n, seed, false)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// roundTo32 rounds the positions and masses to float32 values, so that the
// float32 path and the float64 reference solve the same problem: what is then
// measured is the arithmetic's error, not the rounding of the input.
func roundTo32(b *Bodies) {
	for _, col := range [][]float64{b.X, b.Y, b.Z, b.M} {
		for i := range col {
			col[i] = float64(float32(col[i]))
		}
	}
}

// TestAccuracyAgainstReference checks Solver in each precision against the
// float64 reference, component by component, with
//
//	|a_i - a_i_ref| <= k u sum_j |a_ij|,   k = (N - 1) + 20,
//
// u the unit roundoff of the precision. k is the worst-case first-order bound
// of ErrorBoundK: 20 ulps for the rounding of one pairwise term (counted
// operation by operation in TermErrorUlps) and N - 1 for a recursive sum of
// N - 1 terms (Higham, Accuracy and Stability, 4.2). The reference has its own
// error, bounded the same way with u = 2^-53, so the tolerance is
// k (u + 2^-53) sum_j |a_ij|. The float32 inputs are float32 numbers, so input
// rounding is not part of the comparison. The same bound holds for the
// potentials with |phi_ij| in place of |a_ij| (a subset of the same
// operations); the test checks the accelerations, the potentials at k/2 scale
// in float64 against the reference. The measured k (the worst ratio) is
// logged: it is typically O(sqrt N) and far below the bound, which is a bound,
// not an estimate.
func TestAccuracyAgainstReference(t *testing.T) {
	const n = 700 // not a multiple of the tile or block sizes
	for _, prec := range []Precision{Float64, Float32} {
		for _, eps := range []float64{0, 0.01} {
			b := plummer(t, n, 7)
			if prec == Float32 {
				roundTo32(b)
			}
			rx, ry, rz, rp := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			Reference(b.X, b.Y, b.Z, b.M, eps, rx, ry, rz, rp)
			sx, sy, sz := AbsSums(b.X, b.Y, b.Z, b.M, eps)
			ax, ay, az, ap := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			s := Solver{Softening: eps, Precision: prec, Threads: 3}
			if err := s.Accelerations(b.X, b.Y, b.Z, b.M, ax, ay, az, ap); err != nil {
				t.Fatal(err)
			}
			k := ErrorBoundK(n)
			u := prec.UnitRoundoff() + 0x1p-53
			worst := 0.0
			for i := 0; i < n; i++ {
				for _, c := range [][3]float64{{ax[i], rx[i], sx[i]}, {ay[i], ry[i], sy[i]}, {az[i], rz[i], sz[i]}} {
					err := math.Abs(c[0] - c[1])
					if !(err <= k*u*c[2]) {
						t.Fatalf("%v eps=%v body %d: |a - a_ref| = %.3g > k u sum|a_ij| = %.3g (k=%v)", prec, eps, i, err, k*u*c[2], k)
					}
					worst = math.Max(worst, err/(u*c[2]))
				}
			}
			// Potentials: every term is negative, so sum |phi_ij| = |phi_ref|.
			pw := 0.0
			for i := 0; i < n; i++ {
				err := math.Abs(ap[i] - rp[i])
				if !(err <= k*u*math.Abs(rp[i])) {
					t.Fatalf("%v eps=%v body %d: potential error %.3g > %.3g", prec, eps, i, err, k*u*math.Abs(rp[i]))
				}
				pw = math.Max(pw, err/(u*math.Abs(rp[i])))
			}
			t.Logf("%v eps=%v: bound k = %v, measured max k = %.1f (accelerations), %.1f (potentials)", prec, eps, k, worst, pw)
		}
	}
}

// TestDeterministic: the same bits whatever the thread count.
func TestDeterministic(t *testing.T) {
	const n = 300
	b := plummer(t, n, 3)
	var ref [3][]float64
	for threads := 1; threads <= 4; threads++ {
		ax, ay, az := make([]float64, n), make([]float64, n), make([]float64, n)
		s := Solver{Softening: 0.01, Threads: threads}
		if err := s.Accelerations(b.X, b.Y, b.Z, b.M, ax, ay, az, nil); err != nil {
			t.Fatal(err)
		}
		if threads == 1 {
			ref = [3][]float64{ax, ay, az}
			continue
		}
		for i := 0; i < n; i++ {
			if ax[i] != ref[0][i] || ay[i] != ref[1][i] || az[i] != ref[2][i] {
				t.Fatalf("threads=%d body %d differs from threads=1", threads, i)
			}
		}
	}
}

// TestUnsoftenedMaskedFinite: eps = 0, so the self term would be 0/0; the
// mask (mass 0, r^2 = 1) makes it exactly zero in both precisions.
func TestUnsoftenedMaskedFinite(t *testing.T) {
	const n = 257
	b := plummer(t, n, 11)
	for _, prec := range []Precision{Float64, Float32} {
		ax, ay, az, ap := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		s := Solver{Precision: prec}
		if err := s.Accelerations(b.X, b.Y, b.Z, b.M, ax, ay, az, ap); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if !finite(ax[i]) || !finite(ay[i]) || !finite(az[i]) || !finite(ap[i]) || ap[i] >= 0 {
				t.Fatalf("%v body %d: a = (%v, %v, %v), phi = %v", prec, i, ax[i], ay[i], az[i], ap[i])
			}
		}
	}
	// A single body feels nothing at all.
	ax, ay, az, ap := []float64{7}, []float64{7}, []float64{7}, []float64{7}
	s := Solver{}
	if err := s.Accelerations([]float64{1}, []float64{2}, []float64{3}, []float64{1}, ax, ay, az, ap); err != nil {
		t.Fatal(err)
	}
	if ax[0] != 0 || ay[0] != 0 || az[0] != 0 || ap[0] != 0 {
		t.Fatalf("one body: a = (%v, %v, %v), phi = %v, want zeros", ax[0], ay[0], az[0], ap[0])
	}
}

// TestZeroMassBodies: test particles (m = 0) feel the massive bodies' field
// and exert none: the massive bodies' accelerations are bit for bit those of a
// system without them (each added term is exactly +0).
func TestZeroMassBodies(t *testing.T) {
	const nm, nt = 200, 60
	b := plummer(t, nm+nt, 5)
	massive := &Bodies{X: b.X[:nm], Y: b.Y[:nm], Z: b.Z[:nm], M: b.M[:nm]}
	// Interleave: test particles at every 4th index so that they sit inside
	// tiles and blocks, not only at the end.
	n := nm + nt
	x, y, z, m := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	isTest := make([]bool, n)
	mi, ti := 0, nm
	for i := 0; i < n; i++ {
		if i%4 == 3 && ti < n {
			x[i], y[i], z[i], m[i] = b.X[ti], b.Y[ti], b.Z[ti], 0
			isTest[i] = true
			ti++
		} else {
			x[i], y[i], z[i], m[i] = massive.X[mi], massive.Y[mi], massive.Z[mi], massive.M[mi]
			mi++
		}
	}
	for _, prec := range []Precision{Float64, Float32} {
		s := Solver{Precision: prec, Softening: 0.02}
		ax, ay, az := make([]float64, n), make([]float64, n), make([]float64, n)
		if err := s.Accelerations(x, y, z, m, ax, ay, az, nil); err != nil {
			t.Fatal(err)
		}
		mx, my, mz := make([]float64, nm), make([]float64, nm), make([]float64, nm)
		if err := s.Accelerations(massive.X, massive.Y, massive.Z, massive.M, mx, my, mz, nil); err != nil {
			t.Fatal(err)
		}
		k := 0
		for i := 0; i < n; i++ {
			if isTest[i] {
				if ax[i] == 0 && ay[i] == 0 && az[i] == 0 {
					t.Fatalf("%v: test particle %d feels no force", prec, i)
				}
				continue
			}
			if ax[i] != mx[k] || ay[i] != my[k] || az[i] != mz[k] {
				t.Fatalf("%v: massive body %d: (%v, %v, %v) with test particles, (%v, %v, %v) without",
					prec, k, ax[i], ay[i], az[i], mx[k], my[k], mz[k])
			}
			k++
		}
	}
	// And a test particle feels exactly the massive bodies' field (float64,
	// against the reference at the particle's position).
	s := Solver{Softening: 0.02}
	ax, ay, az := make([]float64, n), make([]float64, n), make([]float64, n)
	_ = s.Accelerations(x, y, z, m, ax, ay, az, nil)
	for i := 0; i < n; i++ {
		if !isTest[i] {
			continue
		}
		px := append([]float64{x[i]}, massive.X...)
		py := append([]float64{y[i]}, massive.Y...)
		pz := append([]float64{z[i]}, massive.Z...)
		pm := append([]float64{0}, massive.M...)
		rx, ry, rz := make([]float64, nm+1), make([]float64, nm+1), make([]float64, nm+1)
		Reference(px, py, pz, pm, 0.02, rx, ry, rz, nil)
		sx, sy, sz := AbsSums(px, py, pz, pm, 0.02)
		tol := ErrorBoundK(nm+1) * 2 * 0x1p-53
		if math.Abs(ax[i]-rx[0]) > tol*sx[0] || math.Abs(ay[i]-ry[0]) > tol*sy[0] || math.Abs(az[i]-rz[0]) > tol*sz[0] {
			t.Fatalf("test particle %d: (%v, %v, %v), reference (%v, %v, %v)", i, ax[i], ay[i], az[i], rx[0], ry[0], rz[0])
		}
	}
}

func TestBadInput(t *testing.T) {
	s := Solver{}
	one := []float64{0}
	if err := s.Accelerations([]float64{math.NaN()}, one, one, []float64{1}, one, one, one, nil); err == nil {
		t.Fatal("NaN position accepted")
	}
	if err := s.Accelerations(one, one, one, []float64{-1}, one, one, one, nil); err == nil {
		t.Fatal("negative mass accepted")
	}
	if err := s.Accelerations(one, one, []float64{0, 1}, one, one, one, one, nil); err == nil {
		t.Fatal("ragged positions accepted")
	}
	s.Softening = -1
	if err := s.Accelerations(one, one, one, one, one, one, one, nil); err == nil {
		t.Fatal("negative softening accepted")
	}
}
