package radbench

import (
	"math"
	"testing"

	"github.com/fieldgo/fieldgo/core/radiation"
	"github.com/fieldgo/fieldgo/internal/radscene"
)

// BenchmarkRadiation reports samples/s (observer x time x particle) on the
// CPU for each kernel variant on radscene's default scene (256 observers x
// 512 samples x 4 particles, 1024 knots per period); the naive kernel (cold
// search, no reuse) runs in the same process for the ratio.
func BenchmarkRadiation(b *testing.B) {
	sc := radscene.New(b, radscene.Size{})
	defer sc.Release()
	type variant struct {
		name string
		opt  radiation.Options
	}
	def := radiation.DefaultOptions()
	mk := func(f func(o *radiation.Options)) radiation.Options { o := def; f(&o); return o }
	variants := []variant{
		{"newton2_f64_naive_cold", mk(func(o *radiation.Options) { o.Search, o.CoefReuse = radiation.Cold, false })},
		{"newton2_f64_warm", mk(func(o *radiation.Options) { o.CoefReuse = false })},
		{"newton2_f64_warm_reuse", def},
		{"newton2_f32_warm_reuse", mk(func(o *radiation.Options) { o.Precision = radiation.Float32 })},
		{"rk4x4_f64_warm_reuse", mk(func(o *radiation.Options) { o.Method = radiation.RK4 })},
	}
	samples := float64(sc.O * sc.S * sc.P)
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				c, err := radiation.Fields(sc.Src, sc.Obs, sc.Times, sc.S, v.opt)
				if err != nil {
					b.Fatal(err)
				}
				if math.IsNaN(c.Data[0][0]) {
					b.Fatal("NaN cube")
				}
				c.Release()
			}
			b.ReportMetric(samples*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// TestSceneIsValid keeps the benchmark honest: every sample sees every
// particle (no NaN), and the variants agree bit for bit.
func TestSceneIsValid(t *testing.T) {
	sc := radscene.New(t, radscene.Size{O: 16, S: 64})
	defer sc.Release()
	var base *radiation.Cube
	for _, opt := range []radiation.Options{
		{Method: radiation.Newton, NIters: 2, NSubsteps: 1, Search: radiation.Cold},
		radiation.DefaultOptions(),
	} {
		c, err := radiation.Fields(sc.Src, sc.Obs, sc.Times, sc.S, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		for k, col := range c.Data {
			for i, v := range col {
				if math.IsNaN(v) {
					t.Fatalf("%s[%d] is NaN", c.Columns[k], i)
				}
				if base != nil && math.Float64bits(v) != math.Float64bits(base.Data[k][i]) {
					t.Fatalf("%s[%d]: %v vs %v", c.Columns[k], i, v, base.Data[k][i])
				}
			}
		}
		base = c
	}
}

// TestEdgeOfKnots: with times running past both ends of the faster
// particles' knots, Newton with 2 corrections gives, on the CPU, NaN exactly
// where the converged retarded time (8 corrections) is off the knots, and
// close to the converged time elsewhere: an advance whose iterates leave the
// knots is not kept (it was evaluated on the extrapolated cubic, and once
// ended inside the knots far from any root: t_ret 7.3 where the root was
// beyond the knots at ~31), the cold solve decides.
func TestEdgeOfKnots(t *testing.T) {
	sc := radscene.New(t, radscene.Size{O: 512, S: 256, P: 4})
	defer sc.Release()
	for s := range sc.Times {
		sc.Times[s] = 10 + 85*float64(s)/float64(sc.S)
	}
	var cubes []*radiation.Cube
	for _, n := range []int{2, 8} {
		opt := radiation.DefaultOptions()
		opt.NIters, opt.Retarded = n, true
		c, err := radiation.Fields(sc.Src, sc.Obs, sc.Times, sc.S, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		cubes = append(cubes, c)
	}
	nan, worst := 0, 0.0
	for k := radiation.NComp; k < len(cubes[0].Data); k++ {
		for i, v := range cubes[0].Data[k] {
			w := cubes[1].Data[k][i]
			if math.IsNaN(v) != math.IsNaN(w) {
				t.Fatalf("%s[%d]: n=2 %v, converged %v", cubes[0].Columns[k], i, v, w)
			}
			if math.IsNaN(v) {
				nan++
				continue
			}
			worst = math.Max(worst, math.Abs(v-w))
		}
	}
	// Two corrections are not converged everywhere: in the orbit's plane the
	// fastest particle's retarded time moves by ~1 per sample here (samples
	// 0.33 apart in t), and n=2 is measured 7e-3 off there. A spurious root
	// was off by ~20; the bound is a tenth of the sample spacing.
	if bound := 0.1 * (sc.Times[1] - sc.Times[0]); nan == 0 || worst > bound {
		t.Fatalf("%d NaN retarded times, worst |n=2 - converged| %.3g (bound %.3g)", nan, worst, bound)
	}
	t.Logf("%d NaN retarded times (the same as converged); worst |n=2 - converged| = %.3g", nan, worst)
}
