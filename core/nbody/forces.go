// Package nbody is direct-summation N-body gravity: softened inverse-square
// accelerations and potentials (G = 1), a leapfrog integrator, Plummer-sphere
// initial conditions and trajectories as Arrow record batches.
//
// Every body attracts every other: a_i = sum_{j != i} m_j (x_j - x_i) /
// (|x_j - x_i|^2 + eps^2)^{3/2} and phi_i = -sum_{j != i} m_j /
// (|x_j - x_i|^2 + eps^2)^{1/2}, eps the Plummer softening length.
//
// Two CPU evaluations exist. Reference is the float64 definition, one loop
// that leaves i out by splitting the index range. Solver is the fast path: all
// cores, targets in blocks, sources in cache-sized tiles, float64 or float32,
// and it leaves the self term out the way the GPU kernel
// (kernels/src/nbody.cu) does: for j == i it selects mass 0 and squared
// separation 1, so the term is exactly zero even when eps = 0. Each target's
// sum runs over j in index order whatever the thread count, so results are the
// same bit for bit on every run.
package nbody

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// Precision is the floating-point type the pairwise sums are computed in
// (kernels.Precision, shared with the device contract).
type Precision = kernels.Precision

const (
	Float64 = kernels.Float64
	Float32 = kernels.Float32
)

// ParsePrecision reads "float64" (or "" / "f64" / "double") and "float32"
// (or "f32" / "single").
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "float64", "f64", "double":
		return Float64, nil
	case "float32", "f32", "single":
		return Float32, nil
	}
	return 0, errs.New(errs.Parameter, "precision %q: use \"float64\" or \"float32\"", s)
}

// TermErrorUlps bounds the rounding error of one pairwise term a_ij, in units
// of u relative to |a_ij|, for the operation sequence of Solver and the GPU
// kernel: the difference (1 rounding), r^2 = dx^2+dy^2+dz^2+eps^2 (2 from the
// squared difference, 1 per product, 3 additions: 6), 1/sqrt(r^2) (half of r^2's
// 6 plus 2 for sqrt and division, or for rsqrt's 2 ulp: 5), its cube (3*5 + 2 =
// 17), times m (18), times dx (18 + 1 + 1 = 20). Summing N-1 terms in any order
// adds at most (N-1) u sum_j |a_ij| (recursive summation, Higham 4.2; a tree or
// several partial sums combined has a smaller depth). Hence the bound
// |a_i - a_i^exact| <= (N - 1 + TermErrorUlps) u sum_j |a_ij|, first order in u.
const TermErrorUlps = 20

// ErrorBoundK is k in |a_i - a_i^exact| <= k u sum_j |a_ij| for n bodies: the
// worst-case first-order bound above.
func ErrorBoundK(n int) float64 { return float64(n-1) + TermErrorUlps }

// Check validates bodies: equal lengths, finite positions, finite
// non-negative masses, finite softening >= 0.
func Check(x, y, z, m []float64, softening float64) error {
	n := len(m)
	if len(x) != n || len(y) != n || len(z) != n {
		return errs.New(errs.Shape, "positions (%d, %d, %d) and masses (%d) differ in length", len(x), len(y), len(z), n)
	}
	if math.IsNaN(softening) || math.IsInf(softening, 0) || softening < 0 {
		return errs.New(errs.Parameter, "softening must be finite and >= 0, got %v", softening)
	}
	for i := 0; i < n; i++ {
		if !finite(x[i]) || !finite(y[i]) || !finite(z[i]) {
			return errs.New(errs.Parameter, "body %d has a non-finite position (%v, %v, %v)", i, x[i], y[i], z[i])
		}
		if !finite(m[i]) || m[i] < 0 {
			return errs.New(errs.Parameter, "body %d has mass %v: masses must be finite and >= 0", i, m[i])
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Reference computes accelerations (and potentials when pot is not nil) in
// float64 by the definition, one target at a time, the sum over j running from
// 0 to i-1 and then from i+1 to n-1. It is the yardstick of the tests.
func Reference(x, y, z, m []float64, softening float64, ax, ay, az, pot []float64) {
	eps2 := softening * softening
	n := len(m)
	for i := 0; i < n; i++ {
		var sx, sy, sz, sp float64
		term := func(j int) {
			dx, dy, dz := x[j]-x[i], y[j]-y[i], z[j]-z[i]
			r2 := dx*dx + dy*dy + dz*dz + eps2
			inv := 1 / math.Sqrt(r2)
			f := m[j] * inv * inv * inv
			sx += f * dx
			sy += f * dy
			sz += f * dz
			sp -= m[j] * inv
		}
		for j := 0; j < i; j++ {
			term(j)
		}
		for j := i + 1; j < n; j++ {
			term(j)
		}
		ax[i], ay[i], az[i] = sx, sy, sz
		if pot != nil {
			pot[i] = sp
		}
	}
}

// AbsSums returns sum_{j != i} |a_ij| per component (the scale of the error
// bound), in float64.
func AbsSums(x, y, z, m []float64, softening float64) (sx, sy, sz []float64) {
	eps2 := softening * softening
	n := len(m)
	sx, sy, sz = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			dx, dy, dz := x[j]-x[i], y[j]-y[i], z[j]-z[i]
			r2 := dx*dx + dy*dy + dz*dz + eps2
			inv := 1 / math.Sqrt(r2)
			f := m[j] * inv * inv * inv
			sx[i] += math.Abs(f * dx)
			sy[i] += math.Abs(f * dy)
			sz[i] += math.Abs(f * dz)
		}
	}
	return sx, sy, sz
}

// Solver evaluates accelerations on all cores. It keeps float32 copies of
// the sources between calls; it is not safe for concurrent use.
type Solver struct {
	Softening float64
	Precision Precision
	Threads   int    // 0: GOMAXPROCS
	Device    Device // nil: the CPU; else the sums run there (Threads unused)

	x32, y32, z32, m32 []float32
}

// Cache blocking: a worker takes targetBlock targets at a time and runs them
// over the sources one tile at a time, so the tile (4 arrays of sourceTile
// values: 16 KiB in float64) stays in L1 while every target of the block
// reads it.
const (
	targetBlock = 32
	sourceTile  = 512
)

// Accelerations writes a_i (and phi_i when pot is not nil) for every body.
func (s *Solver) Accelerations(x, y, z, m []float64, ax, ay, az, pot []float64) error {
	if err := Check(x, y, z, m, s.Softening); err != nil {
		return err
	}
	n := len(m)
	if len(ax) != n || len(ay) != n || len(az) != n || (pot != nil && len(pot) != n) {
		return errs.New(errs.Shape, "acceleration outputs (%d, %d, %d) do not match %d bodies", len(ax), len(ay), len(az), n)
	}
	if s.Device != nil {
		return s.Device.Accelerations(x, y, z, m, s.Softening, s.Precision, ax, ay, az, pot)
	}
	s.compute(x, y, z, m, ax, ay, az, pot)
	return nil
}

// compute is Accelerations without the checks (the integrator validates once).
func (s *Solver) compute(x, y, z, m []float64, ax, ay, az, pot []float64) {
	n := len(m)
	switch s.Precision {
	case Float32:
		s.x32 = toF32(s.x32, x)
		s.y32 = toF32(s.y32, y)
		s.z32 = toF32(s.z32, z)
		s.m32 = toF32(s.m32, m)
		eps2 := float32(s.Softening) * float32(s.Softening)
		parallel(n, s.Threads, func(i0, i1 int) {
			block(s.x32, s.y32, s.z32, s.m32, eps2, i0, i1, ax, ay, az, pot)
		})
	default:
		eps2 := s.Softening * s.Softening
		parallel(n, s.Threads, func(i0, i1 int) {
			block(x, y, z, m, eps2, i0, i1, ax, ay, az, pot)
		})
	}
}

func toF32(dst []float32, src []float64) []float32 {
	if cap(dst) < len(src) {
		dst = make([]float32, len(src))
	}
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = float32(v)
	}
	return dst
}

// parallel runs f over [0, n) in blocks of targetBlock on threads workers.
// Which worker takes a block does not change any result.
func parallel(n, threads int, f func(i0, i1 int)) {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	nb := (n + targetBlock - 1) / targetBlock
	if threads > nb {
		threads = nb
	}
	if threads <= 1 {
		for b := 0; b < nb; b++ {
			f(b*targetBlock, min(n, (b+1)*targetBlock))
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(next.Add(1) - 1)
				if b >= nb {
					return
				}
				f(b*targetBlock, min(n, (b+1)*targetBlock))
			}
		}()
	}
	wg.Wait()
}

type real interface{ ~float32 | ~float64 }

// block accumulates targets [i0, i1) over all sources, tile by tile; within a
// target the order of j is 0..n-1. The self term is masked as on the GPU.
func block[F real](x, y, z, m []F, eps2 F, i0, i1 int, ax, ay, az, pot []float64) {
	var accX, accY, accZ, accP [targetBlock]F
	n := len(m)
	for j0 := 0; j0 < n; j0 += sourceTile {
		j1 := min(n, j0+sourceTile)
		xs, ys, zs, ms := x[j0:j1], y[j0:j1], z[j0:j1], m[j0:j1]
		for i := i0; i < i1; i++ {
			xi, yi, zi := x[i], y[i], z[i]
			sx, sy, sz, sp := accX[i-i0], accY[i-i0], accZ[i-i0], accP[i-i0]
			self := i - j0 // index of the target within the tile, if there
			for k := range ms {
				dx := xs[k] - xi
				dy := ys[k] - yi
				dz := zs[k] - zi
				r2 := dx*dx + dy*dy + dz*dz + eps2
				mj := ms[k]
				if k == self {
					r2, mj = 1, 0
				}
				inv := 1 / F(math.Sqrt(float64(r2)))
				f := mj * inv * inv * inv
				sx += f * dx
				sy += f * dy
				sz += f * dz
				sp -= mj * inv
			}
			accX[i-i0], accY[i-i0], accZ[i-i0], accP[i-i0] = sx, sy, sz, sp
		}
	}
	for i := i0; i < i1; i++ {
		ax[i], ay[i], az[i] = float64(accX[i-i0]), float64(accY[i-i0]), float64(accZ[i-i0])
		if pot != nil {
			pot[i] = float64(accP[i-i0])
		}
	}
}

// Interactions is the number of pairwise terms one evaluation of n bodies
// computes (the self term included, as the kernels compute it masked).
func Interactions(n int) float64 { return float64(n) * float64(n) }
