package nbody

import (
	"context"
	"math"
	"testing"
)

// Hénon units: the crossing time of a virialised system with E = -1/4 is
// t_cr = 2 sqrt(2) (G M^{5/2} / (-4E)^{3/2}... = 2 sqrt 2 here).
var crossingTime = 2 * math.Sqrt2

const (
	sphereN   = 256
	sphereEps = 0.05 // about a tenth of the mean interparticle distance at the half-mass radius
)

func sphere(t testing.TB) *Bodies {
	t.Helper()
	b, err := Plummer(sphereN, 42, true)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPlummerSample: the exact rescaling gives K = 1/4, W = -1/2 (E = -1/4),
// centre of mass at rest at the origin, equal masses summing to 1, and the
// same bodies for the same seed.
func TestPlummerSample(t *testing.T) {
	b := sphere(t)
	n := b.Len()
	pot := make([]float64, n)
	ax, ay, az := make([]float64, n), make([]float64, n), make([]float64, n)
	Reference(b.X, b.Y, b.Z, b.M, 0, ax, ay, az, pot)
	k, w := b.Kinetic(), b.Potential(pot)
	if math.Abs(k-0.25) > 1e-14 || math.Abs(w+0.5) > 1e-14 {
		t.Fatalf("K = %.17g, W = %.17g, want 1/4 and -1/2", k, w)
	}
	px, py, pz := b.Momentum()
	var mt, cx float64
	for i := range b.M {
		mt += b.M[i]
		cx += b.M[i] * b.X[i]
	}
	if math.Abs(px)+math.Abs(py)+math.Abs(pz) > 1e-15 || math.Abs(cx) > 1e-15 || math.Abs(mt-1) > 1e-14 {
		t.Fatalf("momentum (%g, %g, %g), centre %g, mass %g", px, py, pz, cx, mt)
	}
	c := sphere(t)
	for i := range b.X {
		if b.X[i] != c.X[i] || b.VZ[i] != c.VZ[i] {
			t.Fatal("same seed, different bodies")
		}
	}
	// Without rescaling, a large sample has E close to -1/4 already
	// (statistical error ~ 1/sqrt(n)) and half its mass within the Plummer
	// half-mass radius 1.305 (3 pi/16) = 0.769.
	big, err := Plummer(4096, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	nb := big.Len()
	pot = make([]float64, nb)
	ax, ay, az = make([]float64, nb), make([]float64, nb), make([]float64, nb)
	s := Solver{}
	_ = s.Accelerations(big.X, big.Y, big.Z, big.M, ax, ay, az, pot)
	e := big.Kinetic() + big.Potential(pot)
	inside := 0
	for i := range big.X {
		if math.Sqrt(big.X[i]*big.X[i]+big.Y[i]*big.Y[i]+big.Z[i]*big.Z[i]) < 0.769 {
			inside++
		}
	}
	t.Logf("n=4096 unscaled: E = %.4f, mass fraction inside r_h = %.3f", e, float64(inside)/float64(nb))
	if math.Abs(e+0.25) > 0.02 || math.Abs(float64(inside)/float64(nb)-0.5) > 0.03 {
		t.Fatalf("unscaled sample: E = %.4f (want -0.25 +- 0.02), half-mass fraction %.3f", e, float64(inside)/float64(nb))
	}
}

// energyRun integrates the sphere for one crossing time with the given
// number of steps per unit time, recording diagnostics every step.
func energyRun(t *testing.T, stepsPerUnit int, prec Precision) []Diagnostics {
	t.Helper()
	dt := 1 / float64(stepsPerUnit)
	it, err := NewIntegrator(sphere(t), Config{Dt: dt, Softening: sphereEps, Precision: prec})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Release()
	c := &diagSink{}
	steps := int(math.Ceil(crossingTime / dt))
	if err := it.Run(context.Background(), steps, 1, c); err != nil {
		t.Fatal(err)
	}
	return c.ds
}

type diagSink struct{ ds []Diagnostics }

func (d *diagSink) Write(s Snapshot) error { d.ds = append(d.ds, s.Diagnostics); return nil }
func (d *diagSink) Close() error           { return nil }

func maxAbsDE(ds []Diagnostics) float64 {
	m := 0.0
	for _, d := range ds {
		m = math.Max(m, math.Abs(d.Energy-ds[0].Energy))
	}
	return m
}

// TestPlummerEnergy: over one crossing time the leapfrog energy error of the
// softened sphere (N = 256, eps = 0.05)
//   - scales as dt^2: halving dt divides max |dE| by 4 (measured order within
//     2 +- 0.3; close encounters make it a little irregular);
//   - is bounded with no secular drift: a least-squares line through dE(t)
//     rises or falls by less than the error's own range over the run, and
//     the largest |dE| in the second half is not more than twice that of the
//     first half;
//   - is small: |dE|/|E| < 1e-3 at dt = 1/64.
func TestPlummerEnergy(t *testing.T) {
	var maxes []float64
	for _, spu := range []int{64, 128, 256} {
		ds := energyRun(t, spu, Float64)
		e0 := ds[0].Energy
		m := maxAbsDE(ds)
		maxes = append(maxes, m)
		// Secular drift: slope of a least-squares fit of dE against t.
		var st, se, stt, ste float64
		for _, d := range ds {
			de := d.Energy - e0
			st += d.T
			se += de
			stt += d.T * d.T
			ste += d.T * de
		}
		nn := float64(len(ds))
		slope := (nn*ste - st*se) / (nn*stt - st*st)
		half := len(ds) / 2
		m1, m2 := maxAbsDE(ds[:half]), maxAbsDE(append([]Diagnostics{ds[0]}, ds[half:]...))
		t.Logf("dt=1/%d: E0 = %.6f, max|dE| = %.3e (%.2e relative), drift over run %.2e, max first half %.2e, second %.2e",
			spu, e0, m, m/math.Abs(e0), slope*crossingTime, m1, m2)
		if math.Abs(slope*crossingTime) > m {
			t.Fatalf("dt=1/%d: secular drift %.3e over a crossing time exceeds the error range %.3e", spu, slope*crossingTime, m)
		}
		if m2 > 2*m1 {
			t.Fatalf("dt=1/%d: energy error grows: max %.3e in the first half, %.3e in the second", spu, m1, m2)
		}
	}
	if maxes[0]/0.25 > 1e-3 {
		t.Fatalf("relative energy error %.3e at dt=1/64", maxes[0]/0.25)
	}
	for k := 1; k < len(maxes); k++ {
		order := math.Log2(maxes[k-1] / maxes[k])
		t.Logf("order %.3f", order)
		if math.Abs(order-2) > 0.3 {
			t.Fatalf("energy error order %.3f between dt and dt/2, want 2", order)
		}
	}
}

// TestPlummerMomentum: the forces are computed per target, so rounding
// breaks Newton's third law and the total momentum P = sum m v changes by
// rounding only. Per step, |dP| <= dt sum_i m_i k u S_i (the force error
// bound of every body, S_i = sum_j |a_ij|) + 3 u sum_i m_i |v_i| (rounding of
// the kicks), k = ErrorBoundK(N). The test accumulates that bound over the
// run with S_i and |v_i| evaluated at the start and doubled (they vary over a
// crossing time by less than that: checked by the logged ratio), in each
// precision.
func TestPlummerMomentum(t *testing.T) {
	for _, prec := range []Precision{Float64, Float32} {
		b := sphere(t)
		n := b.Len()
		sx, sy, sz := AbsSums(b.X, b.Y, b.Z, b.M, sphereEps)
		var fb, vb float64
		for i := 0; i < n; i++ {
			fb += b.M[i] * math.Max(sx[i], math.Max(sy[i], sz[i]))
			vb += b.M[i] * math.Sqrt(b.VX[i]*b.VX[i]+b.VY[i]*b.VY[i]+b.VZ[i]*b.VZ[i])
		}
		const spu = 128
		dt := 1.0 / spu
		steps := int(math.Ceil(crossingTime / dt))
		u := prec.UnitRoundoff()
		perStep := 2 * (dt*ErrorBoundK(n)*u*fb + 3*0x1p-53*vb)
		bound := float64(steps) * perStep
		it, err := NewIntegrator(b, Config{Dt: dt, Softening: sphereEps, Precision: prec})
		if err != nil {
			t.Fatal(err)
		}
		c := &diagSink{}
		if err := it.Run(context.Background(), steps, steps, c); err != nil {
			t.Fatal(err)
		}
		it.Release()
		last := c.ds[len(c.ds)-1]
		dp := math.Sqrt(last.Px*last.Px + last.Py*last.Py + last.Pz*last.Pz)
		t.Logf("%v: |P(t_cr)| = %.3e, bound %.3e (ratio %.2g)", prec, dp, bound, dp/bound)
		if !(dp <= bound) {
			t.Fatalf("%v: momentum %.3e exceeds its rounding bound %.3e", prec, dp, bound)
		}
	}
}

// TestPlummerTimeReversal: leapfrog is time-reversible for any force that
// depends on positions only, so integrating for one crossing time, negating
// the velocities and integrating as long again returns to the start
// (velocities negated) up to rounding amplified by the system's chaos.
// Measured at dt = 1/128: ~5e-15 in both precisions (the float32 forces are a
// deterministic function of the float64 positions, and the return path
// rounds them to the same float32 values almost always). A rounding change of
// a position can flip a float32 rounding of a force (~1e-7 relative), so the
// float32 tolerance is 1e-6; float64's is 1e-11, in units of the virial radius
// 1. A non-reversible scheme (for instance a kick-drift without the second
// half-kick) misses by ~dt = 1e-2.
func TestPlummerTimeReversal(t *testing.T) {
	for _, c := range []struct {
		prec Precision
		tol  float64
	}{{Float64, 1e-11}, {Float32, 1e-6}} {
		b := sphere(t)
		const dt = 1.0 / 128
		steps := int(math.Ceil(crossingTime / dt))
		cfg := Config{Dt: dt, Softening: sphereEps, Precision: c.prec}
		it, err := NewIntegrator(b, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := it.Run(context.Background(), steps, steps); err != nil {
			t.Fatal(err)
		}
		moved := 0.0
		for i := range b.M {
			moved = math.Max(moved, math.Abs(it.Bodies().X[i]-b.X[i]))
		}
		it.Reverse()
		if err := it.Run(context.Background(), steps, steps); err != nil {
			t.Fatal(err)
		}
		s := it.Bodies()
		var dx, dv float64
		for i := range b.M {
			dx = math.Max(dx, math.Abs(s.X[i]-b.X[i])+math.Abs(s.Y[i]-b.Y[i])+math.Abs(s.Z[i]-b.Z[i]))
			dv = math.Max(dv, math.Abs(s.VX[i]+b.VX[i])+math.Abs(s.VY[i]+b.VY[i])+math.Abs(s.VZ[i]+b.VZ[i]))
		}
		it.Release()
		t.Logf("%v: after %d steps out and back: max position error %.3e, velocity error %.3e (bodies moved up to %.2f)",
			c.prec, steps, dx, dv, moved)
		if dx > c.tol || dv > c.tol || moved < 0.1 {
			t.Fatalf("%v: time-reversed run misses its start by %.3e in position, %.3e in velocity (tolerance %g)", c.prec, dx, dv, c.tol)
		}
	}
}
