package pybind

import (
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cpu"
)

// The evolution on the GPU (core's steppers on the CUDA Program) against the
// CPU's: the same schemes on the same kernels' contract, so the fields agree
// to rounding. Skipped without a GPU.

func evolveTheory(t *testing.T, spec, file string) *core.Theory {
	t.Helper()
	src, err := os.ReadFile("../core/testdata/" + file)
	require.NoError(t, err)
	th, err := core.ParseTheory(spec, string(src))
	require.NoError(t, err)
	return th
}

const (
	evSineGordon = `{"name": "sine_gordon", "fields": ["u"], "params": [], "densities": [], "constraint": "", "gradient": "derived"}`
	evBabySkyrme = `{"name": "baby_skyrme", "fields": ["n1", "n2", "n3"], "params": ["kappa", "mass"], "densities": ["charge", "skyrme", "potential"], "constraint": "unit_vector", "gradient": "derived"}`
)

// evolveOn sets a field and velocity on b and evolves; returns the field,
// the velocity and the records.
func evolveOn(t *testing.T, b kernels.Backend, th *core.Theory, lat core.Lattice, params []float64,
	fill func(lat core.Lattice, f, v *core.Field), cfg core.EvolveConfig) ([]float64, []float64, []core.EvolveRecord) {
	t.Helper()
	s, err := core.NewSimulation(b, th, lat, params, core.Options{})
	require.NoError(t, err)
	defer s.Close()
	f, err := core.NewField(lat, th.Spec.Fields)
	require.NoError(t, err)
	defer f.Release()
	v, err := core.NewField(lat, th.Spec.Fields)
	require.NoError(t, err)
	defer v.Release()
	fill(lat, f, v)
	require.NoError(t, s.SetField(f))
	require.NoError(t, s.SetVelocity(v))
	err = evolveRun(s, cfg)
	require.NoError(t, err)
	phi, err := s.Field()
	require.NoError(t, err)
	vel, err := s.Velocity()
	require.NoError(t, err)
	var out, outV []float64
	for c := range th.Spec.Fields {
		out = append(out, phi.Comp(c)...)
		outV = append(outV, vel.Comp(c)...)
	}
	return out, outV, s.EvolveRecords()
}

func TestEvolveOnCUDAMatchesCPU(t *testing.T) {
	gpuB, err := cudaBackend()
	if err != nil {
		t.Skip("no GPU: ", err)
	}
	cpuB := cpu.New(cpu.Options{})
	sg := evolveTheory(t, evSineGordon, "sine_gordon.c")
	bs := evolveTheory(t, evBabySkyrme, "baby_skyrme.c")
	lineLat, err := core.NewLatticeND([]int{401}, []float64{0.1}, []float64{-20}, []core.Boundary{core.Periodic})
	require.NoError(t, err)
	planeLat, err := core.CenteredLattice(64, 64, 0.2, 0.2, core.Periodic)
	require.NoError(t, err)
	kinkAntikink := func(lat core.Lattice, f, v *core.Field) {
		g := 1 / math.Sqrt(0.75)
		for i := range lat.Nx {
			f.Comp(0)[i] = 0
			v.Comp(0)[i] = 4 * g / math.Cosh(g*lat.X(i))
		}
	}
	spinning := func(lat core.Lattice, f, v *core.Field) {
		for j := range lat.Ny {
			for i := range lat.Nx {
				x, y := lat.X(i), lat.Y(j)
				r, th := math.Hypot(x, y), math.Atan2(y, x)
				fr := math.Pi * (1 - math.Tanh(r/1.5))
				k := j*lat.Nx + i
				n1, n2 := math.Sin(fr)*math.Cos(th), math.Sin(fr)*math.Sin(th)
				f.Comp(0)[k], f.Comp(1)[k], f.Comp(2)[k] = n1, n2, math.Cos(fr)
				gs := math.Exp(-x*x - y*y)
				v.Comp(0)[k], v.Comp(1)[k], v.Comp(2)[k] = -0.4*n2+0.3*gs, 0.4*n1, 0.2*gs
			}
		}
	}
	for _, c := range []struct {
		name   string
		th     *core.Theory
		lat    core.Lattice
		params []float64
		fill   func(core.Lattice, *core.Field, *core.Field)
	}{
		{"sine_gordon_line", sg, lineLat, nil, kinkAntikink},
		{"baby_skyrme_plane", bs, planeLat, []float64{0.3, 0.3}, spinning},
	} {
		for _, method := range []string{core.EvolveRK4, core.EvolveLeapfrog} {
			t.Run(c.name+"/"+method, func(t *testing.T) {
				cfg := core.EvolveConfig{Method: method, T: 2, Dt: 0.02, RecordEvery: 20}
				a, av, ra := evolveOn(t, cpuB, c.th, c.lat, c.params, c.fill, cfg)
				b, bv, rb := evolveOn(t, gpuB, c.th, c.lat, c.params, c.fill, cfg)
				worst, worstV := 0.0, 0.0
				for i := range a {
					worst = math.Max(worst, math.Abs(a[i]-b[i]))
					worstV = math.Max(worstV, math.Abs(av[i]-bv[i]))
				}
				e := func(r []core.EvolveRecord) float64 { return r[len(r)-1].Kinetic + r[len(r)-1].Potential }
				t.Logf("GPU vs CPU: field %.3g, velocity %.3g; energy %.15g vs %.15g (start %.15g)", worst, worstV, e(rb), e(ra),
					ra[0].Kinetic+ra[0].Potential)
				require.Less(t, worst, 1e-10)
				require.Less(t, worstV, 1e-10)
				require.InDelta(t, e(ra), e(rb), 1e-10*math.Abs(e(ra)))
			})
		}
	}
}

// The cost of a time step against an arrested-Newton step on the same
// lattice: RK4 evaluates four gradients like an ANF step, leapfrog one.
func TestEvolveStepCostOnCUDA(t *testing.T) {
	gpuB, err := cudaBackend()
	if err != nil {
		t.Skip("no GPU: ", err)
	}
	bs := evolveTheory(t, evBabySkyrme, "baby_skyrme.c")
	ah := evolveTheory(t, `{"name": "abelian_higgs", "fields": ["psi1", "psi2", "a1", "a2"], "params": ["lambda"], "densities": ["flux"], "constraint": "", "gradient": "derived"}`, "abelian_higgs.c")
	for _, c := range []struct {
		th     *core.Theory
		n      int
		params []float64
	}{{bs, 256, []float64{1, 1}}, {ah, 256, []float64{1}}, {ah, 1024, []float64{1}}} {
		n := c.n
		lat, err := core.CenteredLattice(n, n, 0.1, 0.1, core.Periodic)
		require.NoError(t, err)
		s, err := core.NewSimulation(gpuB, c.th, lat, c.params, core.Options{})
		require.NoError(t, err)
		f, err := core.NewField(lat, c.th.Spec.Fields)
		require.NoError(t, err)
		for j := range lat.Ny {
			for i := range lat.Nx {
				x, y := lat.X(i), lat.Y(j)
				r, th := math.Hypot(x, y), math.Atan2(y, x)
				fr := math.Pi * (1 - math.Tanh(r/1.5))
				k := j*lat.Nx + i
				if c.th == bs {
					f.Comp(0)[k], f.Comp(1)[k], f.Comp(2)[k] = math.Sin(fr)*math.Cos(th), math.Sin(fr)*math.Sin(th), math.Cos(fr)
				} else {
					f.Comp(0)[k], f.Comp(1)[k] = math.Tanh(r)*math.Cos(th), math.Tanh(r)*math.Sin(th)
				}
			}
		}
		require.NoError(t, s.SetField(f))
		f.Release()
		const steps = 1000
		timeIt := func(run func() error) time.Duration {
			require.NoError(t, run()) // warm: compile, tune
			t0 := time.Now()
			require.NoError(t, run())
			return time.Since(t0) / steps
		}
		anf := func(stepper bool) func() error {
			return func() error {
				core.UseStepper = stepper
				defer func() { core.UseStepper = true }()
				if err := s.Start(core.FlowConfig{Dt: 0.02, Tol: 1e-30, MaxSteps: steps, CheckEvery: 1000}); err != nil {
					return err
				}
				_, err := s.Continue()
				return err
			}
		}
		evolve := func(method string) func() error {
			return func() error {
				err := evolveRun(s, core.EvolveConfig{Method: method, T: 0.02 * steps, Dt: 0.02, RecordEvery: 1000})
				return err
			}
		}
		tDev, tHost := timeIt(anf(true)), timeIt(anf(false))
		tRK4, tLF := timeIt(evolve(core.EvolveRK4)), timeIt(evolve(core.EvolveLeapfrog))
		core.EvolveShift = false
		tRK4c := timeIt(evolve(core.EvolveRK4))
		core.EvolveShift = true
		t.Logf("rk4 with the stage fields formed by Combine: %v", tRK4c)
		t.Logf("%d^2 %s, per step: ANF device flow %v, ANF host loop %v, evolve rk4 %v (%.2fx the host loop), leapfrog %v",
			n, c.th.Spec.Name, tDev, tHost, tRK4, float64(tRK4)/float64(tHost), tLF)
		s.Close()
	}
}

// evolveRun is Evolve without the history batch (which the caller would release).
func evolveRun(s *core.Simulation, cfg core.EvolveConfig) error {
	if err := s.StartEvolve(cfg); err != nil {
		return err
	}
	_, err := s.AdvanceEvolve(0, 0)
	return err
}
