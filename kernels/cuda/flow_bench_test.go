package cuda_test

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/kernels/cuda"
)

// The flow's measurements (docs/performance/gpu.md) as benchmarks: each
// skips without a GPU, and -bench picks theories, grids, precisions and
// modes by name, e.g.
//
//	go test ./kernels/cuda -run '^$' -bench 'Step/baby_skyrme/2048/float64/device$' -benchtime 0.25s -v

var processStart = time.Now()

var (
	f32FloorSteps = flag.Int("f32-floor-steps", 20000, "BenchmarkFloat32Error: float32 runs for at least this many steps to its floor")
	f32RefSteps   = flag.Int("f32-ref-steps", 200000, "BenchmarkFloat32Error: at most this many float64 steps to max|grad| < 1e-8")
	f32Fixed      = flag.Bool("f32-floor-fixed", false, "BenchmarkFloat32Error: float32 runs -f32-floor-steps steps, not twice float64's")
)

// stepModes: "advance" is Advance as a user runs it (a history row and a
// check every 100 steps), "device" the device flow alone (no check within the
// run), "hostloop" core's own step loop on the GPU (no kernels.Stepper).
var stepModes = []string{"advance", "device", "hostloop"}

// benchSim keeps one warmed simulation across the rounds of one
// sub-benchmark (the testing package calls it again with a larger b.N).
var benchSim struct {
	name string
	s    *core.Simulation
}

func warmSim(b *testing.B, make func() *core.Simulation) *core.Simulation {
	if benchSim.name == b.Name() {
		return benchSim.s
	}
	if benchSim.s != nil {
		benchSim.s.Close()
	}
	benchSim.name, benchSim.s = b.Name(), make()
	return benchSim.s
}

// BenchmarkStep: ms per arrested Newton flow step, b.N steps in Advance calls
// of 200, after 101 steps of warm-up (tune, graph, first check), and the
// bandwidth: the bytes the fused step moves at least (17 field-sized streams
// with stage 4 fused with the update, 22 in the phase-2 step: stage 1 reads
// phi, v and writes g1; stages 2..4 read phi, v (and g1 or g2) and write
// their gradient; the update reads phi, v, g1..g4 and writes phi, v) over
// the time, against the 4.2 TB/s copy ceiling. Sub-benchmarks:
// theory/grid/precision/mode. With -v the device mode logs the flow, its
// tuned shapes and its kernels' registers and occupancy (logFlow).
func BenchmarkStep(b *testing.B) {
	be := gpuFlow(b)
	defer func() { core.UseStepper = true }()
	for _, m := range models {
		for _, n := range []int{256, 512, 1024, 2048} {
			for _, prec := range []string{core.Float64, core.Float32} {
				for _, mode := range stepModes {
					b.Run(fmt.Sprintf("%s/%d/%s/%s", m.name, n, prec, mode), func(b *testing.B) {
						benchStep(b, be, m, n, prec, mode)
					})
				}
			}
		}
	}
	if benchSim.s != nil {
		benchSim.s.Close()
		benchSim.s, benchSim.name = nil, ""
	}
}

func benchStep(b *testing.B, be *cuda.Backend, m model, n int, prec, mode string) {
	core.UseStepper = mode != "hostloop"
	s := warmSim(b, func() *core.Simulation {
		s := openSim(b, be, m, n, m.box, false, prec)
		cfg := core.FlowConfig{Tol: 1e-300, MaxSteps: 1 << 40}
		if mode == "device" {
			cfg.CheckEvery = 1 << 40
		}
		if err := s.Start(cfg); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Advance(101, 0); err != nil { // warm: tune, graph, first check
			b.Fatal(err)
		}
		if mode == "device" {
			logFlow(b, s, m)
		}
		return s
	})
	b.ResetTimer()
	for done := 0; done < b.N; done += 200 {
		if _, err := s.Advance(min(200, b.N-done), 0); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	nc := map[string]int{"baby_skyrme": 3, "abelian_higgs": 4}[m.name]
	// Streams the step moves: 17 with stage 4 fused with the update (stage 1:
	// phi, v, g1 out; stage 2: phi, v, g2 out; stage 3: phi, v, g1, g3 out;
	// stage 4: phi, v, g2, g1, g3, phi', v' out), else 22 (a separate update
	// kernel).
	streams := 22.0
	if strings.Contains(s.DeviceFlow(), "fuses the update") {
		streams = 17
	}
	elem := 8.0
	if prec == core.Float32 {
		elem = 4
	}
	bytes := streams * elem * float64(nc) * float64(n*n)
	b.ReportMetric(sec*1e3, "ms/step")
	b.ReportMetric(bytes/sec/1e9, "GB/s")
	b.ReportMetric(100*bytes/sec/4.2e12, "%copy-ceiling")
	b.ReportMetric(float64(n*n)/sec/1e6, "Msite/s")
}

// logFlow logs a warmed simulation's device flow, its tuned shapes and its
// kernels' registers and occupancy (once per sub-benchmark: with -v the
// testing package prints a benchmark's logs from every round).
func logFlow(b *testing.B, s *core.Simulation, m model) {
	b.Logf("flow: %s", s.DeviceFlow())
	if p, ok := s.Program().(*cuda.Program); ok {
		for _, r := range p.TuneReport() {
			b.Logf("tune %s", r)
		}
		for _, k := range p.Describe() {
			b.Logf("%-16s regs %3d (budget %3d) spill %d smem %5d+%5d block %4d (y %d, rows %d) %d blocks/SM occupancy %.0f%%",
				k.Name, k.Registers, cuda.BudgetAs(k.Name, p.Precision(), m.name), k.SpillStores+k.SpillLoads, k.SharedBytes, k.DynShared, k.BlockSize, k.BlockY, k.TileRows, k.BlocksPerSM, 100*k.Occupancy)
		}
	}
}

// BenchmarkFirstStep: the time from process start to the first ANF step done
// (Baby Skyrme 256^2): compile (or CUBIN cache), field, stiffness, tune (or
// tune cache), graph, one step. Only the first iteration of a fresh process
// measures it: run it alone with -benchtime 1x, with an empty cache
// ($FIELDGO_CACHE, or $FIELDGO_TEST_CUDA_CACHE for the CUBINs: cold) and again
// with the same one (cached).
func BenchmarkFirstStep(b *testing.B) {
	be := gpuFlow(b)
	for i := 0; i < b.N; i++ {
		t1 := time.Now()
		s := openSim(b, be, models[0], 256, 20, false, core.Float64)
		t2 := time.Now()
		if err := s.Start(core.FlowConfig{Tol: 1e-300}); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		if _, err := s.Advance(2, 0); err != nil { // step 0 on the host (a check step), step 1 on the device
			b.Fatal(err)
		}
		t4 := time.Now()
		if i == 0 {
			b.ReportMetric(t4.Sub(processStart).Seconds(), "s-from-process-start")
			b.ReportMetric(t2.Sub(t1).Seconds(), "s-compile+fill")
			b.ReportMetric(t3.Sub(t2).Seconds(), "s-stiffness")
			b.ReportMetric(t4.Sub(t3).Seconds(), "s-first-steps")
			b.Logf("cached=%v: process->backend %.3f s, compile+alloc+fill %.3f s, start (stiffness) %.3f s, first 2 steps (tune, graph) %.3f s, process start -> first device step done %.3f s",
				s.Program().(*cuda.Program).Cached(), t1.Sub(processStart).Seconds(), t2.Sub(t1).Seconds(), t3.Sub(t2).Seconds(), t4.Sub(t3).Seconds(), t4.Sub(processStart).Seconds())
		}
		s.Close()
	}
}

// BenchmarkConverge: the Baby Skyrme charge-1 skyrmion (256^2, box 20,
// kappa = mass = 1, hedgehog start) relaxed to max|grad| < 1e-6 on the GPU;
// ns/op is one whole minimize.
func BenchmarkConverge(b *testing.B) {
	be := gpuFlow(b)
	for i := 0; i < b.N; i++ {
		s := openSim(b, be, models[0], 256, 20, false, core.Float64)
		t0 := time.Now()
		hist, err := s.Minimize(core.FlowConfig{Tol: 1e-6, MaxSteps: 100000})
		if err != nil {
			b.Fatal(err)
		}
		hist.Release()
		el := time.Since(t0)
		p, _ := s.Progress()
		q, _ := s.Integral("charge")
		if !p.Converged {
			b.Errorf("not converged after %d steps: max|grad| %.3g", p.Step, p.MaxGrad)
		}
		b.ReportMetric(float64(p.Step), "steps")
		b.ReportMetric(el.Seconds()/float64(p.Step)*1e3, "ms/step")
		b.Logf("baby_skyrme 256^2 box 20: %d steps, converged=%v, max_grad %.3g, E=%.12f, charge %.8f, minimize %.3f s, process start -> converged %.3f s",
			p.Step, p.Converged, p.MaxGrad, p.Energy, q, el.Seconds(), time.Since(processStart).Seconds())
		s.Close()
	}
}

// BenchmarkFloat32Error measures what float32 storage costs on the two
// benchmark theories (sub-benchmarks theory/grid/what, grids 256 and 512):
// "after=K", the field and energy against float64 after K steps (100, 1000)
// from the same start; "floor", the convergence floor: float64 relaxed to
// max|grad| < 1e-8 (at most -f32-ref-steps steps), float32 run for
// max(-f32-floor-steps, twice float64's steps; -f32-floor-fixed: the former)
// with a tolerance it cannot reach; the smallest max|grad| it shows, against
// the estimate core.Simulation.GradientFloor, and its energy against
// float64's. Run it with -benchtime 1x -v.
func BenchmarkFloat32Error(b *testing.B) {
	be := gpuFlow(b)
	for _, m := range models {
		for _, n := range []int{256, 512} {
			for _, k := range []int{100, 1000} {
				b.Run(fmt.Sprintf("%s/%d/after=%d", m.name, n, k), func(b *testing.B) {
					for range b.N {
						f32After(b, be, m, n, k)
					}
				})
			}
			b.Run(fmt.Sprintf("%s/%d/floor", m.name, n), func(b *testing.B) {
				for range b.N {
					f32Floor(b, be, m, n)
				}
			})
		}
	}
}

func f32After(b *testing.B, be *cuda.Backend, m model, n, k int) {
	var fs [2][]float64
	var ps [2]core.Progress
	for i, prec := range []string{core.Float32, core.Float64} {
		s := openSim(b, be, m, n, m.box, false, prec)
		if err := s.Start(core.FlowConfig{Tol: 1e-300, MaxSteps: 1 << 40}); err != nil {
			b.Fatal(err)
		}
		p, err := s.Advance(k, 0)
		if err != nil {
			b.Fatal(err)
		}
		fs[i], ps[i] = field(b, s), p
		s.Close()
	}
	rel := relDiff(fs[0], fs[1])
	b.ReportMetric(rel, "rel-field-err")
	b.ReportMetric(math.Abs(ps[0].Energy-ps[1].Energy)/math.Abs(ps[1].Energy), "rel-energy-err")
	b.Logf("%s %d^2 after %d steps: rel|phi32-phi64| %.3g (bound %.3g), E32 %.15g E64 %.15g, max|grad| %.3g vs %.3g, resets %d vs %d",
		m.name, n, k, rel, f32Bound(k), ps[0].Energy, ps[1].Energy, ps[0].MaxGrad, ps[1].MaxGrad, ps[0].Resets, ps[1].Resets)
}

func f32Floor(b *testing.B, be *cuda.Backend, m model, n int) {
	s64 := openSim(b, be, m, n, m.box, false, core.Float64)
	t0 := time.Now()
	h, err := s64.Minimize(core.FlowConfig{Tol: 1e-8, MaxSteps: *f32RefSteps})
	if err != nil {
		b.Fatal(err)
	}
	h.Release()
	p64, _ := s64.Progress()
	q64, _ := s64.Integral(chargeOf(m))
	el64 := time.Since(t0)
	s64.Close()
	s32 := openSim(b, be, m, n, m.box, false, core.Float32)
	defer s32.Close()
	est, err := s32.GradientFloor()
	if err != nil {
		b.Fatal(err)
	}
	steps := max(*f32FloorSteps, 2*p64.Step)
	if *f32Fixed {
		steps = *f32FloorSteps
	}
	t0 = time.Now()
	h, err = s32.Minimize(core.FlowConfig{Tol: 1e-300, MaxSteps: steps, CheckEvery: 100})
	if err != nil {
		b.Fatal(err)
	}
	el32 := time.Since(t0)
	mg := h.Column(2).(interface{ Value(int) float64 })
	best, bestAt := math.Inf(1), 0
	stepCol := h.Column(0).(interface{ Value(int) int64 })
	reach := map[float64]int{}
	for r := 0; r < int(h.NumRows()); r++ {
		v := mg.Value(r)
		if v < best {
			best, bestAt = v, int(stepCol.Value(r))
		}
		for _, lv := range []float64{1e-3, 1e-4, 1e-5, 1e-6} {
			if _, ok := reach[lv]; !ok && v < lv {
				reach[lv] = int(stepCol.Value(r))
			}
		}
	}
	h.Release()
	p32, _ := s32.Progress()
	q32, _ := s32.Integral(chargeOf(m))
	b.ReportMetric(best, "min-max|grad|")
	b.ReportMetric(best/est, "of-estimate")
	b.ReportMetric(math.Abs(p32.Energy-p64.Energy)/math.Abs(p64.Energy), "rel-energy-err")
	b.Logf("%s %d^2 (h %.4g): float64 to 1e-8 in %d steps (%.2f s, converged %v, max|grad| %.3g), E64 %.15g, %s %.12g; float32 %d steps (%.2f s): min max|grad| %.3g at step %d, last %.3g, estimate %.3g (ratio %.2f), first step below 1e-3/1e-4/1e-5/1e-6: %v/%v/%v/%v; E32 %.15g rel to E64 %.3g; %s %.12g (diff %.3g)",
		m.name, n, m.box/float64(n-1), p64.Step, el64.Seconds(), p64.Converged, p64.MaxGrad, p64.Energy, chargeOf(m), q64, steps, el32.Seconds(), best, bestAt, p32.MaxGrad, est, best/est,
		reach[1e-3], reach[1e-4], reach[1e-5], reach[1e-6], p32.Energy, math.Abs(p32.Energy-p64.Energy)/math.Abs(p64.Energy), chargeOf(m), q32, math.Abs(q32-q64))
	if p32.Converged {
		b.Errorf("%s: float32 reported convergence at tol 1e-300", m.name)
	}
	if best < est/1000 {
		b.Errorf("%s: float32 reached max|grad| %.3g, far below the floor estimate %.3g: the estimate is wrong", m.name, best, est)
	}
}

func chargeOf(m model) string {
	if m.name == "abelian_higgs" {
		return "flux"
	}
	return "charge"
}
