// Package radscene is the radiation benchmarks' and GPU tests' scene, written
// once: charges on circular orbits seen by observers on a sphere. It is a test
// helper (it takes a testing.TB); nothing outside tests and benchmarks imports it.
package radscene

import (
	"math"
	"testing"

	"github.com/fieldgo/fieldgo/core/radiation"
	"github.com/fieldgo/fieldgo/core/spline"
)

// Size is a scene's size; a zero field takes its default.
type Size struct {
	O   int // observers (256)
	S   int // samples per observer (512)
	P   int // particles (4)
	KPP int // knots per orbital period (1024: a sample advances ~8 knot intervals; 16 or 64: several samples per interval, where coef_reuse keeps an interval across samples)
}

// Scene is P charges on circular orbits (beta = 0.5 .. 0.8, 8 periods, KPP
// knots per period) seen by O observers on a Fibonacci sphere of radius 50,
// S samples over two orbital periods each.
type Scene struct {
	Src     radiation.Source
	Obs     radiation.Observers
	Times   []float64
	O, S, P int
	release func()
}

// Release frees the scene's splines.
func (sc *Scene) Release() { sc.release() }

// New builds the scene of size sz.
func New(tb testing.TB, sz Size) *Scene {
	tb.Helper()
	O, S, P, per := or(sz.O, 256), or(sz.S, 512), or(sz.P, 4), or(sz.KPP, 1024)
	const periods = 8
	var tk []float64
	off := []int{0}
	st := make([][]float64, 8)
	ac := make([][]float64, 4)
	for p := 0; p < P; p++ {
		beta := 0.5 + 0.3*float64(p)/float64(max(P-1, 1))
		w := beta // radius 1, c = 1
		g := 1 / math.Sqrt(1-beta*beta)
		T := 2 * math.Pi / w
		n := periods*per + 1
		for k := 0; k < n; k++ {
			tau := (-float64(periods)/2*T + float64(periods)*T*float64(k)/float64(n-1)) / g
			t := g * tau
			s, c := math.Sincos(w*t + float64(p))
			tk = append(tk, tau)
			for d, v := range []float64{t, c, s, 0, g, -g * beta * s, g * beta * c, 0} {
				st[d] = append(st[d], v)
			}
			for d, v := range []float64{0, -g * g * beta * w * c, -g * g * beta * w * s, 0} {
				ac[d] = append(ac[d], v)
			}
		}
		off = append(off, len(tk))
	}
	state, err := spline.New(tk, off, st)
	if err != nil {
		tb.Fatal(err)
	}
	accel, err := spline.NewOnKnots(state, tk, off, ac)
	if err != nil {
		state.Release()
		tb.Fatal(err)
	}
	sc := &Scene{O: O, S: S, P: P, release: func() { state.Release(); accel.Release() }}
	charge := make([]float64, P)
	for p := range charge {
		charge[p] = 1
	}
	sc.Src = radiation.Source{State: state, Accel: accel, Charge: charge, C: 1}
	for o := 0; o < O; o++ {
		z := 1 - 2*(float64(o)+0.5)/float64(O)
		r := math.Sqrt(1 - z*z)
		phi := float64(o) * math.Pi * (3 - math.Sqrt(5))
		sc.Obs.X = append(sc.Obs.X, 50*r*math.Cos(phi))
		sc.Obs.Y = append(sc.Obs.Y, 50*r*math.Sin(phi))
		sc.Obs.Z = append(sc.Obs.Z, 50*z)
	}
	T := 2 * math.Pi / 0.5
	for s := 0; s < S; s++ {
		sc.Times = append(sc.Times, 50+2*T*float64(s)/float64(S))
	}
	return sc
}

func or(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
