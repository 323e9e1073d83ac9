package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
)

type site struct{ c, i, j int }

// The consistent gradient is the exact gradient of Energy() (penalty
// included): compare with a fourth-order central difference of Energy()
// under single-site perturbations, at interior, near-boundary and wrapped
// sites.
func TestConsistentGradientIsEnergyGradient(t *testing.T) {
	wobble := func(fill func(x, y float64, out []float64)) func(x, y float64, out []float64) {
		// A smooth perturbation away from any critical point, so gradients are O(1).
		return func(x, y float64, out []float64) {
			fill(x, y, out)
			for c := range out {
				out[c] += 0.2 * math.Sin(0.7*x+float64(c)) * math.Cos(0.9*y-float64(c))
			}
		}
	}
	periodicWave := func(nx, ny int, hx, hy float64) func(x, y float64, out []float64) {
		Lx, Ly := float64(nx)*hx, float64(ny)*hy
		return func(x, y float64, out []float64) {
			kx, ky := 2*math.Pi/Lx, 2*math.Pi/Ly
			out[0] = 0.8 + 0.3*math.Cos(kx*x)
			out[1] = 0.4 * math.Sin(kx*x+ky*y)
			out[2] = 0.5 * math.Sin(ky*y)
			out[3] = 0.3 * math.Cos(2*kx*x-ky*y)
		}
	}
	cases := []struct {
		name     string
		th       *core.Theory
		nx, ny   int
		hx, hy   float64
		boundary core.Boundary
		params   []float64
		penalty  float64
		fill     func(x, y float64, out []float64)
		sites    []site
	}{
		{"baby_skyrme_fixed", babySkyrme(t), 24, 20, 0.3, 0.35, core.Fixed, []float64{1.2, 0.8}, 0, wobble(hedgehog(1)),
			[]site{{0, 11, 10}, {2, 12, 9}, {1, 2, 2}, {0, 2, 10}, {2, 21, 17}, {1, 3, 17}, {0, 12, 3}}},
		{"baby_skyrme_penalty_big", babySkyrme(t), 24, 20, 0.3, 0.35, core.Fixed, []float64{1, 1}, 0.5, wobble(hedgehog(1)),
			[]site{{0, 11, 10}, {1, 2, 2}, {2, 21, 17}, {0, 3, 3}}},
		{"abelian_higgs_fixed", abelianHiggs(t), 22, 26, 0.4, 0.3, core.Fixed, []float64{1.5}, 0, wobble(vortex(1)),
			[]site{{0, 10, 12}, {3, 11, 13}, {2, 2, 2}, {1, 19, 23}, {3, 2, 12}, {0, 3, 22}}},
		{"abelian_higgs_periodic", abelianHiggs(t), 20, 24, 0.5, 0.4, core.Periodic, []float64{0.9}, 0, periodicWave(20, 24, 0.5, 0.4),
			[]site{{0, 0, 0}, {1, 19, 23}, {2, 0, 12}, {3, 10, 0}, {3, 1, 22}, {2, 9, 11}}},
		// The free boundary: every site is free, so corners, edges and the
		// sites whose transposed stencils reach the one-sided edge rows
		// (i, j <= 4 or >= n-5) are checked as well as the inside.
		{"baby_skyrme_free", babySkyrme(t), 24, 20, 0.3, 0.35, core.Free, []float64{1.2, 0.8}, 0, wobble(hedgehog(1)),
			[]site{{0, 0, 0}, {1, 23, 19}, {2, 0, 10}, {0, 1, 9}, {1, 22, 1}, {2, 12, 0}, {0, 3, 4}, {1, 4, 15},
				{2, 19, 16}, {0, 20, 3}, {1, 5, 5}, {2, 11, 10}}},
		{"baby_skyrme_free_penalty_big", babySkyrme(t), 24, 20, 0.3, 0.35, core.Free, []float64{1, 1}, 0.5, wobble(hedgehog(1)),
			[]site{{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {0, 23, 10}, {1, 12, 18}, {2, 11, 10}}},
		{"abelian_higgs_free", abelianHiggs(t), 22, 26, 0.4, 0.3, core.Free, []float64{1.5}, 0, wobble(vortex(1)),
			[]site{{0, 0, 25}, {3, 21, 0}, {1, 1, 12}, {2, 20, 24}, {3, 4, 21}, {0, 17, 4}, {2, 10, 13}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSim(t, c.th, c.nx, c.ny, c.hx, c.hy, c.boundary, c.params, core.Options{Form: "consistent", Penalty: c.penalty}, 0)
			require.NoError(t, s.Fill(c.fill))
			g, err := s.Gradient(false)
			require.NoError(t, err)
			defer g.Release()
			f, err := s.Field()
			require.NoError(t, err)
			cell := c.hx * c.hy
			for _, st := range c.sites {
				col := f.Comp(st.c)
				idx := st.j*c.nx + st.i
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
				want := g.Comp(st.c)[idx] * cell
				t.Logf("site %+v: gradient %.12e, finite difference %.12e", st, want, fd)
				assert.InDelta(t, 0, (want-fd)/math.Max(math.Abs(fd), 1e-3), 1e-7, "site %+v", st)
			}
		})
	}
}

// Gradient flow with a small step never raises the energy.
func TestGradientFlowEnergyDecreases(t *testing.T) {
	for _, form := range []string{"consistent", "continuum"} {
		t.Run(form, func(t *testing.T) {
			s := newSim(t, babySkyrme(t), 40, 40, 0.3, 0.3, core.Fixed, []float64{1, 1}, core.Options{Form: form}, 0)
			require.NoError(t, s.Fill(hedgehog(1.5)))
			hist, err := s.Minimize(core.FlowConfig{Method: core.GradientFlow, Tol: 1e-12, MaxSteps: 300, CheckEvery: 1})
			require.NoError(t, err)
			defer hist.Release()
			e := columnFloat(t, hist, "energy")
			require.Len(t, e, 301)
			for k := 1; k < len(e); k++ {
				require.LessOrEqual(t, e[k], e[k-1], "energy rose at step %d", k)
			}
			assert.Less(t, e[len(e)-1], e[0])
		})
	}
}
