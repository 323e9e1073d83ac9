package gpunbody

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/fieldgo/fieldgo/core/nbody"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels/cuda"
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
				for _, p := range []int{1, 2, 4, 8, 0} {
					ax, ay, az, ap := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
					if p == 0 {
						s := nbody.Solver{Softening: eps, Precision: prec, Device: d}
						if err := s.Accelerations(b.X, b.Y, b.Z, b.M, ax, ay, az, ap); err != nil {
							t.Fatal(err)
						}
					} else if err := d.accelerationsP(p, b, eps, prec, ax, ay, az, ap); err != nil {
						t.Fatal(err)
					}
					worst := 0.0
					for i := 0; i < n; i++ {
						for _, c := range [][3]float64{{ax[i], rx[i], sx[i]}, {ay[i], ry[i], sy[i]}, {az[i], rz[i], sz[i]}, {ap[i], rp[i], math.Abs(rp[i])}} {
							e := math.Abs(c[0] - c[1])
							if !(e <= k*u*c[2]) {
								t.Fatalf("N=%d %v eps=%v P=%d body %d: |a - a_ref| = %.3g > k u sum|a_ij| = %.3g (k=%v)", n, prec, eps, p, i, e, k*u*c[2], k)
							}
							worst = math.Max(worst, e/(u*c[2]))
						}
					}
					t.Logf("N=%d %v eps=%v P=%d: worst measured k = %.2f (bound %v)", n, prec, eps, p, worst, k)
				}
			}
		}
	}
}

// accelerationsP is Accelerations with a fixed P, potentials included.
func (d *Device) accelerationsP(p int, b *nbody.Bodies, eps float64, prec nbody.Precision, ax, ay, az, pot []float64) error {
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
	if err := d.LaunchTiled(p, prec, true, body, acc, n, eps); err != nil {
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

// TestGPUMaskingAndZeroMass: with no softening the masked self term gives
// finite accelerations (not 0/0); zero-mass bodies feel forces (nonzero
// acceleration) but exert none (the others' accelerations equal, within the
// bound, those of the set without them).
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
	for _, prec := range []nbody.Precision{nbody.Float64, nbody.Float32} {
		ax, ay, az := make([]float64, n), make([]float64, n), make([]float64, n)
		if err := d.Accelerations(b.X, b.Y, b.Z, b.M, 0, prec, ax, ay, az, nil); err != nil {
			t.Fatal(err)
		}
		m := len(keep)
		bx, by, bz := make([]float64, m), make([]float64, m), make([]float64, m)
		if err := d.Accelerations(sub.X, sub.Y, sub.Z, sub.M, 0, prec, bx, by, bz, nil); err != nil {
			t.Fatal(err)
		}
		sx, sy, sz := nbody.AbsSums(sub.X, sub.Y, sub.Z, sub.M, 0)
		k := nbody.ErrorBoundK(n)
		u := 2 * prec.UnitRoundoff()
		for i := 0; i < n; i++ {
			if !finite(ax[i]) || !finite(ay[i]) || !finite(az[i]) {
				t.Fatalf("%v: body %d has a non-finite acceleration with eps = 0", prec, i)
			}
			if b.M[i] == 0 && ax[i] == 0 && ay[i] == 0 && az[i] == 0 {
				t.Fatalf("%v: zero-mass body %d feels no force", prec, i)
			}
		}
		for j, i := range keep {
			for _, c := range [][3]float64{{ax[i], bx[j], sx[j]}, {ay[i], by[j], sy[j]}, {az[i], bz[j], sz[j]}} {
				if e := math.Abs(c[0] - c[1]); !(e <= k*u*c[2]) {
					t.Fatalf("%v: body %d: zero-mass bodies changed its acceleration by %.3g > %.3g", prec, i, e, k*u*c[2])
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
		names := []string{UntiledName(prec, false), "fg_nbody_kick_drift_" + suffix(prec), "fg_nbody_kick_" + suffix(prec)}
		for _, p := range []int{1, 2, 4, 8} {
			names = append(names, TiledName(p, prec, false), TiledName(p, prec, true))
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
// FIELDGO_PEAK_F32/F64 in TFLOP/s for another GPU) for N = 2^14..2^20, the
// tiled kernel (P chosen by ThreadsPerTarget) against the untiled one in the
// same process, each evaluation timed with CUDA events; the small sizes
// with every P. The last lines log the float32/float64 ratio and the
// precision it recommends.
//
//	go test -c -o .gpu/gpunbody.test ./kernels/cuda/gpunbody
//	.gpu/gpunbody.test -test.run '^$' -test.bench GPUAccelerations -test.benchtime 3x -test.v
func BenchmarkGPUAccelerations(b *testing.B) {
	d := device(b)
	peak := map[nbody.Precision]float64{nbody.Float32: envFloat("FIELDGO_PEAK_F32", 67) * 1e12, nbody.Float64: envFloat("FIELDGO_PEAK_F64", 33.5) * 1e12}
	flops := map[nbody.Precision]float64{nbody.Float32: 20, nbody.Float64: 30}
	rate := map[string]float64{}
	lo, hi := 14, 20
	if v := os.Getenv("FIELDGO_NBODY_MAXLOG2"); v != "" {
		fmt.Sscan(v, &hi)
	}
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
				name   string
				launch func() error
			}
			pAuto := ThreadsPerTarget(n, d.b.SMs(), d.b.MaxThreadsPerSM())
			ks := []kernel{
				{fmt.Sprintf("tiled(P=%d)", pAuto), func() error { return d.LaunchTiled(pAuto, prec, false, body, acc, n, 0.01) }},
				{"untiled", func() error { return d.LaunchUntiled(prec, false, body, acc, n, 0.01) }},
			}
			if lg <= 16 {
				for _, p := range []int{1, 2, 4, 8} {
					if p != pAuto {
						ks = append(ks, kernel{fmt.Sprintf("tiled(P=%d)", p), func() error { return d.LaunchTiled(p, prec, false, body, acc, n, 0.01) }})
					}
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
					rate[fmt.Sprintf("%s/%v/%d", k.name[:5], prec, lg)+pTag(k.name, pAuto)] = r
					b.ReportMetric(r, "interactions/s")
					b.ReportMetric(100*r*flops[prec]/peak[prec], "%peak")
					b.ReportMetric(sec/float64(b.N)*1e3, "ms/eval")
				})
			}
			body.Free()
			acc.Free()
		}
	}
	// The precision recommendation: float32 when it is faster by more than
	// the factor its accuracy costs is worth to the user; here we state the
	// measured ratio and recommend float32 for throughput when the ratio is
	// >= 1.5 at large N, its accuracy (k u sum|a_ij|, u = 2^-24) permitting.
	for lg := lo; lg <= hi; lg++ {
		r32, r64 := rate[fmt.Sprintf("tiled/float32/%d*", lg)], rate[fmt.Sprintf("tiled/float64/%d*", lg)]
		u32, u64 := rate[fmt.Sprintf("until/float32/%d", lg)], rate[fmt.Sprintf("until/float64/%d", lg)]
		b.Logf("N=2^%d: tiled f32 %.3g /s (%.1f%% peak), f64 %.3g /s (%.1f%% peak), f32/f64 = %.2f; untiled f32 %.3g, f64 %.3g; tiled/untiled f32 %.2f, f64 %.2f",
			lg, r32, 100*r32*20/peak[nbody.Float32], r64, 100*r64*30/peak[nbody.Float64], r32/r64, u32, u64, r32/u32, r64/u64)
	}
	r32, r64 := rate[fmt.Sprintf("tiled/float32/%d*", hi)], rate[fmt.Sprintf("tiled/float64/%d*", hi)]
	rec := "float64 (float32 is not fast enough to pay for its accuracy)"
	if r32/r64 >= 1.5 {
		rec = "float32 for throughput when k 2^-24 sum|a_ij| is accurate enough (collisionless dynamics); float64 for reference-quality forces"
	}
	b.Logf("float32/float64 at N=2^%d: %.2f; recommendation: %s", hi, r32/r64, rec)
}

// pTag marks the automatically chosen tiled kernel with "*".
func pTag(name string, pAuto int) string {
	if name == fmt.Sprintf("tiled(P=%d)", pAuto) {
		return "*"
	}
	return ""
}

func envFloat(name string, def float64) float64 {
	var v float64
	if _, err := fmt.Sscan(os.Getenv(name), &v); err == nil && v > 0 {
		return v
	}
	return def
}
