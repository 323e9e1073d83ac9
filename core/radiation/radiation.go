// Package radiation computes retarded-time Liénard–Wiechert potentials and
// fields of charged particles moving on cubic-spline worldlines (package
// spline), at observers sampled in time: a cube observers x samples x
// components, summed over particles.
//
// For each observer and particle the kernel walks the observer's samples in
// order, solving the light-cone condition t(tau) + |x_obs - r(tau)|/c = t_obs
// for the retarded proper time, either by Newton (NIters corrections from the
// previous sample's root advanced by dtau/dt_obs) or by RK4 on
// dtau/dt_obs = 1/(gamma (1 - n.beta)) with NSubsteps steps per sample. The
// first sample (and any after the observer lost sight of the particle) is
// solved from scratch by bisection over the knots and Newton to convergence.
// Samples whose retarded time falls outside a particle's knots are NaN.
//
// Time is shifted per observer, t' = t - |x_obs|/c, and R - |x_obs| is formed
// without cancellation, so the float32 mode stays usable when the observer is
// far away compared with the orbit. Units are Gaussian with the table's c:
// phi = q/(kappa R), A = q beta/(kappa R), E and B as in Jackson (14.14).
//
// The CPU kernel runs observers on goroutines; kernels/src/radiation.cu is the
// same math for the GPU (blocks of observers walking their samples in
// tiles, kernels/cuda/gpuradiation).
package radiation

import (
	"github.com/fieldgo/fieldgo/internal/par"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fieldgo/fieldgo/core/spline"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/hostmem"
	"github.com/fieldgo/fieldgo/kernels"
)

// Method is how the retarded time is advanced from sample to sample
// (kernels.RadiationMethod: the device contract's).
type Method = kernels.RadiationMethod

const (
	Newton = kernels.RadiationNewton // NIters Newton corrections from a warm start
	RK4    = kernels.RadiationRK4    // RK4 on dtau/dt_obs with NSubsteps per sample
)

// Search is how a spline evaluation finds its interval
// (kernels.RadiationSearch).
type Search = kernels.RadiationSearch

const (
	Warm = kernels.WarmSearch // from the previous interval: gallop and bisect
	Cold = kernels.ColdSearch // binary search from scratch every time (the naive kernel)
)

// Precision of the kernel's arithmetic (kernels.Precision, one type for
// every workload).
type Precision = kernels.Precision

const (
	Float64 = kernels.Float64
	Float32 = kernels.Float32
)

// Components of the cube, in order.
var Components = []string{"Ex", "Ey", "Ez", "Bx", "By", "Bz", "phi", "Ax", "Ay", "Az"}

// NComp is len(Components).
const NComp = kernels.RadiationComponents

// Options configure Fields; DefaultOptions are Newton with 2 corrections,
// warm search with coefficient reuse, float64.
type Options struct {
	Method    Method
	NIters    int // Newton corrections per sample (0: the predictor alone)
	NSubsteps int // RK4 steps per sample interval (>= 1)
	Search    Search
	CoefReuse bool // keep the interval's coefficients while tau stays inside (warm search only)
	Precision Precision
	Retarded  bool // also return each particle's retarded lab time t(tau_ret)
	// Segment is the samples per walk (0: AutoSegment's; S or more: one walk
	// per observer and particle). A walk's first sample is solved from
	// scratch (the cold solve, bracketing and Newton to convergence), the
	// others by Method from the previous sample's root, so a segment's first
	// sample is the converged root where one long walk would have Method's
	// (n_iters) error there. Segments give the GPU (and the CPU's
	// goroutines) walks to run in parallel when observers are few.
	Segment int
	Threads int          // goroutines; 0: GOMAXPROCS
	Cancel  *atomic.Bool // polled between work items and every 64 samples (CPU), before and after the launch (Device)
	Device  Device       // nil: the CPU's goroutines; else the kernel runs there
	// OnDevice leaves the cube in the Device's memory (Cube.Device) for a
	// consumer there, with no copy to the host; it needs a Device.
	OnDevice bool
	// Prepared, when set, keeps the knots and the observers' arrays between
	// calls on the same Source (see Prepared); nil prepares them each call.
	Prepared *Prepared
}

// DeviceBuffer is a cube left in device memory: Bytes from device address
// Ptr, the columns one after the other (O*S float64 each, observer-major),
// settled (no work pending) when Fields returns. Free releases it.
type DeviceBuffer = kernels.DeviceBlock

// Observers are observer positions.
type Observers struct{ X, Y, Z []float64 }

// Cube is the result: NComp columns (and P retarded-time columns when asked)
// of O*S float64 in one block of C memory, observer-major (index o*S + s).
type Cube struct {
	O, S, P  int
	Columns  []string
	Data     [][]float64
	Options  Options
	C        float64       // the source's speed of light (the cube's units)
	Device   *DeviceBuffer // Options.OnDevice: the columns on the device; Data is then empty
	buf      *memory.Buffer
	released atomic.Bool
}

// Release frees the cube's memory (exports keep their own reference).
func (c *Cube) Release() error {
	if c == nil || !c.released.CompareAndSwap(false, true) {
		return errs.New(errs.Released, "the cube has already been released")
	}
	if c.buf != nil {
		c.buf.Release()
	}
	if c.Device != nil && c.Device.Free != nil {
		c.Device.Free()
	}
	c.Data = nil
	return nil
}

// newCube allocates a cube's block from mem, cleared on threads when clear
// (the CPU kernel adds into it; a Device writes every value).
func newCube(o, s, p int, retarded bool, mem memory.Allocator, clear bool, threads int) *Cube {
	cols := append([]string(nil), Components...)
	if retarded {
		for q := 0; q < p; q++ {
			cols = append(cols, "t_ret_"+itoa(q))
		}
	}
	n := o * s
	if mem == nil { // the cube stays on the device
		return &Cube{O: o, S: s, P: p, Columns: cols}
	}
	buf := memory.NewBufferWithAllocator(mem.Allocate(8*n*len(cols)), mem)
	c := &Cube{O: o, S: s, P: p, Columns: cols, buf: buf}
	var all []float64
	if n > 0 {
		if clear {
			hostmem.ClearParallel(buf.Bytes(), threads)
		}
		all = unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(buf.Bytes()))), n*len(cols))
	}
	for k := range cols {
		c.Data = append(c.Data, all[k*n:(k+1)*n:(k+1)*n])
	}
	return c
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// DefaultOptions are the defaults of fg.radiation.fields.
func DefaultOptions() Options {
	return Options{Method: Newton, NIters: 2, NSubsteps: 4, Search: Warm, CoefReuse: true}
}

// AutoSegment is Options.Segment's default for o observers of s samples:
// one walk per observer (s) when the observers alone are SegmentWalks or more,
// else segments of at least MinSegment samples (a multiple of 8, the GPU's
// tiles) that bring the walks (observers x segments) up to SegmentWalks
// without going over. It depends on the scene only, never on the device, so
// the CPU and every GPU kernel walk alike.
func AutoSegment(o, s int) int {
	n := min(SegmentWalks/max(1, o), s/MinSegment)
	if n <= 1 {
		return s
	}
	per := (s + n - 1) / n
	return (per + 7) / 8 * 8
}

// SegmentWalks and MinSegment are AutoSegment's: 65536 walks are 16 warps
// per SM on a GPU of 128 SMs (the H200 has 132, and its float64 kernels hold
// 16 warps per SM: one thread per observer with the benchmark's 32768
// observers was 7.75); a segment's first sample costs a cold solve (a
// bracket over the knots and Newton to convergence, ~10 evaluations against
// 3 per sample of Newton n=2), so segments are at least 32 samples.
const (
	SegmentWalks = 1 << 16
	MinSegment   = 32
)

func (opt *Options) normalise() error {
	if opt.Segment < 0 {
		return errs.New(errs.Parameter, "segment=%d: want 0 (automatic) or the samples per walk", opt.Segment)
	}
	if opt.NIters < 0 || opt.NIters > 64 {
		return errs.New(errs.Parameter, "n_iters=%d: want 0..64", opt.NIters)
	}
	if opt.NSubsteps < 1 || opt.NSubsteps > 1<<16 {
		return errs.New(errs.Parameter, "n_substeps=%d: want 1..65536", opt.NSubsteps)
	}
	if opt.Method != Newton && opt.Method != RK4 {
		return errs.New(errs.Parameter, "unknown method %d", opt.Method)
	}
	if opt.Search != Warm && opt.Search != Cold {
		return errs.New(errs.Parameter, "unknown search %d", opt.Search)
	}
	if opt.Precision != Float64 && opt.Precision != Float32 {
		return errs.New(errs.Parameter, "unknown precision %d", opt.Precision)
	}
	if opt.Threads < 0 {
		return errs.New(errs.Parameter, "threads=%d: want 0 (one per CPU) or more", opt.Threads)
	}
	if opt.Threads == 0 {
		opt.Threads = runtime.GOMAXPROCS(0)
	}
	return nil
}

// Source is what the kernels read: the state spline (t, x, y, z, ut, ux, uy,
// uz against tau), the acceleration spline on the same knots, each
// particle's charge and the speed of light.
type Source struct {
	State, Accel *spline.Spline
	Charge       []float64
	C            float64
}

func (src *Source) check() error {
	if src.State == nil || src.Accel == nil {
		return errs.New(errs.Trajectory, "radiation needs a state and an acceleration spline")
	}
	if src.State.D != nState || src.Accel.D != nAccel {
		return errs.New(errs.Shape, "state spline has %d components (want %d), acceleration %d (want %d)", src.State.D, nState, src.Accel.D, nAccel)
	}
	if &src.Accel.T[0] != &src.State.T[0] || src.Accel.N != src.State.N {
		return errs.New(errs.Trajectory, "the acceleration spline is not on the state spline's knots")
	}
	if len(src.Charge) != src.State.P {
		return errs.New(errs.Shape, "%d charges for %d particles", len(src.Charge), src.State.P)
	}
	if !(src.C > 0) || math.IsInf(src.C, 0) {
		return errs.New(errs.Parameter, "the speed of light c=%v must be positive and finite", src.C)
	}
	return nil
}

// nonFinite is the index of xs' first NaN or infinity, or -1. v-v is 0
// for a finite v and NaN otherwise; four at a time, one test each, it reads
// 32768 observers' coordinates in a third of the time of IsNaN || IsInf per
// value (every call checks them).
func nonFinite(xs []float64) int {
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		q := xs[i : i+4 : i+4]
		if (q[0]-q[0])+(q[1]-q[1])+(q[2]-q[2])+(q[3]-q[3]) != 0 {
			break
		}
	}
	for j, v := range xs[i:] {
		if v-v != 0 {
			return i + j
		}
	}
	return -1
}

// Fields computes the cube. times has S values shared by every observer or
// O*S values (observer-major), one row of samples per observer; nsamples is S.
func Fields(src Source, obs Observers, times []float64, nsamples int, opt Options) (*Cube, error) {
	if err := opt.normalise(); err != nil {
		return nil, err
	}
	if err := src.check(); err != nil {
		return nil, err
	}
	o := len(obs.X)
	if len(obs.Y) != o || len(obs.Z) != o {
		return nil, errs.New(errs.Shape, "observer columns of %d, %d and %d rows", len(obs.X), len(obs.Y), len(obs.Z))
	}
	S := nsamples
	if S < 0 || len(times) != S && len(times) != o*S {
		return nil, errs.New(errs.Shape, "%d observation times for %d observers x %d samples: give %d shared or %d", len(times), o, S, S, o*S)
	}
	for i, x := range [][]float64{obs.X, obs.Y, obs.Z} {
		if j := nonFinite(x); j >= 0 {
			return nil, errs.New(errs.Parameter, "observer %d: coordinate %d is %v", j, i, x[j])
		}
	}
	if j := nonFinite(times); j >= 0 {
		if len(times) == S {
			return nil, errs.New(errs.Parameter, "observation time %d is %v", j, times[j])
		}
		return nil, errs.New(errs.Parameter, "observation time %d of observer %d is %v", j%S, j/S, times[j])
	}
	if opt.Segment == 0 {
		opt.Segment = AutoSegment(o, S)
	}
	opt.Segment = max(1, min(opt.Segment, S))
	// A Device writes every value of the cube, and copies it back fastest
	// into its own host memory: clearing 8 x 10 x O x S bytes first cost
	// more than the kernel (0.1 s at 32768 x 256 on two cores, against 4 ms).
	mem, clear := memory.Allocator(hostmem.Allocator), true
	if opt.Device != nil {
		clear = false
		if h, ok := opt.Device.(kernels.HostMemory); ok {
			mem = h.HostAllocator()
		}
	}
	if opt.OnDevice {
		if opt.Device == nil {
			return nil, errs.New(errs.Backend, "a cube left on the device needs a GPU: the CPU backend computes it in host memory")
		}
		mem = nil
	}
	cube := newCube(o, S, src.State.P, opt.Retarded, mem, clear, opt.Threads)
	cube.Options = opt // with the segment taken
	cube.C = src.C
	var err error
	switch {
	case opt.Precision == Float32:
		u := float32Units(src)
		k := knotsOf[float32](opt.Prepared, src, u)
		if opt.Device != nil {
			ssrc := src
			ssrc.C *= u.T / u.L // as u.scale
			oa := observerArraysOf[float32](opt.Prepared, obs, u, ssrc.C)
			err = fieldsOnDevice(k, ssrc, oa, scaled(times, 1/u.T), cube, &opt, u.factors(len(cube.Columns)))
		} else {
			ssrc, sobs, stimes := u.scale(src, obs, times)
			if err = fields(k, ssrc, sobs, stimes, cube, &opt); err == nil {
				u.unscale(cube)
			}
		}
	case opt.Device != nil:
		oa := observerArraysOf[float64](opt.Prepared, obs, givenUnits, src.C)
		err = fieldsOnDevice(knotsOf[float64](opt.Prepared, src, givenUnits), src, oa, times, cube, &opt, nil)
	default:
		err = fields(knotsOf[float64](opt.Prepared, src, givenUnits), src, obs, times, cube, &opt)
	}
	if err != nil {
		cube.Release()
		return nil, err
	}
	return cube, nil
}

// units are the float32 mode's: a time unit T and a length unit L, both powers
// of two, T near the knots' mean interval and L near c T, so that the
// kernels' numbers are of order one whatever units the trajectories came in.
// In centimetres and seconds a spline's y0 = z/(6h) of the 4-velocity is
// ~1e40 and of the acceleration ~1e50, past float32's 3.4e38 (every value
// came out NaN). Powers of two scale every float64 input exactly, and
// float32's roundings do not depend on them: the cube is the one float32
// computed in the given units wherever those did not overflow.
type units struct{ T, L float64 }

var givenUnits = units{1, 1} // float64 computes in the units it is given

func float32Units(src Source) units {
	s := src.State
	span, n := 0.0, 0
	for p := 0; p+1 < len(s.Off); p++ {
		span += s.T[s.Off[p+1]-1] - s.T[s.Off[p]]
		n += s.Off[p+1] - s.Off[p] - 1
	}
	pow2 := func(x float64) float64 {
		if !(x > 0) || math.IsInf(x, 0) {
			return 1
		}
		return math.Ldexp(1, int(math.Round(math.Log2(x))))
	}
	T := pow2(span / float64(max(1, n)))
	return units{T: T, L: pow2(src.C * T)}
}

// state and accel are the multipliers of the state spline's components (t,
// x, y, z, ut, ux, uy, uz: u = d(t, x)/dtau) and the acceleration's (du/dtau)
// into the units; tau's is 1/T.
func (u units) state() [nState]float64 {
	v := u.T / u.L
	return [nState]float64{1 / u.T, 1 / u.L, 1 / u.L, 1 / u.L, 1, v, v, v}
}
func (u units) accel() [nAccel]float64 {
	v := u.T * u.T / u.L
	return [nAccel]float64{u.T, v, v, v}
}

// scale is the source's speed of light, the observers and the times in the units.
func (u units) scale(src Source, obs Observers, ts []float64) (Source, Observers, []float64) {
	src.C *= u.T / u.L
	return src, Observers{X: scaled(obs.X, 1/u.L), Y: scaled(obs.Y, 1/u.L), Z: scaled(obs.Z, 1/u.L)}, scaled(ts, 1/u.T)
}

// scaled is x times f, a new slice (x itself when f is 1).
func scaled(x []float64, f float64) []float64 {
	if f == 1 {
		return x
	}
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = v * f
	}
	return y
}

// unscale brings a cube computed in the units back: E and B (Gaussian: charge
// over length squared) times 1/L^2, the potentials (charge over length) 1/L,
// the retarded times T.
func (u units) unscale(c *Cube) {
	f := u.factors(len(c.Data))
	for k, col := range c.Data {
		for i := range col {
			col[i] *= f[k]
		}
	}
}

// factors are unscale's, per column of a cube of ncol columns (a Device
// applies them: DeviceJob.Scale).
func (u units) factors(ncol int) []float64 {
	f := make([]float64, ncol)
	for k := range f {
		switch {
		case k < 6:
			f[k] = 1 / (u.L * u.L)
		case k < NComp:
			f[k] = 1 / u.L
		default:
			f[k] = u.T
		}
	}
	return f
}

func convert[F float](x []float64) []F {
	if y, ok := any(x).([]F); ok {
		return y
	}
	y := make([]F, len(x))
	for i, v := range x {
		y[i] = F(v)
	}
	return y
}

// toKnots are the kernels' knots and interval records in precision F, in
// the units u (givenUnits in float64).
func toKnots[F float](src Source, u units) *knots[F] {
	s, a := src.State, src.Accel
	mt := 1 / u.T
	k := &knots[F]{n: s.N, off: s.Off, t: convert[F](scaled(s.T, mt)), h: convert[F](s.H)}
	if _, same := any(s.T).([]F); same && u == givenUnits {
		k.y0, k.y1, k.a1, k.a0 = coefficients[F](s, s.Z, s.C1, s.C2, s.H)
		k.ay0, k.ay1, k.aa1, k.aa0 = coefficients[F](s, a.Z, a.C1, a.C2, s.H)
		k.rec = k.records()
		k.collide = checkKnots(k)
		return k
	}
	// In a narrower precision the rounded knots move by up to eps |tau|, which
	// can be a sizable part of an interval. The widths are then the rounded
	// knots' differences (exact, Sterbenz), so that dt1 + dt2 = h holds exactly
	// in the evaluation, and c1, c2 (so a1, a0) are recomputed from the knot
	// values with those widths: the spline still interpolates the knot values,
	// at knots shifted by a rounding of tau.
	for p := 0; p+1 < len(s.Off); p++ {
		k.h[s.Off[p]] = 0
		for i := s.Off[p] + 1; i < s.Off[p+1]; i++ {
			k.h[i] = k.t[i] - k.t[i-1]
		}
	}
	st, ac := u.state(), u.accel()
	zs := scaledZ(s, s.Z, st[:], mt)
	c1, c2 := narrow(s, s.Z, s.C1, s.C2, zs, st[:], k.h)
	k.y0, k.y1, k.a1, k.a0 = coefficients[F](s, zs, c1, c2, k.h)
	za := scaledZ(s, a.Z, ac[:], mt)
	c1, c2 = narrow(s, a.Z, a.C1, a.C2, za, ac[:], k.h)
	k.ay0, k.ay1, k.aa1, k.aa0 = coefficients[F](s, za, c1, c2, k.h)
	k.rec = k.records()
	k.collide = checkKnots(k)
	return k
}

// scaledZ is a spline's second derivatives z (column-major, N per component)
// in the units: component c's values times sigma[c], tau times mt, so
// d^2/dtau^2 times sigma[c]/mt^2.
func scaledZ(s *spline.Spline, z, sigma []float64, mt float64) []float64 {
	out := make([]float64, len(z))
	for j, v := range z {
		out[j] = v * sigma[j/s.N] / (mt * mt)
	}
	return out
}

// coefficients are the kernel's cubic per interval i (knots i, i+1, width
// h[i+1], the width the kernel uses): y0 = z[i]/(6h), y1 = z[i+1]/(6h), a1 =
// c1 - c2 and a0 = c2 h (knots' comment), formed in float64 and rounded once
// (zeros at a particle's last knot).
func coefficients[F float, H float](s *spline.Spline, z, c1, c2 []float64, h []H) (y0, y1, a1, a0 []F) {
	n := s.N
	y0, y1, a1, a0 = make([]F, len(z)), make([]F, len(z)), make([]F, len(z)), make([]F, len(z))
	par.For(s.P, spline.ParticleGrain(s.P, n), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			a, b := s.Off[p], s.Off[p+1]
			for c := 0; c < len(z)/n; c++ {
				for i := a; i < b-1; i++ {
					j := c*n + i
					w := float64(h[i+1])
					y0[j], y1[j] = F(z[j]/(6*w)), F(z[j+1]/(6*w))
					a1[j], a0[j] = F(c1[j]-c2[j]), F(c2[j]*w)
				}
			}
		}
	})
	return y0, y1, a1, a0
}

// narrow recomputes a spline's coefficients c1, c2 (in float64) for rounded
// knots with widths h, in the units: the knot values from z, c1, c2 and the
// spline's own widths, times sigma (per component), with zs, z in the units.
func narrow[F float](s *spline.Spline, z, c1, c2, zs, sigma []float64, h []F) (c1f, c2f []float64) {
	n := s.N
	c1f, c2f = make([]float64, len(z)), make([]float64, len(z))
	d := len(z) / n
	par.For(s.P, spline.ParticleGrain(s.P, n), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			narrowParticle(s, z, c1, c2, zs, sigma, h, c1f, c2f, p, d)
		}
	})
	return c1f, c2f
}

// narrowParticle is narrow for particle p (d components).
func narrowParticle[F float](s *spline.Spline, z, c1, c2, zs, sigma []float64, h []F, c1f, c2f []float64, p, d int) {
	n := s.N
	a, b := s.Off[p], s.Off[p+1]
	for c := 0; c < d; c++ {
		// Knot values: u[i] = H (c2[i] + z[i] H/6) on the interval to the right.
		u := func(i int) float64 {
			j := c*n + i
			if i == b-1 {
				return s.H[i] * (c1[j-1] + z[j]*s.H[i]/6)
			}
			return s.H[i+1] * (c2[j] + z[j]*s.H[i+1]/6)
		}
		for i := a; i < b-1; i++ {
			j := c*n + i
			w := float64(h[i+1])
			c1f[j] = sigma[c]*u(i+1)/w - zs[j+1]*w/6
			c2f[j] = sigma[c]*u(i)/w - zs[j]*w/6
		}
	}
}

// checkKnots refuses knots that collide once rounded (float32): they would
// make empty intervals.
func checkKnots[F float](k *knots[F]) error {
	for p := 0; p+1 < len(k.off); p++ {
		for i := k.off[p] + 1; i < k.off[p+1]; i++ {
			if !(k.t[i] > k.t[i-1]) || k.h[i] == 0 {
				return errs.New(errs.Parameter, "particle %d: knots %d and %d coincide in this precision (tau=%v): use precision float64 or fewer knots",
					p, i-1-k.off[p], i-k.off[p], float64(k.t[i]))
			}
		}
	}
	return nil
}

func fields[F float](k *knots[F], src Source, obs Observers, times []float64, cube *Cube, opt *Options) error {
	if k.collide != nil {
		return k.collide
	}
	charge := convert[F](src.Charge)
	o, S := cube.O, cube.S
	out := cube.Data[:NComp]
	var tret [][]float64
	if opt.Retarded {
		tret = cube.Data[NComp:]
	}
	// Work items: one observer's segment of samples each.
	seg := opt.Segment
	nseg := (S + seg - 1) / seg
	var next atomic.Int64
	var cancelled atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < opt.Threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tps := make([]F, seg)
			for {
				item := int(next.Add(1) - 1)
				if item >= o*nseg {
					return
				}
				if opt.Cancel != nil && opt.Cancel.Load() {
					cancelled.Store(true)
					return
				}
				i, sb := item/nseg, item%nseg*seg
				se := min(S, sb+seg)
				x, y, z := obs.X[i], obs.Y[i], obs.Z[i]
				r0 := math.Sqrt(x*x + y*y + z*z)
				row := times
				if len(times) != S {
					row = times[i*S : (i+1)*S]
				}
				for s, t := range row[sb:se] {
					tps[s] = F(t - r0/src.C) // shifted in float64, then rounded
				}
				if !run(k, newObserver[F](x, y, z, r0, src.C), tps[:se-sb], charge, opt, out, tret, i*S+sb) {
					cancelled.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	if cancelled.Load() {
		return errs.New(errs.Cancelled, "radiation fields cancelled")
	}
	return nil
}
