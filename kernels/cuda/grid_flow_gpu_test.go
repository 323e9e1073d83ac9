package cuda_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cpu"
)

// Flows on lines, 3D lattices and boundaries set per axis on the GPU,
// through core's Simulation (the grid unit's device flow, gridflow.go, and
// core's own step loop: Gradient, Combine and Constrain per stage on the
// device), against each other, the CPU backend and the physics. Without a
// GPU every test here skips, saying why.

const (
	phi4Spec   = `{"name": "phi4", "fields": ["u"], "params": ["lam"], "densities": [], "constraint": "", "gradient": "derived"}`
	sigma4Spec = `{"name": "sigma4_3d", "fields": ["n0", "n1", "n2", "n3"], "params": ["m2"], "densities": ["kinetic"], "constraint": "unit_vector", "gradient": "derived"}`
)

// ndTheory parses a point source of core/testdata or of this package's testdata.
func ndTheory(tb testing.TB, spec, file string) *core.Theory {
	tb.Helper()
	var src []byte
	var err error
	for _, dir := range []string{filepath.Join("..", "..", "core", "testdata"), "testdata"} {
		if src, err = os.ReadFile(filepath.Join(dir, file)); err == nil {
			break
		}
	}
	if err != nil {
		tb.Fatalf("point source %s: %v", file, err)
	}
	th, err := core.ParseTheory(spec, string(src))
	if err != nil {
		tb.Fatal(err)
	}
	return th
}

// ndSim makes a simulation of th on be on a lattice of len(n) axes with
// spacing h, centred on 0, and sets its field to fill(x, y, z, out).
func ndSim(tb testing.TB, be kernels.Backend, th *core.Theory, n []int, h float64, bounds []core.Boundary, params []float64,
	fill func(x, y, z float64, out []float64)) *core.Simulation {
	tb.Helper()
	return ndSimAs(tb, be, th, n, h, bounds, params, fill, core.Float64)
}

// ndSimAs is ndSim with the storage precision.
func ndSimAs(tb testing.TB, be kernels.Backend, th *core.Theory, n []int, h float64, bounds []core.Boundary, params []float64,
	fill func(x, y, z float64, out []float64), precision string) *core.Simulation {
	tb.Helper()
	return ndSimWith(tb, be, th, n, h, bounds, params, fill, core.Options{Precision: precision})
}

// ndSimWith is ndSim with options (precision, gradient form).
func ndSimWith(tb testing.TB, be kernels.Backend, th *core.Theory, n []int, h float64, bounds []core.Boundary, params []float64,
	fill func(x, y, z float64, out []float64), opt core.Options) *core.Simulation {
	tb.Helper()
	hs, o := make([]float64, len(n)), make([]float64, len(n))
	for a := range n {
		hs[a], o[a] = h, -float64(n[a]-1)*h/2
	}
	lat, err := core.NewLatticeND(n, hs, o, bounds)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := core.NewSimulation(be, th, lat, params, opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	f, err := core.NewField(lat, th.Spec.Fields)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Release()
	v := make([]float64, len(th.Spec.Fields))
	for idx := 0; idx < lat.Sites(); idx++ {
		i, line := idx%lat.Nx, idx/lat.Nx
		fill(lat.X(i), lat.Y(line%lat.Ny), lat.Z(line/lat.Ny), v)
		for c := range v {
			f.Comp(c)[idx] = v[c]
		}
	}
	if err := s.SetField(f); err != nil {
		tb.Fatal(err)
	}
	return s
}

func kinkFill(x, y, z float64, out []float64) { out[0] = math.Tanh(1.3*x) + 0.05*math.Cos(2*y+z) }

// twistFill is a smooth unit 4-vector field depending on x, y and z.
func twistFill(x, y, z float64, out []float64) {
	f := math.Pi * (1 - math.Tanh(0.8*x+0.2*math.Sin(y)))
	out[0], out[1] = math.Cos(f), math.Sin(f)*math.Cos(0.7*y+0.3*z)
	out[2], out[3] = math.Sin(f)*math.Sin(0.7*y+0.3*z)*math.Cos(0.5*z), math.Sin(f)*math.Sin(0.7*y+0.3*z)*math.Sin(0.5*z)
}

func skyrmionFill(x, y, z float64, out []float64) {
	r, th := math.Hypot(x-0.2, y+0.1), math.Atan2(y+0.1, x-0.2)
	f := math.Pi * math.Exp(-r*r/4) * (1 + 0.1*math.Sin(z))
	out[0], out[1], out[2] = math.Sin(f)*math.Cos(th), math.Sin(f)*math.Sin(th), math.Cos(f)
}

type ndCase struct {
	name   string
	th     func(testing.TB) *core.Theory
	n      []int
	h      float64
	bounds []core.Boundary
	params []float64
	fill   func(x, y, z float64, out []float64)
}

func ndCases() []ndCase {
	phi4 := func(tb testing.TB) *core.Theory { return ndTheory(tb, phi4Spec, "phi4_3d.c") }
	sigma := func(tb testing.TB) *core.Theory { return ndTheory(tb, sigma4Spec, "sigma4_3d.c") }
	baby := func(tb testing.TB) *core.Theory { return ndTheory(tb, babySkyrmeSpec, "baby_skyrme.c") }
	F, P := core.Fixed, core.Periodic
	return []ndCase{
		{"phi4 3D fixed x periodic y z", phi4, []int{41, 12, 10}, 0.25, []core.Boundary{F, P, P}, []float64{1}, kinkFill},
		{"sigma4 3D fixed", sigma, []int{33, 20, 18}, 0.3, []core.Boundary{F, F, F}, []float64{0.5}, twistFill},
		{"sigma4 3D periodic y", sigma, []int{29, 16, 14}, 0.3, []core.Boundary{F, P, F}, []float64{0.5}, twistFill},
		{"baby_skyrme (planar theory) 3D", baby, []int{40, 40, 9}, 0.25, []core.Boundary{F, F, P}, []float64{1, 1}, skyrmionFill},
		{"phi4 line", phi4, []int{101}, 0.1, []core.Boundary{F}, []float64{1}, kinkFill},
		{"baby_skyrme per-axis plane", baby, []int{48, 44}, 0.25, []core.Boundary{P, F}, []float64{1, 1}, skyrmionFill},
	}
}

// ndBound is flowBound for spacing h on a lattice of dims axes.
func ndBound(steps int, h float64, dims int, cfg core.FlowConfig) float64 {
	term := float64(dims) * 5.4 * 1.5 / (h * h) * (1 + math.Pow(1.5*1.5/h, 2))
	return float64(steps) * (cfg.Dt + cfg.Dt*cfg.Dt) * 256 * 0x1p-53 * term
}

// TestGridFlowAgreesWithCPU: 100 steps of arrested Newton flow on lines, 3D
// lattices and boundaries per axis, on the GPU and on the CPU, agree within a
// float64 rounding bound; two GPU runs are the same bits, and the device
// flow's are the GPU host loop's (the same kernels' arithmetic, term for
// term, and the same reduction order).
func TestGridFlowAgreesWithCPU(t *testing.T) {
	be := gpuFlow(t)
	defer func() { core.UseStepper = true }()
	cfg := core.FlowConfig{Dt: 0.02, Tol: 1e-300, MaxSteps: 100000, CheckEvery: 25}
	const steps = 100
	for _, c := range ndCases() {
		t.Run(c.name, func(t *testing.T) {
			run := func(b kernels.Backend) ([]float64, core.Progress, *core.Simulation) {
				s := ndSim(t, b, c.th(t), c.n, c.h, c.bounds, c.params, c.fill)
				if err := s.Start(cfg); err != nil {
					t.Fatal(err)
				}
				var p core.Progress
				var err error
				for done := 0; done < steps; done += 40 {
					if p, err = s.Advance(min(40, steps-done), 0); err != nil {
						t.Fatal(err)
					}
				}
				return field(t, s), p, s
			}
			core.UseStepper = true
			g1, p1, s1 := run(be)
			if d := s1.DeviceFlow(); d == "" {
				t.Error("the device flow did not run")
			} else {
				t.Log(d)
			}
			g2, p2, _ := run(be)
			core.UseStepper = false
			gh, ph, _ := run(be)
			core.UseStepper = true
			for i := range g1 {
				if math.Float64bits(g1[i]) != math.Float64bits(gh[i]) {
					t.Fatalf("the device flow and the host loop differ at %d: %v vs %v", i, g1[i], gh[i])
				}
			}
			if p1 != ph {
				t.Errorf("device flow %+v, host loop %+v", p1, ph)
			}
			c1, pc, _ := run(cpu.New(cpu.Options{}))
			for i := range g1 {
				if math.Float64bits(g1[i]) != math.Float64bits(g2[i]) {
					t.Fatalf("two GPU runs differ at %d: %v vs %v", i, g1[i], g2[i])
				}
			}
			if math.Float64bits(p1.Energy) != math.Float64bits(p2.Energy) || math.Float64bits(p1.MaxGrad) != math.Float64bits(p2.MaxGrad) {
				t.Errorf("two GPU runs' reductions differ: %+v vs %+v", p1, p2)
			}
			bound := ndBound(steps, c.h, len(c.n), cfg)
			d := maxDiff(g1, c1)
			if !(d <= bound) {
				t.Errorf("GPU and CPU fields differ by %.3g after %d steps (bound %.3g)", d, steps, bound)
			}
			if de := math.Abs(p1.Energy - pc.Energy); !(de <= 1e-9*math.Abs(pc.Energy)) {
				t.Errorf("energy: gpu %.17g cpu %.17g", p1.Energy, pc.Energy)
			}
			t.Logf("after %d steps: max |gpu - cpu| %.3g (bound %.3g); energy %.15g vs %.15g; max|grad| %.3g",
				steps, d, bound, p1.Energy, pc.Energy, p1.MaxGrad)
		})
	}
}

// TestGridPhi4WallAndKink: the phi^4 domain wall in a box fixed along x and
// periodic along y and z relaxes on the GPU to 4/3 per unit area, and the
// kink on a line to 4/3 (core's TestPhi4WallIn3DAndKinkIn1D on the CPU).
func TestGridPhi4WallAndKink(t *testing.T) {
	be := gpuFlow(t)
	const want, h = 4.0 / 3, 0.1
	n := 121 // 12 / h + 1: a box of 12
	relax := func(s *core.Simulation, maxSteps int) core.Progress {
		if err := s.Start(core.FlowConfig{Tol: 1e-9, MaxSteps: maxSteps}); err != nil {
			t.Fatal(err)
		}
		p, err := s.Continue()
		if err != nil {
			t.Fatal(err)
		}
		if !p.Converged {
			t.Fatalf("not converged: %+v", p)
		}
		return p
	}
	wallFill := func(x, y, z float64, out []float64) { out[0] = math.Tanh(1.3 * x) }
	wall := ndSim(t, be, ndTheory(t, phi4Spec, "phi4_3d.c"), []int{n, 6, 6}, h, []core.Boundary{core.Fixed, core.Periodic, core.Periodic}, []float64{1}, wallFill)
	pw := relax(wall, 20000)
	perArea := pw.Energy / (6 * h * 6 * h)
	t.Logf("3D wall: E/A - 4/3 = %.3e after %d steps", perArea-want, pw.Step)
	if math.Abs(perArea-want) > 2e-5 {
		t.Errorf("3D wall: E/A = %.10g, want 4/3 within 2e-5", perArea)
	}
	kink := ndSim(t, be, ndTheory(t, phi4Spec, "phi4_3d.c"), []int{n}, h, []core.Boundary{core.Fixed}, []float64{1}, wallFill)
	pk := relax(kink, 50000)
	t.Logf("1D kink: E - 4/3 = %.3e after %d steps", pk.Energy-want, pk.Step)
	if math.Abs(pk.Energy-want) > 2e-5 {
		t.Errorf("1D kink: E = %.10g, want 4/3 within 2e-5", pk.Energy)
	}
	if math.Abs(pk.Energy-perArea) > 1e-10 {
		t.Errorf("the wall per unit area %.15g is not the kink %.15g", perArea, pk.Energy)
	}
}

// TestGridFloat32Flow: float32 storage on a 3D lattice and a line, on the GPU
// and on the CPU (whose float32 programs round what they store the same way),
// agree within float32's flow bound (f32Bound) after 100 steps; two GPU runs
// are the same bits, and the state is float32-representable.
func TestGridFloat32Flow(t *testing.T) {
	be := gpuFlow(t)
	cfg := core.FlowConfig{Dt: 0.02, Tol: 1e-300, MaxSteps: 100000, CheckEvery: 25}
	const steps = 100
	for _, c := range []ndCase{ndCases()[1], ndCases()[4]} {
		t.Run(c.name, func(t *testing.T) {
			run := func(b kernels.Backend) []float64 {
				s := ndSimAs(t, b, c.th(t), c.n, c.h, c.bounds, c.params, c.fill, core.Float32)
				if err := s.Start(cfg); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Advance(steps, 0); err != nil {
					t.Fatal(err)
				}
				if s.Precision() != core.Float32 {
					t.Fatalf("precision %s", s.Precision())
				}
				return field(t, s)
			}
			g1, g2, c1 := run(be), run(be), run(cpu.New(cpu.Options{}))
			pm := 1.0
			for i := range g1 {
				if math.Float64bits(g1[i]) != math.Float64bits(g2[i]) {
					t.Fatalf("two GPU runs differ at %d", i)
				}
				if float64(float32(g1[i])) != g1[i] {
					t.Fatalf("%v at %d is not float32-representable", g1[i], i)
				}
				pm = math.Max(pm, math.Abs(c1[i]))
			}
			bound := f32Bound(steps) * pm
			if d := maxDiff(g1, c1); !(d <= bound) {
				t.Errorf("float32 GPU and CPU differ by %.3g (bound %.3g)", d, bound)
			} else {
				t.Logf("float32 after %d steps: max |gpu - cpu| %.3g (bound %.3g)", steps, d, bound)
			}
		})
	}
}

// TestGridConsistentFlowAgreesWithCPU: 100 steps in the consistent gradient
// form (the exact gradient of the lattice energy with the doubler penalty;
// fg_k_nd_partials and fg_k_nd_consistent, or their _free kernels) on 3D
// lattices and a line, and on the free boundary (a box, a line and a planar
// theory's plane, which runs on the grid unit), on the GPU and on the CPU,
// agree within the float64 flow bound; two GPU runs are the same bits.
func TestGridConsistentFlowAgreesWithCPU(t *testing.T) {
	be := gpuFlow(t)
	cfg := core.FlowConfig{Dt: 0.02, Tol: 1e-300, MaxSteps: 100000, CheckEvery: 25}
	const steps = 100
	cases := []ndCase{ndCases()[0], ndCases()[2], ndCases()[3], ndCases()[4]}
	for k, name := range []string{1: "sigma4 3D free", 4: "phi4 line free", 5: "baby_skyrme plane free"} {
		if name == "" {
			continue
		}
		c := ndCases()[k]
		c.name, c.bounds = name, []core.Boundary{core.Free}
		cases = append(cases, c)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(b kernels.Backend) ([]float64, core.Progress) {
				s := ndSimWith(t, b, c.th(t), c.n, c.h, c.bounds, c.params, c.fill, core.Options{Form: "consistent"})
				if err := s.Start(cfg); err != nil {
					t.Fatal(err)
				}
				p, err := s.Advance(steps, 0)
				if err != nil {
					t.Fatal(err)
				}
				return field(t, s), p
			}
			g1, p1 := run(be)
			g2, p2 := run(be)
			c1, pc := run(cpu.New(cpu.Options{}))
			for i := range g1 {
				if math.Float64bits(g1[i]) != math.Float64bits(g2[i]) {
					t.Fatalf("two GPU runs differ at %d", i)
				}
			}
			if math.Float64bits(p1.Energy) != math.Float64bits(p2.Energy) {
				t.Errorf("two GPU runs' energies differ: %v vs %v", p1.Energy, p2.Energy)
			}
			bound := ndBound(steps, c.h, len(c.n), cfg)
			if d := maxDiff(g1, c1); !(d <= bound) {
				t.Errorf("consistent form: GPU and CPU fields differ by %.3g after %d steps (bound %.3g)", d, steps, bound)
			} else {
				t.Logf("consistent form after %d steps: max |gpu - cpu| %.3g (bound %.3g); energy %.15g vs %.15g", steps, d, bound, p1.Energy, pc.Energy)
			}
			if de := math.Abs(p1.Energy - pc.Energy); !(de <= 1e-9*math.Abs(pc.Energy)) {
				t.Errorf("energy: gpu %.17g cpu %.17g", p1.Energy, pc.Energy)
			}
		})
	}
}
