package nbody

import (
	"context"
	"math"
	"testing"
)

// kepler is a two-body orbit: masses m1 = 0.6, m2 = 0.4 (G = 1, total mass
// M = 1), semi-major axis a = 1, eccentricity e, started at apocentre with
// the centre of mass at rest at the origin. Its period is 2 pi sqrt(a^3 / M).
func kepler(e float64) *Bodies {
	const m1, m2, a = 0.6, 0.4, 1.0
	rApo := a * (1 + e)
	vApo := math.Sqrt((m1 + m2) / a * (1 - e) / (1 + e)) // vis-viva at apocentre
	b := NewBodies(2)
	b.M[0], b.M[1] = m1, m2
	// Relative vector r = x2 - x1 = (rApo, 0, 0), v = (0, vApo, 0).
	b.X[0], b.X[1] = -m2*rApo, m1*rApo
	b.VY[0], b.VY[1] = -m2*vApo, m1*vApo
	return b
}

// orbit integrates a Kepler orbit for `periods` periods with n steps per
// period and returns the integrator.
func orbit(t *testing.T, e float64, n, periods int, c Sink) *Integrator {
	t.Helper()
	it, err := NewIntegrator(kepler(e), Config{Dt: 2 * math.Pi / float64(n)})
	if err != nil {
		t.Fatal(err)
	}
	var sinks []Sink
	if c != nil {
		sinks = append(sinks, c)
	}
	if err := it.Run(context.Background(), n*periods, 1, sinks...); err != nil {
		t.Fatal(err)
	}
	return it
}

// TestKeplerClosureOrder: after one predicted period the relative vector
// returns to its start with an error that falls as dt^2 (leapfrog is second
// order): the measured order between successive halvings of dt is 2 +- 0.15.
func TestKeplerClosureOrder(t *testing.T) {
	const e = 0.5
	x0 := kepler(e)
	var errsAt []float64
	ns := []int{400, 800, 1600, 3200}
	for _, n := range ns {
		it := orbit(t, e, n, 1, nil)
		b := it.Bodies()
		dx := (b.X[1] - b.X[0]) - (x0.X[1] - x0.X[0])
		dy := (b.Y[1] - b.Y[0]) - (x0.Y[1] - x0.Y[0])
		errsAt = append(errsAt, math.Hypot(dx, dy))
		it.Release()
	}
	for k := 1; k < len(ns); k++ {
		order := math.Log2(errsAt[k-1] / errsAt[k])
		t.Logf("steps/period %d -> %d: closure %.3e -> %.3e, order %.3f", ns[k-1], ns[k], errsAt[k-1], errsAt[k], order)
		if math.Abs(order-2) > 0.15 {
			t.Fatalf("closure error order %.3f, want 2", order)
		}
	}
}

// TestKeplerPeriod measures the period from the times the relative vector
// crosses the -x axis at pericentre (interpolated linearly between steps):
// the orbit starts at apocentre on +x, so they fall at P/2, 3P/2, 5P/2 with
// P = 2 pi sqrt(a^3/M) = 2 pi. The leapfrog's period error is O(dt^2): for
// 2000 steps per orbit of e = 0.5 it is measured at ~1e-6 relative; we allow
// 1e-4 (a wrong force law or time step is off by percent).
func TestKeplerPeriod(t *testing.T) {
	const n, e = 2000, 0.5
	c := &Collector{}
	defer c.Release()
	it := orbit(t, e, n, 3, c)
	defer it.Release()
	var crossings []float64
	prevY, prevT := 0.0, 0.0
	for k, s := range c.Snapshots {
		x := s.Batch.Column(2).(interface{ Value(int) float64 })
		y := s.Batch.Column(3).(interface{ Value(int) float64 })
		rx, ry := x.Value(1)-x.Value(0), y.Value(1)-y.Value(0)
		// Anticlockwise: at -x, y goes from positive to non-positive.
		if k > 0 && prevY > 0 && ry <= 0 && rx < 0 {
			crossings = append(crossings, prevT+(s.T-prevT)*prevY/(prevY-ry))
		}
		prevY, prevT = ry, s.T
	}
	if len(crossings) != 3 {
		t.Fatalf("%d pericentre passages in 3 orbits, want 3", len(crossings))
	}
	want := 2 * math.Pi
	measured := []float64{2 * crossings[0], crossings[1] - crossings[0], crossings[2] - crossings[1]}
	for k, p := range measured {
		t.Logf("period %d: %.9f (predicted %.9f, rel. error %.2e)", k+1, p, want, math.Abs(p-want)/want)
		if math.Abs(p-want) > 1e-4*want {
			t.Fatalf("period %.9f, predicted %.9f", p, want)
		}
	}
}

// TestKeplerAngularMomentum: leapfrog conserves the angular momentum of a
// central force exactly in exact arithmetic, so in float64 only rounding
// changes it: each step's 9 updates of x and v and the cross product add
// O(u |L|) at random, so after s steps the drift is bounded by 10 u s |L|
// (a worst case, linear in s; the measured drift is far smaller).
func TestKeplerAngularMomentum(t *testing.T) {
	const n, e = 1000, 0.7
	b := kepler(e)
	_, _, l0 := b.AngularMomentum()
	it := orbit(t, e, n, 5, nil)
	defer it.Release()
	lx, ly, lz := it.Bodies().AngularMomentum()
	steps := float64(5 * n)
	bound := 10 * 0x1p-53 * steps * math.Abs(l0)
	dl := math.Abs(lz - l0)
	t.Logf("L0 = %.17g, after %v steps %.17g: |dL| = %.3g = %.1f u |L| (bound %.3g)", l0, steps, lz, dl, dl/(0x1p-53*math.Abs(l0)), bound)
	if dl > bound || lx != 0 || ly != 0 {
		t.Fatalf("|dL| = %.3g > %.3g (lx=%v, ly=%v)", dl, bound, lx, ly)
	}
	// The orbit did move: energy error present but small (not a frozen run).
	if it.StepCount() != int64(steps) {
		t.Fatalf("took %d steps, want %v", it.StepCount(), steps)
	}
}
