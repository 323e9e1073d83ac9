package core_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

// phi4Spec is the phi^4 theory of testdata/phi4_3d.c, a point source with z
// derivatives (FG_DIM 3): e = |grad u|^2/2 + lam (1 - u^2)^2 / 2. Its kink
// u = tanh(x) has energy 4/3 per unit area (per unit length of a line).
const phi4Spec = `{"name": "phi4", "fields": ["u"], "params": ["lam"], "densities": [], "constraint": "", "gradient": "derived"}`

func phi4(t testing.TB) *core.Theory { return theory(t, phi4Spec, "phi4_3d.c") }

// simND makes a simulation of th on a lattice of len(n) axes centred on 0.
func simND(t testing.TB, th *core.Theory, n []int, h float64, bounds []core.Boundary, threads int) *core.Simulation {
	t.Helper()
	hs, o := make([]float64, len(n)), make([]float64, len(n))
	for a := range n {
		hs[a], o[a] = h, -float64(n[a]-1)*h/2
	}
	lat, err := core.NewLatticeND(n, hs, o, bounds)
	require.NoError(t, err)
	s, err := core.NewSimulation(backend(threads), th, lat, []float64{1}, core.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// setKink sets u = tanh(1.3 x) (a wall too wide, relaxed to tanh(x)) on every site.
func setKink(t testing.TB, s *core.Simulation) {
	t.Helper()
	lat := s.Lattice()
	f, err := core.NewField(lat, []string{"u"})
	require.NoError(t, err)
	defer f.Release()
	u := f.Comp(0)
	for idx := range u {
		u[idx] = math.Tanh(1.3 * lat.X(idx%lat.Nx))
	}
	require.NoError(t, s.SetField(f))
}

// A phi^4 domain wall in a box fixed along x and periodic along y and z has
// energy 4/3 per unit area, with the fourth-order stencils' error falling
// by 16 when the spacing halves; the kink on a line has the same energy.
func TestPhi4WallIn3DAndKinkIn1D(t *testing.T) {
	const want = 4.0 / 3
	wall := func(h float64) float64 {
		s := simND(t, phi4(t), []int{boxLattice(12, h), 6, 6}, h, []core.Boundary{core.Fixed, core.Periodic, core.Periodic}, 0)
		setKink(t, s)
		p := relax(t, s, 1e-9, 20000)
		perArea := p.Energy / (6 * h * 6 * h)
		t.Logf("3D wall h=%v: E/A - 4/3 = %.3e after %d steps", h, perArea-want, p.Step)
		return perArea
	}
	kink := func(h float64) float64 {
		s := simND(t, phi4(t), []int{boxLattice(12, h)}, h, []core.Boundary{core.Fixed}, 0)
		setKink(t, s)
		p := relax(t, s, 1e-9, 50000)
		t.Logf("1D kink h=%v: E - 4/3 = %.3e after %d steps", h, p.Energy-want, p.Step)
		return p.Energy
	}
	coarse, fine := wall(0.2), wall(0.1)
	assert.InDelta(t, want, fine, 2e-5)
	assert.GreaterOrEqual(t, math.Abs(coarse-want)/math.Abs(fine-want), 12.0)
	k := kink(0.1)
	assert.InDelta(t, want, k, 2e-5)
	assert.InDelta(t, fine, k, 1e-10, "the wall per unit area is the kink")
}

// A field that does not depend on z has, on a 3D lattice periodic along z,
// the planar energy times the z extent, and the planar gradient on every
// plane; the 3D theory on the plane sees dz = 0.
func TestFieldConstantAlongZ(t *testing.T) {
	h, n, nz := 0.25, 25, 7
	fill := func(s *core.Simulation) {
		lat := s.Lattice()
		f, err := core.NewField(lat, []string{"u"})
		require.NoError(t, err)
		defer f.Release()
		u := f.Comp(0)
		for idx := range u {
			i, j := idx%lat.Nx, (idx/lat.Nx)%lat.Ny
			x, y := lat.X(i), lat.Y(j)
			u[idx] = math.Tanh(x) * math.Tanh(0.7*y+0.2*x)
		}
		require.NoError(t, s.SetField(f))
	}
	plane := newSim(t, phi4(t), n, n, h, h, core.Fixed, []float64{1}, core.Options{}, 0)
	fill(plane)
	e2, err := plane.Energy()
	require.NoError(t, err)
	box := simND(t, phi4(t), []int{n, n, nz}, h, []core.Boundary{core.Fixed, core.Fixed, core.Periodic}, 0)
	fill(box)
	e3, err := box.Energy()
	require.NoError(t, err)
	assert.InDelta(t, e2*float64(nz)*h, e3, 1e-12*math.Abs(e3))
	g2, err := plane.Gradient(false)
	require.NoError(t, err)
	defer g2.Release()
	g3, err := box.Gradient(false)
	require.NoError(t, err)
	defer g3.Release()
	for k := range nz {
		for idx, v := range g2.Comp(0) {
			// The z stencils of a constant line are zero to rounding, not
			// exactly (FG_D2 of five equal values): agreement to 1e-12.
			require.InDelta(t, v, g3.Comp(0)[k*n*n+idx], 1e-12*(1+math.Abs(v)), "gradient at plane %d, site %d", k, idx)
		}
	}
}

// Reductions on a 3D lattice are the same bits for any thread count.
func TestDeterminism3D(t *testing.T) {
	run := func(threads int) (float64, float64) {
		s := simND(t, phi4(t), []int{21, 9, 7}, 0.3, []core.Boundary{core.Fixed, core.Periodic, core.Periodic}, threads)
		setKink(t, s)
		require.NoError(t, s.Start(core.FlowConfig{MaxSteps: 30, Tol: 1e-14}))
		p, err := s.Continue()
		require.NoError(t, err)
		return p.Energy, p.MaxGrad
	}
	e1, m1 := run(1)
	e3, m3 := run(3)
	assert.Equal(t, math.Float64bits(e1), math.Float64bits(e3))
	assert.Equal(t, math.Float64bits(m1), math.Float64bits(m3))
}

// The free boundary is one for every axis: set per axis it is refused by name.
func TestBeyondPlanarRefusals(t *testing.T) {
	_, err := core.NewLatticeND([]int{8, 8, 8}, []float64{0.1, 0.1, 0.1}, []float64{0, 0, 0}, []core.Boundary{core.Free, core.Periodic, core.Fixed})
	assert.True(t, errs.Is(err, errs.Lattice), "%v", err)
	assert.Contains(t, fmt.Sprint(err), "free boundary is one for every axis")
}
