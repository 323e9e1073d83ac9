package gpunbody

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"
	"unsafe"

	"github.com/fieldgo/fieldgo/core/nbody"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels/cuda"
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
)

// The benchmarks' machine figures, flags of the test binary (go test -bench
// ... -args -peak-f32 19.5, or gpunbody.test -peak-f32 19.5): the H200's by default.
var (
	peakF32 = flag.Float64("peak-f32", 67, "BenchmarkGPUAccelerations: the GPU's float32 peak, TFLOP/s")
	peakF64 = flag.Float64("peak-f64", 33.5, "BenchmarkGPUAccelerations: the GPU's float64 peak, TFLOP/s")
	maxLog2 = flag.Int("nbody-max-log2", 20, "BenchmarkGPUAccelerations: the largest N is 2^this (at most 20)")
	smMHz   = flag.Float64("sm-mhz", 1980, "BenchmarkGPUMufuRate: the SM clock, MHz")
)

var shared struct {
	d   *Device
	err error
}

// device opens the GPU once for the package's tests, or skips saying why
// (CI has no GPU: these run on the GPU machine, docs/performance/nbody.md).
// A kernel that fails to compile is a failure, not a skip.
func device(tb testing.TB) *Device {
	tb.Helper()
	if shared.d == nil && shared.err == nil {
		b, err := cuda.New(cuda.Options{CacheDir: os.Getenv("FIELDGO_TEST_CUDA_CACHE")})
		if err != nil {
			shared.err = err
		} else {
			shared.d, shared.err = New(b)
		}
	}
	if shared.err != nil {
		if errs.Is(shared.err, errs.Compile) {
			tb.Fatalf("N-body kernels do not compile: %v", shared.err)
		}
		tb.Skipf("no usable CUDA GPU, GPU N-body tests skipped: %v", shared.err)
	}
	return shared.d
}

func plummer(tb testing.TB, n int, seed uint64) *nbody.Bodies {
	tb.Helper()
	b, err := nbody.Plummer(n, seed, false)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func roundTo32(b *nbody.Bodies) {
	for _, col := range [][]float64{b.X, b.Y, b.Z, b.M} {
		for i := range col {
			col[i] = float64(float32(col[i]))
		}
	}
}

// TestGPUAccuracyAgainstReference checks the tiled kernel, at every P and
// through Solver.Device, against the float64 CPU reference with
//
//	|a_i - a_i_ref| <= k (u + 2^-53) sum_j |a_ij|,   k = (N - 1) + 20,
//
// (nbody.ErrorBoundK): 20 ulps for the rounding of one term (the kernel's
// operation sequence is Solver's, rsqrtf's 2 ulp counted; FMA contraction
// only removes roundings), N - 1 for the recursive sum (the P partial sums
// combined in order have a smaller depth), plus the reference's own error
// with u = 2^-53. Float32 inputs are float32 numbers, so only the
// arithmetic is compared. Potentials are checked the same way with
// sum_j |phi_ij| = |phi_ref|.
func TestGPUAccuracyAgainstReference(t *testing.T) {
	d := device(t)
	for _, n := range []int{700, 3001} {
		for _, prec := range []nbody.Precision{nbody.Float64, nbody.Float32} {
			for _, eps := range []float64{0, 0.01} {
				b := plummer(t, n, 7)
				if prec == nbody.Float32 {
					roundTo32(b)
				}
				rx, ry, rz, rp := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
				nbody.Reference(b.X, b.Y, b.Z, b.M, eps, rx, ry, rz, rp)
				sx, sy, sz := nbody.AbsSums(b.X, b.Y, b.Z, b.M, eps)
				k := nbody.ErrorBoundK(n)
				u := prec.UnitRoundoff() + 0x1p-53
				for _, kc := range accuracyKernels(prec) {
					ax, ay, az, ap := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
					if kc.p == 0 {
						s := nbody.Solver{Softening: eps, Precision: prec, Device: d}
						if err := s.Accelerations(b.X, b.Y, b.Z, b.M, ax, ay, az, ap); err != nil {
							t.Fatal(err)
						}
					} else if err := d.accelerationsName(kc.name, kc.p, kc.nt, b, eps, prec, ax, ay, az, ap); err != nil {
						t.Fatal(err)
					}
					worst := 0.0
					for i := 0; i < n; i++ {
						cs := [][3]float64{{ax[i], rx[i], sx[i]}, {ay[i], ry[i], sy[i]}, {az[i], rz[i], sz[i]}, {ap[i], rp[i], math.Abs(rp[i])}}
						if !kc.pot {
							cs = cs[:3]
						}
						for _, c := range cs {
							e := math.Abs(c[0] - c[1])
							if !(e <= k*u*c[2]) {
								t.Fatalf("N=%d %v eps=%v %s body %d: |a - a_ref| = %.3g > k u sum|a_ij| = %.3g (k=%v)", n, prec, eps, kc.name, i, e, k*u*c[2], k)
							}
							worst = math.Max(worst, e/(u*c[2]))
						}
					}
					t.Logf("N=%d %v eps=%v %s: worst measured k = %.2f (bound %v)", n, prec, eps, kc.name, worst, k)
				}
			}
		}
	}
}

type accuracyKernel struct {
	name  string
	p, nt int
	pot   bool
}

// targetCounts are the targets-per-thread counts of the tiled kernels of
// prec.
func targetCounts(prec nbody.Precision) []int {
	if prec == nbody.Float32 {
		return []int{1, 2, 4}
	}
	return []int{1, 2}
}

// accuracyKernels: every tiled kernel (P = 1, 2, 4, 8; two and, in float32,
// four targets per thread with potentials, one target per thread without),
// the benchmark's library-rsqrt and legacy kernels (no potentials), and P =
// 0: Solver.Accelerations through Device.
func accuracyKernels(prec nbody.Precision) []accuracyKernel {
	var ks []accuracyKernel
	for _, nt := range targetCounts(prec) {
		for _, p := range []int{1, 2, 4, 8} {
			ks = append(ks, accuracyKernel{TiledName(p, nt, prec, nt > 1), p, nt, nt > 1})
		}
	}
	return append(ks, accuracyKernel{"fg_nbody_tiled1_lib_" + suffix(prec), 1, 1, false},
		accuracyKernel{"fg_nbody_tiled1_legacy_" + suffix(prec), 1, 1, false},
		accuracyKernel{"Solver.Device", 0, 0, true})
}

// accelerationsName runs the tiled entry point name (P threads per target,
// nt targets per thread) on b; pot receives the potentials (zero for the
// kernels without them).
func (d *Device) accelerationsName(name string, p, nt int, b *nbody.Bodies, eps float64, prec nbody.Precision, ax, ay, az, pot []float64) error {
	n := b.Len()
	rb := recordBytes(prec)
	body, err := d.m.Alloc(rb * n)
	if err != nil {
		return err
	}
	defer body.Free()
	acc, err := d.m.Alloc(rb * n)
	if err != nil {
		return err
	}
	defer acc.Free()
	if err := upload(body, pack(prec, b.X, b.Y, b.Z, b.M)); err != nil {
		return err
	}
	if err := d.launchTiledName(name, p, nt, body, acc, n, eps, prec); err != nil {
		return err
	}
	return download(acc, prec, n, ax, ay, az, pot)
}

// TestGPUDeterministic: the same inputs give the same bits, run after run,
// and the untiled kernel agrees with the tiled one within the bound.
func TestGPUDeterministic(t *testing.T) {
	d := device(t)
	const n = 5000
	b := plummer(t, n, 3)
	for _, prec := range []nbody.Precision{nbody.Float64, nbody.Float32} {
		var first [4][]float64
		for run := 0; run < 3; run++ {
			a := [4][]float64{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
			if err := d.Accelerations(b.X, b.Y, b.Z, b.M, 0.01, prec, a[0], a[1], a[2], a[3]); err != nil {
				t.Fatal(err)
			}
			if run == 0 {
				first = a
				continue
			}
			for c := range a {
				for i := range a[c] {
					if math.Float64bits(a[c][i]) != math.Float64bits(first[c][i]) {
						t.Fatalf("%v run %d: component %d of body %d differs: %v vs %v", prec, run, c, i, a[c][i], first[c][i])
					}
				}
			}
		}
	}
}

// TestGPUDefaultLargeN runs the production path (Solver.Device, so
// Targets and PFor: the float32 four-target kernel from 2^15 bodies)
// at body counts that are not multiples of a block's targets, twice each:
// the two runs must agree bit for bit, and 64 sampled targets must satisfy
// the accuracy bound of TestGPUAccuracyAgainstReference against a float64
// sum computed here for those targets only.
func TestGPUDefaultLargeN(t *testing.T) {
	d := device(t)
	for _, n := range []int{1<<15 + 7, 1<<18 + 5} {
		b := plummer(t, n, 13)
		for _, prec := range []nbody.Precision{nbody.Float32, nbody.Float64} {
			bb := b
			if prec == nbody.Float32 {
				bb = plummer(t, n, 13)
				roundTo32(bb)
			}
			const eps = 0.01
			var runs [2][4][]float64
			for r := range runs {
				runs[r] = [4][]float64{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
				s := nbody.Solver{Softening: eps, Precision: prec, Device: d}
				if err := s.Accelerations(bb.X, bb.Y, bb.Z, bb.M, runs[r][0], runs[r][1], runs[r][2], runs[r][3]); err != nil {
					t.Fatal(err)
				}
			}
			for c := range runs[0] {
				for i := range runs[0][c] {
					if math.Float64bits(runs[0][c][i]) != math.Float64bits(runs[1][c][i]) {
						t.Fatalf("N=%d %v: component %d of body %d differs between runs", n, prec, c, i)
					}
				}
			}
			k := nbody.ErrorBoundK(n)
			u := prec.UnitRoundoff() + 0x1p-53
			worst := 0.0
			for s := 0; s < 64; s++ {
				i := (s*n)/64 + s%7
				var a, abs [4]float64
				for j := 0; j < n; j++ {
					if j == i {
						continue
					}
					dx, dy, dz := bb.X[j]-bb.X[i], bb.Y[j]-bb.Y[i], bb.Z[j]-bb.Z[i]
					inv := 1 / math.Sqrt(dx*dx+dy*dy+dz*dz+eps*eps)
					f := bb.M[j] * inv * inv * inv
					for c, v := range []float64{f * dx, f * dy, f * dz, -bb.M[j] * inv} {
						a[c] += v
						abs[c] += math.Abs(v)
					}
				}
				for c := range a {
					e := math.Abs(runs[0][c][i] - a[c])
					if !(e <= k*u*abs[c]) {
						t.Fatalf("N=%d %v (x%d) body %d component %d: |a - a_ref| = %.3g > k u sum|a_ij| = %.3g", n, prec, Targets(n, prec), i, c, e, k*u*abs[c])
					}
					worst = math.Max(worst, e/(u*abs[c]))
				}
			}
			t.Logf("N=%d %v: default kernel x%d (P=%d), deterministic, worst measured k on 64 targets = %.2f (bound %v)", n, prec, Targets(n, prec), d.PFor(n, Targets(n, prec)), worst, k)
		}
	}
}

// TestGPUMaskingAndZeroMass: with no softening the masked self term gives
// finite accelerations (not 0/0); with and without softening, zero-mass
// bodies feel forces (nonzero acceleration) but exert none (the others'
// accelerations equal, within the bound, those of the set without them).
func TestGPUMaskingAndZeroMass(t *testing.T) {
	d := device(t)
	const n = 1000
	b := plummer(t, n, 11)
	var keep []int
	for i := range b.M {
		if i%5 == 0 {
			b.M[i] = 0
		} else {
			keep = append(keep, i)
		}
	}
	sub := &nbody.Bodies{}
	for _, i := range keep {
		sub.X, sub.Y, sub.Z, sub.M = append(sub.X, b.X[i]), append(sub.Y, b.Y[i]), append(sub.Z, b.Z[i]), append(sub.M, b.M[i])
	}
	// The default kernel unsoftened (the masked library-rsqrt path) and
	// softened, and the float32 four-target kernels softened (their fast
	// path).
	type run struct {
		prec nbody.Precision
		eps  float64
		name string // "" for Device.Accelerations
	}
	runs := []run{{nbody.Float64, 0, ""}, {nbody.Float32, 0, ""}, {nbody.Float64, 0.01, ""}, {nbody.Float32, 0.01, ""}}
	for _, p := range []int{1, 8} {
		runs = append(runs, run{nbody.Float32, 0.01, TiledName(p, 4, nbody.Float32, false)})
	}
	eval := func(r run, bs *nbody.Bodies, ax, ay, az []float64) {
		var err error
		if r.name == "" {
			err = d.Accelerations(bs.X, bs.Y, bs.Z, bs.M, r.eps, r.prec, ax, ay, az, nil)
		} else {
			p := 1
			fmt.Sscanf(r.name, "fg_nbody_tiled%d", &p)
			err = d.accelerationsName(r.name, p, 4, bs, r.eps, r.prec, ax, ay, az, make([]float64, bs.Len()))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range runs {
		prec := r.prec
		ax, ay, az := make([]float64, n), make([]float64, n), make([]float64, n)
		eval(r, b, ax, ay, az)
		m := len(keep)
		bx, by, bz := make([]float64, m), make([]float64, m), make([]float64, m)
		eval(r, sub, bx, by, bz)
		sx, sy, sz := nbody.AbsSums(sub.X, sub.Y, sub.Z, sub.M, r.eps)
		k := nbody.ErrorBoundK(n)
		u := 2 * prec.UnitRoundoff()
		for i := 0; i < n; i++ {
			if !finite(ax[i]) || !finite(ay[i]) || !finite(az[i]) {
				t.Fatalf("%v %q eps=%v: body %d has a non-finite acceleration", prec, r.name, r.eps, i)
			}
			if b.M[i] == 0 && ax[i] == 0 && ay[i] == 0 && az[i] == 0 {
				t.Fatalf("%v %q eps=%v: zero-mass body %d feels no force", prec, r.name, r.eps, i)
			}
		}
		for j, i := range keep {
			for _, c := range [][3]float64{{ax[i], bx[j], sx[j]}, {ay[i], by[j], sy[j]}, {az[i], bz[j], sz[j]}} {
				if e := math.Abs(c[0] - c[1]); !(e <= k*u*c[2]) {
					t.Fatalf("%v %q eps=%v: body %d: zero-mass bodies changed its acceleration by %.3g > %.3g", prec, r.name, r.eps, i, e, k*u*c[2])
				}
			}
		}
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// TestGPULeapfrog integrates a Plummer sphere on the device and on the CPU in
// float64: after 200 steps (a fifth of a crossing time) the states agree to
// a tolerance far above rounding and far below the motion (1e-9 relative to
// the system's size: rounding differences grow, but not that fast), the
// energy error is that of the CPU run within 1e-9, and two device runs are
// bit-identical.
func TestGPULeapfrog(t *testing.T) {
	d := device(t)
	const n, steps = 2048, 200
	b0 := plummer(t, n, 5)
	run := func(dev nbody.Device, prec nbody.Precision) (*nbody.Bodies, []nbody.Diagnostics) {
		it, err := nbody.NewIntegrator(b0, nbody.Config{Dt: 1e-3, Softening: 0.01, Precision: prec, Device: dev})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Release()
		var diags []nbody.Diagnostics
		if err := it.Run(context.Background(), steps, 50, sinkFunc(func(s nbody.Snapshot) error {
			diags = append(diags, s.Diagnostics)
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		s := it.Bodies()
		out := &nbody.Bodies{}
		for _, c := range [][2]*[]float64{{&out.X, &s.X}, {&out.Y, &s.Y}, {&out.Z, &s.Z}, {&out.VX, &s.VX}, {&out.VY, &s.VY}, {&out.VZ, &s.VZ}} {
			*c[0] = append([]float64(nil), (*c[1])...)
		}
		return out, diags
	}
	cpuB, cpuD := run(nil, nbody.Float64)
	gpuB, gpuD := run(d, nbody.Float64)
	gpuB2, _ := run(d, nbody.Float64)
	if len(gpuD) != len(cpuD) || len(gpuD) != steps/50+1 {
		t.Fatalf("%d snapshots on the GPU, %d on the CPU, want %d", len(gpuD), len(cpuD), steps/50+1)
	}
	worst := 0.0
	for i := 0; i < n; i++ {
		for _, c := range [][3]float64{{gpuB.X[i], cpuB.X[i], gpuB2.X[i]}, {gpuB.Y[i], cpuB.Y[i], gpuB2.Y[i]}, {gpuB.VZ[i], cpuB.VZ[i], gpuB2.VZ[i]}} {
			if math.Float64bits(c[0]) != math.Float64bits(c[2]) {
				t.Fatalf("body %d: two device runs differ: %v vs %v", i, c[0], c[2])
			}
			worst = math.Max(worst, math.Abs(c[0]-c[1]))
		}
	}
	if worst > 1e-9 {
		t.Fatalf("device and CPU leapfrog differ by %.3g after %d steps", worst, steps)
	}
	e0 := cpuD[0].Kinetic + cpuD[0].Potential
	for k := range gpuD {
		eg, ec := gpuD[k].Kinetic+gpuD[k].Potential, cpuD[k].Kinetic+cpuD[k].Potential
		if math.Abs(eg-ec) > 1e-9*math.Abs(e0) {
			t.Fatalf("snapshot %d: energy %v on the device, %v on the CPU", k, eg, ec)
		}
	}
	t.Logf("N=%d, %d steps: max |GPU - CPU| = %.3g; relative energy error %.3g (CPU %.3g)", n, steps, worst,
		(gpuD[len(gpuD)-1].Kinetic+gpuD[len(gpuD)-1].Potential-e0)/math.Abs(e0), (cpuD[len(cpuD)-1].Kinetic+cpuD[len(cpuD)-1].Potential-e0)/math.Abs(e0))
	// Float32 on the device: energy conserved to its rounding level.
	_, f32D := run(d, nbody.Float32)
	last := f32D[len(f32D)-1]
	rel := (last.Kinetic + last.Potential - e0) / math.Abs(e0)
	if math.Abs(rel) > 1e-4 {
		t.Fatalf("float32 device leapfrog: relative energy error %.3g", rel)
	}
	t.Logf("float32 device leapfrog: relative energy error %.3g", rel)
}

type sinkFunc func(nbody.Snapshot) error

func (f sinkFunc) Write(s nbody.Snapshot) error { return f(s) }
func (sinkFunc) Close() error                   { return nil }

// TestGPUKernelResources: every N-body kernel loaded on the device, with
// registers (cuFuncGetAttribute), spills (ptxas) and occupancy logged; no
// spill, no local memory.
func TestGPUKernelResources(t *testing.T) {
	d := device(t)
	for _, prec := range []nbody.Precision{nbody.Float32, nbody.Float64} {
		names := []string{UntiledName(prec, false), "fg_nbody_kick_drift_" + suffix(prec), "fg_nbody_kick_" + suffix(prec),
			"fg_nbody_tiled1_lib_" + suffix(prec), "fg_nbody_tiled1_legacy_" + suffix(prec)}
		for _, p := range []int{1, 2, 4, 8} {
			for _, nt := range targetCounts(prec) {
				names = append(names, TiledName(p, nt, prec, false))
				if nt > 1 {
					names = append(names, TiledName(p, nt, prec, true))
				}
			}
		}
		for _, name := range names {
			fn, err := d.m.Function(name)
			if err != nil {
				t.Fatal(err)
			}
			in := fn.DescribeAt(Block, 0)
			t.Logf("%-26s %3d registers, spill %d/%d B, local %d B, shared %5d B, %d blocks/SM of %d, occupancy %.2f",
				name, in.Registers, in.SpillStores, in.SpillLoads, in.LocalBytes, in.SharedBytes, in.BlocksPerSM, in.BlockSize, in.Occupancy)
			if in.SpillStores != 0 || in.SpillLoads != 0 || in.LocalBytes != 0 {
				t.Errorf("%s spills", name)
			}
		}
	}
}

// BenchmarkGPUAccelerations: interactions/s and % of peak (20 flops per
// interaction in float32, 30 in float64; H200 peaks 67 and 33.5 TFLOP/s,
// -peak-f32/-peak-f64 in TFLOP/s for another GPU) for N = 2^14..2^20
// (-nbody-max-log2 lowers the top), in the same process: the tiled
// kernel with one, two and (float32) four targets per thread (x1, x2, x4)
// with P chosen by PFor, the untiled kernel, and for N >= 2^19 the tiled kernel without the
// split loop ("legacy": every term masked, library rsqrt) and the split loop
// with the library rsqrt ("lib"), each evaluation timed with CUDA events;
// N <= 2^16 with every P. The last lines log a summary per
// N, the float32/float64 ratio of the default kernels and the precision it
// recommends.
//
//	go test -c -o .gpu/gpunbody.test ./kernels/cuda/gpunbody
//	.gpu/gpunbody.test -test.run '^$' -test.bench GPUAccelerations -test.benchtime 1x -test.v
func BenchmarkGPUAccelerations(b *testing.B) {
	d := device(b)
	peak := map[nbody.Precision]float64{nbody.Float32: *peakF32 * 1e12, nbody.Float64: *peakF64 * 1e12}
	flops := map[nbody.Precision]float64{nbody.Float32: 20, nbody.Float64: 30}
	rate := map[string]float64{}
	lo, hi := 14, *maxLog2
	for lg := lo; lg <= hi; lg++ {
		n := 1 << lg
		bodies := plummer(b, n, 1)
		for _, prec := range []nbody.Precision{nbody.Float32, nbody.Float64} {
			rb := recordBytes(prec)
			body, err := d.m.Alloc(rb * n)
			if err != nil {
				b.Fatal(err)
			}
			acc, err := d.m.Alloc(rb * n)
			if err != nil {
				b.Fatal(err)
			}
			if err := upload(body, pack(prec, bodies.X, bodies.Y, bodies.Z, bodies.M)); err != nil {
				b.Fatal(err)
			}
			type kernel struct {
				name, key string
				launch    func() error
			}
			var ks []kernel
			for _, nt := range targetCounts(prec) {
				pAuto := d.PFor(n, nt)
				for _, p := range []int{1, 2, 4, 8} {
					if p != pAuto && lg > 16 {
						continue
					}
					key := ""
					if p == pAuto {
						key = fmt.Sprintf("x%d", nt)
					}
					ks = append(ks, kernel{fmt.Sprintf("tiled(P=%d,x%d)", p, nt), key, func() error {
						return d.LaunchTiledNT(p, nt, prec, false, body, acc, n, 0.01)
					}})
				}
			}
			ks = append(ks, kernel{"untiled", "untiled", func() error { return d.LaunchUntiled(prec, false, body, acc, n, 0.01) }})
			if lg >= 19 {
				for _, v := range []string{"lib", "legacy"} {
					name := "fg_nbody_tiled1_" + v + "_" + suffix(prec)
					ks = append(ks, kernel{"tiled(P=1," + v + ")", v, func() error {
						return d.launchTiledName(name, 1, 1, body, acc, n, 0.01, prec)
					}})
				}
			}
			for _, k := range ks {
				b.Run(fmt.Sprintf("%s/%v/N=2^%d", k.name, prec, lg), func(b *testing.B) {
					if err := k.launch(); err != nil { // warm-up
						b.Fatal(err)
					}
					start, _ := d.m.NewEvent()
					end, _ := d.m.NewEvent()
					defer start.Destroy()
					defer end.Destroy()
					start.Record()
					for i := 0; i < b.N; i++ {
						if err := k.launch(); err != nil {
							b.Fatal(err)
						}
					}
					end.Record()
					sec, err := cuda.Elapsed(start, end)
					if err != nil {
						b.Fatal(err)
					}
					r := nbody.Interactions(n) * float64(b.N) / sec
					if k.key != "" {
						rate[fmt.Sprintf("%s/%v/%d", k.key, prec, lg)] = r
					}
					b.ReportMetric(r, "interactions/s")
					b.ReportMetric(100*r*flops[prec]/peak[prec], "%peak")
					b.ReportMetric(sec/float64(b.N)*1e3, "ms/eval")
				})
			}
			body.Free()
			acc.Free()
		}
	}
	pct := func(r float64, prec nbody.Precision) float64 { return 100 * r * flops[prec] / peak[prec] }
	for lg := lo; lg <= hi; lg++ {
		for _, prec := range []nbody.Precision{nbody.Float32, nbody.Float64} {
			g := func(key string) float64 { return rate[fmt.Sprintf("%s/%v/%d", key, prec, lg)] }
			line := fmt.Sprintf("N=2^%d %v:", lg, prec)
			for _, nt := range targetCounts(prec) {
				x := fmt.Sprintf("x%d", nt)
				line += fmt.Sprintf(" %s(P=%d) %.3g (%.1f%%)", x, d.PFor(1<<lg, nt), g(x), pct(g(x), prec))
			}
			dk := fmt.Sprintf("x%d", Targets(1<<lg, prec))
			line += fmt.Sprintf("; untiled %.3g; default %s/untiled %.2f", g("untiled"), dk, g(dk)/g("untiled"))
			if lg >= 19 {
				line += fmt.Sprintf("; legacy %.3g, lib-rsqrt %.3g", g("legacy"), g("lib"))
			}
			b.Log(line)
		}
	}
	// The precision recommendation: float32 when it is faster by more than
	// the factor its accuracy costs is worth to the user; here we state the
	// measured ratio and recommend float32 for throughput when the ratio is
	// >= 1.5 at large N, its accuracy (k u sum|a_ij|, u = 2^-24) permitting.
	k32, k64 := fmt.Sprintf("x%d", Targets(1<<hi, nbody.Float32)), fmt.Sprintf("x%d", Targets(1<<hi, nbody.Float64))
	r32, r64 := rate[fmt.Sprintf("%s/float32/%d", k32, hi)], rate[fmt.Sprintf("%s/float64/%d", k64, hi)]
	rec := "float64 (float32 is not fast enough to pay for its accuracy)"
	if r32/r64 >= 1.5 {
		rec = "float32 for throughput when k 2^-24 sum|a_ij| is accurate enough (collisionless dynamics); float64 for reference-quality forces"
	}
	b.Logf("float32/float64 at N=2^%d (default kernels %v, %v): %.2f; recommendation: %s", hi, k32, k64, r32/r64, rec)
}

// checkLaunch runs check kernel name (one thread per argument, blocks of
// 256) on bufs and n.
func checkLaunch(t *testing.T, d *Device, name string, n int, bufs ...*cuda.DeviceBuffer) {
	t.Helper()
	fn, err := d.m.Function(name)
	if err != nil {
		t.Fatal(err)
	}
	var args any
	switch len(bufs) {
	case 3:
		args = &checkArgs32{X: bufs[0].Addr(), Lib: bufs[1].Addr(), Fast: bufs[2].Addr(), N: int32(n)}
	case 4:
		args = &checkArgs64{X: bufs[0].Addr(), Lib: bufs[1].Addr(), Fast: bufs[2].Addr(), Est: bufs[3].Addr(), N: int32(n)}
	default:
		t.Fatalf("%s: %d buffers", name, len(bufs))
	}
	if err := d.m.Launch(fn, [3]uint32{uint32(n+255) / 256, 1, 1}, [3]uint32{256, 1, 1}, 0, args); err != nil {
		t.Fatal(err)
	}
}

func checkAlloc(t *testing.T, d *Device, bytes int) *cuda.DeviceBuffer {
	t.Helper()
	b, err := d.m.Alloc(bytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Free() })
	return b
}

// runCheck runs check kernel name on xs (one argument per thread) with nout
// output buffers of xs's type, and returns the outputs in kernel order.
func runCheck[T float32 | float64](t *testing.T, d *Device, name string, xs []T, nout int) [][]T {
	t.Helper()
	n, size := len(xs), int(unsafe.Sizeof(xs[0]))
	bx := checkAlloc(t, d, size*n)
	if err := cuda.Upload(bx, 0, xs); err != nil {
		t.Fatal(err)
	}
	bufs := []*cuda.DeviceBuffer{bx}
	for i := 0; i < nout; i++ {
		bufs = append(bufs, checkAlloc(t, d, size*n))
	}
	checkLaunch(t, d, name, n, bufs...)
	outs := make([][]T, nout)
	for i := range outs {
		outs[i] = make([]T, n)
		if err := cuda.Download(outs[i], bufs[i+1], 0); err != nil {
			t.Fatal(err)
		}
	}
	return outs
}

// ulp32 is the float ulp above float32(r), as a float64.
func ulp32(r float64) float64 {
	return float64(math.Nextafter32(float32(r), float32(math.Inf(1))) - float32(r))
}

// logUniform returns n arguments: the first n-m with exponents uniform in
// [lo, hi] (mantissas uniform), the last m uniform in [1, 4).
func logUniform(seed uint64, n, m, lo, hi int) []float64 {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	xs := make([]float64, n)
	for i := range xs {
		if i < n-m {
			xs[i] = math.Ldexp(1+rng.Float64(), lo+rng.IntN(hi-lo+1))
		} else {
			xs[i] = 1 + 3*rng.Float64()
		}
	}
	return xs
}

// toFloat32Range maps each argument's exponent into [lo, lo + span) (its
// mantissa kept), so that float arguments cover float's range as xs covers
// double's.
func toFloat32Range(xs []float64, lo, span int) []float32 {
	x32 := make([]float32, len(xs))
	for i, v := range xs {
		e := math.Ilogb(v)
		x32[i] = float32(math.Ldexp(math.Ldexp(v, -e), lo+(e+1022)%span))
	}
	return x32
}

// checkF64 runs float64 check kernel name (x -> library, fast, estimate) on
// xs and measures each result against exact(x) (x given to 120 bits): the
// fast and library values in ulp, the estimate relatively. It fails when the
// fast value is more than 2 ulp off.
func checkF64(t *testing.T, d *Device, name string, xs []float64, exact func(x *big.Float) *big.Float) (worstFast, worstLib, worstEst float64) {
	t.Helper()
	out := runCheck(t, d, name, xs, 3)
	l64, f64, e64 := out[0], out[1], out[2]
	for i, x := range xs {
		ref := exact(new(big.Float).SetPrec(120).SetFloat64(x))
		r, _ := ref.Float64()
		ulp := math.Nextafter(r, math.Inf(1)) - r
		ef, el := ulpsOff(f64[i], ref, ulp), ulpsOff(l64[i], ref, ulp)
		worstFast, worstLib = math.Max(worstFast, ef), math.Max(worstLib, el)
		worstEst = math.Max(worstEst, ulpsOff(e64[i], ref, r))
		if !(ef <= 2) {
			t.Fatalf("%s(%g): fast %v, exact %v: %.2f ulp", name, x, f64[i], r, ef)
		}
	}
	return worstFast, worstLib, worstEst
}

// ulpsOff is |v - ref| in units of ulp, ref a 120-bit value.
func ulpsOff(v float64, ref *big.Float, ulp float64) float64 {
	dv := new(big.Float).SetPrec(120).SetFloat64(v)
	dv.Sub(dv, ref)
	f, _ := dv.Float64()
	return math.Abs(f) / ulp
}

// TestGPURsqrtNormal checks the tiled kernel's reciprocal square root for
// normal arguments (fg_rsqrt_normal of fastmath.cuh, used when eps^2 is
// normal) on 2^17 arguments spread log-uniformly over the normal range and
// 2^15 in [1, 4): in float it must be rsqrtf's bits exactly (the same
// MUFU.RSQ without the denormal rescaling; its error against 1/sqrt(x) is
// logged); in double it must be within 2 ulp of 1/sqrt(x) computed to 120
// bits (the derivation in fastmath.cuh gives ~1.5), the library's rsqrt and
// the raw hardware estimate are measured alongside.
func TestGPURsqrtNormal(t *testing.T) {
	d := device(t)
	const n = 1<<17 + 1<<15
	xs := logUniform(9, n, 1<<15, -1022, 1022)
	// float32: the normal range is [2^-126, 2^128).
	x32 := toFloat32Range(xs, -126, 253)
	out := runCheck(t, d, "fg_nbody_rsqrt_check_f32", x32, 2)
	l32, f32 := out[0], out[1]
	worstMufu := 0.0
	for i, x := range x32 {
		if math.Float32bits(l32[i]) != math.Float32bits(f32[i]) {
			t.Fatalf("float rsqrt(%g): fast %g, rsqrtf %g", x32[i], f32[i], l32[i])
		}
		// 1/sqrt(x) in float64 is within 2^-53 relative of the exact value:
		// far below the float ulp the errors are measured in.
		r := 1 / math.Sqrt(float64(x))
		worstMufu = math.Max(worstMufu, math.Abs(float64(f32[i])-r)/ulp32(r))
	}
	t.Logf("float: MUFU.RSQ (rsqrtf, and the fast path's bits) within %.3f ulp of 1/sqrt(x)", worstMufu)
	worstFast, worstLib, worstEst := checkF64(t, d, "fg_nbody_rsqrt_check_f64", xs, func(x *big.Float) *big.Float {
		return x.Quo(new(big.Float).SetPrec(120).SetInt64(1), x.Sqrt(x))
	})
	t.Logf("float: fast == rsqrtf on %d normal arguments; double: fast within %.3f ulp, library rsqrt %.3f ulp, estimate relative error %.3g (2^%.1f)",
		n, worstFast, worstLib, worstEst, math.Log2(worstEst))
}

// TestGPURcpNormal checks fastmath.cuh's reciprocal (fg_rcp_normal: the
// radiation kernels' divisions) the same way, on arguments whose reciprocals
// are normal too (ftz): float within 2 ulp of 1/x (rcp.approx.ftz.f32 is
// documented within 1), double within 2 ulp of 1/x to 120 bits (the
// derivation gives ~1); the library's correctly rounded 1/x (0.5 ulp) and
// the raw estimate are measured alongside.
func TestGPURcpNormal(t *testing.T) {
	d := device(t)
	const n = 1<<17 + 1<<15
	xs := logUniform(11, n, 1<<15, -1021, 1021)
	x32 := toFloat32Range(xs, -125, 251)
	out := runCheck(t, d, "fg_nbody_rcp_check_f32", x32, 2)
	l32, f32 := out[0], out[1]
	var worst32, worstLib32 float64
	for i, x := range x32 {
		r := 1 / float64(x) // exact to 2^-53: far below a float ulp
		e, el := math.Abs(float64(f32[i])-r)/ulp32(r), math.Abs(float64(l32[i])-r)/ulp32(r)
		worst32, worstLib32 = math.Max(worst32, e), math.Max(worstLib32, el)
		if !(e <= 2) {
			t.Fatalf("float rcp(%g): fast %g, 1/x %g: %.2f ulp", x, f32[i], r, e)
		}
	}
	worstFast, worstLib, worstEst := checkF64(t, d, "fg_nbody_rcp_check_f64", xs, func(x *big.Float) *big.Float {
		return x.Quo(new(big.Float).SetPrec(120).SetInt64(1), x)
	})
	t.Logf("float: fast within %.3f ulp of 1/x (library %.3f); double: fast within %.3f ulp, library 1/x %.3f ulp, estimate relative error %.3g (2^%.1f)",
		worst32, worstLib32, worstFast, worstLib, worstEst, math.Log2(worstEst))
}

// mufuProbeSource measures the special-function unit's MUFU.RSQ rate, the
// quantity that bounds the float32 kernels (docs/performance/nbody.md): per
// thread 8 independent chains v = rsqrt.approx(a v + b), and per step F - 1
// further FFMAs on separate accumulators, so each MUFU.RSQ comes with F FP32
// instructions (F = 1: the FMA pipe nearly idle; 12-13: the N-body kernels'
// mix).
const mufuProbeSource = `
template <int F>
static __device__ __forceinline__ void fg_probe(float* out, int iters, float a, float b) {
    float v[8], w[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        v[k] = 1.0f + threadIdx.x * 1e-3f + k;
        w[k] = 0.0f;
    }
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int k = 0; k < 8; k++) {
            const float x = fmaf(v[k], a, b);
            float y;
            asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
            v[k] = y;
#pragma unroll
            for (int f = 1; f < F; f++) {
                w[k] = fmaf(w[k], a, y);
            }
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        s += v[k] + w[k];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
#define FG_PROBE(F) extern "C" __global__ void fg_probe_##F(float* out, int iters, float a, float b) { fg_probe<F>(out, iters, a, b); }
/* No MUFU: 8 chains of FFMAs, 16 a step (the FP32 issue rate alone). */
extern "C" __global__ void fg_probe_0(float* out, int iters, float a, float b) {
    float w[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        w[k] = 1.0f + threadIdx.x * 1e-3f + k;
    }
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int f = 0; f < 16; f++) {
#pragma unroll
            for (int k = 0; k < 8; k++) {
                w[k] = fmaf(w[k], a, b);
            }
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        s += w[k];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
FG_PROBE(1)
FG_PROBE(4)
FG_PROBE(8)
FG_PROBE(12)
FG_PROBE(13)
FG_PROBE(16)
`

// probeArgs are fg_probe_<F>'s parameters.
type probeArgs struct {
	Out   driver.DevicePtr `c:"out"`
	Iters int32            `c:"iters"`
	A     float32          `c:"a"`
	B     float32          `c:"b"`
}

var _ = driver.RegisterMatching[probeArgs](driver.Params, `fg_probe_\d+`)

// BenchmarkGPUMufuRate: MUFU.RSQ per SM per clock (clock -sm-mhz,
// default the H200's 1980, which nvidia-smi showed held during the float32
// benchmark) and FP32+MUFU instructions issued per SM per clock, for F FP32
// instructions per MUFU.RSQ, and (F=0) of FFMAs alone. Compare with the
// N-body kernels' interactions per SM per clock (one MUFU.RSQ each, 12.4
// other instructions in x4).
func BenchmarkGPUMufuRate(b *testing.B) {
	d := device(b)
	m, err := d.b.LoadModule(mufuProbeSource)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	mhz := *smMHz
	sms := d.b.SMs()
	const threads, iters = 256, 4096
	grid := 16 * sms
	out, err := m.Alloc(4 * threads * grid)
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []int{0, 1, 4, 8, 12, 13, 16} {
		fn, err := m.Function(fmt.Sprintf("fg_probe_%d", f))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("F=%d", f), func(b *testing.B) {
			launch := func() error {
				return m.Launch(fn, [3]uint32{uint32(grid), 1, 1}, [3]uint32{threads, 1, 1}, 0,
					&probeArgs{Out: out.Addr(), Iters: iters, A: 0.5, B: 0.75})
			}
			if err := launch(); err != nil {
				b.Fatal(err)
			}
			start, _ := m.NewEvent()
			end, _ := m.NewEvent()
			defer start.Destroy()
			defer end.Destroy()
			start.Record()
			for i := 0; i < b.N; i++ {
				if err := launch(); err != nil {
					b.Fatal(err)
				}
			}
			end.Record()
			sec, err := cuda.Elapsed(start, end)
			if err != nil {
				b.Fatal(err)
			}
			steps := float64(grid) * threads * iters * 8 * float64(b.N) / sec // chain steps per second
			perSM := steps / (float64(sms) * mhz * 1e6)
			if f == 0 {
				b.ReportMetric(16*perSM, "inst/SM/clk") // 16 FFMAs a step, no MUFU
				return
			}
			b.ReportMetric(steps, "MUFU/s")
			b.ReportMetric(perSM, "MUFU/SM/clk")
			b.ReportMetric(perSM*float64(f+1), "inst/SM/clk")
		})
	}
}
