package cuda_test

import (
	"fmt"
	"math"
	"testing"

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
	b := gpuFlow(t)
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
