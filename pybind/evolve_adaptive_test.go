package pybind

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/kernels/cpu"
)

// Adaptive steps (core/evolve_adaptive.go) on the GPU against the CPU: the
// pair's stages, combinations, maxima and Constrain run as Program
// operations, so the same controller sees error norms equal to rounding and
// takes the same steps. Second order on a line and under the constraint on
// a plane (the centripetal term on the device), LLG with damping, imaginary
// time with the norm kept. Skipped without a GPU.
func TestAdaptiveEvolveOnCUDAMatchesCPU(t *testing.T) {
	gpuB, err := cudaBackend()
	if err != nil {
		t.Skip("no GPU: ", err)
	}
	cpuB := cpu.New(cpu.Options{})
	sg := evolveTheory(t, evSineGordon, "sine_gordon.c")
	bs := evolveTheory(t, evBabySkyrme, "baby_skyrme.c")
	gpe := evolveTheory(t, evGPELine, "gpe_line.c")
	lineLat, err := core.NewLatticeND([]int{401}, []float64{0.1}, []float64{-20}, []core.Boundary{core.Periodic})
	require.NoError(t, err)
	planeLat, err := core.CenteredLattice(64, 64, 0.2, 0.2, core.Periodic)
	require.NoError(t, err)
	gpeLat, err := core.NewLatticeND([]int{321}, []float64{0.125}, []float64{-20}, []core.Boundary{core.Fixed})
	require.NoError(t, err)
	breather := func(lat core.Lattice, f, v *core.Field) {
		k := math.Sqrt(1 - 0.64)
		for i := range lat.Nx {
			f.Comp(0)[i], v.Comp(0)[i] = 0, 4*k/math.Cosh(k*lat.X(i))
		}
	}
	skyrmion := func(spin bool) func(lat core.Lattice, f, v *core.Field) {
		return func(lat core.Lattice, f, v *core.Field) {
			for j := range lat.Ny {
				for i := range lat.Nx {
					x, y := lat.X(i), lat.Y(j)
					r, th := math.Hypot(x, y), math.Atan2(y, x)
					fr := math.Pi * (1 - math.Tanh(r/1.5))
					k := j*lat.Nx + i
					n1, n2 := math.Sin(fr)*math.Cos(th), math.Sin(fr)*math.Sin(th)
					f.Comp(0)[k], f.Comp(1)[k], f.Comp(2)[k] = n1, n2, math.Cos(fr)
					if spin {
						gs := math.Exp(-x*x - y*y)
						v.Comp(0)[k], v.Comp(1)[k], v.Comp(2)[k] = -0.4*n2+0.3*gs, 0.4*n1, 0.2*gs
					}
				}
			}
		}
	}
	trapped := func(lat core.Lattice, f, _ *core.Field) {
		for i := range lat.Nx {
			f.Comp(0)[i] = 1.2 * math.Exp(-lat.X(i)*lat.X(i)/6)
		}
	}
	for _, c := range []struct {
		name   string
		th     *core.Theory
		lat    core.Lattice
		params []float64
		fill   func(core.Lattice, *core.Field, *core.Field)
		cfg    core.EvolveConfig
	}{
		{"rk45_sine_gordon_line", sg, lineLat, nil, breather, core.EvolveConfig{Method: core.EvolveRK45, T: 4, Rtol: 1e-10}},
		{"rk45_baby_skyrme_plane", bs, planeLat, []float64{0.3, 0.3}, skyrmion(true), core.EvolveConfig{Method: core.EvolveRK45, T: 1, Rtol: 1e-8}},
		{"llg_plane", bs, planeLat, []float64{0.3, 0.3}, skyrmion(false),
			core.EvolveConfig{Method: core.EvolveLLG, Adaptive: true, Alpha: 0.1, Gamma: 1.3, T: 1, Rtol: 1e-8}},
		{"gpe_imaginary_line", gpe, gpeLat, []float64{1, 1, 2}, trapped,
			core.EvolveConfig{Method: core.EvolveGPEImaginary, Adaptive: true, KeepNorm: true, T: 1, Rtol: 1e-9}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.RecordDt = 0.25
			a, av, ra := evolveOn(t, cpuB, c.th, c.lat, c.params, c.fill, cfg)
			b, bv, rb := evolveOn(t, gpuB, c.th, c.lat, c.params, c.fill, cfg)
			worst, worstV := 0.0, 0.0
			for i := range a {
				worst = math.Max(worst, math.Abs(a[i]-b[i]))
				worstV = math.Max(worstV, math.Abs(av[i]-bv[i]))
			}
			last := func(r []core.EvolveRecord) core.EvolveRecord { return r[len(r)-1] }
			la, lb := last(ra), last(rb)
			t.Logf("GPU vs CPU: field %.3g, velocity %.3g; steps %d vs %d, rejected %d vs %d, dt %.15g vs %.15g; energy %.15g vs %.15g",
				worst, worstV, lb.Step, la.Step, lb.Rejected, la.Rejected, lb.Dt, la.Dt, lb.Kinetic+lb.Potential, la.Kinetic+la.Potential)
			require.Len(t, rb, len(ra))
			for k := range ra {
				require.Equal(t, ra[k].T, rb[k].T, "the records' times")
			}
			require.InDelta(t, la.Step, lb.Step, 1)
			require.Less(t, worst, 1e-9)
			require.Less(t, worstV, 1e-9)
			require.InDelta(t, la.Kinetic+la.Potential, lb.Kinetic+lb.Potential, 1e-9*math.Abs(la.Kinetic+la.Potential))
		})
	}
}
