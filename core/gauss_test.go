package core_test

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

// lineUnit is the point source of a two-component unit of a line (a field and
// its velocity side by side, as the Gauss and kinetic units have them) with
// the given bodies of fg_energy, fg_gradient and fg_density, and zero partials.
func lineUnit(nDens int, energy, gradient, density string) string {
	return `#ifndef __CUDACC_RTC__
#include <math.h>
#endif
#ifndef FG_FUNC
#define FG_FUNC static inline
#endif
#define FG_NCOMP 2
#define FG_NPARAMS 0
#define FG_NDENS ` + strconv.Itoa(nDens) + `
typedef struct {
    double phi[FG_NCOMP];
    double dx[FG_NCOMP], dy[FG_NCOMP];
    double dxx[FG_NCOMP], dyy[FG_NCOMP], dxy[FG_NCOMP];
    double x, y;
} fg_site;
typedef struct { double unused_; } fg_params;
FG_FUNC double fg_energy(const fg_site* s, const fg_params* p) { (void)s; (void)p; ` + energy + ` }
FG_FUNC void fg_partials(const fg_site* s, const fg_params* p, double* a, double* b, double* c) {
    (void)s; (void)p; a[0] = a[1] = b[0] = b[1] = c[0] = c[1] = 0;
}
FG_FUNC void fg_gradient(const fg_site* s, const fg_params* p, double* out) { (void)s; (void)p; ` + gradient + ` }
FG_FUNC double fg_density(int k, const fg_site* s, const fg_params* p) { (void)k; (void)s; (void)p; ` + density + ` }
`
}

// speedUnit is a phase-space unit (docs/abi.md) for the one-component
// sine-Gordon line whose density is the velocity u_t itself: its max |G| is
// max |u_t| and its L2 norm sqrt(2 kinetic), which checks the plumbing (field
// and velocity side by side, the density, the columns) without a gauge theory.
var speedUnit = lineUnit(1, "return 0;", "out[0] = out[1] = 0;", "return s->phi[1];")

// withUnit is the sine-Gordon line's spec with the flag set and its point
// source with unit embedded behind prefix.
func withUnit(t *testing.T, prefix, unit, flag string) (string, string) {
	t.Helper()
	src, err := os.ReadFile("testdata/sine_gordon.c")
	require.NoError(t, err)
	var b strings.Builder
	b.Write(src)
	for line := range strings.SplitSeq(strings.TrimSuffix(unit, "\n"), "\n") {
		b.WriteString(prefix + line + "\n")
	}
	return strings.Replace(sineGordonSpec, `"gradient": "derived"`, `"gradient": "derived", "`+flag+`": true`, 1), b.String()
}

func withGauss(t *testing.T) (string, string) {
	return withUnit(t, "//fg-gauss| ", speedUnit, "gauss_law")
}

func TestGaussColumnsRecordTheUnitsDensity(t *testing.T) {
	spec, src := withGauss(t)
	th, err := core.ParseTheory(spec, src)
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(speedUnit), strings.TrimSpace(th.GaussUnit()))
	require.False(t, th.ThreeD(), "the unit's lines are comments to the theory's own source")
	s := line(t, th, 200, 0.1, core.Periodic, nil)
	setLine(t, s, false, func(x float64) float64 { return 4 * math.Atan(math.Exp(x)) })
	setLine(t, s, true, func(x float64) float64 { return 0.3 * math.Exp(-x*x) })
	for _, method := range []string{core.EvolveRK4, core.EvolveLeapfrog} {
		hist, err := s.Evolve(core.EvolveConfig{Method: method, T: 2, Dt: 0.02, RecordEvery: 20})
		require.NoError(t, err)
		names := hist.Schema().Fields()
		require.Equal(t, []string{core.GaussMaxColumn, core.GaussL2Column}, []string{names[len(names)-2].Name, names[len(names)-1].Name})
		kin, l2, gmax := columnFloat(t, hist, "kinetic"), columnFloat(t, hist, core.GaussL2Column), columnFloat(t, hist, core.GaussMaxColumn)
		hist.Release()
		for k := range kin {
			require.InEpsilon(t, math.Sqrt(2*kin[k]), l2[k], 1e-12, "record %d", k)
			require.Greater(t, gmax[k], 0.0)
		}
		recs := s.EvolveRecords()
		v, err := s.Velocity()
		require.NoError(t, err)
		m := 0.0
		for _, x := range v.Comp(0) {
			m = max(m, math.Abs(x))
		}
		require.Equal(t, m, recs[len(recs)-1].GaussMax)
	}
}

func TestGaussLawSpecAndSourceGoTogether(t *testing.T) {
	spec, src := withGauss(t)
	plain, err := os.ReadFile("testdata/sine_gordon.c")
	require.NoError(t, err)
	for _, c := range []struct{ spec, src, want string }{
		{spec, string(plain), "no phase-space unit"},
		{sineGordonSpec, src, "does not declare"},
		{strings.Replace(spec, `"densities": []`, `"densities": ["gauss_l2"]`, 1), src, "history columns"},
	} {
		_, err := core.ParseTheory(c.spec, c.src)
		require.Error(t, err)
		require.True(t, errs.Is(err, errs.Spec), err)
		require.Contains(t, err.Error(), c.want)
	}
	// without a Gauss law: no columns
	s := line(t, sineGordon(t), 50, 0.2, core.Periodic, nil)
	setLine(t, s, false, func(x float64) float64 { return 4 * math.Atan(math.Exp(x)) })
	hist, err := s.Evolve(core.EvolveConfig{T: 0.2})
	require.NoError(t, err)
	defer hist.Release()
	require.Empty(t, hist.Schema().FieldIndices(core.GaussL2Column))
}
