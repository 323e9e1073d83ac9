package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
)

// A free massless scalar, e = 1/2 |grad phi|^2: its continuum gradient is
// -laplacian(phi), whose stiffest lattice mode is the checkerboard with
// eigenvalue 2 * 16/(3 h^2) for the fourth-order stencil.
const freeScalar = `
#ifndef FG_FUNC
#define FG_FUNC static inline
#endif
#define FG_NCOMP 1
#define FG_NPARAMS 0
#define FG_NDENS 0
typedef struct { double phi[1], dx[1], dy[1], dxx[1], dyy[1], dxy[1]; double x, y; } fg_site;
typedef struct { double unused_; } fg_params;
FG_FUNC double fg_energy(const fg_site* s, const fg_params* p) { (void)p; return 0.5 * (s->dx[0] * s->dx[0] + s->dy[0] * s->dy[0]); }
FG_FUNC void fg_partials(const fg_site* s, const fg_params* p, double* a, double* b, double* c) { (void)p; a[0] = 0; b[0] = s->dx[0]; c[0] = s->dy[0]; }
FG_FUNC void fg_gradient(const fg_site* s, const fg_params* p, double* out) { (void)p; out[0] = -(s->dxx[0] + s->dyy[0]); }
FG_FUNC double fg_density(int k, const fg_site* s, const fg_params* p) { (void)k; (void)s; (void)p; return 0; }
`

func TestStiffnessOfTheLaplacianIsAnalytic(t *testing.T) {
	th, err := core.ParseTheory(`{"name": "free", "fields": ["phi"], "params": [], "densities": [], "constraint": "", "gradient": "hand"}`, freeScalar)
	require.NoError(t, err)
	h := 0.1
	s := newSim(t, th, 32, 32, h, h, core.Periodic, nil, core.Options{Form: "continuum"}, 0)
	require.NoError(t, s.Fill(func(x, y float64, out []float64) { out[0] = math.Sin(x) }))
	lambda, err := s.Stiffness()
	require.NoError(t, err)
	want := 2 * 16 / (3 * h * h)
	// |Hv|/|v| never exceeds the top eigenvalue of this symmetric operator, and
	// the modes near the checkerboard are close to it, so power iteration
	// approaches it from below within a few per cent (RK4's margin between the
	// omega*dt = 2.5 we choose and its limit 2.83 covers 28% in lambda).
	assert.LessOrEqual(t, lambda, want*(1+1e-9))
	assert.GreaterOrEqual(t, lambda, 0.95*want)
}

func TestDefaultDtRespectsTheSkyrmionsStiffness(t *testing.T) {
	h := 20.0 / 127
	s := newSim(t, babySkyrme(t), 128, 128, h, h, core.Fixed, []float64{1, 1}, core.Options{}, 0)
	require.NoError(t, s.Fill(hedgehog(1)))
	lambda, err := s.Stiffness()
	require.NoError(t, err)
	// The Skyrme term stiffens the core well beyond the Laplacian's 3.3/h.
	assert.Greater(t, h*math.Sqrt(lambda), 5.0)
	require.NoError(t, s.Start(core.FlowConfig{}))
	cfg, ok := s.Flow()
	require.True(t, ok)
	assert.Less(t, cfg.Dt, h/2)
	assert.InDelta(t, 2.5, cfg.Dt*math.Sqrt(lambda), 1e-9, "omega*dt sits inside RK4's stability interval")
	// An explicit dt is taken as given.
	require.NoError(t, s.Start(core.FlowConfig{Dt: 0.01}))
	cfg, _ = s.Flow()
	assert.Equal(t, 0.01, cfg.Dt)
}
