package core_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

// heavyUnit is the kinetic unit (docs/abi.md) of K = m^2 u_t^2 / 2 with m = 2
// for a one-component line: components (u, u_t), energy K, gradient
// (R = dK/du - dM/dt u_t = 0, M = m^2). Written by hand as the front end
// would generate it.
var heavyUnit = lineUnit(0, "return 2.0 * s->phi[1] * s->phi[1];", "out[0] = 0; out[1] = 4.0;", "return 0;")

func withKinetic(t *testing.T) (string, string) {
	return withUnit(t, "//fg-kinetic| ", heavyUnit, "kinetic_density")
}

// A mass m = 2 slows the sine-Gordon dynamics by m: the heavy line at time 2t
// with velocity v/2 is the plain line at time t with velocity v, and with
// dt doubled every RK4 product scales by a power of two, so the fields agree
// bit for bit; the kinetic energy m^2 (v/m)^2/2 is the plain one, and the
// momentum m^2 (v/m).u_x is m times the plain one.
func TestKineticDensityWithAConstantMassRescalesTime(t *testing.T) {
	spec, src := withKinetic(t)
	heavyTh, err := core.ParseTheory(spec, src)
	require.NoError(t, err)
	require.True(t, heavyTh.HasKineticDensity())
	require.Equal(t, strings.TrimSpace(heavyUnit), strings.TrimSpace(heavyTh.KineticUnit()))
	kink := func(x float64) float64 { return 4 * math.Atan(math.Exp(x)) }
	bump := func(x float64) float64 { return 0.3 * math.Exp(-x*x) }
	plain := line(t, sineGordon(t), 200, 0.1, core.Periodic, nil)
	heavy := line(t, heavyTh, 200, 0.1, core.Periodic, nil)
	setLine(t, plain, false, kink)
	setLine(t, plain, true, bump)
	setLine(t, heavy, false, kink)
	setLine(t, heavy, true, func(x float64) float64 { return bump(x) / 2 })
	hp, err := plain.Evolve(core.EvolveConfig{T: 1, Dt: 0.01, RecordEvery: 25})
	require.NoError(t, err)
	defer hp.Release()
	hh, err := heavy.Evolve(core.EvolveConfig{T: 2, Dt: 0.02, RecordEvery: 25})
	require.NoError(t, err)
	defer hh.Release()
	fp, err := plain.Field()
	require.NoError(t, err)
	fh, err := heavy.Field()
	require.NoError(t, err)
	require.Equal(t, fp.Comp(0), fh.Comp(0))
	for _, c := range []struct {
		col    string
		factor float64
	}{{"kinetic", 1}, {"potential", 1}, {"momentum_x", 2}} {
		a, b := columnFloat(t, hp, c.col), columnFloat(t, hh, c.col)
		require.Len(t, b, len(a))
		for k := range a {
			require.InDelta(t, c.factor*a[k], b[k], 1e-12*math.Max(1, math.Abs(a[k])), "%s, record %d", c.col, k)
		}
	}
}

func TestKineticDensitySpecAndSourceGoTogether(t *testing.T) {
	spec, src := withKinetic(t)
	plain, err := os.ReadFile("testdata/sine_gordon.c")
	require.NoError(t, err)
	for _, c := range []struct{ spec, src, want string }{
		{spec, string(plain), "no kinetic unit"},
		{sineGordonSpec, src, "does not declare"},
	} {
		_, err := core.ParseTheory(c.spec, c.src)
		require.Error(t, err)
		require.True(t, errs.Is(err, errs.Spec), err)
		require.Contains(t, err.Error(), c.want)
	}
	th, err := core.ParseTheory(spec, src)
	require.NoError(t, err)
	s := line(t, th, 50, 0.2, core.Periodic, nil)
	setLine(t, s, false, func(x float64) float64 { return 4 * math.Atan(math.Exp(x)) })
	_, err = s.Evolve(core.EvolveConfig{T: 0.2, Method: core.EvolveLeapfrog})
	require.True(t, errs.Is(err, errs.Parameter), err)
	require.Contains(t, err.Error(), "leapfrog")
}
