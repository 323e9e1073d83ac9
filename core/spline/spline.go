// Package spline builds natural cubic splines of a D-component state per
// particle and finds the interval a time falls in.
//
// A Spline holds P particles' knots back to back (particle p owns knots
// Off[p] .. Off[p+1]-1) in one block of C memory, column-major N x D over all N
// knots, so that for one component the knots are contiguous:
//
//	T[k]           knot times
//	H[k]           widths, H[k] = T[k] - T[k-1] (H at a particle's first knot is 0)
//	Z[d*N + k]     second derivatives (0 at each particle's ends: natural)
//	C1, C2[d*N+k]  per-interval coefficients of interval k (unused at a particle's last knot)
//
// On interval i (T[i] <= tau <= T[i+1]) a component is
//
//	S(tau) = (Z[i] dt2^3 + Z[i+1] dt1^3) / (6 H[i+1]) + C1[i] dt1 + C2[i] dt2,
//	dt1 = tau - T[i],  dt2 = T[i+1] - tau,
//	C1[i] = u[i+1]/H[i+1] - Z[i+1] H[i+1]/6,  C2[i] = u[i]/H[i+1] - Z[i] H[i+1]/6.
//
// The tridiagonal systems are solved on the host, once per particle for all D
// components (the matrix depends on the knots only).
package spline

import (
	"github.com/fieldgo/fieldgo/internal/par"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/hostmem"
)

// MinKnots is the fewest knots a particle's spline may have.
const MinKnots = 4

// Spline is a natural cubic spline of D components for each of P particles.
type Spline struct {
	P, D, N int
	Off     []int // P+1 knot offsets

	T, H      []float64 // N each, C memory
	Z, C1, C2 []float64 // N*D each, column-major, C memory
	buf       *memory.Buffer
	knots     *memory.Buffer // the buffer holding T and H (buf, or the state spline's)
	released  atomic.Bool
}

// alloc makes the C-memory block of a spline; withKnots also reserves T and H.
func alloc(n, d int, withKnots bool) (*memory.Buffer, []float64) {
	words := 3 * n * d
	if withKnots {
		words += 2 * n
	}
	buf := memory.NewBufferWithAllocator(hostmem.Allocator.Allocate(8*words), hostmem.Allocator)
	var all []float64
	if words > 0 {
		all = unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(buf.Bytes()))), words)
	}
	return buf, all
}

// New builds the splines of P particles. t holds all knot times (particle p
// owns t[off[p]:off[p+1]]), values one column per component (component d of
// knot k at values[d][k], as in an Arrow table). Each particle needs at least MinKnots strictly
// increasing finite knots and finite values; a violation is errs.Trajectory.
func New(t []float64, off []int, values [][]float64) (*Spline, error) {
	if err := checkKnots(t, off); err != nil {
		return nil, err
	}
	n := len(t)
	d := len(values)
	if err := checkValues(values, n); err != nil {
		return nil, err
	}
	buf, all := alloc(n, d, true)
	s := &Spline{P: len(off) - 1, D: d, N: n, Off: append([]int(nil), off...), buf: buf, knots: buf}
	s.T, all = all[:n], all[n:]
	s.H, all = all[:n], all[n:]
	s.Z, all = all[:n*d], all[n*d:]
	s.C1, all = all[:n*d], all[n*d:]
	s.C2 = all[:n*d]
	copy(s.T, t)
	for p := 0; p < s.P; p++ {
		s.H[off[p]] = 0
		for k := off[p] + 1; k < off[p+1]; k++ {
			s.H[k] = t[k] - t[k-1]
		}
	}
	s.solve(values)
	return s, nil
}

// NewOnKnots builds a spline of d components on the knots of base (an
// acceleration spline on the state spline's knots). t must be base's knot
// times exactly and off its offsets: a spline on other knots is refused with
// errs.Trajectory, since kernels evaluate it on the interval base's search found.
// The new spline shares base's T and H memory.
func NewOnKnots(base *Spline, t []float64, off []int, values [][]float64) (*Spline, error) {
	if err := base.check(); err != nil {
		return nil, err
	}
	if len(off) != len(base.Off) || len(t) != base.N {
		return nil, errs.New(errs.Trajectory, "spline on other knots: %d knots in %d particles, the state spline has %d in %d",
			len(t), len(off)-1, base.N, base.P)
	}
	for p := range off {
		if off[p] != base.Off[p] {
			return nil, errs.New(errs.Trajectory, "spline on other knots: particle offsets differ at %d (%d vs %d)", p, off[p], base.Off[p])
		}
	}
	for k := range t {
		if t[k] != base.T[k] {
			return nil, errs.New(errs.Trajectory, "spline on other knots: knot %d is at %v, the state spline's at %v", k, t[k], base.T[k])
		}
	}
	n := base.N
	d := len(values)
	if err := checkValues(values, n); err != nil {
		return nil, err
	}
	buf, all := alloc(n, d, false)
	base.knots.Retain()
	s := &Spline{P: base.P, D: d, N: n, Off: base.Off, T: base.T, H: base.H, buf: buf, knots: base.knots}
	s.Z, all = all[:n*d], all[n*d:]
	s.C1, all = all[:n*d], all[n*d:]
	s.C2 = all[:n*d]
	s.solve(values)
	return s, nil
}

func checkValues(values [][]float64, n int) error {
	if len(values) < 1 {
		return errs.New(errs.Shape, "a spline needs at least one component")
	}
	for c, col := range values {
		if len(col) != n {
			return errs.New(errs.Shape, "spline component %d has %d values for %d knots", c, len(col), n)
		}
		for k, v := range col {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return errs.New(errs.Trajectory, "component %d at knot %d is %v: spline values must be finite", c, k, v)
			}
		}
	}
	return nil
}

func checkKnots(t []float64, off []int) error {
	if len(off) < 2 {
		return errs.New(errs.Trajectory, "a spline needs at least one particle")
	}
	if off[0] != 0 || off[len(off)-1] != len(t) {
		return errs.New(errs.Shape, "particle offsets %d..%d do not cover %d knots", off[0], off[len(off)-1], len(t))
	}
	for p := 0; p+1 < len(off); p++ {
		a, b := off[p], off[p+1]
		if b-a < MinKnots {
			return errs.New(errs.Trajectory, "particle %d has %d knots: a cubic spline needs at least %d", p, b-a, MinKnots)
		}
		for k := a; k < b; k++ {
			if math.IsNaN(t[k]) || math.IsInf(t[k], 0) {
				return errs.New(errs.Trajectory, "particle %d: knot time %d is %v", p, k-a, t[k])
			}
			if k > a && !(t[k] > t[k-1]) {
				return errs.New(errs.Trajectory, "particle %d: knot times are not strictly increasing at knot %d (%v after %v)", p, k-a, t[k], t[k-1])
			}
		}
	}
	return nil
}

// solve fills Z, C1 and C2 from the knot values (Thomas algorithm, natural ends).
func (s *Spline) solve(values [][]float64) {
	n := s.N
	diag := make([]float64, n) // modified diagonal of the elimination
	par.For(s.P, ParticleGrain(s.P, n), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			s.solveParticle(values, diag, p)
		}
	})
}

// ParticleGrain is the particles per range of a loop over particles that
// does work per knot: about 2048 knots per range.
func ParticleGrain(particles, knots int) int {
	return max(1, particles*2048/max(1, knots))
}

// solveParticle solves particle p's systems (its rows of diag and the
// coefficients).
func (s *Spline) solveParticle(values [][]float64, diag []float64, p int) {
	n, d := s.N, s.D
	a, b := s.Off[p], s.Off[p+1]
	// Forward elimination of the interior rows k = a+1 .. b-2:
	//   H[k] z[k-1] + 2(H[k]+H[k+1]) z[k] + H[k+1] z[k+1] = 6 (slope[k+1] - slope[k]).
	for k := a + 1; k < b-1; k++ {
		diag[k] = 2 * (s.H[k] + s.H[k+1])
		if k > a+1 {
			diag[k] -= s.H[k] * s.H[k] / diag[k-1]
		}
	}
	for c := 0; c < d; c++ {
		u := values[c]
		z := s.Z[c*n : (c+1)*n]
		z[a], z[b-1] = 0, 0
		for k := a + 1; k < b-1; k++ {
			r := 6 * ((u[k+1]-u[k])/s.H[k+1] - (u[k]-u[k-1])/s.H[k])
			if k > a+1 {
				r -= s.H[k] / diag[k-1] * z[k-1]
			}
			z[k] = r
		}
		for k := b - 2; k > a; k-- {
			r := z[k]
			if k < b-2 {
				r -= s.H[k+1] * z[k+1]
			}
			z[k] = r / diag[k]
		}
		c1 := s.C1[c*n : (c+1)*n]
		c2 := s.C2[c*n : (c+1)*n]
		for i := a; i < b-1; i++ {
			h := s.H[i+1]
			c1[i] = u[i+1]/h - z[i+1]*h/6
			c2[i] = u[i]/h - z[i]*h/6
		}
		c1[b-1], c2[b-1] = 0, 0
	}
}

func (s *Spline) check() error {
	if s == nil || s.released.Load() {
		return errs.New(errs.Released, "the spline has been released")
	}
	return nil
}

// Release frees the spline's C memory.
func (s *Spline) Release() error {
	if s == nil || !s.released.CompareAndSwap(false, true) {
		return errs.New(errs.Released, "the spline has already been released")
	}
	if s.knots != s.buf {
		s.knots.Release()
	}
	s.buf.Release()
	s.T, s.H, s.Z, s.C1, s.C2 = nil, nil, nil, nil, nil
	return nil
}

// Range is particle p's knot range [T[Off[p]], T[Off[p+1]-1]].
func (s *Spline) Range(p int) (lo, hi float64) { return s.T[s.Off[p]], s.T[s.Off[p+1]-1] }

// Eval is component c of particle p at tau, on the interval Search finds
// (outside the knots the end cubic is extended).
func (s *Spline) Eval(p, c int, tau float64) float64 {
	i := Search(s.T, s.Off[p], s.Off[p+1], tau)
	return EvalAt(s.T, s.H, s.Z, s.C1, s.C2, s.N, i, c, tau)
}

// EvalAt is component c on interval i at tau: the formula of the package doc.
func EvalAt(t, h, z, c1, c2 []float64, n, i, c int, tau float64) float64 {
	dt1 := tau - t[i]
	dt2 := t[i+1] - tau
	k := c*n + i
	return (z[k]*dt2*dt2*dt2+z[k+1]*dt1*dt1*dt1)/(6*h[i+1]) + c1[k]*dt1 + c2[k]*dt2
}

// DerivAt is the derivative of component c on interval i at tau.
func DerivAt(t, h, z, c1, c2 []float64, n, i, c int, tau float64) float64 {
	dt1 := tau - t[i]
	dt2 := t[i+1] - tau
	k := c*n + i
	return (z[k+1]*dt1*dt1-z[k]*dt2*dt2)/(2*h[i+1]) + c1[k] - c2[k]
}

// KnotDerivatives returns the derivative of every component at every knot,
// one column per component (the right-hand interval's derivative, the left
// one's at a particle's last knot; both agree: the spline is C2).
func (s *Spline) KnotDerivatives() [][]float64 {
	out := make([][]float64, s.D)
	for c := range out {
		out[c] = make([]float64, s.N)
	}
	par.For(s.P, ParticleGrain(s.P, s.N), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			a, b := s.Off[p], s.Off[p+1]
			for c := 0; c < s.D; c++ {
				for k := a; k < b; k++ {
					i := k
					if i == b-1 {
						i = b - 2
					}
					out[c][k] = DerivAt(s.T, s.H, s.Z, s.C1, s.C2, s.N, i, c, s.T[k])
				}
			}
		}
	})
	return out
}
