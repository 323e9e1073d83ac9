package pybind

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/kernels/cpu"
)

const evGPELine = `{"name": "gpe_line", "fields": ["psi_re", "psi_im"], "params": ["g", "w", "c"], "densities": ["density"], "constraint": "", "gradient": "derived"}`

// First-order evolutions on the GPU (Program.Rate: fg_k_rate on the planar
// grid, fg_k_nd_rate on a line) against the CPU's: LLG with damping on a
// skyrmion, GPE in real time on a dark soliton and in imaginary time with the
// norm kept in a trap. The same scheme on the same kernels' contract, so the
// fields agree to rounding. Skipped without a GPU.
func TestFirstOrderEvolveOnCUDAMatchesCPU(t *testing.T) {
	gpuB, err := cudaBackend()
	if err != nil {
		t.Skip("no GPU: ", err)
	}
	cpuB := cpu.New(cpu.Options{})
	bs := evolveTheory(t, evBabySkyrme, "baby_skyrme.c")
	gpe := evolveTheory(t, evGPELine, "gpe_line.c")
	plane, err := core.CenteredLattice(64, 64, 0.2, 0.2, core.Periodic)
	require.NoError(t, err)
	gpePlane, err := core.CenteredLattice(161, 8, 0.125, 0.125, core.Fixed)
	require.NoError(t, err)
	line, err := core.NewLatticeND([]int{321}, []float64{0.125}, []float64{-20}, []core.Boundary{core.Fixed})
	require.NoError(t, err)
	skyrmion := func(lat core.Lattice, f, _ *core.Field) {
		for j := range lat.Ny {
			for i := range lat.Nx {
				x, y := lat.X(i), lat.Y(j)
				r, th := math.Hypot(x, y), math.Atan2(y, x)
				fr := math.Pi * (1 - math.Tanh(r/1.5))
				k := j*lat.Nx + i
				f.Comp(0)[k], f.Comp(1)[k], f.Comp(2)[k] = math.Sin(fr)*math.Cos(th), math.Sin(fr)*math.Sin(th), math.Cos(fr)
			}
		}
	}
	soliton := func(lat core.Lattice, f, _ *core.Field) {
		const v = 0.5
		k := math.Sqrt(1 - v*v)
		for j := range lat.Ny {
			for i := range lat.Nx {
				f.Comp(0)[j*lat.Nx+i], f.Comp(1)[j*lat.Nx+i] = k*math.Tanh(k*lat.X(i)), v
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
		{"llg_plane", bs, plane, []float64{0.3, 0.3}, skyrmion, core.EvolveConfig{Method: core.EvolveLLG, Alpha: 0.1, Gamma: 1.3}},
		{"gpe_plane", gpe, gpePlane, []float64{1, 0, 1}, soliton, core.EvolveConfig{Method: core.EvolveGPE}},
		{"gpe_line", gpe, line, []float64{1, 0, 1}, soliton, core.EvolveConfig{Method: core.EvolveGPE, KeepNorm: true}},
		{"gpe_imaginary_line", gpe, line, []float64{1, 1, 2}, trapped, core.EvolveConfig{Method: core.EvolveGPEImaginary, KeepNorm: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.T, cfg.Dt, cfg.RecordEvery = 1, 0.005, 50
			a, _, ra := evolveOn(t, cpuB, c.th, c.lat, c.params, c.fill, cfg)
			b, _, rb := evolveOn(t, gpuB, c.th, c.lat, c.params, c.fill, cfg)
			worst := 0.0
			for i := range a {
				worst = math.Max(worst, math.Abs(a[i]-b[i]))
			}
			last := func(r []core.EvolveRecord) core.EvolveRecord { return r[len(r)-1] }
			t.Logf("GPU vs CPU: field %.3g; energy %.15g vs %.15g, norm %.15g vs %.15g, m %v vs %v", worst,
				last(rb).Potential, last(ra).Potential, last(rb).Norm, last(ra).Norm, last(rb).Magnetisation, last(ra).Magnetisation)
			require.Less(t, worst, 1e-10)
			require.InDelta(t, last(ra).Potential, last(rb).Potential, 1e-10*math.Abs(last(ra).Potential))
			require.InDelta(t, last(ra).Norm, last(rb).Norm, 1e-10*math.Abs(last(ra).Norm))
		})
	}
}
