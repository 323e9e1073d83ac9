package cuda_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/internal/fixtures"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cpu"
	"github.com/fieldgo/fieldgo/kernels/cuda"
)

// The device flow (kernels.Stepper, flow.go) end to end, through core's
// Simulation as a user runs it: against itself, the host loop and the CPU
// backend. Without a GPU every test here skips, saying why.

const (
	babySkyrmeSpec   = `{"name": "baby_skyrme", "fields": ["n1", "n2", "n3"], "params": ["kappa", "mass"], "densities": ["charge", "skyrme", "potential"], "constraint": "unit_vector", "gradient": "derived"}`
	abelianHiggsSpec = `{"name": "abelian_higgs", "fields": ["psi1", "psi2", "a1", "a2"], "params": ["lambda"], "densities": ["flux"], "constraint": "", "gradient": "derived"}`
)

// source finds a point source in core/testdata (from the package directory,
// where go test and the GPU machine's scripts run the test binary).
func source(tb testing.TB, file string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "core", "testdata", file))
	if err != nil {
		tb.Fatalf("point source %s: %v (run the test binary in kernels/cuda)", file, err)
	}
	return string(b)
}

type model struct {
	name   string
	spec   string
	file   string
	params []float64
	fill   func(x, y float64, out []float64)
	box    float64
}

var models = []model{
	{"baby_skyrme", babySkyrmeSpec, "baby_skyrme.c", []float64{1, 1}, hedgehog, 20},
	{"abelian_higgs", abelianHiggsSpec, "abelian_higgs.c", []float64{1}, vortex, 40},
}

// The flows' initial fields (internal/fixtures).
var hedgehog, vortex = fixtures.Hedgehog(1), fixtures.Vortex(1)

var gpuBackend *cuda.Backend

// gpuFlow opens the device once for the flow tests and benchmarks (the CUBIN
// cache in $FIELDGO_TEST_CUDA_CACHE when set), or skips saying why.
func gpuFlow(tb testing.TB) *cuda.Backend {
	tb.Helper()
	if gpuBackend == nil {
		b, err := cuda.New(cuda.Options{CacheDir: os.Getenv("FIELDGO_TEST_CUDA_CACHE")})
		if err != nil {
			tb.Skipf("no usable GPU, device-flow tests skipped: %v", err)
		}
		gpuBackend = b
		tb.Logf("device: %s", b.Device())
	}
	return gpuBackend
}

func newSim(tb testing.TB, be kernels.Backend, m model, n int, box float64, periodic bool) *core.Simulation {
	tb.Helper()
	return newSimAs(tb, be, m, n, box, periodic, core.Float64)
}

// newSimAs is newSim with the storage precision (core.Float32: the CUDA
// backend's float32 storage).
func newSimAs(tb testing.TB, be kernels.Backend, m model, n int, box float64, periodic bool, precision string) *core.Simulation {
	tb.Helper()
	s := openSim(tb, be, m, n, box, periodic, precision)
	tb.Cleanup(func() { s.Close() })
	return s
}

// openSim is newSimAs without the cleanup: the caller closes it.
func openSim(tb testing.TB, be kernels.Backend, m model, n int, box float64, periodic bool, precision string) *core.Simulation {
	tb.Helper()
	th, err := core.ParseTheory(m.spec, source(tb, m.file))
	if err != nil {
		tb.Fatal(err)
	}
	bd := core.Fixed
	if periodic {
		bd = core.Periodic
	}
	h := box / float64(n-1)
	lat, err := core.CenteredLattice(n, n, h, h, bd)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := core.NewSimulation(be, th, lat, m.params, core.Options{Precision: precision})
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Fill(m.fill); err != nil {
		s.Close()
		tb.Fatal(err)
	}
	return s
}

func field(tb testing.TB, s *core.Simulation) []float64 {
	f, err := s.Field()
	if err != nil {
		tb.Fatal(err)
	}
	var out []float64
	for c := 0; c < f.NComp(); c++ {
		out = append(out, f.Comp(c)...)
	}
	return out
}

func maxDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// The flow tests' scene: 200 steps of dt 0.02 on 96 x 96 sites over a box
// of 12, history every 25 steps.
const (
	flowSteps = 200
	flowN     = 96
	flowBox   = 12.0
)

var flowCfg = core.FlowConfig{Dt: 0.02, Tol: 1e-300, MaxSteps: 100000, CheckEvery: 25}

// flowRun makes m's simulation (n x n sites, box, boundary, storage
// precision prec) on be and runs steps of cfg in Advance calls of chunk
// steps, with the device flow (stepper) or the host loop; a stepper run on
// the GPU must use the device flow.
func flowRun(t *testing.T, be kernels.Backend, m model, n int, box float64, periodic bool, prec string,
	cfg core.FlowConfig, steps, chunk int, stepper bool) ([]float64, *core.Simulation, core.Progress) {
	t.Helper()
	core.UseStepper = stepper
	s := newSimAs(t, be, m, n, box, periodic, prec)
	if err := s.Start(cfg); err != nil {
		t.Fatal(err)
	}
	var p core.Progress
	var err error
	for done := 0; done < steps; done += chunk {
		if p, err = s.Advance(min(chunk, steps-done), 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, onGPU := be.(*cuda.Backend); stepper && onGPU && s.DeviceFlow() == "" {
		t.Errorf("%s %s: the device flow was not used", m.name, prec)
	}
	return field(t, s), s, p
}

// flowBound bounds the difference of two flows of steps steps whose
// gradients round differently (unit roundoff u): each step moves phi by dt^2
// times gradients whose rounding is bounded by 256 u times the largest
// stencil term (TestAgreesWithCPU); the relaxing flow does not amplify it
// over the run by more than the step count.
func flowBound(steps, n int, box float64, cfg core.FlowConfig, u float64) float64 {
	hh := box / float64(n-1)
	term := 5.4 * 1.5 / (hh * hh) * (1 + math.Pow(1.5*1.5/hh, 2))
	return float64(steps) * (cfg.Dt + cfg.Dt*cfg.Dt) * 256 * u * term
}

// TestDeviceFlow: the device flow (kernels.Stepper) against itself run again
// and chunked differently (bit-identical), against the host loop on the same
// GPU and against the CPU backend (within a float64 rounding bound).
func TestDeviceFlow(t *testing.T) {
	b := gpuFlow(t)
	defer func() { core.UseStepper = true }()
	const steps = flowSteps
	n, box, cfg := flowN, flowBox, flowCfg
	for _, m := range models {
		for _, periodic := range []bool{false, true} {
			run := func(be kernels.Backend, stepper bool, chunk int) ([]float64, *core.Simulation, core.Progress) {
				f, s, p := flowRun(t, be, m, n, box, periodic, core.Float64, cfg, steps, chunk, stepper)
				if got := s.DeviceFlow(); got != "" {
					t.Logf("%s: %s", m.name, got)
				}
				return f, s, p
			}
			a, sa, pa := run(b, true, steps)
			a2, _, pa2 := run(b, true, steps)
			c7, _, p7 := run(b, true, 7)
			h, sh, ph := run(b, false, steps)
			cp, _, pc := run(cpu.New(cpu.Options{}), true, steps)
			if d := maxDiff(a, a2); d != 0 || pa != pa2 {
				t.Errorf("%s periodic=%v: repeated device flows differ by %g (%+v vs %+v)", m.name, periodic, d, pa, pa2)
			}
			if d := maxDiff(a, c7); d != 0 || pa != p7 {
				t.Errorf("%s periodic=%v: Advance(7) chunks differ from one Advance by %g (%+v vs %+v)", m.name, periodic, d, pa, p7)
			}
			dh, dc := maxDiff(a, h), maxDiff(a, cp)
			bound := flowBound(steps, n, box, cfg, 0x1p-53)
			t.Logf("%s periodic=%v after %d steps: E=%.15g resets=%d; max|device-host loop (GPU)| = %.3g, max|device-CPU| = %.3g (bound %.3g); E host %.15g CPU %.15g",
				m.name, periodic, steps, pa.Energy, pa.Resets, dh, dc, bound, ph.Energy, pc.Energy)
			if !(dh <= bound) || !(dc <= bound) {
				t.Errorf("%s periodic=%v: device flow differs from the host loop by %g, from the CPU by %g (bound %g)", m.name, periodic, dh, dc, bound)
			}
			if pa.Resets != pc.Resets || pa.Step != pc.Step {
				t.Errorf("%s periodic=%v: steps/resets %d/%d on the device, %d/%d on the CPU", m.name, periodic, pa.Step, pa.Resets, pc.Step, pc.Resets)
			}
			ha, _ := sa.History()
			hb, _ := sh.History()
			if ha.NumRows() != hb.NumRows() {
				t.Errorf("%s: history rows %d (device) vs %d (host loop)", m.name, ha.NumRows(), hb.NumRows())
			}
			ha.Release()
			hb.Release()
		}
	}
}

// TestDeviceFlowTileShapes: the flow's tile shape is the autotune's choice,
// made on the whole step; the bits of the flow do not depend on it. Fixed
// shapes (FIELDGO_TILE) give the tuned flow's field and progress exactly,
// and a shape the kernels cannot launch is refused by name.
func TestDeviceFlowTileShapes(t *testing.T) {
	b := gpuFlow(t)
	defer func() { core.UseStepper = true }()
	for _, m := range models {
		t.Setenv("FIELDGO_TILE", "")
		ref, s, pref := flowRun(t, b, m, flowN, flowBox, false, core.Float64, flowCfg, 60, 60, true)
		t.Logf("%s tuned: %s", m.name, s.DeviceFlow())
		for _, shape := range []string{"8x1", "4x8", "2x8", "2x16", "16x2"} {
			t.Setenv("FIELDGO_TILE", shape)
			f, s, p := flowRun(t, b, m, flowN, flowBox, false, core.Float64, flowCfg, 60, 60, true)
			var by, rpt int
			fmt.Sscanf(shape, "%dx%d", &by, &rpt)
			if !strings.Contains(s.DeviceFlow(), fmt.Sprintf("block 32x%d, %d rows", by, rpt)) {
				t.Errorf("%s FIELDGO_TILE=%s: flow says %q", m.name, shape, s.DeviceFlow())
			}
			if d := maxDiff(ref, f); d != 0 || p != pref {
				t.Errorf("%s: tile %s differs from the tuned shapes by %g (%+v vs %+v)", m.name, shape, d, p, pref)
			}
		}
		for _, bad := range []string{"3x", "64x8", "8x64"} {
			t.Setenv("FIELDGO_TILE", bad)
			s := newSim(t, b, m, flowN, flowBox, false)
			err := s.Start(flowCfg)
			if err == nil {
				_, err = s.Advance(1, 0)
			}
			if err == nil || !strings.Contains(err.Error(), "FIELDGO_TILE") {
				t.Errorf("%s FIELDGO_TILE=%s: want an error naming FIELDGO_TILE, got %v", m.name, bad, err)
			}
		}
	}
}

// TestDeviceFlowDiverges: a too-large dt diverges on the device; the error
// names the step, stage and site like the host loop's, and the field kept is
// finite.
func TestDeviceFlowDiverges(t *testing.T) {
	b := gpuFlow(t)
	for _, stepper := range []bool{true, false} {
		core.UseStepper = stepper
		s := newSim(t, b, models[1], 64, 12, false)
		if err := s.Start(core.FlowConfig{Dt: 3, Tol: 1e-300, CheckEvery: 1000}); err != nil {
			t.Fatal(err)
		}
		_, err := s.Advance(500, 0)
		t.Logf("stepper=%v: %v", stepper, err)
		if err == nil {
			t.Errorf("stepper=%v: dt=3 did not diverge", stepper)
		}
		for _, v := range field(t, s) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("stepper=%v: the field kept is not finite", stepper)
				break
			}
		}
	}
	core.UseStepper = true
}
