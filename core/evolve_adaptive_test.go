package core_test

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

// kinkAntikinkSim is the sine-Gordon kink-antikink (v = 0.5) at t = 0 on a
// periodic line of length 40 and spacing h.
func kinkAntikinkSim(t *testing.T, h float64, form ...string) *core.Simulation {
	u, ut := kinkAntikink(0.5)
	s := line(t, sineGordon(t), int(40/h+0.5)+1, h, core.Periodic, nil, form...)
	setLine(t, s, false, func(x float64) float64 { return u(x, 0) })
	setLine(t, s, true, func(x float64) float64 { return ut(x, 0) })
	return s
}

// The Dormand-Prince pair on the exact kink-antikink: against the same
// lattice's solution (RK4 at dt = 5e-4, itself converged to 2e-14) the
// error at t = 4 falls in proportion to rtol (the propagated solution is of
// fifth order and its steps go as rtol^(1/5), so its global error as
// rtol^(5/5)), while the steps grow as rtol^(-1/5), 1.585 a decade. At the
// default rtol the steps are the stability limit's and the error against
// the exact solution is the lattice's, as RK4's.
func TestEvolveRK45KinkAntikinkConvergence(t *testing.T) {
	const h, T = 0.2, 4.0
	ref, _ := evolveSG(t, core.EvolveRK4, h, 0.0005, T)
	rtols := []float64{1e-9, 1e-10, 1e-11, 1e-12}
	var errsAt, steps []float64
	for _, rtol := range rtols {
		s := kinkAntikinkSim(t, h)
		require.NoError(t, evolveRun(s, core.EvolveConfig{Method: core.EvolveRK45, T: T, Rtol: rtol, RecordEvery: 1 << 20}))
		assert.Equal(t, T, s.Time())
		recs := s.EvolveRecords()
		require.Len(t, recs, 2) // the start and the end
		last := recs[1]
		e := maxDiff(lineValues(t, s), func(i int) float64 { return ref[i] })
		t.Logf("rtol %g: |u - u_ref| %.3g, %d steps, %d rejected, dt %.4g", rtol, e, last.Step, last.Rejected, last.Dt)
		errsAt, steps = append(errsAt, e), append(steps, float64(last.Step))
		assert.Less(t, e, 20*rtol)
		assert.LessOrEqual(t, last.Rejected, 5)
	}
	for k := 1; k < len(rtols); k++ {
		er, sr := errsAt[k-1]/errsAt[k], steps[k]/steps[k-1]
		t.Logf("a decade of rtol: error / %.2f, steps x %.3f (10^(1/5) = 1.585)", er, sr)
		assert.InDelta(t, 10, er, 4, "the error must fall as rtol")
		assert.InDelta(t, math.Pow(10, 0.2), sr, 0.12, "the steps must grow as rtol^(-1/5)")
	}

	u, _ := kinkAntikink(0.5)
	s := kinkAntikinkSim(t, h)
	rec, err := s.Evolve(core.EvolveConfig{Method: core.EvolveRK45, T: T})
	require.NoError(t, err)
	defer rec.Release()
	lat := s.Lattice()
	exact := maxDiff(lineValues(t, s), func(i int) float64 { return u(lat.X(i), T) })
	rk4, _ := evolveSG(t, core.EvolveRK4, h, h/4, T)
	rk4Exact := maxDiff(rk4, func(i int) float64 { return u(lat.X(i), T) })
	dts := columnFloat(t, rec, "dt")
	t.Logf("default rtol: |u - exact| %.3g (RK4 at dt = h/4: %.3g), dt %.4g, %d records", exact, rk4Exact, dts[len(dts)-1], rec.NumRows())
	assert.InDelta(t, rk4Exact, exact, 0.02*rk4Exact, "the lattice's error, not the steps'")
}

// Energy conservation improves with the tolerance: a sine-Gordon breather
// (omega = 0.8, period 7.85) in the consistent form, whose semi-discrete
// energy is exactly conserved, so that its drift is the integrator's; over
// t = 20 it falls as rtol, 100-fold for two decades.
func TestEvolveRK45EnergyConservation(t *testing.T) {
	const w, h = 0.8, 0.2
	k := math.Sqrt(1 - w*w)
	rtols := []float64{1e-8, 1e-10, 1e-12}
	var drifts []float64
	for _, rtol := range rtols {
		s := line(t, sineGordon(t), 201, h, core.Periodic, nil, "consistent")
		setLine(t, s, false, func(x float64) float64 { return 0 })
		setLine(t, s, true, func(x float64) float64 { return 4 * k / math.Cosh(k*x) })
		rec, err := s.Evolve(core.EvolveConfig{Method: core.EvolveRK45, T: 20, Rtol: rtol, RecordDt: 0.25})
		require.NoError(t, err)
		e := columnFloat(t, rec, "energy")
		tt := columnFloat(t, rec, "t")
		rec.Release()
		require.Len(t, e, 81)
		for i, ti := range tt {
			assert.Equal(t, 0.25*float64(i), ti, "records at the requested times")
		}
		drifts = append(drifts, drift(e)/e[0])
		t.Logf("breather over t = 20, rtol %g: relative energy drift %.3g", rtol, drifts[len(drifts)-1])
	}
	assert.Greater(t, drifts[0]/drifts[1], 30.0)
	assert.Greater(t, drifts[1]/drifts[2], 30.0)
	assert.Less(t, drifts[2], 1e-11)
}

// The phi^4 kink boosted to v = 0.5 keeps its speed and gamma E0 under
// adaptive steps, as under RK4 (TestEvolveBoostedPhi4Kink).
func TestEvolveRK45BoostedPhi4Kink(t *testing.T) {
	const v, h, x0 = 0.5, 0.025, -2.0
	g := 1 / math.Sqrt(1-v*v)
	s := line(t, phi4(t), 961, h, core.Fixed, []float64{1})
	setLine(t, s, false, func(x float64) float64 { return math.Tanh(g * (x - x0)) })
	setLine(t, s, true, func(x float64) float64 { c := math.Cosh(g * (x - x0)); return -g * v / (c * c) })
	p0 := kinkZero(t, s)
	const T = 6.0
	rec, err := s.Evolve(core.EvolveConfig{Method: core.EvolveRK45, T: T, RecordDt: 0.5})
	require.NoError(t, err)
	defer rec.Release()
	speed := (kinkZero(t, s) - p0) / T
	energy := columnFloat(t, rec, "energy")
	steps := rec.Column(0).(*array.Int64).Value(int(rec.NumRows()) - 1)
	t.Logf("speed %.9f, energy %.9f .. %.9f (gamma E0 = %.9f), %d steps", speed, energy[0], energy[len(energy)-1], g*4/3, steps)
	assert.InDelta(t, v, speed, 1e-6)
	for _, e := range energy {
		assert.InDelta(t, g*4/3, e, 1e-6)
	}
	assert.Equal(t, T, s.Time())
}

// Under the constraint the pair's steps keep |n| = 1 and n.v = 0, and the
// energy of a spinning, pushed skyrmion to the tolerance's order.
func TestEvolveRK45UnitVector(t *testing.T) {
	s := newSim(t, babySkyrme(t), 33, 33, 0.25, 0.25, core.Periodic, []float64{0.05, 0.1}, core.Options{Form: "consistent"}, 0)
	require.NoError(t, s.Fill(hedgehog(1.5)))
	lat := s.Lattice()
	vf, err := core.NewField(lat, s.Theory().Spec.Fields)
	require.NoError(t, err)
	defer vf.Release()
	f, _ := s.Field()
	for j := range lat.Ny {
		for i := range lat.Nx {
			x, y := lat.X(i), lat.Y(j)
			n1, _ := f.At(0, i, j)
			n2, _ := f.At(1, i, j)
			require.NoError(t, vf.Set(0, i, j, -0.4*n2+0.3*math.Exp(-x*x-y*y)))
			require.NoError(t, vf.Set(1, i, j, 0.4*n1))
			require.NoError(t, vf.Set(2, i, j, 0.2*math.Exp(-x*x-y*y)))
		}
	}
	require.NoError(t, s.SetVelocity(vf))
	rec, err := s.Evolve(core.EvolveConfig{Method: core.EvolveRK45, T: 3, Rtol: 1e-8, RecordEvery: 50})
	require.NoError(t, err)
	defer rec.Release()
	f, err = s.Field()
	require.NoError(t, err)
	vel, err := s.Velocity()
	require.NoError(t, err)
	var worstN, worstT float64
	for idx := range lat.Sites() {
		var nn, nv float64
		for c := range 3 {
			nn += f.Comp(c)[idx] * f.Comp(c)[idx]
			nv += f.Comp(c)[idx] * vel.Comp(c)[idx]
		}
		worstN = math.Max(worstN, math.Abs(math.Sqrt(nn)-1))
		worstT = math.Max(worstT, math.Abs(nv))
	}
	e := columnFloat(t, rec, "energy")
	t.Logf("rk45 on the sphere: max ||n|-1| %.2g, max |n.v| %.2g, energy %.10f -> %.10f", worstN, worstT, e[0], e[len(e)-1])
	assert.Less(t, worstN, 1e-13)
	assert.Less(t, worstT, 1e-13)
	assert.InDelta(t, e[0], e[len(e)-1], 1e-6*e[0])
}

// LLG with adaptive steps: a uniform magnet precesses at gamma B (damped:
// gamma B/(1+alpha^2), the angle relaxing as the exact solution says).
func TestEvolveLLGAdaptive(t *testing.T) {
	const b, theta0, gamma, T = 2.0, 1.0, 1.5, 4.0
	for _, alpha := range []float64{0, 0.3} {
		s := uniformMagnet(t, b, theta0)
		require.NoError(t, evolveRun(s, core.EvolveConfig{Method: core.EvolveLLG, Adaptive: true, T: T, Rtol: 1e-8, RecordDt: 0.05,
			Gamma: gamma, Alpha: alpha}))
		recs := s.EvolveRecords()
		require.Len(t, recs, 81)
		var worst float64
		var st, sp, stt, stp float64
		phase, prev := 0.0, 0.0
		for k, r := range recs {
			assert.Equal(t, 0.05*float64(k), r.T)
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
		}
		n := float64(len(recs))
		freq := (n*stp - st*sp) / (n*stt - st*st)
		last := recs[len(recs)-1]
		t.Logf("alpha %g: frequency %.12g (gamma B/(1+alpha^2) = %.12g), error %.3g, %d steps, %d rejected", alpha, freq,
			gamma*b/(1+alpha*alpha), worst, last.Step, last.Rejected)
		assert.InDelta(t, gamma*b/(1+alpha*alpha), freq, 1e-7)
		assert.Less(t, worst, 1e-7)
	}
}

// Imaginary time with the norm kept, adaptively: the trapped condensate's
// ground state, the same as RK4's.
func TestEvolveGPEImaginaryAdaptive(t *testing.T) {
	mk := func() *core.Simulation {
		return gpeLine(t, 81, 0.1, core.Fixed, []float64{0, 1, 0}, func(x float64) (float64, float64) { return math.Exp(-x * x / 4), 0 })
	}
	a, b := mk(), mk()
	require.NoError(t, evolveRun(a, core.EvolveConfig{Method: core.EvolveGPEImaginary, T: 8, KeepNorm: true, RecordEvery: 1 << 20}))
	require.NoError(t, evolveRun(b, core.EvolveConfig{Method: core.EvolveGPEImaginary, Adaptive: true, Rtol: 1e-9, T: 8, KeepNorm: true}))
	ra, rb := a.EvolveRecords(), b.EvolveRecords()
	fa, fb := lineValues(t, a), lineValues(t, b)
	t.Logf("ground state: energy %.12f (rk4, %d steps), %.12f (rk45, %d steps); |psi_a - psi_b| %.3g", ra[len(ra)-1].Potential,
		ra[len(ra)-1].Step, rb[len(rb)-1].Potential, rb[len(rb)-1].Step, maxDiff(fa, func(i int) float64 { return fb[i] }))
	assert.InDelta(t, ra[len(ra)-1].Potential, rb[len(rb)-1].Potential, 1e-9)
	assert.InDelta(t, rb[0].Norm, rb[len(rb)-1].Norm, 1e-12*rb[0].Norm)
	assert.Less(t, maxDiff(fa, func(i int) float64 { return fb[i] }), 1e-6)
}

// Chunks give the bits of one call; records land on their times exactly
// (the default: even times) and the snapshots with them; a second evolve
// continues the clock.
func TestEvolveRK45ChunksAndRecords(t *testing.T) {
	for _, method := range []string{core.EvolveRK45, core.EvolveLLG} {
		mk := func() *core.Simulation {
			if method == core.EvolveLLG {
				return uniformMagnet(t, 2, 1)
			}
			return kinkAntikinkSim(t, 0.2)
		}
		a, b := mk(), mk()
		cfg := core.EvolveConfig{Method: method, Adaptive: true, T: 3, Rtol: 1e-9, Snapshots: true}
		require.NoError(t, evolveRun(a, cfg))
		require.NoError(t, b.StartEvolve(cfg))
		for {
			p, err := b.AdvanceEvolve(3, 0)
			require.NoError(t, err)
			assert.True(t, p.Adaptive)
			assert.Equal(t, 3.0, p.TEnd)
			if p.Done {
				break
			}
		}
		fa, _ := a.Field()
		fb, _ := b.Field()
		assert.Equal(t, fa.Comp(0), fb.Comp(0), method)
		recs := a.EvolveRecords()
		assert.Equal(t, recs, b.EvolveRecords())
		n := len(recs) - 1
		require.GreaterOrEqual(t, n, 1)
		for k, r := range recs {
			assert.Equal(t, 3*float64(k)/float64(n), r.T, "record %d at an even time", k)
		}
		assert.Equal(t, 3.0, recs[n].T)
		for k := 0; ; k++ {
			sn, ok := a.TakeSnapshot()
			if !ok {
				assert.Equal(t, len(recs), k)
				break
			}
			assert.Equal(t, recs[k].T, sn.T)
			sn.Field.Release()
		}
		cfg2, ok := a.EvolveConfig()
		require.True(t, ok)
		assert.Equal(t, 1e-9, cfg2.Rtol)
		assert.InDelta(t, 1e-12, cfg2.Atol, 1e-27)
		assert.Greater(t, cfg2.Dt, 0.0)
		require.NoError(t, evolveRun(a, core.EvolveConfig{Method: method, Adaptive: true, T: 0.5, RecordEvery: 4}))
		assert.Equal(t, 3.5, a.Time())
		r2 := a.EvolveRecords()
		assert.Equal(t, 3.0, r2[0].T)
		assert.Equal(t, 3.5, r2[len(r2)-1].T)
		for _, r := range r2[1 : len(r2)-1] {
			assert.Zero(t, r.Step%4, "records every 4 accepted steps")
		}
	}
}

// A step below the floor stops the run with errs.StepSize naming the time
// and the step; the field and velocity are the last accepted step's, the
// history readable.
func TestEvolveRK45StepFloor(t *testing.T) {
	s := kinkAntikinkSim(t, 0.2)
	// The steps of rtol 1e-12 are about 0.01 (TestEvolveRK45KinkAntikinkConvergence);
	// a floor of 0.03 is met at the first step.
	err := evolveRun(s, core.EvolveConfig{Method: core.EvolveRK45, T: 1, Rtol: 1e-12, Dt: 0.06, DtMin: 0.03, RecordEvery: 1})
	require.Error(t, err)
	assert.True(t, errs.Is(err, errs.StepSize), "%v", err)
	assert.Contains(t, err.Error(), "t=0 (step 0)")
	assert.Contains(t, err.Error(), "dt_min=0.03")
	assert.Zero(t, s.Time())
	u, _ := kinkAntikink(0.5)
	lat := s.Lattice()
	assert.Zero(t, maxDiff(lineValues(t, s), func(i int) float64 { return u(lat.X(i), 0) }))
	rec, err := s.EvolveHistory()
	require.NoError(t, err)
	assert.Equal(t, int64(1), rec.NumRows())
	rec.Release()
	p, err := s.EvolveProgress()
	require.NoError(t, err)
	assert.True(t, p.Done)
	assert.Positive(t, p.Rejected)

}

func TestEvolveAdaptiveBadInput(t *testing.T) {
	s := line(t, sineGordon(t), 41, 0.2, core.Periodic, nil)
	setLine(t, s, false, func(x float64) float64 { return 4 * math.Atan(math.Exp(x)) })
	for _, c := range []struct {
		cfg  core.EvolveConfig
		want string
	}{
		{core.EvolveConfig{T: 1, Method: core.EvolveRK45, Rtol: -1e-6}, "rtol must be positive"},
		{core.EvolveConfig{T: 1, Method: core.EvolveRK45, Rtol: math.NaN()}, "rtol must be positive"},
		{core.EvolveConfig{T: 1, Method: core.EvolveRK45, Atol: math.Inf(1)}, "atol must be positive"},
		{core.EvolveConfig{T: 1, Method: core.EvolveRK45, Atol: -1}, "atol must be positive"},
		{core.EvolveConfig{T: 1, Method: core.EvolveRK45, DtMin: math.NaN()}, "dt_min must be positive"},
		{core.EvolveConfig{T: 1, Method: core.EvolveRK45, RecordDt: -0.5}, "record_dt must be positive"},
		{core.EvolveConfig{T: 1, Method: core.EvolveRK4, Rtol: 1e-6}, "rtol applies to adaptive steps"},
		{core.EvolveConfig{T: 1, Method: core.EvolveLeapfrog, Adaptive: true}, "adaptive steps are method \"rk45\""},
		{core.EvolveConfig{T: 1, Method: core.EvolveRK45, RecordDt: 0.1, RecordEvery: 3}, "exclusive"},
		{core.EvolveConfig{T: 1, Method: core.EvolveRK45, Dt: 0.01, DtMin: 0.01}, "dt_min=0.01 must be smaller"},
		{core.EvolveConfig{T: 1, Method: core.EvolveRK45, Rtol: 1e-15}, "rtol=1e-15 is below what float64 storage resolves"},
	} {
		err := s.StartEvolve(c.cfg)
		require.Error(t, err, "%+v", c.cfg)
		assert.True(t, errs.Is(err, errs.Parameter), "%v", err)
		assert.Contains(t, err.Error(), c.want)
	}
}
