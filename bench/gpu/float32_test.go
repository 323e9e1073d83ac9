package gpubench

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/fieldgo/fieldgo/core"
)

// u32 is float32's unit roundoff.
const u32 = 0x1p-24

// f32Bound is the bound on max|phi_float32 - phi_float64| / max(1, max|phi|)
// after n steps of the arrested Newton flow from the same field (the same
// resets on both). Storing phi', v' and the stage gradients in float32
// rounds each by at most u32 of itself every step; the flow carries these
// perturbations along without amplifying them (RK4 within its stability
// limit, velocity arrested), so they add up: per step at most u32 |phi| from
// phi's rounding, dt u32 |v| (<= u32 |phi| in these runs) from the
// velocity's, and the four stage gradients' (g1..g4, weighted by at most
// dt^2/2 + dt/3, each <= u32 |phi| after the dt^2|g| <~ |phi| of a stable
// step): k = 8 covers those six terms with room for the host check steps
// (every 100th), whose RK4 trial fields are stored too. Measured on the
// H200: 1-2% of it for these runs. It assumes a relaxing flow: in the first
// 100 steps of a hedgehog at 512^2 (max|grad| ~ 2, the nonlinear transient)
// the fields differed by 1.7x it, and once converged they differ along the
// soft modes (a vortex's translation) while the energies agree to 1e-8
// (docs/performance/gpu.md).
func f32Bound(steps int) float64 { return float64(steps) * 8 * u32 }

func relDiff(a, b []float64) float64 {
	scale := 1.0
	for _, v := range b {
		scale = math.Max(scale, math.Abs(v))
	}
	return maxDiff(a, b) / scale
}

// TestFloat32DeviceFlow: float32 storage against itself (run again, chunked
// differently: bit-identical), against the host loop in float32 on the same
// GPU and against float64 (within f32Bound).
func TestFloat32DeviceFlow(t *testing.T) {
	b := gpu(t)
	defer func() { core.UseStepper = true }()
	const steps = flowSteps
	n, box, cfg := flowN, flowBox, flowCfg
	for _, m := range models {
		for _, periodic := range []bool{false, true} {
			run := func(prec string, stepper bool, chunk int) ([]float64, core.Progress) {
				f, _, p := flowRun(t, b, m, n, box, periodic, prec, cfg, steps, chunk, stepper)
				return f, p
			}
			a, pa := run(core.Float32, true, steps)
			a2, pa2 := run(core.Float32, true, steps)
			c7, p7 := run(core.Float32, true, 7)
			h, ph := run(core.Float32, false, steps)
			d, pd := run(core.Float64, true, steps)
			if dd := maxDiff(a, a2); dd != 0 || pa != pa2 {
				t.Errorf("%s periodic=%v: repeated float32 flows differ by %g (%+v vs %+v)", m.name, periodic, dd, pa, pa2)
			}
			if dd := maxDiff(a, c7); dd != 0 || pa != p7 {
				t.Errorf("%s periodic=%v: float32 Advance(7) chunks differ from one Advance by %g", m.name, periodic, dd)
			}
			for i, v := range a {
				if v != float64(float32(v)) {
					t.Fatalf("%s: the float32 field's value %v at %d is not float32-representable", m.name, v, i)
				}
			}
			bound := f32Bound(steps)
			rh, rd := relDiff(a, h), relDiff(a, d)
			fmt.Printf("F32FLOW %s periodic=%v %d steps: rel|f32 device - f32 host loop| %.3g, rel|f32 - f64| %.3g (bound %.3g = %d*8*2^-24); E f32 %.15g f64 %.15g (rel %.3g); resets %d vs %d\n",
				m.name, periodic, steps, rh, rd, bound, steps, pa.Energy, pd.Energy, math.Abs(pa.Energy-pd.Energy)/math.Abs(pd.Energy), pa.Resets, pd.Resets)
			if pa.Resets != pd.Resets || pa.Step != pd.Step {
				t.Errorf("%s periodic=%v: steps/resets %d/%d in float32, %d/%d in float64", m.name, periodic, pa.Step, pa.Resets, pd.Step, pd.Resets)
			}
			if !(rh <= bound) || !(rd <= bound) {
				t.Errorf("%s periodic=%v: float32 differs from the host loop by %g, from float64 by %g (relative; bound %g)", m.name, periodic, rh, rd, bound)
			}
			if ph.Step != pa.Step {
				t.Errorf("%s: host loop at step %d, device at %d", m.name, ph.Step, pa.Step)
			}
		}
	}
}

// TestFloat32Error measures what float32 storage costs on the two benchmark
// theories (FIELDGO_F32_SIZES, default 256; FIELDGO_F32_MODELS to pick): the
// field and energy against float64 after FIELDGO_F32_K steps (default
// "100,1000") from the same start, and the convergence floor: float64
// relaxed to max|grad| < 1e-8 (at most FIELDGO_F32_REF_STEPS steps, default
// 200000), float32 run for max(FIELDGO_F32_STEPS (default 20000), twice
// float64's steps unless FIELDGO_F32_FIXED=1) with a tolerance it cannot
// reach; the smallest max|grad| it shows, against the estimate
// core.Simulation.GradientFloor, and its energy against float64's.
func TestFloat32Error(t *testing.T) {
	if os.Getenv("FIELDGO_F32") == "" {
		t.Skip("set FIELDGO_F32=1")
	}
	b := gpu(t)
	sizes := []int{256}
	if v := os.Getenv("FIELDGO_F32_SIZES"); v != "" {
		sizes = nil
		for _, f := range splitComma(v) {
			if n, err := strconv.Atoi(f); err == nil {
				sizes = append(sizes, n)
			}
		}
	}
	minSteps := envInt("FIELDGO_F32_STEPS", 20000)
	refSteps := envInt("FIELDGO_F32_REF_STEPS", 200000)
	ks := []int{100, 1000}
	if v, ok := os.LookupEnv("FIELDGO_F32_K"); ok {
		ks = nil
		for _, f := range splitComma(v) {
			if k, err := strconv.Atoi(f); err == nil {
				ks = append(ks, k)
			}
		}
	}
	for _, m := range models {
		if v := os.Getenv("FIELDGO_F32_MODELS"); v != "" && !contains(splitComma(v), m.name) {
			continue
		}
		for _, n := range sizes {
			for _, k := range ks {
				var fs [2][]float64
				var ps [2]core.Progress
				for i, prec := range []string{core.Float32, core.Float64} {
					s := newSimAs(t, b, m, n, m.box, false, prec)
					if err := s.Start(core.FlowConfig{Tol: 1e-300, MaxSteps: 1 << 40}); err != nil {
						t.Fatal(err)
					}
					p, err := s.Advance(k, 0)
					if err != nil {
						t.Fatal(err)
					}
					fs[i], ps[i] = field(t, s), p
					s.Close()
				}
				fmt.Printf("F32ERR %s %d^2 after %d steps: rel|phi32-phi64| %.3g (bound %.3g), E32 %.15g E64 %.15g rel %.3g, max|grad| %.3g vs %.3g, resets %d vs %d\n",
					m.name, n, k, relDiff(fs[0], fs[1]), f32Bound(k), ps[0].Energy, ps[1].Energy,
					math.Abs(ps[0].Energy-ps[1].Energy)/math.Abs(ps[1].Energy), ps[0].MaxGrad, ps[1].MaxGrad, ps[0].Resets, ps[1].Resets)
			}
			// The floor.
			s64 := newSimAs(t, b, m, n, m.box, false, core.Float64)
			t0 := time.Now()
			h, err := s64.Minimize(core.FlowConfig{Tol: 1e-8, MaxSteps: refSteps})
			if err != nil {
				t.Fatal(err)
			}
			h.Release()
			p64, _ := s64.Progress()
			q64, _ := s64.Integral(chargeOf(m))
			el64 := time.Since(t0)
			s64.Close()
			s32 := newSimAs(t, b, m, n, m.box, false, core.Float32)
			est, err := s32.GradientFloor()
			if err != nil {
				t.Fatal(err)
			}
			steps := max(minSteps, 2*p64.Step)
			if os.Getenv("FIELDGO_F32_FIXED") == "1" {
				steps = minSteps
			}
			t0 = time.Now()
			h, err = s32.Minimize(core.FlowConfig{Tol: 1e-300, MaxSteps: steps, CheckEvery: 100})
			if err != nil {
				t.Fatal(err)
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
			s32.Close()
			fmt.Printf("F32FLOOR %s %d^2 (h %.4g): float64 to 1e-8 in %d steps (%.2f s, converged %v, max|grad| %.3g), E64 %.15g, %s %.12g; float32 %d steps (%.2f s): min max|grad| %.3g at step %d, last %.3g, estimate %.3g (ratio %.2f), first step below 1e-3/1e-4/1e-5/1e-6: %v/%v/%v/%v; E32 %.15g rel to E64 %.3g; %s %.12g (diff %.3g)\n",
				m.name, n, m.box/float64(n-1), p64.Step, el64.Seconds(), p64.Converged, p64.MaxGrad, p64.Energy, chargeOf(m), q64, steps, el32.Seconds(), best, bestAt, p32.MaxGrad, est, best/est,
				reach[1e-3], reach[1e-4], reach[1e-5], reach[1e-6], p32.Energy, math.Abs(p32.Energy-p64.Energy)/math.Abs(p64.Energy), chargeOf(m), q32, math.Abs(q32-q64))
			if p32.Converged {
				t.Errorf("%s: float32 reported convergence at tol 1e-300", m.name)
			}
			if best < est/1000 {
				t.Errorf("%s: float32 reached max|grad| %.3g, far below the floor estimate %.3g: the estimate is wrong", m.name, best, est)
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func chargeOf(m model) string {
	if m.name == "abelian_higgs" {
		return "flux"
	}
	return "charge"
}

func splitComma(s string) []string {
	var out []string
	cur := ""
	for _, r := range s {
		if r == ',' {
			out = append(out, cur)
			cur = ""
			continue
		}
		if r != ' ' {
			cur += string(r)
		}
	}
	return append(out, cur)
}
