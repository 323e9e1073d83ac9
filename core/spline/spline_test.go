package spline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

// TestWarmAgreesWithCold: the warm-started search returns the cold search's
// index on a million random knot sets and queries (inside, outside, on knots,
// NaN), from random guesses, and In holds exactly for that index.
func TestWarmAgreesWithCold(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const sets, queries = 20000, 50 // 1e6 queries
	buf := make([]float64, 0, 600)
	n := 0
	for s := 0; s < sets; s++ {
		m := MinKnots + rng.IntN(300)
		if s%4 == 0 {
			m = MinKnots + rng.IntN(4) // small sets hit every edge
		}
		pad := rng.IntN(3) // the particle's knots sit inside a larger array
		buf = buf[:0]
		for i := 0; i < pad; i++ {
			buf = append(buf, -1e300)
		}
		x := rng.NormFloat64() * 10
		for i := 0; i < m; i++ {
			if rng.IntN(8) == 0 {
				x = math.Nextafter(x, math.Inf(1)) // adjacent floats
			} else {
				x += rng.ExpFloat64() * math.Pow(10, float64(rng.IntN(5)-2))
			}
			buf = append(buf, x)
		}
		buf = append(buf, 1e300)
		a, b := pad, pad+m
		for q := 0; q < queries; q++ {
			var tau float64
			switch rng.IntN(6) {
			case 0:
				tau = buf[a+rng.IntN(m)] // exactly on a knot
			case 1:
				tau = buf[a] - rng.ExpFloat64() // before
			case 2:
				tau = buf[b-1] + rng.ExpFloat64() // after
			case 3:
				if q == 0 {
					tau = math.NaN()
				} else {
					tau = math.Nextafter(buf[a+rng.IntN(m)], math.Inf(-1))
				}
			default:
				tau = buf[a] + rng.Float64()*(buf[b-1]-buf[a])
			}
			cold := Search(buf, a, b, tau)
			guess := a - 2 + rng.IntN(m+4)
			warm := SearchFrom(buf, a, b, guess, tau)
			if cold != warm {
				t.Fatalf("set %d query %v: cold %d, warm %d (guess %d, knots %v)", s, tau, cold, warm, guess, buf[a:b])
			}
			if cold < a || cold > b-2 {
				t.Fatalf("index %d outside [%d, %d]", cold, a, b-2)
			}
			if !math.IsNaN(tau) {
				if cold > a && buf[cold] > tau || cold < b-2 && buf[cold+1] <= tau {
					t.Fatalf("index %d is not the interval of %v in %v", cold, tau, buf[a:b])
				}
			}
			for i := a; i < b-1; i++ {
				if In(buf, a, b, i, tau) != (i == cold) {
					t.Fatalf("In(%d, %v) = %v, search says %d", i, tau, In(buf, a, b, i, tau), cold)
				}
			}
			n++
		}
	}
	if n < 1_000_000 {
		t.Fatalf("only %d queries", n)
	}
}

func twoParticles() (tk []float64, off []int) {
	off = []int{0, 7, 17}
	for k := 0; k < 7; k++ {
		tk = append(tk, 0.3*float64(k)+0.01*float64(k*k))
	}
	for k := 0; k < 10; k++ {
		tk = append(tk, -2+0.5*float64(k)+0.02*math.Sin(float64(k)))
	}
	return tk, off
}

// A cubic spline reproduces linear data to rounding, in every component.
func TestLinearIsExact(t *testing.T) {
	tk, off := twoParticles()
	n := len(tk)
	vals := [][]float64{make([]float64, n), make([]float64, n), make([]float64, n)}
	for k, x := range tk {
		vals[0][k], vals[1][k], vals[2][k] = 1+2*x, -3*x, 0.5
	}
	s, err := New(tk, off, vals)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	for p := 0; p < 2; p++ {
		lo, hi := s.Range(p)
		for j := 0; j <= 100; j++ {
			x := lo + (hi-lo)*float64(j)/100
			for c, want := range []float64{1 + 2*x, -3 * x, 0.5} {
				if got := s.Eval(p, c, x); math.Abs(got-want) > 1e-14*(1+math.Abs(want)) {
					t.Fatalf("p%d c%d at %v: %v, want %v", p, c, x, got, want)
				}
			}
		}
	}
}

// A smooth function is interpolated with fourth-order error away from the
// natural ends, and the spline passes through its knots.
func TestSmoothConvergence(t *testing.T) {
	errAt := func(m int) float64 {
		tk := make([]float64, m)
		v := make([]float64, m)
		for k := range tk {
			tk[k] = 4 * float64(k) / float64(m-1)
			v[k] = math.Sin(tk[k])
		}
		s, err := New(tk, []int{0, m}, [][]float64{v})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Release()
		for k := range tk {
			if got := s.Eval(0, 0, tk[k]); math.Abs(got-v[k]) > 1e-15 {
				t.Fatalf("knot %d: %v, want %v", k, got, v[k])
			}
		}
		worst := 0.0
		for j := 0; j <= 1000; j++ {
			x := 1 + 2*float64(j)/1000
			worst = math.Max(worst, math.Abs(s.Eval(0, 0, x)-math.Sin(x)))
		}
		return worst
	}
	e1, e2 := errAt(41), errAt(81)
	if r := e1 / e2; r < 13 || r > 19 {
		t.Fatalf("error ratio on halving h = %v (errors %g, %g), want ~16", r, e1, e2)
	}
}

func TestValidation(t *testing.T) {
	tk, off := twoParticles()
	n := len(tk)
	vals := [][]float64{make([]float64, n)}
	bad := func(name string, tk []float64, off []int, vals [][]float64, kind errs.Kind) {
		t.Helper()
		_, err := New(tk, off, vals)
		if !errs.Is(err, kind) {
			t.Fatalf("%s: got %v, want %s", name, err, kind)
		}
	}
	short := append([]float64(nil), tk...)
	bad("3 knots", short, []int{0, 3, 17}, vals, errs.Trajectory)
	unsorted := append([]float64(nil), tk...)
	unsorted[3] = unsorted[2]
	bad("repeated knot", unsorted, off, vals, errs.Trajectory)
	nan := append([]float64(nil), tk...)
	nan[9] = math.NaN()
	bad("NaN knot", nan, off, vals, errs.Trajectory)
	nv := make([]float64, n)
	nv[4] = math.Inf(1)
	bad("Inf value", tk, off, [][]float64{nv}, errs.Trajectory)
	bad("short column", tk, off, [][]float64{nv[:5]}, errs.Shape)
	bad("offsets", tk, []int{0, 7, 16}, vals, errs.Shape)

	s, err := New(tk, off, vals)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := NewOnKnots(s, tk, off, [][]float64{make([]float64, n), make([]float64, n)})
	if err != nil {
		t.Fatal(err)
	}
	other := append([]float64(nil), tk...)
	other[5] += 1e-9
	if _, err := NewOnKnots(s, other, off, [][]float64{make([]float64, n)}); !errs.Is(err, errs.Trajectory) {
		t.Fatalf("spline on other knots: %v", err)
	}
	if _, err := NewOnKnots(s, tk[:10], []int{0, 4, 10}, [][]float64{make([]float64, 10)}); !errs.Is(err, errs.Trajectory) {
		t.Fatalf("spline on fewer knots: %v", err)
	}
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
	if acc.T[16] != tk[16] { // shared knots outlive the state spline
		t.Fatal("shared knots lost")
	}
	if err := acc.Release(); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(); !errs.Is(err, errs.Released) {
		t.Fatalf("double release: %v", err)
	}
	if b := core.AllocatedBytes(); b != 0 {
		t.Fatalf("%d bytes of C memory still held", b)
	}
}

// The derivative at the knots matches the function's to third order.
func TestKnotDerivatives(t *testing.T) {
	m := 200
	tk := make([]float64, m)
	v := make([]float64, m)
	for k := range tk {
		tk[k] = 6 * float64(k) / float64(m-1)
		v[k] = math.Cos(tk[k])
	}
	s, err := New(tk, []int{0, m}, [][]float64{v})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	d := s.KnotDerivatives()
	for k := 20; k < m-20; k++ {
		if e := math.Abs(d[0][k] + math.Sin(tk[k])); e > 1e-6 {
			t.Fatalf("knot %d: derivative %v, want %v", k, d[0][k], -math.Sin(tk[k]))
		}
	}
}
