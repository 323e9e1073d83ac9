package cuda_test

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/kernels/cuda"
)

// TestDeviceFlowFallbacks runs the device flow's three ways of taking a
// step on the GPU. The fused step (fg_k_stages234) is what a theory that fits
// takes; the test hook cuda.SetFlowFallback forces the fallbacks that
// theories too large for it take: stages 2-3 by fg_k_tile and stage 4 with
// the update by fg_k_tile_up (level 1), or stages 2-4 by fg_k_tile and the
// update by fg_k_update in place (level 2). Each path is bit-identical run
// to run and in chunks (odd chunks end on either buffer pair, or on none);
// levels 0 and 1 are bit-identical in float32 storage (docs/decisions/0002);
// every other pair of paths differs by rounding only (float64: the gradient
// inlined three times contracts to FMAs differently; float32 level 2: stage
// 4's gradient is stored rounded before the update reads it), within the
// flow's rounding bound, with the same steps and resets. The log lists each
// pair's largest difference.
func TestDeviceFlowFallbacks(t *testing.T) {
	b := gpuFlow(t)
	defer func() { core.UseStepper = true }()
	core.UseStepper = true
	const steps = 150
	type result struct {
		f    []float64 // field, then velocity
		p    core.Progress
		h    [][]float64
		desc string
	}
	for _, m := range models {
		for _, prec := range []string{core.Float64, core.Float32} {
			for _, periodic := range []bool{false, true} {
				name := m.name + " " + prec
				if periodic {
					name += " periodic"
				}
				var res [3]result
				for level, want := range []string{"stages 2-4 in one kernel", "stage 4 fuses the update", "7 kernels per step"} {
					for _, chunk := range []int{steps, 7} {
						s := openSim(t, b, m, flowN, flowBox, periodic, prec)
						prog, ok := s.Program().(*cuda.Program)
						if !ok {
							s.Close()
							t.Fatalf("%s: the simulation's program is %T, not the CUDA backend's", m.name, s.Program())
						}
						cuda.SetFlowFallback(prog, level)
						if err := s.Start(flowCfg); err != nil {
							s.Close()
							t.Fatal(err)
						}
						var p core.Progress
						var err error
						for done := 0; done < steps; done += chunk {
							if p, err = s.Advance(min(chunk, steps-done), 0); err != nil {
								s.Close()
								t.Fatal(err)
							}
						}
						r := result{f: append(field(t, s), velocity(t, s)...), p: p, h: history(t, s), desc: s.DeviceFlow()}
						s.Close()
						if !strings.Contains(r.desc, want) || (level > 0 && strings.Contains(r.desc, "stages 2-4 in one kernel")) ||
							(level > 1 && strings.Contains(r.desc, "fuses the update")) {
							t.Errorf("%s level %d: the flow says %q, want %q", name, level, r.desc, want)
						}
						if chunk == steps {
							res[level] = r
							continue
						}
						if d := maxDiff(res[level].f, r.f); !bitsEqual(res[level].f, r.f) || r.p != res[level].p || !historiesEqual(res[level].h, r.h) {
							t.Errorf("%s level %d: Advance(7) chunks differ from one Advance by %g (%+v vs %+v)", name, level, d, r.p, res[level].p)
						}
					}
				}
				u := 0x1p-53
				if prec == core.Float32 {
					u = 0x1p-24
				}
				bound := flowBound(steps, flowN, flowBox, flowCfg, u)
				for _, pair := range [][2]int{{0, 1}, {1, 2}, {0, 2}} {
					a, c := res[pair[0]], res[pair[1]]
					same := bitsEqual(a.f, c.f) && a.p == c.p && historiesEqual(a.h, c.h)
					d := maxDiff(a.f, c.f)
					t.Logf("%s: levels %d and %d: bit-identical %v, max|diff| %.3g (bound %.3g), E %.17g / %.17g", name, pair[0], pair[1], same, d, bound, a.p.Energy, c.p.Energy)
					if pair == [2]int{0, 1} && prec == core.Float32 && !same {
						t.Errorf("%s: the fused step and the tile_up fallback differ in float32 storage by %g (%+v vs %+v)", name, d, a.p, c.p)
					}
					if !(d <= bound) || a.p.Step != c.p.Step || a.p.Resets != c.p.Resets {
						t.Errorf("%s: levels %d and %d differ by %g (bound %g), steps/resets %d/%d vs %d/%d", name, pair[0], pair[1], d, bound,
							a.p.Step, a.p.Resets, c.p.Step, c.p.Resets)
					}
				}
				t.Logf("%s: %s", name, res[0].desc)
			}
		}
	}
}

// velocity is the simulation's velocity, component after component.
func velocity(tb testing.TB, s *core.Simulation) []float64 {
	v, err := s.Velocity()
	if err != nil {
		tb.Fatal(err)
	}
	var out []float64
	for c := 0; c < v.NComp(); c++ {
		out = append(out, v.Comp(c)...)
	}
	return out
}

// bitsEqual compares float64s bit for bit (NaNs included).
func bitsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// history is the simulation's history, column by column (the float64
// columns; others are left out).
func history(t testing.TB, s *core.Simulation) [][]float64 {
	t.Helper()
	h, err := s.History()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	var out [][]float64
	for c := 0; c < int(h.NumCols()); c++ {
		col, ok := h.Column(c).(*array.Float64)
		if !ok {
			continue
		}
		out = append(out, append([]float64(nil), col.Float64Values()...))
	}
	return out
}

func historiesEqual(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bitsEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}
