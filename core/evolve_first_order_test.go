package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

// zeemanSpec is testdata/zeeman.c: a unit 3-vector n in the uniform field b
// along z, e = |grad n|^2/2 - b n_z (H_eff = -dE/dn = b z).
const zeemanSpec = `{"name": "zeeman", "fields": ["nx", "ny", "nz"], "params": ["b"], "densities": [], "constraint": "unit_vector", "gradient": "derived"}`

// gpeLineSpec is testdata/gpe_line.c: psi = psi_re + i psi_im with
// e = |psi'|^2/2 + w^2 x^2 |psi|^2/2 + g/2 (|psi|^2 - c)^2, density |psi|^2.
const gpeLineSpec = `{"name": "gpe_line", "fields": ["psi_re", "psi_im"], "params": ["g", "w", "c"], "densities": ["density"], "constraint": "", "gradient": "derived"}`

// uniformMagnet is a periodic 8 x 8 plane of zeeman in the field b with n at
// the angle theta0 to z, in the xz plane.
func uniformMagnet(t *testing.T, b, theta0 float64) *core.Simulation {
	t.Helper()
	lat, err := core.CenteredLattice(8, 8, 0.5, 0.5, core.Periodic)
	require.NoError(t, err)
	s, err := core.NewSimulation(backend(0), theory(t, zeemanSpec, "zeeman.c"), lat, []float64{b}, core.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	f, err := core.NewField(lat, s.Theory().Spec.Fields)
	require.NoError(t, err)
	defer f.Release()
	for j := range lat.Ny {
		for i := range lat.Nx {
			require.NoError(t, f.Set(0, i, j, math.Sin(theta0)))
			require.NoError(t, f.Set(2, i, j, math.Cos(theta0)))
		}
	}
	require.NoError(t, s.SetField(f))
	return s
}

// llgExact is the uniform solution of the LLG equation in the field B along
// z: n precesses at gamma B/(1+alpha^2) while tan(theta/2) decays at
// alpha gamma B/(1+alpha^2).
func llgExact(gamma, alpha, b, theta0, t float64) [3]float64 {
	w := gamma * b / (1 + alpha*alpha)
	th := 2 * math.Atan(math.Tan(theta0/2)*math.Exp(-alpha*w*t))
	return [3]float64{math.Sin(th) * math.Cos(w*t), math.Sin(th) * math.Sin(w*t), math.Cos(th)}
}

// llgError runs the uniform magnet to T with step dt and returns the largest
// deviation of the recorded mean magnetisation from llgExact, the precession
// frequency fitted to the recorded phase of (m_x, m_y) and the largest
// ||n| - 1| at the end.
func llgError(t *testing.T, gamma, alpha, dt, T float64) (worst, freq, unit float64) {
	const b, theta0 = 2.0, 1.0
	s := uniformMagnet(t, b, theta0)
	require.NoError(t, evolveRun(s, core.EvolveConfig{Method: core.EvolveLLG, T: T, Dt: dt, RecordEvery: 1, Gamma: gamma, Alpha: alpha}))
	recs := s.EvolveRecords()
	var st, sp, stt, stp float64 // least squares of the unwrapped phase against t
	phase, prev := 0.0, 0.0
	for k, r := range recs {
		e := llgExact(gamma, alpha, b, theta0, r.T)
		for c := range 3 {
			worst = math.Max(worst, math.Abs(r.Magnetisation[c]-e[c]))
		}
		p := math.Atan2(r.Magnetisation[1], r.Magnetisation[0])
		if k > 0 {
			phase += math.Remainder(p-prev, 2*math.Pi)
		}
		prev = p
		st, sp, stt, stp = st+r.T, sp+phase, stt+r.T*r.T, stp+r.T*phase
		assert.Zero(t, r.Kinetic)
	}
	n := float64(len(recs))
	freq = (n*stp - st*sp) / (n*stt - st*st)
	f, err := s.Field()
	require.NoError(t, err)
	for i := range f.Comp(0) {
		unit = math.Max(unit, math.Abs(math.Sqrt(f.Comp(0)[i]*f.Comp(0)[i]+f.Comp(1)[i]*f.Comp(1)[i]+f.Comp(2)[i]*f.Comp(2)[i])-1))
	}
	return
}

// Uniform precession in a uniform field: the frequency is gamma B, the
// solution that of the exact precession to RK4's fourth order, |n| = 1.
func TestEvolveLLGPrecession(t *testing.T) {
	const gamma, T = 1.5, 4.0
	e1, f1, u1 := llgError(t, gamma, 0, 0.04, T)
	e2, _, _ := llgError(t, gamma, 0, 0.02, T)
	t.Logf("precession: error %.3g (dt 0.04), %.3g (dt 0.02): order %.2f; frequency %.12g (gamma B = 3)", e1, e2, math.Log2(e1/e2), f1)
	assert.InDelta(t, gamma*2, f1, 1e-5, "RK4's phase error, omega (omega dt)^4/120 = 5e-6")
	assert.Less(t, e1, 5e-5)
	assert.InDelta(t, 4, math.Log2(e1/e2), 0.5, "fourth order")
	assert.Less(t, u1, 1e-14)
}

// Damping: the angle to the field relaxes as tan(theta/2) = tan(theta0/2)
// exp(-alpha gamma B t/(1+alpha^2)) while n precesses at gamma B/(1+alpha^2).
func TestEvolveLLGDamping(t *testing.T) {
	const gamma, T = 1.0, 6.0
	for _, alpha := range []float64{0.1, 0.5} {
		e1, f1, _ := llgError(t, gamma, alpha, 0.04, T)
		e2, _, _ := llgError(t, gamma, alpha, 0.02, T)
		t.Logf("alpha %g: error %.3g (dt 0.04), %.3g (dt 0.02): order %.2f; frequency %.12g", alpha, e1, e2, math.Log2(e1/e2), f1)
		assert.InDelta(t, gamma*2/(1+alpha*alpha), f1, 1e-6)
		assert.Less(t, e1, 1e-5)
		assert.InDelta(t, 4, math.Log2(e1/e2), 0.6, "fourth order")
	}
}

// gpeLine is gpe_line on a fixed line of n sites of spacing h centred on 0
// with psi(x) = (re(x), im(x)).
func gpeLine(t *testing.T, n int, h float64, b core.Boundary, params []float64, psi func(x float64) (float64, float64)) *core.Simulation {
	t.Helper()
	s := line(t, theory(t, gpeLineSpec, "gpe_line.c"), n, h, b, params)
	lat := s.Lattice()
	f, err := core.NewField(lat, s.Theory().Spec.Fields)
	require.NoError(t, err)
	defer f.Release()
	for i := range lat.Nx {
		re, im := psi(lat.X(i))
		require.NoError(t, f.Set(0, i, 0, re))
		require.NoError(t, f.Set(1, i, 0, im))
	}
	require.NoError(t, s.SetField(f))
	return s
}

// darkSoliton is the dark soliton of i psi' = -psi”/2 + (|psi|^2 - 1) psi
// (gpe_line with g = c = 1, w = 0) moving at speed v: its density dips to
// v^2 at x = v t.
func darkSoliton(v float64) func(x float64) (float64, float64) {
	k := math.Sqrt(1 - v*v)
	return func(x float64) (float64, float64) { return k * math.Tanh(k*x), v }
}

// densityMinimum is where |psi|^2 is smallest on a line, from a parabola
// through the three smallest samples.
func densityMinimum(t *testing.T, s *core.Simulation) float64 {
	f, err := s.Field()
	require.NoError(t, err)
	re, im := f.Comp(0), f.Comp(1)
	lat := s.Lattice()
	best := 2
	rho := func(i int) float64 { return re[i]*re[i] + im[i]*im[i] }
	for i := 2; i < lat.Nx-2; i++ {
		if rho(i) < rho(best) {
			best = i
		}
	}
	a, b, c := rho(best-1), rho(best), rho(best+1)
	return lat.X(best) + lat.Hx*0.5*(a-c)/(a-2*b+c)
}

// A dark soliton of depth 1 - v^2 moves at v: the minimum of the density is
// at v t, the norm and the energy are conserved.
func TestEvolveGPEDarkSoliton(t *testing.T) {
	for _, v := range []float64{0.3, 0.6} {
		s := gpeLine(t, 321, 0.125, core.Fixed, []float64{1, 0, 1}, darkSoliton(v))
		const T = 4.0
		require.NoError(t, evolveRun(s, core.EvolveConfig{Method: core.EvolveGPE, T: T, RecordEvery: 100}))
		x := densityMinimum(t, s)
		recs := s.EvolveRecords()
		r0, r1 := recs[0], recs[len(recs)-1]
		t.Logf("v %g: soliton at %.8f after t=%g (speed %.7f), norm %.12g -> %.12g, energy %.12g -> %.12g, dt %g",
			v, x, T, x/T, r0.Norm, r1.Norm, r0.Potential, r1.Potential, s.EvolveDt())
		assert.InDelta(t, v, x/T, 2e-4, "the speed of a soliton of depth %g", 1-v*v)
		assert.InDelta(t, 1, r1.Norm/r0.Norm, 5e-8, "norm")
		assert.InDelta(t, r0.Potential, r1.Potential, 1e-8*math.Abs(r0.Potential)+1e-10, "energy")
	}
}

// Imaginary time with the norm kept reaches the oscillator's ground state
// pi^(-1/4) exp(-x^2/2) (gpe_line with g = 0, w = 1, norm 1) from a wider
// Gaussian, and its energy 1/2.
func TestEvolveGPEImaginaryOscillator(t *testing.T) {
	const h = 0.1
	n0 := 0.0 // the norm h sum |psi|^2 of exp(-x^2/4) on the 161 sites: the evolution keeps the initial norm
	for i := range 161 {
		x := (float64(i) - 80) * h
		n0 += h * math.Exp(-x*x/2)
	}
	s := gpeLine(t, 161, h, core.Fixed, []float64{0, 1, 0}, func(x float64) (float64, float64) {
		return math.Exp(-x*x/4) / math.Sqrt(n0), 0
	})
	require.NoError(t, evolveRun(s, core.EvolveConfig{Method: core.EvolveGPEImaginary, T: 10, KeepNorm: true}))
	recs := s.EvolveRecords()
	last := recs[len(recs)-1]
	g, err := s.Field()
	require.NoError(t, err)
	lat := s.Lattice()
	worst := maxDiff(g.Comp(0), func(i int) float64 { return math.Pow(math.Pi, -0.25) * math.Exp(-lat.X(i)*lat.X(i)/2) })
	t.Logf("oscillator: max |psi - psi_0| %.3g, energy %.12g, norm %.15g", worst, last.Potential, last.Norm)
	assert.Less(t, worst, 5e-6, "the stencils' error at h = 0.1")
	assert.InDelta(t, 0.5, last.Potential, 1e-5)
	assert.InDelta(t, 1, last.Norm, 1e-12)
	assert.Less(t, maxAbs(g.Comp(1)), 1e-300+1e-15)
}

func maxAbs(a []float64) float64 {
	m := 0.0
	for _, v := range a {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// Imaginary time is the gradient flow of E: it reaches the ground state
// minimize finds (gpe_line with g = 1, w = 1, c = 2: a trapped condensate at
// chemical potential 2), and so does imaginary time with the norm kept from a
// Gaussian of that norm. The line is free: no held sites keep their initial
// values.
func TestEvolveGPEImaginaryMatchesMinimize(t *testing.T) {
	params := []float64{1, 1, 2}
	start := func(x float64) (float64, float64) { return 1.2 * math.Exp(-x*x/6), 0 }
	ref := gpeLine(t, 81, 0.2, core.Free, params, start)
	_, err := ref.Minimize(core.FlowConfig{Tol: 1e-10})
	require.NoError(t, err)
	rf, err := ref.Field()
	require.NoError(t, err)
	want := append([]float64(nil), rf.Comp(0)...)
	norm := 0.0
	for _, v := range want {
		norm += v * v * 0.2
	}

	free := gpeLine(t, 81, 0.2, core.Free, params, start)
	require.NoError(t, evolveRun(free, core.EvolveConfig{Method: core.EvolveGPEImaginary, T: 40}))
	ff, err := free.Field()
	require.NoError(t, err)
	d1 := maxDiff(ff.Comp(0), func(i int) float64 { return want[i] })

	kept := gpeLine(t, 81, 0.2, core.Free, params, func(x float64) (float64, float64) {
		return math.Sqrt(norm/math.Sqrt(math.Pi)) * math.Exp(-x*x/2), 0
	})
	require.NoError(t, evolveRun(kept, core.EvolveConfig{Method: core.EvolveGPEImaginary, T: 40, KeepNorm: true}))
	kf, err := kept.Field()
	require.NoError(t, err)
	d2 := maxDiff(kf.Comp(0), func(i int) float64 { return want[i] })
	t.Logf("against minimize (peak %.6f, norm %.9f): imaginary time %.3g, with the norm kept %.3g", want[40], norm, d1, d2)
	assert.Greater(t, want[40], 1.0, "a condensate, not the vacuum")
	assert.Less(t, d1, 1e-7)
	assert.Less(t, d2, 1e-7)
}

// First-order methods refuse the theories they do not apply to and bad
// parameters, with errs.Parameter naming why.
func TestEvolveFirstOrderBadInput(t *testing.T) {
	magnet := uniformMagnet(t, 1, 0.5)
	gpe := gpeLine(t, 41, 0.2, core.Fixed, []float64{1, 0, 1}, darkSoliton(0.5))
	sg := line(t, sineGordon(t), 41, 0.2, core.Periodic, nil)
	setLine(t, sg, false, func(x float64) float64 { return 4 * math.Atan(math.Exp(x)) })
	for _, c := range []struct {
		s    *core.Simulation
		cfg  core.EvolveConfig
		want string
	}{
		{gpe, core.EvolveConfig{Method: core.EvolveLLG, T: 1}, "unit-vector theory of 3 components"},
		{sg, core.EvolveConfig{Method: core.EvolveLLG, T: 1}, "unit-vector theory of 3 components"},
		{magnet, core.EvolveConfig{Method: core.EvolveGPE, T: 1}, "complex fields"},
		{sg, core.EvolveConfig{Method: core.EvolveGPEImaginary, T: 1}, "(name_re, name_im) pairs"},
		{magnet, core.EvolveConfig{Method: core.EvolveLLG, T: 1, Alpha: -0.1}, "alpha"},
		{magnet, core.EvolveConfig{Method: core.EvolveLLG, T: 1, Gamma: math.NaN()}, "gamma"},
		{magnet, core.EvolveConfig{Method: core.EvolveLLG, T: 1, Gamma: -1}, "gamma"},
		{magnet, core.EvolveConfig{Method: core.EvolveLLG, T: 1, KeepNorm: true}, "keep_norm"},
		{magnet, core.EvolveConfig{Method: core.EvolveLLG, T: 1, Dt: 10}, "stability limit"},
	} {
		err := c.s.StartEvolve(c.cfg)
		require.Error(t, err, "%+v", c.cfg)
		assert.True(t, errs.Is(err, errs.Parameter), "%v", err)
		assert.Contains(t, err.Error(), c.want)
	}
	_, err := core.ComplexPairs([]string{"psi_re", "psi_im", "phi_im", "phi_re"})
	assert.ErrorContains(t, err, `"phi_im", "phi_re"`)
	names, err := core.ComplexPairs([]string{"a_re", "a_im", "b_re", "b_im"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, names)
}
