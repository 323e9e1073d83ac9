package core_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

// sineGordonSpec is testdata/sine_gordon.c: e = u'^2/2 + 1 - cos u (traced by
// the front end from fg.Theory("sine_gordon", fields=["u"])).
const sineGordonSpec = `{"name": "sine_gordon", "fields": ["u"], "params": [], "densities": [], "constraint": "", "gradient": "derived"}`

func sineGordon(t testing.TB) *core.Theory { return theory(t, sineGordonSpec, "sine_gordon.c") }

// line makes a simulation of th on a line of n sites of spacing h centred on 0.
func line(t testing.TB, th *core.Theory, n int, h float64, b core.Boundary, params []float64, form ...string) *core.Simulation {
	t.Helper()
	opt := core.Options{}
	if len(form) > 0 {
		opt.Form = form[0]
	}
	lat, err := core.NewLatticeND([]int{n}, []float64{h}, []float64{-float64(n-1) * h / 2}, []core.Boundary{b})
	require.NoError(t, err)
	s, err := core.NewSimulation(backend(0), th, lat, params, opt)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// setLine sets the field (or the velocity) from f(x) on a one-component line.
func setLine(t testing.TB, s *core.Simulation, velocity bool, f func(x float64) float64) {
	t.Helper()
	lat := s.Lattice()
	fl, err := core.NewField(lat, s.Theory().Spec.Fields)
	require.NoError(t, err)
	defer fl.Release()
	for i := range lat.Nx {
		require.NoError(t, fl.Set(0, i, 0, f(lat.X(i))))
	}
	if velocity {
		require.NoError(t, s.SetVelocity(fl))
	} else {
		require.NoError(t, s.SetField(fl))
	}
}

func lineValues(t testing.TB, s *core.Simulation) []float64 {
	f, err := s.Field()
	require.NoError(t, err)
	return append([]float64(nil), f.Comp(0)...)
}

// kinkAntikink is the sine-Gordon kink-antikink pair
// u = 4 arctan(sinh(g v t) / (v cosh(g x))) and its time derivative.
func kinkAntikink(v float64) (u, ut func(x, t float64) float64) {
	g := 1 / math.Sqrt(1-v*v)
	u = func(x, t float64) float64 { return 4 * math.Atan(math.Sinh(g*v*t)/(v*math.Cosh(g*x))) }
	ut = func(x, t float64) float64 {
		a := math.Sinh(g*v*t) / (v * math.Cosh(g*x))
		return 4 / (1 + a*a) * g * math.Cosh(g*v*t) / math.Cosh(g*x)
	}
	return
}

func maxDiff(a []float64, f func(i int) float64) float64 {
	m := 0.0
	for i, v := range a {
		m = math.Max(m, math.Abs(v-f(i)))
	}
	return m
}

// evolveSG runs the kink-antikink from t = 0 to T on a line of spacing h with
// step dt and returns the field.
func evolveSG(t *testing.T, method string, h, dt, T float64) ([]float64, *core.Simulation) {
	const v, L = 0.5, 40.0
	u, ut := kinkAntikink(v)
	s := line(t, sineGordon(t), int(L/h+0.5)+1, h, core.Periodic, nil)
	setLine(t, s, false, func(x float64) float64 { return u(x, 0) })
	setLine(t, s, true, func(x float64) float64 { return ut(x, 0) })
	err := evolveRun(s, core.EvolveConfig{Method: method, T: T, Dt: dt, RecordEvery: 1000})
	require.NoError(t, err)
	assert.Equal(t, T, s.Time())
	return lineValues(t, s), s
}

// RK4 reproduces the exact kink-antikink: its time error falls as dt^4 (the
// differences between runs at dt, dt/2 and dt/4 fall by 16), and at a small
// dt the error against the exact solution is the lattice's, falling as h^4.
func TestEvolveSineGordonKinkAntikinkRK4(t *testing.T) {
	const T = 4.0
	a, _ := evolveSG(t, core.EvolveRK4, 0.2, 0.1, T)
	b, _ := evolveSG(t, core.EvolveRK4, 0.2, 0.05, T)
	c, _ := evolveSG(t, core.EvolveRK4, 0.2, 0.025, T)
	e1, e2 := maxDiff(a, func(i int) float64 { return b[i] }), maxDiff(b, func(i int) float64 { return c[i] })
	t.Logf("RK4 self-convergence: |u(0.1)-u(0.05)| = %.3g, |u(0.05)-u(0.025)| = %.3g, ratio %.2f", e1, e2, e1/e2)
	assert.InDelta(t, 16, e1/e2, 2.5, "RK4's time error must fall as dt^4")

	u, _ := kinkAntikink(0.5)
	exactErr := func(h float64) float64 {
		got, s := evolveSG(t, core.EvolveRK4, h, h/4, T)
		lat := s.Lattice()
		return maxDiff(got, func(i int) float64 { return u(lat.X(i), T) })
	}
	eh, eh2 := exactErr(0.2), exactErr(0.1)
	t.Logf("against the exact solution: h=0.2 %.3g, h=0.1 %.3g, ratio %.2f", eh, eh2, eh/eh2)
	assert.Greater(t, eh/eh2, 12.0, "the lattice error must fall as h^4")
	assert.Less(t, eh2, 2e-4)
}

// Leapfrog is second order: the run-to-run differences fall by 4.
func TestEvolveSineGordonLeapfrogOrder(t *testing.T) {
	const T = 2.0
	a, _ := evolveSG(t, core.EvolveLeapfrog, 0.1, 0.04, T)
	b, _ := evolveSG(t, core.EvolveLeapfrog, 0.1, 0.02, T)
	c, _ := evolveSG(t, core.EvolveLeapfrog, 0.1, 0.01, T)
	e1, e2 := maxDiff(a, func(i int) float64 { return b[i] }), maxDiff(b, func(i int) float64 { return c[i] })
	t.Logf("leapfrog self-convergence ratio %.2f (%.3g, %.3g)", e1/e2, e1, e2)
	assert.InDelta(t, 4, e1/e2, 0.5)
}

// kinkZero is where a line's field crosses zero (cubic interpolation).
func kinkZero(t testing.TB, s *core.Simulation) float64 {
	u := lineValues(t, s)
	lat := s.Lattice()
	for i := 1; i+2 < len(u); i++ {
		if u[i] <= 0 && u[i+1] > 0 {
			// Lagrange cubic through i-1 .. i+2, root by Newton from the linear guess.
			xs := []float64{lat.X(i - 1), lat.X(i), lat.X(i + 1), lat.X(i + 2)}
			ys := u[i-1 : i+3]
			p := func(x float64) (float64, float64) {
				var v, d float64
				for a := range 4 {
					la, da := 1.0, 0.0
					for b := range 4 {
						if b == a {
							continue
						}
						q := 1.0
						for c := range 4 {
							if c != a && c != b {
								q *= (x - xs[c]) / (xs[a] - xs[c])
							}
						}
						da += q / (xs[a] - xs[b])
						la *= (x - xs[b]) / (xs[a] - xs[b])
					}
					v += ys[a] * la
					d += ys[a] * da
				}
				return v, d
			}
			x := xs[1] - u[i]*(xs[2]-xs[1])/(u[i+1]-u[i])
			for range 20 {
				v, d := p(x)
				x -= v / d
			}
			return x
		}
	}
	t.Fatal("no kink")
	return 0
}

// The phi^4 kink boosted to v = 0.5 moves at 0.5 and carries gamma E0,
// E0 = 4/3, to 1e-6; its width is contracted by gamma.
func TestEvolveBoostedPhi4Kink(t *testing.T) {
	const v, h, x0 = 0.5, 0.025, -2.0
	g := 1 / math.Sqrt(1-v*v)
	s := line(t, phi4(t), 961, h, core.Fixed, []float64{1})
	setLine(t, s, false, func(x float64) float64 { return math.Tanh(g * (x - x0)) })
	setLine(t, s, true, func(x float64) float64 { c := math.Cosh(g * (x - x0)); return -g * v / (c * c) })
	p0 := kinkZero(t, s)
	const T = 6.0
	rec, err := s.Evolve(core.EvolveConfig{T: T, Dt: h, RecordEvery: 20})
	require.NoError(t, err)
	defer rec.Release()
	p1 := kinkZero(t, s)
	speed := (p1 - p0) / T
	energy := columnFloat(t, rec, "energy")
	mom := columnFloat(t, rec, "momentum_x")
	t.Logf("speed %.9f, energy %.9f .. %.9f (gamma E0 = %.9f), momentum %.9f (gamma v E0 = %.9f)",
		speed, energy[0], energy[len(energy)-1], g*4/3, mom[0], g*v*4/3)
	assert.InDelta(t, v, speed, 1e-6)
	for _, e := range energy {
		assert.InDelta(t, g*4/3, e, 1e-6)
	}
	assert.InDelta(t, g*v*4/3, mom[len(mom)-1], 1e-5)
	// Width: the slope at the centre is gamma (tanh(g x)' = g at 0).
	u := lineValues(t, s)
	i := int((p1-s.Lattice().Ox)/h + 0.5)
	slope := (u[i-2] - 8*u[i-1] + 8*u[i+1] - u[i+2]) / (12 * h)
	assert.InDelta(t, g, slope, 1e-3)
}

// breatherEnergy runs a sine-Gordon breather (omega = 0.8, period 7.85) and
// returns the recorded total energies. The consistent form's gradient is
// the exact gradient of the energy recorded, so the semi-discrete system
// conserves it exactly and what changes is the scheme's error alone (the
// continuum form's conserved energy differs from the one recorded by
// O(h^4)).
func breatherEnergy(t *testing.T, method string, dt, T float64) []float64 {
	const w, h, L = 0.8, 0.1, 40.0
	k := math.Sqrt(1 - w*w)
	s := line(t, sineGordon(t), 401, h, core.Periodic, nil, "consistent")
	setLine(t, s, false, func(x float64) float64 { return 0 })
	setLine(t, s, true, func(x float64) float64 { return 4 * k / math.Cosh(k*x) })
	rec, err := s.Evolve(core.EvolveConfig{Method: method, T: T, Dt: dt, RecordEvery: 5})
	require.NoError(t, err)
	defer rec.Release()
	return columnFloat(t, rec, "energy")
}

func drift(e []float64) float64 {
	m := 0.0
	for _, v := range e {
		m = math.Max(m, math.Abs(v-e[0]))
	}
	return m
}

// RK4's energy error falls as dt^4; leapfrog's stays bounded over many periods.
func TestEvolveEnergyConservation(t *testing.T) {
	d1, d2 := drift(breatherEnergy(t, core.EvolveRK4, 0.08, 20)), drift(breatherEnergy(t, core.EvolveRK4, 0.04, 20))
	t.Logf("RK4 energy drift over t = 20: dt=0.08 %.3g, dt=0.04 %.3g, ratio %.1f", d1, d2, d1/d2)
	assert.Greater(t, d1/d2, 12.0, "RK4's energy error must fall as dt^4")
	assert.Less(t, d2/8, 1e-7)

	e := breatherEnergy(t, core.EvolveLeapfrog, 0.05, 160) // 20 periods
	half := len(e) / 2
	early, late := drift(e[:half]), drift(e[half:])
	t.Logf("leapfrog energy error over 20 periods: first half %.3g, second half %.3g", early, late)
	assert.Less(t, late, 1.5*early, "leapfrog's energy error must not grow")
	assert.Less(t, late/e[0], 1e-3)
}

// A unit-vector field stays on the sphere and its velocity tangent, under
// both schemes; the energy is conserved to the scheme's accuracy.
func TestEvolveUnitVector(t *testing.T) {
	for _, method := range []string{core.EvolveRK4, core.EvolveLeapfrog} {
		t.Run(method, func(t *testing.T) {
			s := newSim(t, babySkyrme(t), 33, 33, 0.25, 0.25, core.Periodic, []float64{0.05, 0.1}, core.Options{Form: "consistent"}, 0)
			require.NoError(t, s.Fill(hedgehog(1.5)))
			lat := s.Lattice()
			vf, err := core.NewField(lat, s.Theory().Spec.Fields)
			require.NoError(t, err)
			defer vf.Release()
			for j := range lat.Ny {
				for i := range lat.Nx {
					x, y := lat.X(i), lat.Y(j)
					// a spin of the skyrmion about n3 plus a push along x
					f, _ := s.Field()
					n1, _ := f.At(0, i, j)
					n2, _ := f.At(1, i, j)
					require.NoError(t, vf.Set(0, i, j, -0.4*n2+0.3*math.Exp(-x*x-y*y)))
					require.NoError(t, vf.Set(1, i, j, 0.4*n1))
					require.NoError(t, vf.Set(2, i, j, 0.2*math.Exp(-x*x-y*y)))
				}
			}
			require.NoError(t, s.SetVelocity(vf))
			rec, err := s.Evolve(core.EvolveConfig{Method: method, T: 3, Dt: 0.02, RecordEvery: 50})
			require.NoError(t, err)
			defer rec.Release()
			f, err := s.Field()
			require.NoError(t, err)
			v, err := s.Velocity()
			require.NoError(t, err)
			var worstN, worstT float64
			for idx := range lat.Sites() {
				var nn, nv float64
				for c := range 3 {
					nn += f.Comp(c)[idx] * f.Comp(c)[idx]
					nv += f.Comp(c)[idx] * v.Comp(c)[idx]
				}
				worstN = math.Max(worstN, math.Abs(math.Sqrt(nn)-1))
				worstT = math.Max(worstT, math.Abs(nv))
			}
			e := columnFloat(t, rec, "energy")
			t.Logf("%s: max ||n|-1| %.2g, max |n.v| %.2g, energy %.8f -> %.8f", method, worstN, worstT, e[0], e[len(e)-1])
			assert.Less(t, worstN, 1e-13)
			assert.Less(t, worstT, 1e-13)
			assert.InDelta(t, e[0], e[len(e)-1], 1e-3*e[0])
		})
	}
}

// The constrained schemes keep their order: RK4's run-to-run differences fall
// by 16, leapfrog's by 4.
func TestEvolveUnitVectorOrder(t *testing.T) {
	run := func(method string, dt float64) []float64 {
		s := newSim(t, babySkyrme(t), 21, 21, 0.3, 0.3, core.Periodic, []float64{0.05, 0.1}, core.Options{}, 0)
		require.NoError(t, s.Fill(hedgehog(1.5)))
		lat := s.Lattice()
		vf, err := core.NewField(lat, s.Theory().Spec.Fields)
		require.NoError(t, err)
		defer vf.Release()
		for j := range lat.Ny {
			for i := range lat.Nx {
				x, y := lat.X(i), lat.Y(j)
				require.NoError(t, vf.Set(0, i, j, 0.5*math.Exp(-x*x-y*y)))
				require.NoError(t, vf.Set(2, i, j, 0.3*math.Exp(-x*x-y*y)))
			}
		}
		require.NoError(t, s.SetVelocity(vf))
		err = evolveRun(s, core.EvolveConfig{Method: method, T: 1, Dt: dt, RecordEvery: 1000})
		require.NoError(t, err)
		f, err := s.Field()
		require.NoError(t, err)
		var out []float64
		for c := range 3 {
			out = append(out, f.Comp(c)...)
		}
		return out
	}
	for _, c := range []struct {
		method string
		dt     float64
		ratio  float64
	}{{core.EvolveRK4, 0.04, 16}, {core.EvolveLeapfrog, 0.02, 4}} {
		a, b, d := run(c.method, c.dt), run(c.method, c.dt/2), run(c.method, c.dt/4)
		e1, e2 := maxDiff(a, func(i int) float64 { return b[i] }), maxDiff(b, func(i int) float64 { return d[i] })
		t.Logf("%s on the sphere: %.3g, %.3g, ratio %.2f", c.method, e1, e2, e1/e2)
		assert.InDelta(t, c.ratio, e1/e2, 0.2*c.ratio)
	}
}

// Chunks give the bits of one call; a record's snapshot is the field then.
func TestEvolveChunksAndSnapshots(t *testing.T) {
	u, ut := kinkAntikink(0.5)
	mk := func() *core.Simulation {
		s := line(t, sineGordon(t), 201, 0.2, core.Periodic, nil)
		setLine(t, s, false, func(x float64) float64 { return u(x, 0) })
		setLine(t, s, true, func(x float64) float64 { return ut(x, 0) })
		return s
	}
	for _, method := range []string{core.EvolveRK4, core.EvolveLeapfrog} {
		a, b := mk(), mk()
		cfg := core.EvolveConfig{Method: method, T: 3, Dt: 0.05, RecordEvery: 7, Snapshots: true}
		err := evolveRun(a, cfg)
		require.NoError(t, err)
		require.NoError(t, b.StartEvolve(cfg))
		for {
			p, err := b.AdvanceEvolve(5, 0)
			require.NoError(t, err)
			if p.Done {
				assert.Equal(t, 60, p.Step)
				break
			}
		}
		assert.Equal(t, lineValues(t, a), lineValues(t, b))
		assert.Equal(t, a.EvolveRecords(), b.EvolveRecords())
		recs := a.EvolveRecords()
		require.Len(t, recs, 10) // steps 0, 7, ..., 56 and 60
		assert.Equal(t, 3.0, recs[len(recs)-1].T)
		n := 0
		for {
			sn, ok := a.TakeSnapshot()
			if !ok {
				break
			}
			assert.Equal(t, recs[n].T, sn.T)
			assert.Equal(t, recs[n].Step, sn.Step)
			n++
			if !ok || n == len(recs) {
				assert.Equal(t, lineValues(t, a), sn.Field.Comp(0))
			}
			sn.Field.Release()
		}
		assert.Equal(t, len(recs), n)

		// A second evolve continues the clock and the motion.
		err = evolveRun(a, core.EvolveConfig{Method: method, T: 1, Dt: 0.05})
		require.NoError(t, err)
		assert.Equal(t, 4.0, a.Time())
	}
}

// An evolve after a minimize starts at rest; set_velocity overrides that.
func TestEvolveAfterMinimizeStartsAtRest(t *testing.T) {
	s := line(t, phi4(t), 81, 0.1, core.Fixed, []float64{1})
	setLine(t, s, false, func(x float64) float64 { return math.Tanh(1.3 * x) })
	require.NoError(t, s.Start(core.FlowConfig{Tol: 1e-3, MaxSteps: 7}))
	_, err := s.Continue()
	require.NoError(t, err)
	require.NoError(t, s.StartEvolve(core.EvolveConfig{T: 0}))
	rec := s.EvolveRecords()
	require.Len(t, rec, 1)
	assert.Equal(t, 0.0, rec[0].Kinetic)
}

func TestEvolveBadInput(t *testing.T) {
	s := line(t, sineGordon(t), 41, 0.2, core.Periodic, nil)
	setLine(t, s, false, func(x float64) float64 { return 4 * math.Atan(math.Exp(x)) })
	for _, cfg := range []core.EvolveConfig{{T: -1}, {T: math.NaN()}, {T: 1, Dt: math.NaN()}, {T: 1, Dt: -0.1},
		{T: 1, Method: "euler"}, {T: 1, RecordEvery: -2}} {
		err := s.StartEvolve(cfg)
		require.Error(t, err, "%+v", cfg)
		assert.True(t, errs.Is(err, errs.Parameter), "%v", err)
	}
	// NaN velocity: refused, naming the site.
	lat := s.Lattice()
	vf, err := core.NewField(lat, []string{"u"})
	require.NoError(t, err)
	defer vf.Release()
	require.NoError(t, vf.Set(0, 17, 0, math.NaN()))
	err = s.SetVelocity(vf)
	require.Error(t, err)
	assert.True(t, errs.Is(err, errs.Parameter))
	assert.Contains(t, err.Error(), "(17)")
	// wrong shape
	other, err := core.NewField(lat, []string{"a", "b"})
	require.NoError(t, err)
	defer other.Release()
	assert.Error(t, s.SetVelocity(other))
}

// A dt far beyond the stability limit diverges with errs.Divergence naming
// the site and the stage, and leaves the last recorded field.
func TestEvolveDivergence(t *testing.T) {
	s := line(t, sineGordon(t), 101, 0.1, core.Periodic, nil)
	setLine(t, s, false, func(x float64) float64 { return 4 * math.Atan(math.Exp(x)) })
	before := lineValues(t, s)
	err := evolveRun(s, core.EvolveConfig{T: 400, Dt: 0.5, RecordEvery: 100000})
	require.Error(t, err)
	assert.True(t, errs.Is(err, errs.Divergence), "%v", err)
	assert.Contains(t, err.Error(), "stage")
	assert.Contains(t, err.Error(), "site (")
	assert.Equal(t, before, lineValues(t, s))
	assert.Equal(t, 0.0, s.Time())
}

// A cancelled evolution returns errs.Cancelled and can be continued.
func TestEvolveCancel(t *testing.T) {
	s := line(t, sineGordon(t), 2001, 0.02, core.Periodic, nil)
	setLine(t, s, false, func(x float64) float64 { return 4 * math.Atan(math.Exp(x)) })
	require.NoError(t, s.StartEvolve(core.EvolveConfig{T: 1000, Dt: 0.005}))
	go func() { time.Sleep(50 * time.Millisecond); s.Cancel() }()
	_, err := s.AdvanceEvolve(0, 0)
	require.Error(t, err)
	assert.True(t, errs.Is(err, errs.Cancelled), "%v", err)
	p, err := s.AdvanceEvolve(3, 0)
	require.NoError(t, err)
	assert.False(t, p.Done)
}

// A 3D lattice evolves too (the phi^4 wall, boosted along x).
func TestEvolve3D(t *testing.T) {
	n := []int{40, 6, 6}
	lat, err := core.NewLatticeND(n, []float64{0.25, 0.25, 0.25}, []float64{-4.875, 0, 0}, []core.Boundary{core.Fixed, core.Periodic, core.Periodic})
	require.NoError(t, err)
	s, err := core.NewSimulation(backend(0), phi4(t), lat, []float64{1}, core.Options{Form: "consistent"})
	require.NoError(t, err)
	defer s.Close()
	v, g := 0.3, 1/math.Sqrt(1-0.09)
	f, err := core.NewField(lat, []string{"u"})
	require.NoError(t, err)
	defer f.Release()
	vf, err := core.NewField(lat, []string{"u"})
	require.NoError(t, err)
	defer vf.Release()
	col, vcol := f.Comp(0), vf.Comp(0)
	for k := range lat.Nz {
		for j := range lat.Ny {
			for i := range lat.Nx {
				x := lat.X(i)
				idx := (k*lat.Ny+j)*lat.Nx + i
				col[idx] = math.Tanh(g * x)
				c := math.Cosh(g * x)
				vcol[idx] = -g * v / (c * c)
			}
		}
	}
	require.NoError(t, s.SetField(f))
	require.NoError(t, s.SetVelocity(vf))
	rec, err := s.Evolve(core.EvolveConfig{T: 1, RecordEvery: 4})
	require.NoError(t, err)
	defer rec.Release()
	e := columnFloat(t, rec, "energy")
	px := columnFloat(t, rec, "momentum_x")
	py := columnFloat(t, rec, "momentum_y")
	area := float64(lat.Ny*lat.Nz) * 0.25 * 0.25
	t.Logf("3D: energy %.6f -> %.6f per area %.5f (gamma E0 %.5f), P_x/area %.5f", e[0], e[len(e)-1], e[0]/area, g*4/3, px[0]/area)
	assert.InDelta(t, e[0], e[len(e)-1], 1e-5*e[0])
	assert.InDelta(t, g*4/3, e[0]/area, 2e-3)
	assert.InDelta(t, g*v*4/3, px[0]/area, 2e-3)
	assert.InDelta(t, 0, py[len(py)-1], 1e-12)
}

// A saved evolution resumes: Load keeps the velocity as a dynamical one and
// the clock, so the run continued after Load has the bits of the run never
// saved.
func TestEvolveSaveLoadContinues(t *testing.T) {
	u, ut := kinkAntikink(0.5)
	mk := func() *core.Simulation {
		s := line(t, sineGordon(t), 201, 0.2, core.Periodic, nil)
		setLine(t, s, false, func(x float64) float64 { return u(x, 0) })
		setLine(t, s, true, func(x float64) float64 { return ut(x, 0) })
		return s
	}
	a := mk()
	err := evolveRun(a, core.EvolveConfig{T: 1, Dt: 0.05})
	require.NoError(t, err)
	path := t.TempDir() + "/run.arrow"
	require.NoError(t, a.Save(path))
	err = evolveRun(a, core.EvolveConfig{T: 1, Dt: 0.05})
	require.NoError(t, err)
	b, err := core.Load(backend(0), path)
	require.NoError(t, err)
	defer b.Close()
	assert.Equal(t, 1.0, b.Time())
	err = evolveRun(b, core.EvolveConfig{T: 1, Dt: 0.05})
	require.NoError(t, err)
	assert.Equal(t, 2.0, b.Time())
	assert.Equal(t, lineValues(t, a), lineValues(t, b))
}

// evolveRun is Evolve without the history batch (which the caller would release).
func evolveRun(s *core.Simulation, cfg core.EvolveConfig) error {
	if err := s.StartEvolve(cfg); err != nil {
		return err
	}
	_, err := s.AdvanceEvolve(0, 0)
	return err
}
