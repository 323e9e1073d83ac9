// Package gpunbody runs softened direct N-body sums and a leapfrog on an
// NVIDIA GPU with the kernels of kernels/src/nbody.cu, through the generic
// module API of kernels/cuda. Device implements kernels.NBodyDevice, the
// contract core/nbody hands its sums to; this package imports no physics
// package.
//
// The acceleration kernel is the tiled one, Targets(n, prec) (two or four)
// targets per thread (P threads per target when N is too small to fill
// the GPU, their partial sums combined in a fixed order), sources staged
// through shared memory 256 at a time, the self term masked only in the
// slice that holds the target.
// The untiled kernel (every source from global memory) and the tiled kernel
// without the split loop serve the benchmark. Bodies travel packed (x, y, z, m) in the kernel's precision.
package gpunbody

import (
	"fmt"
	"math"
	"sync"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cuda"
	"github.com/fieldgo/fieldgo/kernels/src"
)

// Block is the tiled kernel's block size (FG_NB_BLOCK in nbody.cu).
const Block = 256

// Targets is the number of targets per thread of the tiled kernel
// Accelerations and the leapfrog use for n bodies, chosen by the H200
// measurements in docs/performance/nbody.md: in float32 from 2^15 bodies 4
// (the "x4" kernels, where one shared-memory source read serves four
// targets: 1-8% faster than x2 at 2^15..2^20, 5% slower at 2^14), else 2
// (in float64 x2 is 2-4% faster than one target per thread; a four-target
// double kernel would need 156 registers).
func Targets(n int, prec kernels.Precision) int {
	if prec == kernels.Float32 && n >= 1<<15 {
		return 4
	}
	return 2
}

// Device is a CUDA GPU with the N-body module loaded. Accelerations is
// serialised (it reuses its device buffers); leapfrogs have their own.
type Device struct {
	b *cuda.Backend
	m *cuda.Module

	mu   sync.Mutex
	body *cuda.DeviceBuffer
	acc  *cuda.DeviceBuffer
}

// New loads the N-body kernels on b (compiled by NVRTC or from the cache).
func New(b *cuda.Backend) (*Device, error) {
	m, err := b.LoadModule(src.NBodyCUDA)
	if err != nil {
		return nil, err
	}
	return &Device{b: b, m: m}, nil
}

// Module is the loaded module (for Describe and the benchmark).
func (d *Device) Module() *cuda.Module { return d.m }

func (d *Device) String() string { return "cuda: " + d.b.Device() }

// Close frees the device buffers and unloads the module.
func (d *Device) Close() error { return d.m.Close() }

func suffix(p kernels.Precision) string {
	if p == kernels.Float32 {
		return "f32"
	}
	return "f64"
}

// recordBytes is the size of one packed body (x, y, z, m).
func recordBytes(p kernels.Precision) int {
	if p == kernels.Float32 {
		return 16
	}
	return 32
}

// ThreadsPerTarget is P for n bodies: the smallest of 1, 2, 4, 8 that puts
// at least one thread on every resident slot of the GPU (sms x
// threadsPerSM), else 8. Below that the GPU would idle; above it the
// partial-sum combination only costs.
func ThreadsPerTarget(n, sms, threadsPerSM int) int {
	for _, p := range []int{1, 2, 4} {
		if n*p >= sms*threadsPerSM {
			return p
		}
	}
	return 8
}

// UntiledName is the untiled kernel's entry point.
func UntiledName(prec kernels.Precision, pot bool) string {
	s := "fg_nbody_untiled_" + suffix(prec)
	if pot {
		s += "_pot"
	}
	return s
}

// accel is the acceleration kernels' parameters in prec: eps2 is the
// softening squared in the kernel's precision.
func accel(body, acc *cuda.DeviceBuffer, n int, softening float64, prec kernels.Precision) any {
	if prec == kernels.Float32 {
		e := float32(softening)
		return &accelArgs[float32]{Body: body.Addr(), Acc: acc.Addr(), N: int32(n), Eps2: e * e}
	}
	return &accelArgs[float64]{Body: body.Addr(), Acc: acc.Addr(), N: int32(n), Eps2: softening * softening}
}

// TiledName is the tiled kernel's entry point for P threads per target and
// nt (1, 2, or in float32 4) targets per thread. Only the two- and
// four-target kernels have a potential variant (the one-target ones are the
// benchmark's comparison).
func TiledName(p, nt int, prec kernels.Precision, pot bool) string {
	x := ""
	if nt > 1 {
		x = fmt.Sprintf("x%d", nt)
	}
	s := fmt.Sprintf("fg_nbody_tiled%d%s_%s", p, x, suffix(prec))
	if pot {
		s += "_pot"
	}
	return s
}

// LaunchTiled queues the tiled kernel with Targets(n, prec) targets per
// thread and P threads per target (0: the PFor choice) on packed bodies;
// acc receives (ax, ay, az, phi).
func (d *Device) LaunchTiled(p int, prec kernels.Precision, pot bool, body, acc *cuda.DeviceBuffer, n int, softening float64) error {
	return d.LaunchTiledNT(p, Targets(n, prec), prec, pot, body, acc, n, softening)
}

// PFor is the P the tiled kernel uses for n bodies and nt targets per
// thread: ThreadsPerTarget over the n/nt threads of one target each.
func (d *Device) PFor(n, nt int) int {
	return ThreadsPerTarget((n+nt-1)/nt, d.b.SMs(), d.b.MaxThreadsPerSM())
}

// LaunchTiledNT is LaunchTiled with nt targets per thread: 1 (no
// potentials), 2, or in float32 4.
func (d *Device) LaunchTiledNT(p, nt int, prec kernels.Precision, pot bool, body, acc *cuda.DeviceBuffer, n int, softening float64) error {
	if !(nt == 1 && !pot || nt == 2 || nt == 4 && prec == kernels.Float32) {
		return errs.New(errs.Parameter, "no tiled kernel with %d targets per thread in %v (potentials %v)", nt, prec, pot)
	}
	if p == 0 {
		p = d.PFor(n, nt)
	}
	return d.launchTiledName(TiledName(p, nt, prec, pot), p, nt, body, acc, n, softening, prec)
}

// launchTiledName launches a tiled entry point of P threads per target and
// nt targets per thread by name (also the benchmark's fg_nbody_tiled1_lib
// and fg_nbody_tiled1_legacy).
func (d *Device) launchTiledName(name string, p, nt int, body, acc *cuda.DeviceBuffer, n int, softening float64, prec kernels.Precision) error {
	fn, err := d.m.Function(name)
	if err != nil {
		return err
	}
	t := Block / p
	grid := uint32((n + nt*t - 1) / (nt * t))
	return d.m.Launch(fn, [3]uint32{grid, 1, 1}, [3]uint32{uint32(t), uint32(p), 1}, 0, accel(body, acc, n, softening, prec))
}

// LaunchUntiled queues the untiled kernel (blocks of 256).
func (d *Device) LaunchUntiled(prec kernels.Precision, pot bool, body, acc *cuda.DeviceBuffer, n int, softening float64) error {
	fn, err := d.m.Function(UntiledName(prec, pot))
	if err != nil {
		return err
	}
	grid := uint32((n + Block - 1) / Block)
	return d.m.Launch(fn, [3]uint32{grid, 1, 1}, [3]uint32{Block, 1, 1}, 0, accel(body, acc, n, softening, prec))
}

func checkN(n int) error {
	if n > math.MaxInt32/8 {
		return errs.New(errs.Shape, "%d bodies: the CUDA kernels index with 32-bit integers", n)
	}
	return nil
}

// pack writes bodies (x, y, z, m) into a host record array of the precision.
func pack(prec kernels.Precision, cols ...[]float64) any {
	n := len(cols[0])
	w := len(cols)
	if prec == kernels.Float32 {
		h := make([]float32, 4*n)
		for i := 0; i < n; i++ {
			for c := 0; c < w; c++ {
				h[4*i+c] = float32(cols[c][i])
			}
		}
		return h
	}
	h := make([]float64, 4*n)
	for i := 0; i < n; i++ {
		for c := 0; c < w; c++ {
			h[4*i+c] = cols[c][i]
		}
	}
	return h
}

func upload(buf *cuda.DeviceBuffer, h any) error {
	switch v := h.(type) {
	case []float32:
		return cuda.Upload(buf, 0, v)
	default:
		return cuda.Upload(buf, 0, v.([]float64))
	}
}

// download reads n records and scatters their first len(cols) components
// (nil columns skipped).
func download(buf *cuda.DeviceBuffer, prec kernels.Precision, n int, cols ...[]float64) error {
	if prec == kernels.Float32 {
		h := make([]float32, 4*n)
		if err := cuda.Download(h, buf, 0); err != nil {
			return err
		}
		for c, col := range cols {
			if col != nil {
				for i := 0; i < n; i++ {
					col[i] = float64(h[4*i+c])
				}
			}
		}
		return nil
	}
	h := make([]float64, 4*n)
	if err := cuda.Download(h, buf, 0); err != nil {
		return err
	}
	for c, col := range cols {
		if col != nil {
			for i := 0; i < n; i++ {
				col[i] = h[4*i+c]
			}
		}
	}
	return nil
}

// ensure (re)allocates *buf to hold at least bytes.
func (d *Device) ensure(buf **cuda.DeviceBuffer, bytes int) error {
	if *buf != nil && (*buf).Len() >= bytes {
		return nil
	}
	if *buf != nil {
		(*buf).Free()
	}
	var err error
	*buf, err = d.m.Alloc(bytes)
	return err
}

// Accelerations evaluates a_i (and phi_i) with the tiled kernel.
func (d *Device) Accelerations(x, y, z, m []float64, softening float64, prec kernels.Precision, ax, ay, az, pot []float64) error {
	n := len(m)
	if n == 0 {
		return nil
	}
	if err := checkN(n); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	rb := recordBytes(prec)
	if err := d.ensure(&d.body, rb*n); err != nil {
		return err
	}
	if err := d.ensure(&d.acc, rb*n); err != nil {
		return err
	}
	if err := upload(d.body, pack(prec, x, y, z, m)); err != nil {
		return err
	}
	if err := d.LaunchTiled(0, prec, pot != nil, d.body, d.acc, n, softening); err != nil {
		return err
	}
	return download(d.acc, prec, n, ax, ay, az, pot)
}

// Leapfrog allocates a device leapfrog for n bodies.
func (d *Device) Leapfrog(n int, softening float64, prec kernels.Precision) (kernels.NBodyLeapfrog, error) {
	if n <= 0 {
		return nil, errs.New(errs.Shape, "no bodies")
	}
	if err := checkN(n); err != nil {
		return nil, err
	}
	lf := &leapfrog{d: d, n: n, eps: softening, prec: prec}
	rb := recordBytes(prec)
	for _, b := range []**cuda.DeviceBuffer{&lf.body, &lf.vel, &lf.acc} {
		var err error
		if *b, err = d.m.Alloc(rb * n); err != nil {
			lf.Close()
			return nil, err
		}
	}
	var err error
	if lf.kd, err = d.m.Function("fg_nbody_kick_drift_" + suffix(prec)); err != nil {
		lf.Close()
		return nil, err
	}
	if lf.k, err = d.m.Function("fg_nbody_kick_" + suffix(prec)); err != nil {
		lf.Close()
		return nil, err
	}
	return lf, nil
}

// leapfrog keeps bodies (x, y, z, m), velocities (vx, vy, vz, 0) and
// accelerations (ax, ay, az, phi) on the device.
type leapfrog struct {
	d              *Device
	n              int
	eps            float64
	prec           kernels.Precision
	body, vel, acc *cuda.DeviceBuffer
	kd, k          *cuda.Function
}

func (l *leapfrog) Upload(x, y, z, vx, vy, vz, m []float64) error {
	if len(m) != l.n {
		return errs.New(errs.Shape, "%d bodies for a leapfrog of %d", len(m), l.n)
	}
	if err := upload(l.body, pack(l.prec, x, y, z, m)); err != nil {
		return err
	}
	if err := upload(l.vel, pack(l.prec, vx, vy, vz)); err != nil {
		return err
	}
	return l.Forces(false)
}

func (l *leapfrog) Forces(pot bool) error {
	return l.d.LaunchTiled(0, l.prec, pot, l.body, l.acc, l.n, l.eps)
}

// kicks are the kick-drift and kick kernels' parameters for a step of dt in
// the leapfrog's precision (h = dt/2).
func (l *leapfrog) kicks(dt float64) (kd, k any) {
	n := int32(l.n)
	if l.prec == kernels.Float32 {
		h, step := float32(0.5*dt), float32(dt)
		return &kickDriftArgs[float32]{Body: l.body.Addr(), Vel: l.vel.Addr(), Acc: l.acc.Addr(), N: n, H: h, Dt: step},
			&kickArgs[float32]{Vel: l.vel.Addr(), Acc: l.acc.Addr(), N: n, H: h}
	}
	h, step := 0.5*dt, dt
	return &kickDriftArgs[float64]{Body: l.body.Addr(), Vel: l.vel.Addr(), Acc: l.acc.Addr(), N: n, H: h, Dt: step},
		&kickArgs[float64]{Vel: l.vel.Addr(), Acc: l.acc.Addr(), N: n, H: h}
}

func (l *leapfrog) Steps(k int, dt float64, pot bool) error {
	grid := [3]uint32{uint32((l.n + Block - 1) / Block), 1, 1}
	block := [3]uint32{Block, 1, 1}
	kd, kick := l.kicks(dt)
	for s := 0; s < k; s++ {
		if err := l.d.m.Launch(l.kd, grid, block, 0, kd); err != nil {
			return err
		}
		if err := l.Forces(pot && s == k-1); err != nil {
			return err
		}
		if err := l.d.m.Launch(l.k, grid, block, 0, kick); err != nil {
			return err
		}
	}
	return nil
}

func (l *leapfrog) Download(x, y, z, vx, vy, vz, ax, ay, az, pot []float64) error {
	if err := download(l.body, l.prec, l.n, x, y, z); err != nil {
		return err
	}
	if err := download(l.vel, l.prec, l.n, vx, vy, vz); err != nil {
		return err
	}
	return download(l.acc, l.prec, l.n, ax, ay, az, pot)
}

func (l *leapfrog) Close() error {
	for _, b := range []*cuda.DeviceBuffer{l.body, l.vel, l.acc} {
		b.Free()
	}
	return nil
}

var _ kernels.NBodyDevice = (*Device)(nil)
