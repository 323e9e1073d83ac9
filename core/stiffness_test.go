package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/fixtures"
	"github.com/fieldgo/fieldgo/kernels"
)

func TestStiffnessOfTheLaplacianIsAnalytic(t *testing.T) {
	th, err := core.ParseTheory(fixtures.FreeScalarSpec, fixtures.FreeScalarSource)
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

// counting wraps the CPU backend and counts the gradient evaluations and the
// other whole-lattice operations its programs run.
type counting struct {
	kernels.Backend
	grads, passes int
}

type countingProgram struct {
	kernels.Program
	c *counting
}

func (c *counting) Compile(u kernels.Unit) (kernels.Program, error) {
	p, err := c.Backend.Compile(u)
	return &countingProgram{p, c}, err
}

func (p *countingProgram) Gradient(a kernels.GradientArgs) (kernels.Reduction, error) {
	p.c.grads++
	return p.Program.Gradient(a)
}

func (p *countingProgram) Combine(out kernels.Buffer, t ...kernels.Term) error {
	p.c.passes++
	return p.Program.Combine(out, t...)
}

func (p *countingProgram) Constrain(g kernels.Grid, phi, vel kernels.Buffer) error {
	p.c.passes++
	return p.Program.Constrain(g, phi, vel)
}

func (p *countingProgram) Dot(a, b kernels.Buffer) (float64, error) {
	p.c.passes++
	return p.Program.Dot(a, b)
}

func (p *countingProgram) Project(g kernels.Grid, phi, x kernels.Buffer) error {
	p.c.passes++
	return p.Program.Project(g, phi, x)
}

func (p *countingProgram) CombineDots(g kernels.Grid, phi, out, y kernels.Buffer, t ...kernels.Term) (float64, float64, error) {
	p.c.passes++
	return p.Program.CombineDots(g, phi, out, y, t...)
}

// A flow's start costs less than two steps of gradient evaluations (a step
// is four), and a second start from a field the first flow left costs none:
// the estimate is kept until the field or the parameters change otherwise.
func TestStartCostsLessThanTwoStepsAndASecondStartNone(t *testing.T) {
	c := &counting{Backend: backend(0)}
	lat, err := core.CenteredLattice(64, 64, 20.0/63, 20.0/63, core.Fixed)
	require.NoError(t, err)
	s, err := core.NewSimulation(c, babySkyrme(t), lat, []float64{1, 1}, core.Options{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Fill(hedgehog(1)))

	start := func() (grads, passes int) {
		c.grads, c.passes = 0, 0
		require.NoError(t, s.Start(core.FlowConfig{MaxSteps: 10}))
		return c.grads, c.passes
	}
	g, p := start()
	assert.Equal(t, 7, g, "the gradient at the field and six Lanczos steps")
	assert.Less(t, g, 2*4)
	// Besides the gradients, a Lanczos step but the last is one pass
	// (CombineDots: the next vector, projected, with its two products), as
	// is the start vector's projection; the flow's start adds three.
	assert.LessOrEqual(t, p, 5+1+3, "one pass over the lattice per Lanczos step but the last")
	cfg, _ := s.Flow()
	_, err = s.Advance(0, 0)
	require.NoError(t, err)

	g, p = start()
	assert.Zero(t, g, "a second start keeps the estimate")
	assert.LessOrEqual(t, p, 3, "zero the velocity, checkpoint field and velocity")
	again, _ := s.Flow()
	assert.Equal(t, cfg.Dt, again.Dt)

	require.NoError(t, s.SetParams([]float64{1, 2}))
	g, _ = start()
	assert.Equal(t, 7, g, "new parameters, new estimate")

	require.NoError(t, s.Fill(hedgehog(1)))
	g, _ = start()
	assert.Equal(t, 7, g, "a new field, a new estimate")

	s.FieldWritten()
	g, _ = start()
	assert.Equal(t, 7, g, "a field written through a view, a new estimate")
}

// Under a unit-vector constraint a dt beyond the stability limit cannot
// diverge (the projection keeps the field finite): it is refused at the
// start, naming the limit.
func TestUnstableDtUnderAConstraintIsRefused(t *testing.T) {
	h := 20.0 / 63
	s := newSim(t, babySkyrme(t), 64, 64, h, h, core.Fixed, []float64{1, 1}, core.Options{}, 0)
	require.NoError(t, s.Fill(hedgehog(1)))
	err := s.Start(core.FlowConfig{Dt: 5, MaxSteps: 50000})
	require.Error(t, err)
	assert.True(t, errs.Is(err, errs.Parameter), "got %v", err)
	assert.Contains(t, err.Error(), "stability limit")
	lambda, err := s.Stiffness()
	require.NoError(t, err)
	limit := 2 * math.Sqrt2 / math.Sqrt(lambda)
	assert.Contains(t, err2s(s.Start(core.FlowConfig{Dt: 1.1 * limit})), "stable only for dt <")
	require.NoError(t, s.Start(core.FlowConfig{Dt: 0.9 * limit}), "a dt inside the limit runs")
}

// If the flow churns anyway (here the estimate is made wrong on purpose),
// the stall sentinel stops it after a few hundred steps instead of letting it
// run to MaxSteps, and the field left is finite. The O(3) sigma model (Baby
// Skyrme without its Skyrme term) has gradients bounded by the lattice, so a
// too large dt churns on the sphere instead of overflowing.
func TestAFlowThatMakesNoProgressStopsEarly(t *testing.T) {
	h := 20.0 / 63
	s := newSim(t, babySkyrme(t), 64, 64, h, h, core.Fixed, []float64{0, 1}, core.Options{}, 0)
	require.NoError(t, s.Fill(hedgehog(1)))
	s.SetStiffnessEstimate(1e-6)
	require.NoError(t, s.Start(core.FlowConfig{Dt: 5, MaxSteps: 50000}))
	p, err := s.Continue()
	require.Error(t, err)
	assert.True(t, errs.Is(err, errs.Divergence), "got %v", err)
	assert.Contains(t, err.Error(), "makes no progress")
	assert.Less(t, p.Step, 1000, "stopped long before MaxSteps")
	e, err := s.Energy()
	require.NoError(t, err)
	assert.False(t, math.IsNaN(e))
	hist, err := s.History()
	require.NoError(t, err)
	defer hist.Release()
	assert.Positive(t, hist.NumRows(), "the history so far stays readable")

	// A healthy flow is not stopped.
	s = newSim(t, babySkyrme(t), 64, 64, h, h, core.Fixed, []float64{1, 1}, core.Options{}, 0)
	require.NoError(t, s.Fill(hedgehog(1)))
	require.NoError(t, s.Start(core.FlowConfig{Tol: 1e-8, MaxSteps: 5000}))
	p, err = s.Continue()
	require.NoError(t, err)
	assert.True(t, p.Converged)
}

func err2s(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
