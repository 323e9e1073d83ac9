package gpubench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fieldgo/fieldgo/internal/fixtures"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cpu"
	"github.com/fieldgo/fieldgo/kernels/cuda"
)

var processStart = time.Now()

const (
	babySkyrmeSpec   = `{"name": "baby_skyrme", "fields": ["n1", "n2", "n3"], "params": ["kappa", "mass"], "densities": ["charge", "skyrme", "potential"], "constraint": "unit_vector", "gradient": "derived"}`
	abelianHiggsSpec = `{"name": "abelian_higgs", "fields": ["psi1", "psi2", "a1", "a2"], "params": ["lambda"], "densities": ["flux"], "constraint": "", "gradient": "derived"}`
)

// source finds a point source in core/testdata (from the package directory)
// or in ./testdata (beside the test binary on the GPU machine).
func source(tb testing.TB, file string) string {
	for _, d := range []string{"../../core/testdata", "testdata"} {
		if b, err := os.ReadFile(filepath.Join(d, file)); err == nil {
			return string(b)
		}
	}
	tb.Fatalf("point source %s not found", file)
	return ""
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

// The benchmarks' initial fields (internal/fixtures).
var hedgehog, vortex = fixtures.Hedgehog(1), fixtures.Vortex(1)

var gpuBackend *cuda.Backend

func gpu(tb testing.TB) *cuda.Backend {
	tb.Helper()
	if gpuBackend == nil {
		b, err := cuda.New(cuda.Options{})
		if err != nil {
			tb.Skipf("no usable GPU: %v", err)
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
	tb.Cleanup(func() { s.Close() })
	if err := s.Fill(m.fill); err != nil {
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
// stencil term (kernels/cuda tests); the relaxing flow does not amplify it
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
	b := gpu(t)
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
	b := gpu(t)
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

// TestDeviceFlowFused234: stages 2-4 in one kernel (fg_k_stages234) against
// the three-kernel step (FIELDGO_FLOW_FUSE234=0), in both storage precisions
// and both boundaries: the same steps, resets and arrests, and fields within
// steps * 8 units of rounding of their precision. Measured on the H200 (2026-11-30):
// float32 the same bits, float64 within 1.4e-15 after 120 steps — the
// gradient code inlined into one kernel contracts to FMAs differently (the
// device flow already differs from the host loop and the CPU by that much).
func TestDeviceFlowFused234(t *testing.T) {
	b := gpu(t)
	defer func() { core.UseStepper = true }()
	const steps = 120
	for _, m := range models {
		for _, prec := range []string{core.Float64, core.Float32} {
			for _, periodic := range []bool{false, true} {
				for _, n := range []int{flowN, 250} {
					box := flowBox * float64(n-1) / float64(flowN-1)
					t.Setenv("FIELDGO_FLOW_FUSE234", "0")
					three, s3, p3 := flowRun(t, b, m, n, box, periodic, prec, flowCfg, steps, 50, true)
					t.Setenv("FIELDGO_FLOW_FUSE234", "")
					one, s1, p1 := flowRun(t, b, m, n, box, periodic, prec, flowCfg, steps, 50, true)
					if !strings.Contains(s1.DeviceFlow(), "stages 2-4 in one kernel") || strings.Contains(s3.DeviceFlow(), "in one kernel") {
						t.Errorf("%s %s %d: flows say %q and %q", m.name, prec, n, s1.DeviceFlow(), s3.DeviceFlow())
					}
					// A few units of rounding per step in the stored field (the
					// update's five-term sums), not amplified by the relaxing
					// flow: steps * 8 u relative, as TestFloat32DeviceFlow.
					u := 0x1p-53
					if prec == core.Float32 {
						u = u32
					}
					bound := float64(steps) * 8 * u
					d := relDiff(one, three)
					if !(d <= bound) || p1.Step != p3.Step || p1.Resets != p3.Resets || p1.Converged != p3.Converged ||
						!(math.Abs(p1.Energy-p3.Energy) <= bound*math.Abs(p3.Energy)) {
						t.Errorf("%s %s periodic=%v %d: stages 2-4 fused differ by %g relative (bound %g): %+v vs %+v", m.name, prec, periodic, n, d, bound, p1, p3)
					}
					t.Logf("%s %s periodic=%v %d: rel|fused - three kernels| = %.3g (bound %.3g); E=%.17g steps=%d resets=%d; %s",
						m.name, prec, periodic, n, d, bound, p1.Energy, p1.Step, p1.Resets, s1.DeviceFlow())
				}
			}
		}
	}
}

// TestDeviceFlowDiverges: a too-large dt diverges on the device; the error
// names the step, stage and site like the host loop's, and the field kept is
// finite.
func TestDeviceFlowDiverges(t *testing.T) {
	b := gpu(t)
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

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// TestStepTimes prints ms per ANF step (Advance, as a user runs it, with a
// history row and checkpoint every 100 steps; and the device flow alone,
// CheckEvery beyond the run) and the bandwidth: the bytes the fused step
// moves at least (17 field-sized streams with stage 4 fused with the update,
// 22 in the phase-2 step: stage 1 reads phi, v and writes g1; stages 2..4
// read phi, v (and g1 or g2) and write their gradient; the update reads phi,
// v, g1..g4 and writes phi, v) over the time, against the
// 4.2 TB/s copy ceiling. FIELDGO_BENCH_SECONDS sets the time per point
// (default 0.3 s); FIELDGO_BENCH_HOST=1 adds the host loop on the GPU.
// benchSizes: the grids TestStepTimes times, FIELDGO_BENCH_SIZES="1024,2048"
// to pick some (e.g. for a profiler run).
func benchSizes() []int {
	var out []int
	for _, f := range strings.Split(os.Getenv("FIELDGO_BENCH_SIZES"), ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && v > 0 {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return []int{256, 512, 1024, 2048}
	}
	return out
}

// benchPrecisions: the storage precisions TestStepTimes times,
// FIELDGO_BENCH_PRECISION=float32, float64 (the default) or both.
func benchPrecisions() []string {
	switch os.Getenv("FIELDGO_BENCH_PRECISION") {
	case "float32":
		return []string{core.Float32}
	case "both":
		return []string{core.Float64, core.Float32}
	}
	return []string{core.Float64}
}

func TestStepTimes(t *testing.T) {
	if os.Getenv("FIELDGO_BENCH") == "" {
		t.Skip("set FIELDGO_BENCH=1")
	}
	b := gpu(t)
	secs := 0.3
	if v, err := strconv.ParseFloat(os.Getenv("FIELDGO_BENCH_SECONDS"), 64); err == nil {
		secs = v
	}
	modes := []string{"advance", "device"}
	if os.Getenv("FIELDGO_BENCH_HOST") != "" {
		modes = append(modes, "hostloop")
	}
	// FIELDGO_BENCH_PHASES=1 adds the device flow with the stage-1 reduction
	// folded ("device-fold", FIELDGO_FLOW_FOLD=1) and the step without the
	// fused update ("device-unfused": 22 streams), in the same run.
	if os.Getenv("FIELDGO_BENCH_PHASES") != "" {
		modes = append(modes, "device-fold", "device-unfused")
	}
	// FIELDGO_BENCH_MODES=device (a comma list) times only those modes.
	if v := os.Getenv("FIELDGO_BENCH_MODES"); v != "" {
		modes = strings.Split(v, ",")
	}
	setEnv := func(k, v string) {
		if v == "" {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, v)
		}
	}
	fuse0, fold0 := os.Getenv("FIELDGO_FLOW_FUSE"), os.Getenv("FIELDGO_FLOW_FOLD")
	defer func() { setEnv("FIELDGO_FLOW_FUSE", fuse0); setEnv("FIELDGO_FLOW_FOLD", fold0) }()
	// FIELDGO_BENCH_THEORIES=baby_skyrme (a comma list) times only those.
	only := os.Getenv("FIELDGO_BENCH_THEORIES")
	fmt.Println("| theory | grid | precision | mode | steps | ms/step | GB/s | of 4.2 TB/s |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, m := range models {
		if only != "" && !slices.Contains(strings.Split(only, ","), m.name) {
			continue
		}
		for _, n := range benchSizes() {
			for _, prec := range benchPrecisions() {
				for _, mode := range modes {
					core.UseStepper = mode != "hostloop"
					setEnv("FIELDGO_FLOW_FUSE", fuse0)
					setEnv("FIELDGO_FLOW_FOLD", fold0)
					switch mode {
					case "device-fold":
						os.Setenv("FIELDGO_FLOW_FOLD", "1")
					case "device-unfused":
						os.Setenv("FIELDGO_FLOW_FOLD", "0")
						os.Setenv("FIELDGO_FLOW_FUSE", "0")
					}
					s := newSimAs(t, b, m, n, m.box, false, prec)
					cfg := core.FlowConfig{Tol: 1e-300, MaxSteps: 1 << 40}
					if strings.HasPrefix(mode, "device") {
						cfg.CheckEvery = 1 << 40
					}
					if err := s.Start(cfg); err != nil {
						t.Fatal(err)
					}
					if _, err := s.Advance(101, 0); err != nil { // warm: tune, graph, first check
						t.Fatal(err)
					}
					t0 := time.Now()
					steps := 0
					for time.Since(t0).Seconds() < secs {
						k := 200
						if _, err := s.Advance(k, 0); err != nil {
							t.Fatal(err)
						}
						steps += k
					}
					sec := time.Since(t0).Seconds() / float64(steps)
					nc := map[string]int{"baby_skyrme": 3, "abelian_higgs": 4}[m.name]
					// Streams the step moves: 17 with stage 4 fused with the update
					// (stage 1: phi, v, g1 out; stage 2: phi, v, g2 out; stage 3:
					// phi, v, g1, g3 out; stage 4: phi, v, g2, g1, g3, phi', v' out),
					// else 22 (a separate update kernel).
					streams := 22.0
					if strings.Contains(s.DeviceFlow(), "fuses the update") {
						streams = 17
					}
					elem := 8.0
					if prec == core.Float32 {
						elem = 4
					}
					bytes := streams * elem * float64(nc) * float64(n*n)
					shape := ""
					if p, ok := s.Program().(*cuda.Program); ok {
						for _, k := range p.Describe() {
							if k.Name == "fg_k_tile" {
								shape = fmt.Sprintf(" | tile 32x%d/%d", k.BlockY, k.TileRows)
							}
						}
					}
					fmt.Printf("| %s | %d | %s | %s | %d | %.4f | %.0f | %.0f%% | %g streams%s |\n", m.name, n, prec, mode, steps, sec*1e3, bytes/sec/1e9, 100*bytes/sec/4.2e12, streams, shape)
					if n == 256 && mode == "device" {
						fmt.Printf("|   | flow: %s |\n", s.DeviceFlow())
					}
					if mode == "device" {
						if p, ok := s.Program().(*cuda.Program); ok {
							for _, r := range p.TuneReport() {
								fmt.Printf("|   | tune %s |\n", r)
							}
						}
					}
					s.Close()
				}
			}
		}
	}
	core.UseStepper = true
	if p := describe(t, b); p != "" {
		fmt.Print(p)
	}
}

func describe(t *testing.T, b *cuda.Backend) string {
	out := ""
	for _, m := range models {
		s := newSim(t, b, m, 256, m.box, false)
		if _, err := s.Energy(); err != nil {
			t.Fatal(err)
		}
		p := s.Program().(*cuda.Program)
		out += fmt.Sprintf("%s kernels:\n", m.name)
		for _, k := range p.Describe() {
			out += fmt.Sprintf("  %-16s regs %3d (budget %3d) spill %d smem %5d+%5d block %4d (y %d, rows %d) %d blocks/SM occupancy %.0f%%\n",
				k.Name, k.Registers, cuda.BudgetAs(k.Name, p.Precision(), m.name), k.SpillStores+k.SpillLoads, k.SharedBytes, k.DynShared, k.BlockSize, k.BlockY, k.TileRows, k.BlocksPerSM, 100*k.Occupancy)
		}
	}
	return out
}

// TestFirstStep prints the time from process start to the first ANF step
// done (Baby Skyrme 256^2): compile (or CUBIN cache), field, stiffness, tune
// (or tune cache), graph, one step. Run it in a fresh process with an empty
// FIELDGO_CACHE (cold) and again with the same one (cached).
func TestFirstStep(t *testing.T) {
	if os.Getenv("FIELDGO_FIRST") == "" {
		t.Skip("set FIELDGO_FIRST=1")
	}
	b := gpu(t)
	t1 := time.Now()
	s := newSim(t, b, models[0], 256, 20, false)
	t2 := time.Now()
	if err := s.Start(core.FlowConfig{Tol: 1e-300}); err != nil {
		t.Fatal(err)
	}
	t3 := time.Now()
	if _, err := s.Advance(2, 0); err != nil { // step 0 on the host (a check step), step 1 on the device
		t.Fatal(err)
	}
	t4 := time.Now()
	cached := s.Program().(*cuda.Program).Cached()
	fmt.Printf("FIRSTSTEP cached=%v process->backend %.3f s, compile+alloc+fill %.3f s, start (stiffness) %.3f s, first 2 steps (tune, graph) %.3f s, process start -> first device step done %.3f s\n",
		cached, t1.Sub(processStart).Seconds(), t2.Sub(t1).Seconds(), t3.Sub(t2).Seconds(), t4.Sub(t3).Seconds(), t4.Sub(processStart).Seconds())
}

// TestConverge runs the Baby Skyrme charge-1 skyrmion (256^2, box 20,
// kappa = mass = 1, hedgehog start) to max|grad| < 1e-6 on the GPU.
func TestConverge(t *testing.T) {
	if os.Getenv("FIELDGO_CONVERGE") == "" {
		t.Skip("set FIELDGO_CONVERGE=1")
	}
	b := gpu(t)
	s := newSim(t, b, models[0], 256, 20, false)
	t0 := time.Now()
	hist, err := s.Minimize(core.FlowConfig{Tol: 1e-6, MaxSteps: 100000})
	if err != nil {
		t.Fatal(err)
	}
	hist.Release()
	el := time.Since(t0)
	p, _ := s.Progress()
	q, _ := s.Integral("charge")
	fmt.Printf("CONVERGE baby_skyrme 256^2 box 20: %d steps, converged=%v, max_grad %.3g, E=%.12f, charge %.8f, minimize %.3f s, process start -> converged %.3f s\n",
		p.Step, p.Converged, p.MaxGrad, p.Energy, q, el.Seconds(), time.Since(processStart).Seconds())
}
