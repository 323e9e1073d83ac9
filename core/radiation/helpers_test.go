package radiation

import (
	"math"
	"testing"

	"github.com/fieldgo/fieldgo/core/spline"
)

// worldline gives the 4-position, 4-velocity and 4-acceleration at proper
// time tau (c = 1 unless the test says otherwise).
type worldline func(tau float64) (x, u, a [4]float64)

// source builds splines of the given worldlines on knots tau0 + k*dtau.
func source(t testing.TB, c float64, charge []float64, tau0, tau1 float64, knots int, lines ...worldline) Source {
	t.Helper()
	var tk []float64
	off := []int{0}
	st := make([][]float64, nState)
	ac := make([][]float64, nAccel)
	for _, w := range lines {
		for k := 0; k < knots; k++ {
			tau := tau0 + (tau1-tau0)*float64(k)/float64(knots-1)
			x, u, a := w(tau)
			tk = append(tk, tau)
			for d := 0; d < 4; d++ {
				st[d] = append(st[d], x[d])
				st[4+d] = append(st[4+d], u[d])
				ac[d] = append(ac[d], a[d])
			}
		}
		off = append(off, len(tk))
	}
	s, err := spline.New(tk, off, st)
	if err != nil {
		t.Fatal(err)
	}
	a, err := spline.NewOnKnots(s, tk, off, ac)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Release(); a.Release() })
	return Source{State: s, Accel: a, Charge: charge, C: c}
}

// uniform is a charge moving with velocity v (|v| < c) through x0 at t = 0.
func uniform(c float64, x0, v [3]float64) worldline {
	g := 1 / math.Sqrt(1-(v[0]*v[0]+v[1]*v[1]+v[2]*v[2])/(c*c))
	return func(tau float64) (x, u, a [4]float64) {
		t := g * tau
		x = [4]float64{t, x0[0] + v[0]*t, x0[1] + v[1]*t, x0[2] + v[2]*t}
		u = [4]float64{g, g * v[0], g * v[1], g * v[2]}
		return
	}
}

// helix is a circle of radius r in the xy plane at angular velocity w (lab
// time), phase ph, drifting with vz along z.
func helix(c, r, w, ph, vz float64) worldline {
	v2 := r*r*w*w + vz*vz
	g := 1 / math.Sqrt(1-v2/(c*c))
	return func(tau float64) (x, u, a [4]float64) {
		t := g * tau
		s, co := math.Sincos(w*t + ph)
		x = [4]float64{t, r * co, r * s, vz * t}
		u = [4]float64{g, -g * r * w * s, g * r * w * co, g * vz}
		a = [4]float64{0, -g * g * r * w * w * co, -g * g * r * w * w * s, 0}
		return
	}
}

func cubeCol(c *Cube, name string) []float64 {
	for k, n := range c.Columns {
		if n == name {
			return c.Data[k]
		}
	}
	panic("no column " + name)
}

func run1(t testing.TB, src Source, obs Observers, times []float64, s int, opt Options) *Cube {
	t.Helper()
	c, err := Fields(src, obs, times, s, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Release() })
	return c
}

// dft is the complex amplitude of harmonic m of x (x = sum_m X_m e^{2 pi i m k/N}).
func dft(x []float64, m int) complex128 {
	var s complex128
	n := len(x)
	for k, v := range x {
		sn, cs := math.Sincos(-2 * math.Pi * float64(m*k) / float64(n))
		s += complex(v*cs, v*sn)
	}
	return s / complex(float64(n), 0)
}

func norm3(x, y, z float64) float64 { return math.Sqrt(x*x + y*y + z*z) }
