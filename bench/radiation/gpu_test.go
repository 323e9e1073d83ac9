package radbench

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/fieldgo/fieldgo/core/radiation"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels/cuda"
	"github.com/fieldgo/fieldgo/kernels/cuda/gpuradiation"
)

var gpuDev struct {
	d   *gpuradiation.Device
	err error
}

// gpu opens the GPU once, or skips saying why (CI has no GPU; these run on
// the GPU machine, docs/performance/radiation.md). A compile failure fails.
func gpu(tb testing.TB) *gpuradiation.Device {
	tb.Helper()
	if gpuDev.d == nil && gpuDev.err == nil {
		b, err := cuda.New(cuda.Options{CacheDir: os.Getenv("FIELDGO_TEST_CUDA_CACHE")})
		if err != nil {
			gpuDev.err = err
		} else {
			gpuDev.d, gpuDev.err = gpuradiation.New(b)
		}
	}
	if gpuDev.err != nil {
		if errs.Is(gpuDev.err, errs.Compile) {
			tb.Fatalf("radiation kernels do not compile: %v", gpuDev.err)
		}
		tb.Skipf("no usable CUDA GPU, GPU radiation tests skipped: %v", gpuDev.err)
	}
	return gpuDev.d
}

func fieldsOn(tb testing.TB, sc *scene, opt radiation.Options) *radiation.Cube {
	tb.Helper()
	c, err := radiation.Fields(sc.src, sc.obs, sc.times, sc.S, opt)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestGPUMatchesCPU compares GPU and CPU cubes (float64, Newton n=2 and RK4,
// every search) component by component with
//
//	|gpu - cpu| <= 2^14 u max|cpu component|,  u = 2^-53.
//
// Why 2^14: both compute the same operations; they differ by FMA
// contraction and the order the compiler picks, a few u per operation.
// The retarded time tau (|tau| <= ~60 here, with knots 1/1024 of a period
// apart) then carries an error of a few u |tau| / (ut (1 - n.beta)), and the
// field's derivative along tau is at most ~ gamma^4 (1 + beta)^3 / r ~ 2^7
// times the field's scale over a unit of tau at beta = 0.8: 2^14 u covers
// tau's ~2^6 u |tau| amplified by that, with margin. The measured worst
// ratio is logged (it is far below).
func TestGPUMatchesCPU(t *testing.T) {
	d := gpu(t)
	t.Setenv("FIELDGO_RAD_O", "512")
	t.Setenv("FIELDGO_RAD_S", "256")
	t.Setenv("FIELDGO_RAD_P", "4")
	sc := newScene(t)
	defer sc.release()
	def := radiation.DefaultOptions()
	for _, m := range []radiation.Method{radiation.Newton, radiation.RK4} {
		for _, s := range []string{"cold", "warm", "reuse"} {
			opt := def
			opt.Method, opt.Retarded = m, true
			opt.Search, opt.CoefReuse = radiation.Warm, s == "reuse"
			if s == "cold" {
				opt.Search = radiation.Cold
			}
			cpu := fieldsOn(t, sc, opt)
			opt.Device = d
			g := fieldsOn(t, sc, opt)
			worst := 0.0
			for k := range cpu.Data {
				scale := 0.0
				for _, v := range cpu.Data[k] {
					scale = math.Max(scale, math.Abs(v))
				}
				for i, v := range g.Data[k] {
					e := math.Abs(v - cpu.Data[k][i])
					if !(e <= 0x1p14*0x1p-53*scale) {
						t.Fatalf("%s %s: %s[%d] GPU %v CPU %v: |diff| %.3g > 2^14 u %.3g", m, s, g.Columns[k], i, v, cpu.Data[k][i], e, scale)
					}
					if scale > 0 {
						worst = math.Max(worst, e/(0x1p-53*scale))
					}
				}
			}
			t.Logf("%s %s float64: worst |GPU - CPU| = %.1f u max|component| (bound 16384)", m, s, worst)
			cpu.Release()
			g.Release()
		}
	}
	// Float32 on the GPU against the float64 CPU cube: reported, not bounded
	// here (core/radiation's tests bound the float32 mode's error).
	opt := def
	cpu := fieldsOn(t, sc, opt)
	opt.Device, opt.Precision = d, radiation.Float32
	g := fieldsOn(t, sc, opt)
	for k := 0; k < 3; k++ {
		scale, worst := 0.0, 0.0
		for i, v := range cpu.Data[k] {
			scale = math.Max(scale, math.Abs(v))
			worst = math.Max(worst, math.Abs(g.Data[k][i]-v))
		}
		t.Logf("float32 GPU vs float64 CPU, %s: max error %.3g of max |%s| %.3g (%.3g relative)", g.Columns[k], worst, g.Columns[k], scale, worst/scale)
	}
	cpu.Release()
	g.Release()
}

// TestGPUSearchesBitIdentical: on the GPU the cold, warm and cached (coef
// reuse) kernels give the same cube bit for bit, in both precisions and both
// methods (they share one polynomial evaluation; only the interval search
// differs), and a second run repeats the first.
func TestGPUSearchesBitIdentical(t *testing.T) {
	d := gpu(t)
	t.Setenv("FIELDGO_RAD_O", "1024")
	t.Setenv("FIELDGO_RAD_S", "256")
	t.Setenv("FIELDGO_RAD_P", "3")
	sc := newScene(t)
	defer sc.release()
	for _, prec := range []radiation.Precision{radiation.Float64, radiation.Float32} {
		for _, m := range []radiation.Method{radiation.Newton, radiation.RK4} {
			var base *radiation.Cube
			for _, s := range []string{"cold", "warm", "reuse", "reuse"} {
				opt := radiation.DefaultOptions()
				opt.Method, opt.Precision, opt.Device, opt.Retarded = m, prec, d, true
				opt.Search, opt.CoefReuse = radiation.Warm, s == "reuse"
				if s == "cold" {
					opt.Search = radiation.Cold
				}
				c := fieldsOn(t, sc, opt)
				if base == nil {
					base = c
					continue
				}
				for k := range c.Data {
					for i, v := range c.Data[k] {
						if math.Float64bits(v) != math.Float64bits(base.Data[k][i]) {
							t.Fatalf("%v %v %s: %s[%d] = %v, cold gave %v", prec, m, s, c.Columns[k], i, v, base.Data[k][i])
						}
					}
				}
				c.Release()
			}
			if prec == radiation.Float64 && m == radiation.Newton {
				// The column-major kernels (the layout before the interval
				// records) give the same bits.
				for _, s := range []string{"cold", "warm", "reuse"} {
					opt := radiation.DefaultOptions()
					opt.Method, opt.Precision, opt.Device, opt.Retarded = m, prec, d, true
					opt.Search, opt.CoefReuse = radiation.Warm, s == "reuse"
					if s == "cold" {
						opt.Search = radiation.Cold
					}
					d.ColumnMajor = true
					c := fieldsOn(t, sc, opt)
					d.ColumnMajor = false
					for k := range c.Data {
						for i, v := range c.Data[k] {
							if math.Float64bits(v) != math.Float64bits(base.Data[k][i]) {
								t.Fatalf("column-major %s: %s[%d] = %v, interval-major cold gave %v", s, c.Columns[k], i, v, base.Data[k][i])
							}
						}
					}
					c.Release()
				}
				t.Logf("float64 Newton: column-major cold, warm, reuse kernels bit-identical to the interval-major ones")
			}
			nan := 0
			for _, v := range base.Data[0] {
				if math.IsNaN(v) {
					nan++
				}
			}
			if nan != 0 {
				t.Fatalf("%v %v: %d NaN samples", prec, m, nan)
			}
			base.Release()
			t.Logf("%v %v: cold, warm, reuse (twice) bit-identical over %d samples x %d columns", prec, m, sc.O*sc.S, len(base.Columns))
		}
	}
}

// BenchmarkGPURadiation reports samples/s (observer x time x particle) on
// the GPU for Newton n=2 float64 with coef_reuse (the default) against the
// naive kernel (cold search, no reuse) in the same run, the warm search
// without reuse, float32 and RK4, from the kernel's device time (CUDA events;
// "wall" includes upload, download and the host's knot preparation), and logs
// each kernel's registers, spills and occupancy. The scene: FIELDGO_RAD_O
// observers (default here 32768), S = 256 samples, P = 16 particles.
//
//	go test -c -o .gpu/radbench.test ./bench/radiation
//	.gpu/radbench.test -test.run '^$' -test.bench GPURadiation -test.benchtime 3x -test.v
func BenchmarkGPURadiation(b *testing.B) {
	d := gpu(b)
	for name, def := range map[string]string{"FIELDGO_RAD_O": "32768", "FIELDGO_RAD_S": "256", "FIELDGO_RAD_P": "16"} {
		if os.Getenv(name) == "" {
			b.Setenv(name, def)
		}
	}
	sc := newScene(b)
	defer sc.release()
	samples := float64(sc.O * sc.S * sc.P)
	b.Logf("scene: %d observers x %d samples x %d particles = %.3g samples", sc.O, sc.S, sc.P, samples)
	def := radiation.DefaultOptions()
	def.Device = d
	mk := func(f func(o *radiation.Options)) radiation.Options { o := def; f(&o); return o }
	variants := []struct {
		name string
		opt  radiation.Options
		cm   bool
	}{
		{"newton2_f64_naive_cold_colmajor", mk(func(o *radiation.Options) { o.Search, o.CoefReuse = radiation.Cold, false }), true},
		{"newton2_f64_warm_reuse_colmajor", def, true},
		{"newton2_f64_naive_cold", mk(func(o *radiation.Options) { o.Search, o.CoefReuse = radiation.Cold, false }), false},
		{"newton2_f64_warm", mk(func(o *radiation.Options) { o.CoefReuse = false }), false},
		{"newton2_f64_warm_reuse", def, false},
		{"newton2_f32_naive_cold", mk(func(o *radiation.Options) {
			o.Search, o.CoefReuse, o.Precision = radiation.Cold, false, radiation.Float32
		}), false},
		{"newton2_f32_warm", mk(func(o *radiation.Options) { o.CoefReuse, o.Precision = false, radiation.Float32 }), false},
		{"newton2_f32_warm_reuse", mk(func(o *radiation.Options) { o.Precision = radiation.Float32 }), false},
		{"rk4x4_f64_warm", mk(func(o *radiation.Options) { o.Method, o.CoefReuse = radiation.RK4, false }), false},
		{"rk4x4_f64_warm_reuse", mk(func(o *radiation.Options) { o.Method = radiation.RK4 }), false},
	}
	rates := map[string]float64{}
	for _, v := range variants {
		kname := v.opt.Kernel()
		if v.cm {
			kname += "_cm"
		}
		fn, err := d.Module().Function(kname)
		if err != nil {
			b.Fatal(err)
		}
		in := fn.Describe()
		b.Logf("%-24s %-26s %3d registers, spill %d/%d B, local %d B, block %d, %d blocks/SM, occupancy %.2f",
			v.name, in.Name, in.Registers, in.SpillStores, in.SpillLoads, in.LocalBytes, in.BlockSize, in.BlocksPerSM, in.Occupancy)
		b.Run(v.name, func(b *testing.B) {
			d.ColumnMajor = v.cm
			defer func() { d.ColumnMajor = false }()
			kernel := 0.0
			for i := 0; i < b.N; i++ {
				c := fieldsOn(b, sc, v.opt)
				kernel += d.LastSeconds
				if math.IsNaN(c.Data[0][0]) {
					b.Fatal("NaN cube")
				}
				c.Release()
			}
			r := samples * float64(b.N) / kernel
			rates[v.name] = r
			b.ReportMetric(r, "samples/s")
			b.ReportMetric(samples*float64(b.N)/b.Elapsed().Seconds(), "wall-samples/s")
			b.ReportMetric(kernel/float64(b.N)*1e3, "kernel-ms")
		})
	}
	// Block size: the occupancy API's choice against fixed smaller blocks
	// (more blocks per SM for the register-heavy kernels).
	for _, bs := range []int{32, 64, 128} {
		b.Run(fmt.Sprintf("newton2_f64_warm_reuse_block=%d", bs), func(b *testing.B) {
			d.BlockSize = bs
			defer func() { d.BlockSize = 0 }()
			kernel := 0.0
			for i := 0; i < b.N; i++ {
				c := fieldsOn(b, sc, def)
				kernel += d.LastSeconds
				c.Release()
			}
			b.ReportMetric(samples*float64(b.N)/kernel, "samples/s")
			b.ReportMetric(kernel/float64(b.N)*1e3, "kernel-ms")
		})
	}
	goal := 4e10
	r := rates["newton2_f64_warm_reuse"]
	b.Logf("Newton n=2 float64 (warm + coef_reuse): %.3g samples/s, goal %.3g: %s; naive (cold, no reuse) %.3g: x%.2f",
		r, goal, map[bool]string{true: "met", false: "missed"}[r >= goal], rates["newton2_f64_naive_cold"], r/rates["newton2_f64_naive_cold"])
	b.Logf("interval-major over column-major layout: naive x%.2f, warm+reuse x%.2f", rates["newton2_f64_naive_cold"]/rates["newton2_f64_naive_cold_colmajor"],
		r/rates["newton2_f64_warm_reuse_colmajor"])
	b.Logf("warm search over cold (no reuse): float64 x%.2f, float32 x%.2f", rates["newton2_f64_warm"]/rates["newton2_f64_naive_cold"],
		rates["newton2_f32_warm"]/rates["newton2_f32_naive_cold"])
	b.Logf("coef_reuse on/off: Newton f64 x%.2f, f32 x%.2f, RK4 f64 x%.2f", r/rates["newton2_f64_warm"],
		rates["newton2_f32_warm_reuse"]/rates["newton2_f32_warm"], rates["rk4x4_f64_warm_reuse"]/rates["rk4x4_f64_warm"])
}
