package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/kernels"
)

// coupled3D is testdata/coupled_3d.c: two components whose energy couples
// their z derivatives to the others' x and y derivatives and depends on z,
// e = |grad u|^2/2 + |grad v|^2/2 + k (1 + z/10) dz u dx v + 0.3 u dz v dy u
// + (1 - u^2 - v^2)^2 / 2.
func coupled3D(t testing.TB) *core.Theory {
	return theory(t, `{"name": "coupled_3d", "fields": ["u", "v"], "params": ["k"], "densities": [], "constraint": "", "gradient": "derived"}`,
		"coupled_3d.c")
}

// On a line, a 3D box and a plane with boundaries per axis, the consistent
// gradient is the exact gradient of Energy() (penalty included) divided by
// the cell: compared with a fourth-order central difference of Energy()
// under single-site perturbations, next to held layers, across periodic
// wraps and inside.
func TestConsistentGradientIsEnergyGradientBeyondPlanar(t *testing.T) {
	type at struct{ c, i, j, k int }
	cases := []struct {
		name    string
		th      *core.Theory
		n       []int
		h       []float64
		bounds  []core.Boundary
		penalty float64
		sites   []at
	}{
		{"3d_fixed_periodic_fixed", phi4(t), []int{11, 9, 10}, []float64{0.3, 0.35, 0.4}, []core.Boundary{core.Fixed, core.Periodic, core.Fixed}, 0,
			[]at{{0, 5, 4, 5}, {0, 2, 0, 2}, {0, 8, 8, 7}, {0, 3, 1, 3}, {0, 2, 4, 6}, {0, 7, 7, 2}}},
		{"3d_periodic_penalty_big", phi4(t), []int{9, 10, 11}, []float64{0.4, 0.3, 0.35}, []core.Boundary{core.Periodic}, 0.5,
			[]at{{0, 0, 0, 0}, {0, 8, 9, 10}, {0, 4, 5, 0}, {0, 1, 2, 9}}},
		{"3d_default_penalty", phi4(t), []int{10, 9, 9}, []float64{0.3, 0.3, 0.3}, []core.Boundary{core.Fixed}, core.DefaultPenalty,
			[]at{{0, 2, 2, 2}, {0, 5, 4, 6}, {0, 7, 6, 2}}},
		// Two components coupled through their z derivatives, with an
		// energy that depends on z: every z partial enters.
		{"3d_coupled_fixed_periodic", coupled3D(t), []int{10, 9, 11}, []float64{0.35, 0.3, 0.4}, []core.Boundary{core.Periodic, core.Fixed, core.Periodic}, 0.5,
			[]at{{0, 0, 2, 0}, {1, 9, 6, 10}, {1, 4, 4, 5}, {0, 5, 3, 9}, {1, 2, 2, 1}}},
		{"3d_coupled_fixed", coupled3D(t), []int{9, 10, 10}, []float64{0.3, 0.3, 0.35}, []core.Boundary{core.Fixed}, 0,
			[]at{{0, 2, 2, 2}, {1, 6, 7, 7}, {0, 4, 5, 3}, {1, 3, 2, 4}}},
		{"1d_fixed_penalty", phi4(t), []int{16}, []float64{0.3}, []core.Boundary{core.Fixed}, 0.5, []at{{0, 2, 0, 0}, {0, 7, 0, 0}, {0, 13, 0, 0}}},
		{"1d_periodic", phi4(t), []int{14}, []float64{0.35}, []core.Boundary{core.Periodic}, 0, []at{{0, 0, 0, 0}, {0, 13, 0, 0}, {0, 6, 0, 0}}},
		{"1d_coupled", coupled3D(t), []int{15}, []float64{0.3}, []core.Boundary{core.Fixed}, 0.5, []at{{0, 2, 0, 0}, {1, 8, 0, 0}, {1, 12, 0, 0}}},
		// The free boundary: every site is free, so corners, edges and the
		// sites whose transposed stencils reach the one-sided edge rows are
		// checked as well as the inside.
		{"3d_free_coupled", coupled3D(t), []int{11, 10, 12}, []float64{0.35, 0.3, 0.4}, []core.Boundary{core.Free}, 0,
			[]at{{0, 0, 0, 0}, {1, 10, 9, 11}, {0, 1, 5, 0}, {1, 5, 1, 10}, {0, 4, 3, 2}, {1, 6, 5, 6}, {0, 9, 8, 4}, {1, 2, 9, 1}}},
		{"3d_free_penalty_big", coupled3D(t), []int{10, 11, 10}, []float64{0.3, 0.3, 0.35}, []core.Boundary{core.Free}, 0.5,
			[]at{{0, 0, 10, 9}, {1, 1, 1, 1}, {0, 5, 5, 5}, {1, 9, 0, 3}}},
		{"1d_free_penalty", phi4(t), []int{16}, []float64{0.3}, []core.Boundary{core.Free}, 0.5, []at{{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 4, 0, 0}, {0, 15, 0, 0}, {0, 8, 0, 0}}},
		{"2d_per_axis", phi4(t), []int{12, 10}, []float64{0.3, 0.4}, []core.Boundary{core.Periodic, core.Fixed}, 0.5, []at{{0, 0, 2, 0}, {0, 11, 7, 0}, {0, 6, 5, 0}}},
		{"2d_coupled_per_axis", coupled3D(t), []int{11, 12}, []float64{0.35, 0.3}, []core.Boundary{core.Fixed, core.Periodic}, 0, []at{{1, 2, 0, 0}, {0, 8, 11, 0}, {1, 5, 6, 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := make([]float64, len(c.n))
			for a := range o {
				o[a] = -float64(c.n[a]-1) * c.h[a] / 2
			}
			lat, err := core.NewLatticeND(c.n, c.h, o, c.bounds)
			require.NoError(t, err)
			s, err := core.NewSimulation(backend(0), c.th, lat, []float64{1.3},
				core.Options{Form: "consistent", Penalty: c.penalty, NoPenalty: c.penalty == 0})
			require.NoError(t, err)
			defer s.Close()
			require.Equal(t, kernels.Consistent, s.Form())
			f, err := core.NewField(lat, c.th.Spec.Fields)
			require.NoError(t, err)
			for comp := range c.th.Spec.Fields {
				u := f.Comp(comp)
				for idx := range u {
					i, j, k := idx%lat.Nx, (idx/lat.Nx)%lat.Ny, idx/(lat.Nx*lat.Ny)
					x, y, z := lat.X(i), lat.Y(j), lat.Z(k)
					a := float64(comp)
					u[idx] = math.Tanh(0.9*x-a) + 0.3*math.Sin(1.1*y-0.4*x+a) + 0.25*math.Cos(1.3*z+0.5*y-a)
				}
			}
			require.NoError(t, s.SetField(f))
			f.Release()
			g, err := s.Gradient(false)
			require.NoError(t, err)
			defer g.Release()
			field, err := s.Field()
			require.NoError(t, err)
			for _, st := range c.sites {
				col := field.Comp(st.c)
				idx := (st.k*lat.Ny+st.j)*lat.Nx + st.i
				orig := col[idx]
				energyAt := func(d float64) float64 {
					col[idx] = orig + d
					e, err := s.Energy()
					require.NoError(t, err)
					return e
				}
				eps := 1e-3
				fd := (8*(energyAt(eps)-energyAt(-eps)) - (energyAt(2*eps) - energyAt(-2*eps))) / (12 * eps)
				col[idx] = orig
				got := g.Comp(st.c)[idx] * lat.Cell()
				t.Logf("site %+v: gradient %.12e, finite difference %.12e", st, got, fd)
				assert.InDelta(t, 0, (got-fd)/math.Max(math.Abs(fd), 1e-3), 1e-7, "site %+v", st)
				assert.Greater(t, math.Abs(fd), 1e-4, "site %+v: the check needs a nonzero gradient", st)
			}
		})
	}
}

// The phi^4 wall in a box fixed along x and periodic along y and z relaxes
// with the consistent form to energy 4/3 per unit area, and agrees with the
// continuum form's wall to the stencils' order.
func TestPhi4WallIn3DConsistentForm(t *testing.T) {
	h := 0.2
	wall := func(form string) float64 {
		lat, err := core.NewLatticeND([]int{boxLattice(12, h), 6, 6}, []float64{h, h, h}, []float64{-6, 0, 0},
			[]core.Boundary{core.Fixed, core.Periodic, core.Periodic})
		require.NoError(t, err)
		s, err := core.NewSimulation(backend(0), phi4(t), lat, []float64{1}, core.Options{Form: form})
		require.NoError(t, err)
		defer s.Close()
		setKink(t, s)
		p := relax(t, s, 1e-8, 20000)
		perArea := p.Energy / (6 * h * 6 * h)
		t.Logf("%s: E/A - 4/3 = %.3e after %d steps", form, perArea-4.0/3, p.Step)
		return perArea
	}
	cons, cont := wall("consistent"), wall("continuum")
	assert.InDelta(t, 4.0/3, cons, 3e-4)
	assert.InDelta(t, cont, cons, 1e-4)
}

// A field constant along z on a 3D box has the planar energy of the
// consistent form (doubler penalty included) times the z extent, and the
// planar gradient on every plane, on the free boundary (one-sided z stencils
// of a constant line are zero) and on a box fixed along x and y and periodic
// along z; relaxed, it stays the planar soliton. (A planar theory, baby
// Skyrme, run on the 3D grid.)
func TestConsistentFormIn3DMatchesThePlane(t *testing.T) {
	n, nz, h := 24, 6, 0.3
	for _, c := range []struct {
		plane core.Boundary
		box   []core.Boundary
	}{
		{core.Free, []core.Boundary{core.Free}},
		{core.Fixed, []core.Boundary{core.Fixed, core.Fixed, core.Periodic}},
	} {
		t.Run(c.plane.String(), func(t *testing.T) {
			plane := newSim(t, babySkyrme(t), n, n, h, h, c.plane, []float64{1, 1}, core.Options{Form: "consistent"}, 0)
			require.NoError(t, plane.Fill(hedgehog(1.2)))
			lat, err := core.NewLatticeND([]int{n, n, nz}, []float64{h, h, h}, []float64{plane.Lattice().Ox, plane.Lattice().Oy, 0}, c.box)
			require.NoError(t, err)
			box, err := core.NewSimulation(backend(0), babySkyrme(t), lat, []float64{1, 1}, core.Options{Form: "consistent"})
			require.NoError(t, err)
			defer box.Close()
			require.Greater(t, box.Penalty(), 0.0)
			pf, err := plane.Field()
			require.NoError(t, err)
			f, err := core.NewField(lat, babySkyrme(t).Spec.Fields)
			require.NoError(t, err)
			for comp := range 3 {
				for k := range nz {
					copy(f.Comp(comp)[k*n*n:(k+1)*n*n], pf.Comp(comp))
				}
			}
			require.NoError(t, box.SetField(f))
			f.Release()
			e2, err := plane.Energy()
			require.NoError(t, err)
			e3, err := box.Energy()
			require.NoError(t, err)
			assert.InDelta(t, e2*float64(nz)*h, e3, 1e-12*math.Abs(e3))
			g2, err := plane.Gradient(true)
			require.NoError(t, err)
			defer g2.Release()
			g3, err := box.Gradient(true)
			require.NoError(t, err)
			defer g3.Release()
			for comp := range 3 {
				for k := range nz {
					for idx, v := range g2.Comp(comp) {
						require.InDelta(t, v, g3.Comp(comp)[k*n*n+idx], 1e-10*(1+math.Abs(v)), "component %d, plane %d, site %d", comp, k, idx)
					}
				}
			}
			p2 := relax(t, plane, 1e-6, 20000)
			p3 := relax(t, box, 1e-6, 20000)
			assert.InDelta(t, p2.Energy*float64(nz)*h, p3.Energy, 1e-6*p3.Energy)
		})
	}
}
