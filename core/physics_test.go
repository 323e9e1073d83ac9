package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
)

// relax runs the default flow to tol and returns the final progress.
func relax(t *testing.T, s *core.Simulation, tol float64, maxSteps int) core.Progress {
	t.Helper()
	require.NoError(t, s.Start(core.FlowConfig{Tol: tol, MaxSteps: maxSteps}))
	p, err := s.Continue()
	require.NoError(t, err)
	require.True(t, p.Converged, "not converged: %+v", p)
	return p
}

func boxLattice(L, h float64) int { return int(L/h+0.5) + 1 }

// At critical coupling the vortex energy is pi N; with fourth-order stencils
// the error falls by 16 when the spacing halves (we ask for at least 12).
func TestAbelianHiggsVortexFourthOrder(t *testing.T) {
	errAt := func(h float64) float64 {
		n := boxLattice(16, h)
		s := newSim(t, abelianHiggs(t), n, n, h, h, core.Fixed, []float64{1}, core.Options{}, 0)
		require.NoError(t, s.Fill(vortex(1)))
		p := relax(t, s, 1e-7, 20000)
		t.Logf("h=%v: E/pi - 1 = %.3e after %d steps", h, p.Energy/math.Pi-1, p.Step)
		return math.Abs(p.Energy - math.Pi)
	}
	coarse, fine := errAt(0.4), errAt(0.2)
	assert.Less(t, fine, 1e-4)
	assert.GreaterOrEqual(t, coarse/fine, 12.0, "error ratio %.2f for halved spacing", coarse/fine)
}

func TestAbelianHiggsWinding2(t *testing.T) {
	h := 0.3
	n := boxLattice(16, h)
	s := newSim(t, abelianHiggs(t), n, n, h, h, core.Fixed, []float64{1}, core.Options{}, 0)
	require.NoError(t, s.Fill(vortex(2)))
	p := relax(t, s, 1e-6, 20000)
	t.Logf("E/2pi - 1 = %.3e after %d steps", p.Energy/(2*math.Pi)-1, p.Step)
	assert.InDelta(t, 2*math.Pi, p.Energy, 2e-3*2*math.Pi)
	flux, err := s.Integral("flux")
	require.NoError(t, err)
	assert.InDelta(t, 2, flux, 5e-3)
}

// Baby Skyrme, kappa = mass = 1: charge 1 and Derrick's theorem (the Skyrme
// term's energy equals the potential's) at the minimum.
func TestBabySkyrmeChargeAndDerrick(t *testing.T) {
	h := 0.1
	n := boxLattice(16, h)
	s := newSim(t, babySkyrme(t), n, n, h, h, core.Fixed, []float64{1, 1}, core.Options{}, 0)
	require.NoError(t, s.Fill(hedgehog(1)))
	p := relax(t, s, 1e-7, 5000)
	q, err := s.Integral("charge")
	require.NoError(t, err)
	e4, err := s.Integral("skyrme")
	require.NoError(t, err)
	e0, err := s.Integral("potential")
	require.NoError(t, err)
	t.Logf("%d steps, E=%.10f, Q=%.8f, E4=%.8f, E0=%.8f", p.Step, p.Energy, q, e4, e0)
	assert.InDelta(t, 1, math.Abs(q), 1e-3)
	assert.InDelta(t, 0, (e4-e0)/e0, 1e-3)
	// The density field integrates to the integral.
	d, err := s.Density("charge")
	require.NoError(t, err)
	defer d.Release()
	sum, _ := d.Sum(0)
	assert.InDelta(t, q, sum*h*h, 1e-12)
}

// The continuum gradient (the hand-derived fg_gradient) agrees with the
// exact gradient of the discrete energy (built from fg_partials, itself
// checked against finite differences of the energy below) to O(h^4) on a
// smooth field: this checks the Euler–Lagrange derivation.
func TestContinuumGradientMatchesEnergy(t *testing.T) {
	for _, c := range []struct {
		name string
		th   *core.Theory
		fill func(x, y float64, out []float64)
		p    []float64
	}{
		{"baby_skyrme", babySkyrme(t), smoothHedgehog(1.3), []float64{1.1, 0.7}},
		{"abelian_higgs", abelianHiggs(t), vortex(1), []float64{1.3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			diff := func(h float64) float64 {
				n := boxLattice(8, h)
				grads := map[string][]float64{}
				for _, form := range []string{"continuum", "consistent"} {
					s := newSim(t, c.th, n, n, h, h, core.Fixed, c.p, core.Options{Form: form, NoPenalty: true}, 0)
					require.NoError(t, s.Fill(c.fill))
					g, err := s.Gradient(false)
					require.NoError(t, err)
					var all []float64
					for k := 0; k < g.NComp(); k++ {
						all = append(all, g.Comp(k)...)
					}
					grads[form] = all
					g.Release()
				}
				// Compare away from the boundary, where the consistent form
				// sees the truncated energy sum.
				m := 0.0
				nc := len(grads["continuum"]) / (n * n)
				for k := 0; k < nc; k++ {
					for j := 6; j < n-6; j++ {
						for i := 6; i < n-6; i++ {
							idx := k*n*n + j*n + i
							m = math.Max(m, math.Abs(grads["continuum"][idx]-grads["consistent"][idx]))
						}
					}
				}
				return m
			}
			d1, d2 := diff(0.1), diff(0.05)
			t.Logf("max |continuum - consistent|: %.3e at h=0.1, %.3e at h=0.05", d1, d2)
			assert.Less(t, d2, 5e-2)
			assert.Greater(t, d1/d2, 10.0)
		})
	}
}

// On the free boundary no site is held, so the relaxed skyrmion does not
// remember the hedgehog it started from; on the fixed boundary the held outer
// layers keep the wider start's tail and the two energies differ. 56 x 56
// sites at h = 0.28 (side 15.4), Baby Skyrme with kappa = mass = 1.
func TestFreeBoundaryForgetsTheStartingField(t *testing.T) {
	const n, h = 56, 0.28
	energy := func(b core.Boundary, size float64) float64 {
		s := newSim(t, babySkyrme(t), n, n, h, h, b, []float64{1, 1}, core.Options{}, 0)
		require.NoError(t, s.Fill(hedgehog(size)))
		return relax(t, s, 1e-8, 20000).Energy
	}
	free1, free2 := energy(core.Free, 1), energy(core.Free, 2)
	fixed1, fixed2 := energy(core.Fixed, 1), energy(core.Fixed, 2)
	t.Logf("free: %.12f %.12f; fixed: %.12f %.12f", free1, free2, fixed1, fixed2)
	assert.InDelta(t, 0, (free1-free2)/free1, 1e-10)
	assert.Greater(t, math.Abs(fixed1-fixed2)/fixed1, 1e-3)
}
