package gpuradiation_test

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/fieldgo/fieldgo/core/radiation"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/radscene"
	"github.com/fieldgo/fieldgo/kernels/cuda"
	"github.com/fieldgo/fieldgo/kernels/cuda/gpuradiation"
)

// The benchmarks' scene sizes (0: each benchmark's default), flags of the
// test binary: go test -bench ... -args -rad-kpp 16, or pkg.test -rad-kpp 16.
var (
	radObservers = flag.Int("rad-observers", 0, "observers of the GPU benchmarks' scene (default 32768)")
	radKPP       = flag.Int("rad-kpp", 0, "knots per orbital period of the GPU benchmarks' scene (BenchmarkGPURadiation 1024, BenchmarkGPUFieldsCall 16)")
	radFilled    = flag.Int("rad-filled", 0, "observers of BenchmarkGPURadiation's GPU-filling scene (default 16 x -rad-observers)")
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

func fieldsOn(tb testing.TB, sc *radscene.Scene, opt radiation.Options) *radiation.Cube {
	tb.Helper()
	c, err := radiation.Fields(sc.Src, sc.Obs, sc.Times, sc.S, opt)
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
// ratio is logged (it is far below). A second scene's times run past both
// ends of the fastest particles' knots: the GPU's NaN samples (and the cold
// solves after them) must be the CPU's. There RK4 is ill-conditioned near
// the knots' end: a step that ends just past them hands the sample to the
// cold solve, so which side a rounding puts it on moves the sample by RK4's
// truncation error (measured on the CPU: nudging the times by one ulp moved
// the 4-substep cube by 5.6e4 u at one sample, the whole walk's by 6.0e5 u).
// So RK4's bound there adds, per sample, twice the CPU's own response to
// nudging the times by 2^8 ulp either way (the size of the GPU's rounding
// differences in tau); the samples that needed it are counted. A third scene
// samples coarsely enough that some Newton advances fail core/radiation's
// convergence test and go to the cold solve.
func TestGPUMatchesCPU(t *testing.T) {
	d := gpu(t)
	sc := radscene.New(t, radscene.Size{O: 512, S: 256, P: 4})
	defer sc.Release()
	matchCPU(t, d, sc, "orbits")
	for s := range sc.Times {
		sc.Times[s] = 10 + 85*float64(s)/float64(sc.S)
	}
	matchCPU(t, d, sc, "partly out of range")
	// Samples 4-5 times coarser than the orbits': at some of them Newton's
	// two corrections do not converge (the samples miss the Doppler-compressed
	// pulse: 2e-4 of the peak on the CPU without the test) and the cold solve
	// decides; the GPU must decide alike.
	for s := range sc.Times {
		sc.Times[s] = 20 + 60*float64(s)/float64(sc.S)
	}
	matchCPU(t, d, sc, "coarse samples")
}

func matchCPU(t *testing.T, d *gpuradiation.Device, sc *radscene.Scene, what string) {
	def := radiation.DefaultOptions()
	for _, m := range []radiation.Method{radiation.Newton, radiation.RK4} {
		var slack [][]float64 // RK4 out of range: what rounding-sized nudges do on the CPU (the same for every search)
		for _, s := range []string{"cold", "warm", "reuse"} {
			opt := def
			opt.Method, opt.Retarded = m, true
			opt.Search, opt.CoefReuse = radiation.Warm, s == "reuse"
			if s == "cold" {
				opt.Search = radiation.Cold
			}
			cpu := fieldsOn(t, sc, opt)
			if m == radiation.RK4 && what != "orbits" && slack == nil {
				slack = nudged(t, sc, opt, cpu)
			}
			opt.Device = d
			g := fieldsOn(t, sc, opt)
			sameBits(t, d, sc, opt, g, what+" "+m.String()+" "+s)
			worst, nan, ill := againstCPU(t, what+" "+m.String()+" "+s, cpu, g, slack)
			t.Logf("%s, %s %s float64: worst |GPU - CPU| = %.1f u max|component| (bound 16384; %d values over it, within their nudged CPU's slack); %d NaN values, the same as the CPU's",
				what, m, s, worst, ill, nan)
			cpu.Release()
			g.Release()
		}
	}
	if what != "orbits" {
		return
	}
	// Float32 on the GPU against the float64 CPU cube: reported, not bounded
	// here (core/radiation's tests bound the float32 mode's error).
	opt := def
	cpu := fieldsOn(t, sc, opt)
	opt.Device, opt.Precision = d, radiation.Float32
	g := fieldsOn(t, sc, opt)
	sameBits(t, d, sc, opt, g, what+" float32")
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

// againstCPU checks the GPU's cube g against the CPU's cpu component by
// component: the same NaN samples, and |g - cpu| <= 2^14 u max|cpu
// component| (TestGPUMatchesCPU says why), plus twice slack[k][i] where
// slack is given and the bound alone fails. It returns the worst difference
// within the bound (in u of max|component|), the NaN values and the values
// that needed their slack.
func againstCPU(t *testing.T, what string, cpu, g *radiation.Cube, slack [][]float64) (worst float64, nan, ill int) {
	t.Helper()
	for k := range cpu.Data {
		scale := 0.0
		for _, v := range cpu.Data[k] {
			if !math.IsNaN(v) {
				scale = math.Max(scale, math.Abs(v))
			}
		}
		for i, v := range g.Data[k] {
			c := cpu.Data[k][i]
			if math.IsNaN(v) || math.IsNaN(c) {
				if math.IsNaN(v) != math.IsNaN(c) {
					t.Fatalf("%s: %s[%d] GPU %v CPU %v", what, g.Columns[k], i, v, c)
				}
				nan++
				continue
			}
			e, bound := math.Abs(v-c), 0x1p14*0x1p-53*scale
			if slack != nil && e > bound {
				ill++
				bound += 2 * slack[k][i]
			}
			if !(e <= bound) {
				t.Fatalf("%s: %s[%d] GPU %v CPU %v: |diff| %.3g > bound %.3g (2^14 u of %.3g)", what, g.Columns[k], i, v, c, e, bound, scale)
			}
			if scale > 0 && e <= 0x1p14*0x1p-53*scale {
				worst = math.Max(worst, e/(0x1p-53*scale))
			}
		}
	}
	return worst, nan, ill
}

// nudged is, per component and sample, the largest change of the CPU's cube
// cpu when the times move by 2^8 ulp either way (NaN samples: 0).
func nudged(t *testing.T, sc *radscene.Scene, opt radiation.Options, cpu *radiation.Cube) [][]float64 {
	t.Helper()
	saved := append([]float64(nil), sc.Times...)
	defer copy(sc.Times, saved)
	slack := make([][]float64, len(cpu.Data))
	for k := range slack {
		slack[k] = make([]float64, len(cpu.Data[k]))
	}
	for _, dir := range []float64{1, -1} {
		for i, v := range saved {
			sc.Times[i] = v + dir*0x1p8*(math.Nextafter(math.Abs(v), math.Inf(1))-math.Abs(v))
		}
		c := fieldsOn(t, sc, opt)
		for k := range c.Data {
			for i, v := range c.Data[k] {
				if e := math.Abs(v - cpu.Data[k][i]); e > slack[k][i] {
					slack[k][i] = e
				}
			}
		}
		c.Release()
	}
	return slack
}

// sameBits: the split kernels (two phases) give the default's (tiled) cube
// want bit for bit, NaN samples (no root) and retarded times included.
func sameBits(t *testing.T, d *gpuradiation.Device, sc *radscene.Scene, opt radiation.Options, want *radiation.Cube, what string) {
	t.Helper()
	d.Variant = gpuradiation.Split
	c := fieldsOn(t, sc, opt)
	launch, variant := d.LastLaunch, d.Variant
	d.Variant = ""
	defer c.Release()
	for k := range c.Data {
		for i, v := range c.Data[k] {
			if math.Float64bits(v) != math.Float64bits(want.Data[k][i]) {
				t.Fatalf("%s, %s (%s): %s[%d] = %v, the default gave %v", what, variant, launch, c.Columns[k], i, v, want.Data[k][i])
			}
		}
	}
}

// TestGPUSearchesBitIdentical: on the GPU the cold, warm and cached (coef
// reuse) kernels give the same cube bit for bit, in both precisions and both
// methods (they share one polynomial evaluation; only the interval search
// differs), and a second run repeats the first. So do the launch shapes
// (other blocks and tiles, a tile that does not divide S, observers
// unsorted, a grid that loops over observer slots, a cube without the
// retarded times) and, in float64 Newton, the comparison kernels (one thread per
// observer, interval records and column-major): the tiles add the particles
// in the same order. So do the split kernels (roots per (observer,
// particle), then fields per (observer, sample)), in every method, search
// and precision, in one chunk of observers or several, other launch shapes.
func TestGPUSearchesBitIdentical(t *testing.T) {
	d := gpu(t)
	sc := radscene.New(t, radscene.Size{O: 1000, S: 256, P: 3})
	defer sc.Release()
	type run struct {
		search      string
		block, tile int
		grid        int
		unsorted    bool
		variant     string
		newtonF64   bool // the comparison kernels exist for Newton float64 only
		scratch     int  // split: Device.SplitScratch (bytes)
		noTret      bool // without the retarded times: the tiled kernels without _tret, the same fields
	}
	runs := []run{{search: "warm"}, {search: "reuse"}, {search: "reuse"},
		{search: "reuse", block: 32, tile: 3}, {search: "warm", block: 128, tile: 2, unsorted: true}, {search: "cold", tile: 8},
		{search: "reuse", grid: 3}, {search: "warm", grid: 2, tile: 7}, {search: "cold", grid: 5},
		{search: "reuse", noTret: true}, {search: "cold", tile: 3, noTret: true}, {search: "warm", grid: 2, noTret: true},
		{search: "cold", variant: gpuradiation.Obs, newtonF64: true}, {search: "reuse", variant: gpuradiation.Obs, newtonF64: true},
		{search: "cold", variant: gpuradiation.ColumnMajor, newtonF64: true}, {search: "warm", variant: gpuradiation.ColumnMajor, newtonF64: true},
		{search: "reuse", variant: gpuradiation.ColumnMajor, newtonF64: true},
		{search: "cold", variant: gpuradiation.Split}, {search: "warm", variant: gpuradiation.Split}, {search: "reuse", variant: gpuradiation.Split},
		// Several chunks of observers (float64: at most 300 observers. scratch, 4 chunks of 256, the last 232).
		{search: "reuse", variant: gpuradiation.Split, scratch: 300 * 256 * 3 * 12},
		{search: "warm", variant: gpuradiation.Split, block: 64, tile: 5, unsorted: true, scratch: 100 * 256 * 3 * 12}}
	options := func(prec radiation.Precision, m radiation.Method, search string) radiation.Options {
		opt := radiation.DefaultOptions()
		opt.Method, opt.Precision, opt.Device, opt.Retarded = m, prec, d, true
		opt.Search, opt.CoefReuse = radiation.Warm, search == "reuse"
		if search == "cold" {
			opt.Search = radiation.Cold
		}
		return opt
	}
	for _, prec := range []radiation.Precision{radiation.Float64, radiation.Float32} {
		for _, m := range []radiation.Method{radiation.Newton, radiation.RK4} {
			// AutoSegment's segments (8 of 32 samples here), then one walk
			// per observer.
			for _, segment := range []int{0, sc.S} {
				opts := func(search string) radiation.Options {
					o := options(prec, m, search)
					o.Segment = segment
					return o
				}
				d.Variant = gpuradiation.Tiled // the base: the tiled kernels in either precision
				base := fieldsOn(t, sc, opts("cold"))
				if segment == 0 && base.Options.Segment != 32 {
					t.Fatalf("%d observers x %d samples: segments of %d, want 32", sc.O, sc.S, base.Options.Segment)
				}
				d.Variant = ""
				n, split, comparison := 0, 0, 0
				for _, r := range runs {
					if r.newtonF64 && (prec != radiation.Float64 || m != radiation.Newton) {
						continue
					}
					d.BlockSize, d.Tile, d.MaxGrid, d.Unsorted, d.Variant, d.SplitScratch = r.block, r.tile, r.grid, r.unsorted, cmp.Or(r.variant, gpuradiation.Tiled), r.scratch
					o := opts(r.search)
					o.Retarded = !r.noTret
					c := fieldsOn(t, sc, o)
					launch := d.LastLaunch
					if r.noTret && len(c.Data) != radiation.NComp {
						t.Fatalf("%+v: %d columns without the retarded times, want %d", r, len(c.Data), radiation.NComp)
					}
					d.BlockSize, d.Tile, d.MaxGrid, d.Unsorted, d.Variant, d.SplitScratch = 0, 0, 0, false, "", 0
					if r.variant == gpuradiation.Split {
						split++
					}
					if r.newtonF64 {
						comparison++
					}
					for k := range c.Data {
						for i, v := range c.Data[k] {
							if math.Float64bits(v) != math.Float64bits(base.Data[k][i]) {
								t.Fatalf("%v %v %+v (%s): %s[%d] = %v, cold gave %v", prec, m, r, launch, c.Columns[k], i, v, base.Data[k][i])
							}
						}
					}
					c.Release()
					n++
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
				t.Logf("%v %v, segments of %d samples: %d runs (warm, reuse twice, other blocks/tiles/grids/order%s, %d split) bit-identical to cold over %d samples x %d columns",
					prec, m, base.Options.Segment, n, map[bool]string{true: ", one thread per observer, column-major", false: ""}[comparison > 0], split, sc.O*sc.S, len(base.Columns))
				base.Release()
			}
		}
	}
}

// TestGPUWarmSearchAgrees runs the GPU's warm-started search
// (fg_rad_search_from: the guess and its neighbours checked with one round
// of loads, then gallop and bisect) against its cold binary search on 4096
// random knot sets (2 to 300 knots, spacings over six decades) and 2^21
// queries: times inside, at knots, outside both ends and NaN, guesses near
// the answer, anywhere in the set, and far outside it. Every answer must be
// the cold search's.
func TestGPUWarmSearchAgrees(t *testing.T) {
	d := gpu(t)
	m := d.Module()
	fn, err := m.Function("fg_rad_search_agree_f64")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	const sets, n = 4096, 1 << 21
	var knots []float64
	off := []int32{0}
	for range sets {
		k := 2 + rng.IntN(299)
		x := rng.NormFloat64() * 100
		scale := math.Pow(10, -3+6*rng.Float64())
		for range k {
			knots = append(knots, x)
			x += scale * (0.01 + rng.ExpFloat64())
		}
		off = append(off, int32(len(knots)))
	}
	part, guess, tau := make([]int32, n), make([]int32, n), make([]float64, n)
	for i := range n {
		p := rng.IntN(sets)
		a, b := int(off[p]), int(off[p+1])
		lo, hi := knots[a], knots[b-1]
		var x float64
		switch r := rng.IntN(16); {
		case r < 9:
			x = lo + (hi-lo)*rng.Float64()
		case r < 13:
			x = knots[a+rng.IntN(b-a)]
		case r < 15:
			x = lo - (hi-lo)*rng.Float64()
			if r == 14 {
				x = hi + (hi-lo)*rng.Float64()
			}
		default:
			x = math.NaN()
		}
		j := a
		for j+1 < b-1 && knots[j+1] <= x {
			j++
		}
		var g int
		switch r := rng.IntN(8); {
		case r < 5:
			g = j + rng.IntN(7) - 3
		case r < 7:
			g = a - 2 + rng.IntN(b-a+4)
		default:
			g = j + (rng.IntN(2)*2-1)*(1+rng.IntN(1<<20))
		}
		part[i], guess[i], tau[i] = int32(p), int32(g), x
	}
	bufs := []*cuda.DeviceBuffer{}
	alloc := func(bytes int) *cuda.DeviceBuffer {
		b, err := m.Alloc(bytes)
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
		return b
	}
	defer func() {
		for _, b := range bufs {
			b.Free()
		}
	}()
	tb, ob, pb, gb, xb, db := alloc(8*len(knots)), alloc(4*len(off)), alloc(4*n), alloc(4*n), alloc(8*n), alloc(4*n)
	for _, err := range []error{cuda.Upload(tb, 0, knots), cuda.Upload(ob, 0, off), cuda.Upload(pb, 0, part), cuda.Upload(gb, 0, guess), cuda.Upload(xb, 0, tau)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Launch(fn, [3]uint32{n / 256, 1, 1}, [3]uint32{256, 1, 1}, 0, gpuradiation.SearchAgreeArgs(tb, ob, pb, gb, xb, n, db)); err != nil {
		t.Fatal(err)
	}
	diff := make([]int32, n)
	if err := cuda.Download(diff, db, 0); err != nil {
		t.Fatal(err)
	}
	for i, v := range diff {
		if v != 0 {
			p := part[i]
			t.Fatalf("query %d: knots %d..%d, tau %v, guess %d: warm search %+d from the cold one", i, off[p], off[p+1]-1, tau[i], guess[i], v)
		}
	}
	t.Logf("%d queries on %d knot sets (%d knots): the warm search equals the cold one", n, sets, len(knots))
}

// TestGPUTilePolicy: with more observers' blocks than fit on the device at
// once with tiles of DefaultTile, the tiled kernels take SmallTile (more
// blocks resident: gpuradiation.tileFor), with few they keep DefaultTile;
// either way the cube is the fixed tile's bit for bit.
func TestGPUTilePolicy(t *testing.T) {
	d := gpu(t)
	fn, err := d.Module().Function("fg_rad_newton_reuse_f64")
	if err != nil {
		t.Fatal(err)
	}
	shared := func(tile int) int { return gpuradiation.SharedBytes(gpuradiation.DefaultBlock, tile) }
	perSM := fn.DescribeAt(gpuradiation.DefaultBlock, shared(gpuradiation.DefaultTile)).BlocksPerSM
	if fn.DescribeAt(gpuradiation.DefaultBlock, shared(gpuradiation.SmallTile)).BlocksPerSM <= perSM {
		t.Skipf("tiles of %d keep no more blocks resident than tiles of %d on this GPU", gpuradiation.SmallTile, gpuradiation.DefaultTile)
	}
	many := perSM*d.SMs()*gpuradiation.DefaultBlock + 100
	for _, o := range []int{1000, many} {
		sc := radscene.New(t, radscene.Size{O: o, S: 24, P: 2})
		opt := radiation.DefaultOptions()
		opt.Device = d
		c := fieldsOn(t, sc, opt)
		got, launch := d.LastTile, d.LastLaunch
		want := gpuradiation.DefaultTile
		if o == many {
			want = gpuradiation.SmallTile
		}
		if got != want {
			t.Fatalf("%d observers (%d blocks per SM resident with tiles of %d on %d SMs): tile %d, want %d (%s)", o, perSM, gpuradiation.DefaultTile, d.SMs(), got, want, launch)
		}
		other := gpuradiation.DefaultTile + gpuradiation.SmallTile - want
		d.Tile = other
		f := fieldsOn(t, sc, opt)
		d.Tile = 0
		for k := range c.Data {
			for i, v := range c.Data[k] {
				if math.Float64bits(v) != math.Float64bits(f.Data[k][i]) {
					t.Fatalf("%d observers: tile %d gives %s[%d] = %v, tile %d %v", o, want, c.Columns[k], i, v, other, f.Data[k][i])
				}
			}
		}
		t.Logf("%d observers: tile %d (%s), the same bits as tile %d", o, got, launch, other)
		c.Release()
		f.Release()
		sc.Release()
	}
}

// TestGPUSegments: one observer's long series (and a few observers') is
// cut into AutoSegment's segments, each walked from scratch at its first
// sample, on the GPU exactly as on the CPU: the cubes agree within
// TestGPUMatchesCPU's bound, with the same NaN samples, for the automatic
// segments, a segment that is no multiple of the tile and one walk, in both
// methods; the GPU's cube does not depend on the tile it took.
func TestGPUSegments(t *testing.T) {
	d := gpu(t)
	for _, sh := range [][2]int{{1, 4096}, {64, 2048}} {
		sc := radscene.New(t, radscene.Size{O: sh[0], S: sh[1], P: 2})
		for _, m := range []radiation.Method{radiation.Newton, radiation.RK4} {
			for _, segment := range []int{0, 100, sc.S} {
				opt := radiation.DefaultOptions()
				opt.Method, opt.Retarded, opt.Segment = m, true, segment
				cpu := fieldsOn(t, sc, opt)
				opt.Device = d
				g := fieldsOn(t, sc, opt)
				launch := d.LastLaunch
				if segment == 0 && g.Options.Segment != radiation.AutoSegment(sc.O, sc.S) {
					t.Fatalf("segments of %d, want AutoSegment's %d", g.Options.Segment, radiation.AutoSegment(sc.O, sc.S))
				}
				d.Tile = gpuradiation.SmallTile + gpuradiation.DefaultTile - d.LastTile
				other := fieldsOn(t, sc, opt)
				d.Tile = 0
				for k := range g.Data {
					for i, v := range g.Data[k] {
						if math.Float64bits(v) != math.Float64bits(other.Data[k][i]) {
							t.Fatalf("%v segment %d: %s[%d] = %v with one tile, %v with the other", m, segment, g.Columns[k], i, v, other.Data[k][i])
						}
					}
				}
				worst, _, _ := againstCPU(t, fmt.Sprintf("%v segment %d", m, segment), cpu, g, nil)
				t.Logf("%v, %d observers x %d samples, segments of %d (%s): worst |GPU - CPU| = %.1f u max|component| (bound 16384)",
					m, sc.O, sc.S, g.Options.Segment, launch, worst)
				cpu.Release()
				g.Release()
				other.Release()
			}
		}
		sc.Release()
	}
}

// BenchmarkGPURadiation reports samples/s (observer x time x particle) on
// the GPU for Newton n=2 float64 with coef_reuse (the default) against the
// naive kernel (cold search, no reuse) in the same run, the warm search
// without reuse, float32 and RK4, from the kernel's device time (CUDA events;
// "wall" includes upload, download and the host's knot preparation), and logs
// each kernel's registers, spills and occupancy. The "_obs" variants are the
// structure before the tiles (one thread per observer adding into the cube),
// same math; "_split" runs the two phases instead of the default tiles
// (gpuradiation.Effective), for the policy's ratio. The scene: -rad-observers
// observers (default 32768), S = 256 samples, P = 16 particles, -rad-kpp knots
// per period (default 1024). The default and naive kernels also run on the
// same scene with -rad-filled observers (default 16x: a scene that fills the
// GPU, filledRates), and the goal is logged for both scenes.
//
//	go test ./kernels/cuda/gpuradiation -run '^$' -bench GPURadiation -benchtime 3x -v -args -rad-kpp 16
func BenchmarkGPURadiation(b *testing.B) {
	d := gpu(b)
	size := radscene.Size{O: cmp.Or(*radObservers, 32768), S: 256, P: 16, KPP: cmp.Or(*radKPP, 1024)}
	sc := radscene.New(b, size)
	defer sc.Release()
	samples := float64(sc.O * sc.S * sc.P)
	b.Logf("scene: %d observers x %d samples x %d particles = %.3g samples", sc.O, sc.S, sc.P, samples)
	def := radiation.DefaultOptions()
	def.Device = d
	mk := func(f func(o *radiation.Options)) radiation.Options { o := def; f(&o); return o }
	naive := mk(func(o *radiation.Options) { o.Search, o.CoefReuse = radiation.Cold, false })
	type variant struct {
		name        string
		opt         radiation.Options
		kind        string // Device.Variant: "" (the default), Tiled, Obs, Split
		block, tile int
		unsorted    bool
	}
	variants := []variant{
		{name: "newton2_f64_naive_cold_obs", opt: naive, kind: gpuradiation.Obs},
		{name: "newton2_f64_warm_reuse_obs", opt: def, kind: gpuradiation.Obs},
		{name: "newton2_f64_naive_cold", opt: naive},
		{name: "newton2_f64_warm", opt: mk(func(o *radiation.Options) { o.CoefReuse = false })},
		{name: "newton2_f64_warm_reuse", opt: def},
		{name: "newton2_f64_warm_reuse_unsorted", opt: def, unsorted: true},
		// Segments shorter than AutoSegment's: more, shorter work items (the
		// cube's restarts move, so its bits differ from the default's).
		{name: "newton2_f64_warm_reuse_seg64", opt: mk(func(o *radiation.Options) { o.Segment = 64 })},
		{name: "newton2_f64_warm_reuse_seg32", opt: mk(func(o *radiation.Options) { o.Segment = 32 })},
		{name: "newton2_f64_warm_reuse_whole", opt: mk(func(o *radiation.Options) { o.Segment = sc.S })}, // one walk per observer
		{name: "newton2_f32_naive_cold", opt: mk(func(o *radiation.Options) {
			o.Search, o.CoefReuse, o.Precision = radiation.Cold, false, radiation.Float32
		})},
		{name: "newton2_f32_warm", opt: mk(func(o *radiation.Options) { o.CoefReuse, o.Precision = false, radiation.Float32 })},
		{name: "newton2_f32_warm_reuse", opt: mk(func(o *radiation.Options) { o.Precision = radiation.Float32 })},
		{name: "rk4x4_f64_warm", opt: mk(func(o *radiation.Options) { o.Method, o.CoefReuse = radiation.RK4, false })},
		{name: "rk4x4_f64_warm_reuse", opt: mk(func(o *radiation.Options) { o.Method = radiation.RK4 })},
		// Two phases: roots per (observer, particle), then fields per (observer, sample).
		{name: "newton2_f64_naive_cold_split", opt: naive, kind: gpuradiation.Split},
		{name: "newton2_f64_warm_reuse_split", opt: def, kind: gpuradiation.Split},
		{name: "newton2_f32_warm_reuse_split", opt: mk(func(o *radiation.Options) { o.Precision = radiation.Float32 }), kind: gpuradiation.Split},
	}
	// Launch shapes of the default kernel (block x tile <= 48 KiB of shared).
	// Smaller tiles leave the L1 cache more of the SM (tiles of 4 in 16 blocks
	// take 200 KiB of shared memory) but restart the walks more often;
	// larger blocks keep warps of neighbouring observers on one particle together.
	for _, bt := range [][2]int{{64, 4}, {32, 4}, {64, 8}, {32, 16}, {32, 1}, {32, 2}, {32, 3}, {32, 5}, {64, 2}, {128, 1}, {128, 2}, {128, 4}} {
		variants = append(variants, variant{name: fmt.Sprintf("newton2_f64_warm_reuse_block=%d_tile=%d", bt[0], bt[1]), opt: def, block: bt[0], tile: bt[1]})
	}
	rates := map[string]float64{}
	tiles := map[string]int{} // the tile each tiled run took
	for _, v := range variants {
		kind := gpuradiation.Effective(v.kind)
		kname := gpuradiation.EntryPoint(v.opt.Kernel()) + kind
		fn, err := d.Module().Function(kname)
		if err != nil {
			b.Fatal(err)
		}
		in := fn.Describe()
		b.Run(v.name, func(b *testing.B) {
			d.Variant, d.BlockSize, d.Tile, d.Unsorted = v.kind, v.block, v.tile, v.unsorted
			defer func() { d.Variant, d.BlockSize, d.Tile, d.Unsorted = "", 0, 0, false }()
			kernel := kernelSeconds(b, d, sc, v.opt)
			r := samples * float64(b.N) / kernel
			rates[v.name] = r
			tiles[v.name] = d.LastTile
			b.ReportMetric(r, "samples/s")
			b.ReportMetric(samples*float64(b.N)/b.Elapsed().Seconds(), "wall-samples/s")
			b.ReportMetric(kernel/float64(b.N)*1e3, "kernel-ms")
		})
		if kind == gpuradiation.Split { // both kernels, at the launch's shapes
			ls := d.LastSplit
			field, err := d.Module().Function(gpuradiation.SplitFieldKernel(v.opt.Precision))
			if err != nil {
				b.Fatal(err)
			}
			in = fn.DescribeAt(ls.SolveBlock, 0)
			fi := field.DescribeAt(32*ls.Tile, ls.Shared)
			b.Logf("%-44s %-30s %3d registers, spill %d/%d B, local %d B, block %d, %d blocks/SM, occupancy %.2f",
				v.name, in.Name, in.Registers, in.SpillStores, in.SpillLoads, in.LocalBytes, ls.SolveBlock, in.BlocksPerSM, in.Occupancy)
			b.Logf("%-44s %-30s %3d registers, spill %d/%d B, local %d B, block 32x%d, %d blocks/SM, occupancy %.2f: %s: %.3g samples/s",
				v.name, fi.Name, fi.Registers, fi.SpillStores, fi.SpillLoads, fi.LocalBytes, ls.Tile, fi.BlocksPerSM, fi.Occupancy, d.LastLaunch, rates[v.name])
			continue
		}
		if kind != gpuradiation.Obs { // occupancy at the launch's shape
			block, tile := cmp.Or(v.block, gpuradiation.DefaultBlock), tiles[v.name]
			in = fn.DescribeAt(block, gpuradiation.SharedBytes(block, tile))
		}
		b.Logf("%-44s %-28s %3d registers, spill %d/%d B, local %d B, %s, %d blocks/SM, occupancy %.2f: %.3g samples/s",
			v.name, in.Name, in.Registers, in.SpillStores, in.SpillLoads, in.LocalBytes, d.LastLaunch, in.BlocksPerSM, in.Occupancy, rates[v.name])
	}
	goal := 4e10
	verdict := func(r float64) string { return map[bool]string{true: "met", false: "missed"}[r >= goal] }
	r := rates["newton2_f64_warm_reuse"]
	b.Logf("Newton n=2 float64 (warm + coef_reuse): %.3g samples/s, goal %.3g: %s; naive (cold, no reuse) %.3g: x%.2f",
		r, goal, verdict(r), rates["newton2_f64_naive_cold"], r/rates["newton2_f64_naive_cold"])
	// The same two kernels on a scene that fills the GPU: the benchmark's
	// scene is about one wave of work items (H200: 2048 for 2112 resident
	// blocks), so it ends with its slowest item while SMs idle; with
	// -rad-filled observers (default 16x) the items pass through
	// the queue in many waves.
	filled := cmp.Or(*radFilled, 16*sc.O)
	size.O = filled
	if f := filledRates(b, d, size, def, naive); f["newton2_f64_warm_reuse_filled"] > 0 {
		rf := f["newton2_f64_warm_reuse_filled"]
		b.Logf("on the GPU-filling scene (%d observers): Newton n=2 float64 %.3g samples/s, goal %.3g: %s; naive %.3g: x%.2f",
			filled, rf, goal, verdict(rf), f["newton2_f64_naive_cold_filled"], rf/f["newton2_f64_naive_cold_filled"])
	}
	b.Logf("tiles over one thread per observer (same math): naive x%.2f, warm+reuse x%.2f; default over the one-thread-per-observer naive kernel x%.2f",
		rates["newton2_f64_naive_cold"]/rates["newton2_f64_naive_cold_obs"], r/rates["newton2_f64_warm_reuse_obs"], r/rates["newton2_f64_naive_cold_obs"])
	b.Logf("Hilbert order over given order: x%.2f", r/rates["newton2_f64_warm_reuse_unsorted"])
	b.Logf("AutoSegment (%d samples) over segments of 64: x%.2f, of 32: x%.2f", radiation.AutoSegment(sc.O, sc.S),
		r/rates["newton2_f64_warm_reuse_seg64"], r/rates["newton2_f64_warm_reuse_seg32"])
	b.Logf("segments (AutoSegment: %d samples) over one walk per observer: x%.2f", radiation.AutoSegment(sc.O, sc.S), r/rates["newton2_f64_warm_reuse_whole"])
	b.Logf("split (two phases) over tiled (the default): Newton f64 warm+reuse %.3g samples/s x%.2f, naive x%.2f, f32 warm+reuse x%.2f",
		rates["newton2_f64_warm_reuse_split"], rates["newton2_f64_warm_reuse_split"]/r,
		rates["newton2_f64_naive_cold_split"]/rates["newton2_f64_naive_cold"], rates["newton2_f32_warm_reuse_split"]/rates["newton2_f32_warm_reuse"])
	b.Logf("warm search over cold (no reuse): float64 x%.2f, float32 x%.2f", rates["newton2_f64_warm"]/rates["newton2_f64_naive_cold"],
		rates["newton2_f32_warm"]/rates["newton2_f32_naive_cold"])
	b.Logf("coef_reuse on/off: Newton f64 x%.2f, f32 x%.2f, RK4 f64 x%.2f", r/rates["newton2_f64_warm"],
		rates["newton2_f32_warm_reuse"]/rates["newton2_f32_warm"], rates["rk4x4_f64_warm_reuse"]/rates["rk4x4_f64_warm"])
	if r2, r4 := rates["newton2_f64_warm_reuse_block=32_tile=2"], rates["newton2_f64_warm_reuse_block=32_tile=4"]; r2 > 0 && r4 > 0 {
		restart, sample := restartCost(1/r2, 1/r4)
		b.Logf("time per sample C + R/tile from tiles of 2 and 4: a particle's restart R = %.2f C; at tiles of 4 the restarts take %.0f%%",
			restart/sample, 100*restart/4*r4)
	}
}

// kernelSeconds computes the scene's cube b.N times with opt and returns
// the kernels' device time summed over the runs.
func kernelSeconds(b *testing.B, d *gpuradiation.Device, sc *radscene.Scene, opt radiation.Options) float64 {
	kernel := 0.0
	for i := 0; i < b.N; i++ {
		c := fieldsOn(b, sc, opt)
		kernel += d.LastSeconds
		if math.IsNaN(c.Data[0][0]) {
			b.Fatal("NaN cube")
		}
		c.Release()
	}
	return kernel
}

// filledRates runs the default and naive options (sub-benchmarks
// newton2_f64_warm_reuse_filled and newton2_f64_naive_cold_filled) on the
// benchmark's scene of the given size, and returns their samples/s (those
// that -test.bench selected).
func filledRates(b *testing.B, d *gpuradiation.Device, size radscene.Size, def, naive radiation.Options) map[string]float64 {
	rates := map[string]float64{}
	var sc *radscene.Scene
	defer func() {
		if sc != nil {
			sc.Release()
		}
	}()
	for _, v := range []struct {
		name string
		opt  radiation.Options
	}{{"newton2_f64_warm_reuse_filled", def}, {"newton2_f64_naive_cold_filled", naive}} {
		b.Run(v.name, func(b *testing.B) {
			if sc == nil {
				sc = radscene.New(b, size)
			}
			samples, kernel := float64(sc.O*sc.S*sc.P), kernelSeconds(b, d, sc, v.opt)
			rates[v.name] = samples * float64(b.N) / kernel
			b.ReportMetric(rates[v.name], "samples/s")
			b.ReportMetric(kernel/float64(b.N)*1e3, "kernel-ms")
		})
	}
	return rates
}

// restartCost fits the tiled kernel's time per sample, C + R/T, to its times
// per sample t2, t4 at tiles of T = 2 and 4 (blocks of 32 observers, 16 per
// SM either way): R is one particle's restart at a tile's start (its walker's
// scratch record, search and interval fetch), C the rest of a sample.
func restartCost(t2, t4 float64) (restart, sample float64) {
	restart = 4 * (t2 - t4)
	return restart, t4 - restart/4
}

// TestRestartCost: the fit recovers C and R from times built from them, and
// measured H200 times (tiles of 2: 2.86e10, 4: 3.53e10 samples/s) give
// R = 1.22 C, the restarts 23% of the time at tiles of 4.
func TestRestartCost(t *testing.T) {
	restart, sample := restartCost(2+3.0/2, 2+3.0/4)
	if math.Abs(restart-3) > 1e-12 || math.Abs(sample-2) > 1e-12 {
		t.Fatalf("restartCost: R = %v, C = %v, want 3, 2", restart, sample)
	}
	restart, sample = restartCost(1/2.86e10, 1/3.53e10)
	if ratio, share := restart/sample, restart/4*3.53e10; math.Abs(ratio-1.22) > 0.01 || math.Abs(share-0.234) > 0.005 {
		t.Fatalf("R/C = %.3f, restart share %.3f", ratio, share)
	}
}

// BenchmarkGPUFieldsCall: what a Fields call costs on the GPU beyond its
// kernel, on the API benchmark's scene (bench/api run.py radiation: 32768
// observers x 256 samples x 16 particles, 16 knots per period; -rad-observers
// and -rad-kpp change them), float64 and float32: the call's wall time, the kernel's
// device time, the cube's copy to the host and its rate, against a plain
// copy of as many bytes from device memory into pinned memory (the link's
// rate). The goal (docs/performance/radiation.md): wall <= kernel + copy at
// 80% of the plain copy's rate, plus 15% of the kernel; float32 under float64.
// The calls repeat their inputs with a radiation.Prepared, as the bridge's do.
func BenchmarkGPUFieldsCall(b *testing.B) {
	d := gpu(b)
	sc := radscene.New(b, radscene.Size{O: cmp.Or(*radObservers, 32768), S: 256, P: 16, KPP: cmp.Or(*radKPP, 16)})
	defer sc.Release()
	bytes := 8 * radiation.NComp * sc.O * sc.S
	link := pinnedCopyRate(b, d, bytes)
	b.Logf("plain device-to-pinned copy of %d MiB: %.1f GB/s", bytes>>20, link/1e9)
	for _, prec := range []radiation.Precision{radiation.Float64, radiation.Float32} {
		b.Run(prec.String(), func(b *testing.B) {
			opt := radiation.DefaultOptions()
			opt.Precision, opt.Device, opt.Prepared = prec, d, &radiation.Prepared{} // as the bridge's repeated calls
			fieldsOn(b, sc, opt).Release()                                           // pins the cube's block once
			b.ResetTimer()
			kernel, cp := 0.0, 0.0
			for i := 0; i < b.N; i++ {
				fieldsOn(b, sc, opt).Release()
				kernel += d.LastSeconds
				cp += d.LastCopySeconds
			}
			wall := b.Elapsed().Seconds() / float64(b.N)
			kernel /= float64(b.N)
			cp /= float64(b.N)
			goal := kernel*1.15 + float64(bytes)/(0.8*link)
			b.ReportMetric(wall*1e3, "wall-ms")
			b.ReportMetric(kernel*1e3, "kernel-ms")
			b.ReportMetric(cp*1e3, "copy-ms")
			b.ReportMetric(float64(d.LastCopyBytes)/cp/1e9, "copy-GB/s")
			b.Logf("%v: wall %.2f ms, kernel %.2f ms, copy %.2f ms (%.1f GB/s), goal %.2f ms: %s", prec, wall*1e3, kernel*1e3, cp*1e3,
				float64(d.LastCopyBytes)/cp/1e9, goal*1e3, map[bool]string{true: "met", false: "missed"}[wall <= goal])
		})
		// The cube left on the device: the goal is the kernel's time plus 15%.
		b.Run(prec.String()+"_on_device", func(b *testing.B) {
			opt := radiation.DefaultOptions()
			opt.Precision, opt.Device, opt.OnDevice, opt.Prepared = prec, d, true, &radiation.Prepared{}
			fieldsOn(b, sc, opt).Release()
			b.ResetTimer()
			kernel := 0.0
			for i := 0; i < b.N; i++ {
				fieldsOn(b, sc, opt).Release()
				kernel += d.LastSeconds
			}
			wall := b.Elapsed().Seconds() / float64(b.N)
			kernel /= float64(b.N)
			b.ReportMetric(wall*1e3, "wall-ms")
			b.ReportMetric(kernel*1e3, "kernel-ms")
			b.Logf("%v on the device: wall %.2f ms, kernel %.2f ms, goal %.2f ms: %s", prec, wall*1e3, kernel*1e3, 1.15*kernel*1e3,
				map[bool]string{true: "met", false: "missed"}[wall <= 1.15*kernel])
		})
	}
}

// TestGPUCubeOnDevice: a cube left on the device holds the bits of the one
// copied to the host (float64 and float32, with retarded times), and is
// freed with the cube.
func TestGPUCubeOnDevice(t *testing.T) {
	d := gpu(t)
	sc := radscene.New(t, radscene.Size{O: 300, S: 64, P: 3})
	defer sc.Release()
	for _, prec := range []radiation.Precision{radiation.Float64, radiation.Float32} {
		opt := radiation.DefaultOptions()
		opt.Precision, opt.Device, opt.Retarded = prec, d, true
		host := fieldsOn(t, sc, opt)
		opt.OnDevice = true
		dev := fieldsOn(t, sc, opt)
		if dev.Device == nil || len(dev.Data) != 0 {
			t.Fatalf("%v: the cube on the device has Device %v and %d host columns", prec, dev.Device, len(dev.Data))
		}
		n := sc.O * sc.S
		if dev.Device.Bytes != 8*n*len(host.Columns) {
			t.Fatalf("%v: %d bytes on the device for %d columns of %d", prec, dev.Device.Bytes, len(host.Columns), n)
		}
		got := make([]float64, n*len(host.Columns))
		if err := cuda.DownloadFrom(got, d.Module(), dev.Device.Ptr); err != nil {
			t.Fatal(err)
		}
		for k, col := range host.Data {
			for i, v := range col {
				if w := got[k*n+i]; math.Float64bits(w) != math.Float64bits(v) && !(math.IsNaN(w) && math.IsNaN(v)) {
					t.Fatalf("%v: %s[%d] is %v on the device, %v on the host", prec, host.Columns[k], i, w, v)
				}
			}
		}
		host.Release()
		if err := dev.Release(); err != nil {
			t.Fatal(err)
		}
	}
}

// pinnedCopyRate is the device-to-host rate (bytes/s) of a plain copy of n
// bytes into the device's pinned host memory, best of three.
func pinnedCopyRate(b *testing.B, d *gpuradiation.Device, n int) float64 {
	buf, err := d.Module().Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Free()
	mem := d.HostAllocator()
	host := mem.Allocate(n)
	defer mem.Free(host)
	best := math.Inf(1)
	for range 3 {
		t := time.Now()
		if err := cuda.Download(host, buf, 0); err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Since(t).Seconds())
	}
	return float64(n) / best
}

// TestGPUKeptInputs: consecutive calls with a radiation.Prepared (a kept
// job: the device uploads the knots, observers and their schedule again only
// when other slices come) give the bits of calls prepared from scratch, when
// the same observers come back, when others replace them, and when the first
// come back again (new slices then), in both precisions.
func TestGPUKeptInputs(t *testing.T) {
	d := gpu(t)
	sc := radscene.New(t, radscene.Size{O: 300, S: 64, P: 3})
	defer sc.Release()
	first := sc.Obs
	defer func() { sc.Obs = first }()
	other := radiation.Observers{X: make([]float64, sc.O), Y: make([]float64, sc.O), Z: make([]float64, sc.O)}
	for i := range other.X { // the observers turned by 90 degrees about z and moved out
		other.X[i], other.Y[i], other.Z[i] = -1.25*first.Y[i], 1.25*first.X[i], 1.25*first.Z[i]
	}
	sets := []radiation.Observers{first, other}
	for _, prec := range []radiation.Precision{radiation.Float64, radiation.Float32} {
		opt := radiation.DefaultOptions()
		opt.Precision, opt.Device = prec, d
		var want [2][][]float64
		for j, obs := range sets {
			sc.Obs = obs
			c := fieldsOn(t, sc, opt)
			for _, col := range c.Data {
				want[j] = append(want[j], append([]float64(nil), col...))
			}
			c.Release()
		}
		opt.Prepared = &radiation.Prepared{}
		for call, j := range []int{0, 0, 0, 1, 1, 0, 0} {
			sc.Obs = sets[j]
			c := fieldsOn(t, sc, opt)
			for k, col := range c.Data {
				for i, v := range col {
					if w := want[j][k][i]; math.Float64bits(w) != math.Float64bits(v) && !(math.IsNaN(w) && math.IsNaN(v)) {
						t.Fatalf("%v, call %d: %s[%d] is %v with kept inputs, %v prepared from scratch", prec, call, c.Columns[k], i, v, w)
					}
				}
			}
			c.Release()
		}
	}
}
