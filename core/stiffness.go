package core

import (
	"fmt"
	"math"

	"github.com/fieldgo/fieldgo/kernels"
)

// stiffnessIterations is the number of Lanczos steps of the stiffness
// estimate; each costs one gradient evaluation and a few passes over the
// lattice, and together with the gradient at the field they must cost less
// than two flow steps (a step is four gradient evaluations). Lanczos
// approaches the top of a spectrum much faster than power iteration: on
// the fourth-order Laplacian (32^2 to 1024^2) 6 steps reach 0.963 of the top
// eigenvalue and 8 steps 0.979, where 24 power iterations reached
// 0.967-0.979. 0.963 in lambda is 0.981 in omega: RK4's limit 2.83 keeps
// 13% above the omega*dt = 2.5 that stableDt asks for.
const stiffnessIterations = 6

// stiffnessSeed fixes the start vector: the estimate is deterministic.
const stiffnessSeed = 0x5eed5eed5eed5eed

// Stiffness estimates the largest |eigenvalue| lambda of the Hessian of
// dE/dphi (per unit area) at the current field, by a few Lanczos steps on
// finite differences of the gradient: the flow's fastest mode has
// omega^2 = lambda. The estimate is a Ritz value, so from below for a
// symmetric Hessian, and deterministic (fixed start vector, fixed-order
// reductions). Every vector stays on the backend: a step is one gradient
// evaluation (of the shifted field, formed by the gradient's loader), two
// linear combinations, a projection and two dot products.
//
// The default time step comes from it because the stiffest mode depends on the
// theory and the field, not only on the spacing: the Skyrme term raises the
// local wave speed in a soliton's core, and a fixed dt = h/2 that relaxes a
// Baby Skyrme skyrmion at 256^2 diverges within 8 steps at 1024^2.
func (s *Simulation) Stiffness() (float64, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	lambda, err := s.stiffness(stiffnessIterations)
	if err == nil {
		s.stiff, s.stiffOK = lambda, true
	}
	return lambda, err
}

// lanczosBuffers are the estimate's vectors, allocated on first use and kept
// (a large lattice would otherwise pay for the allocation on every start).
type lanczosBuffers struct {
	v, prev, w kernels.Buffer
}

func (l *lanczosBuffers) release() {
	for _, b := range []kernels.Buffer{l.v, l.prev, l.w} {
		if b != nil {
			b.Release()
		}
	}
}

func (s *Simulation) lanczos() (*lanczosBuffers, error) {
	if s.lz != nil {
		return s.lz, nil
	}
	n := s.phi.NComp() * s.lat.Sites()
	l := &lanczosBuffers{}
	for _, b := range []*kernels.Buffer{&l.v, &l.prev, &l.w} {
		var err error
		if *b, err = s.prog.NewBuffer(n); err != nil {
			l.release()
			return nil, err
		}
	}
	s.lz = l
	return l, nil
}

func (s *Simulation) stiffness(iters int) (float64, error) {
	l, err := s.lanczos()
	if err != nil {
		return 0, err
	}
	T := func(c float64, x kernels.Buffer) kernels.Term { return kernels.Term{Coef: c, X: x} }
	if _, err := s.prog.Gradient(s.gradArgs(s.phiB, nil, s.g[0], false, false)); err != nil {
		return 0, err
	}
	// For a unit-vector field the flow moves on the sphere, so only tangent
	// directions count: the start vector and every H v are projected at each
	// site (the radial stiffness of the unconstrained energy is not a mode of
	// the flow).
	uv := s.theory.UnitVector()
	var phi kernels.Buffer // projects CombineDots' output when set
	if uv {
		phi = s.phiB
	}
	// The Lanczos vectors are kept unnormalised, q_j = scale[j] * u_j, and the
	// buffers rotate. Each step is one gradient evaluation and one
	// CombineDots, which forms the next vector, projects it and returns its
	// square and its product with g0: alpha_j = q_j.(g(phi + eps q_j) - g0)/eps
	// needs q_j.g(phi + eps q_j), which the gradient's power v.g gives with
	// v = u_j, and u_j.g0, which the CombineDots that made u_j gave. For a
	// unit-vector field u_j is tangent, so the projected H q has the same
	// product with it as the unprojected one.
	u, prev, w := l.v, l.prev, l.w
	if err := s.prog.FillRandom(u, stiffnessSeed); err != nil {
		return 0, err
	}
	nu, ug0, err := s.prog.CombineDots(s.grid, phi, u, s.g[0], T(1, u))
	if err != nil {
		return 0, err
	}
	if !(nu > 0) {
		return 0, nil
	}
	// H q by a forward difference whose perturbation is 1e-6 per value in
	// the mean square (q has unit 2-norm), small against O(1) fields.
	eps := 1e-6 * math.Sqrt(float64(u.Len()))
	scale, prevScale := 1/math.Sqrt(nu), 0.0
	var alpha, beta []float64
	for it := 0; it < iters; it++ {
		// The gradient at phi + eps q, the shifted field formed by the
		// gradient's own loader (no trial field stored), with its power u.g.
		ga := s.gradArgs(s.phiB, u, s.g[1], false, false)
		ga.Shift = []kernels.Term{T(eps*scale, u)}
		red, err := s.prog.Gradient(ga)
		if err != nil {
			return 0, err
		}
		a := (red.Power - ug0) / eps * scale
		if math.IsNaN(a) || math.IsInf(a, 0) {
			break // a non-finite gradient: the flow reports it
		}
		alpha = append(alpha, a)
		if it == iters-1 {
			break // the last step's alpha completes T; its next vector is not needed
		}
		// w = P(H q) - a q_j - beta q_{j-1}, in the unnormalised vectors.
		terms := []kernels.Term{T(1/eps, s.g[1]), T(-1/eps, s.g[0]), T(-a*scale, u)}
		if it > 0 {
			terms = append(terms, T(-beta[it-1]*prevScale, prev))
		}
		ww, wg0, err := s.prog.CombineDots(s.grid, phi, w, s.g[0], terms...)
		if err != nil {
			return 0, err
		}
		b := math.Sqrt(ww)
		if !(b > 1e-12*math.Abs(a)) || math.IsInf(b, 0) {
			break // an invariant subspace (its Ritz values are exact)
		}
		beta = append(beta, b)
		prev, u, w = u, w, prev
		prevScale, scale = scale, 1/b
		ug0 = wg0
	}
	if len(alpha) == 0 {
		return 0, nil
	}
	lo, hi := tridiagonalExtremes(alpha, beta[:len(alpha)-1])
	return math.Max(math.Abs(lo), math.Abs(hi)), nil
}

// tridiagonalExtremes returns the smallest and largest eigenvalue of the
// symmetric tridiagonal matrix with diagonal a and off-diagonal b
// (len(b) = len(a)-1), by bisection on Sturm sequence counts inside the
// Gershgorin interval, to 1e-12 of its width.
func tridiagonalExtremes(a, b []float64) (float64, float64) {
	n := len(a)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range a {
		r := 0.0
		if i > 0 {
			r += math.Abs(b[i-1])
		}
		if i < n-1 {
			r += math.Abs(b[i])
		}
		lo, hi = math.Min(lo, a[i]-r), math.Max(hi, a[i]+r)
	}
	// below(x) is the number of eigenvalues smaller than x.
	below := func(x float64) int {
		count, d := 0, 1.0
		for i := range a {
			off := 0.0
			if i > 0 {
				off = b[i-1] * b[i-1] / d
			}
			d = a[i] - x - off
			if d == 0 {
				d = -1e-300
			}
			if d < 0 {
				count++
			}
		}
		return count
	}
	bisect := func(k int) float64 { // the (k+1)-th smallest eigenvalue
		x0, x1 := lo, hi
		for it := 0; it < 100 && x1-x0 > 1e-12*(hi-lo); it++ {
			mid := 0.5 * (x0 + x1)
			if below(mid) > k {
				x1 = mid
			} else {
				x0 = mid
			}
		}
		return 0.5 * (x0 + x1)
	}
	return bisect(0), bisect(n - 1)
}

// stableDt caps dt by the stiffness lambda: omega*dt <= 2.5 for RK4 (stable up
// to 2.83 on the imaginary axis; the Lanczos estimate is within about 2% of
// lambda, 1% of omega, and on a Baby Skyrme skyrmion omega is 2.2x the
// Laplacian's 3.3/h because the Skyrme term stiffens the core), lambda*dt <= 1
// for forward Euler (stable to 2).
func stableDt(method string, dt, lambda float64) float64 {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return dt
	}
	if method == GradientFlow {
		return math.Min(dt, 1/lambda)
	}
	return math.Min(dt, 2.5/math.Sqrt(lambda))
}

// stabilityMargin is how far beyond stabilityLimit an explicit dt must be
// to be refused: the estimate is from below for a symmetric Hessian, and the
// margin covers the finite differences' error and the continuum form's
// slight asymmetry.
const stabilityMargin = 0.02

// stabilityLimit is the largest stable dt for stiffness lambda: omega*dt <
// 2*sqrt(2) for RK4 (on the imaginary axis), lambda*dt < 2 for forward
// Euler; +Inf when no stiffness was seen.
func stabilityLimit(method string, lambda float64) float64 {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return math.Inf(1)
	}
	if method == GradientFlow {
		return 2 / lambda
	}
	return 2 * math.Sqrt2 / math.Sqrt(lambda)
}

// stabilityAdvice says what the current stiffness estimate allows.
func (s *Simulation) stabilityAdvice(method string) string {
	limit := stabilityLimit(method, s.stiff)
	return fmt.Sprintf("the stiffest mode of the field at the start of the flow has omega = %.4g (lambda = %.4g), "+
		"so the flow is stable only for dt < %.4g; use a smaller dt or leave dt unset for the default %.4g",
		math.Sqrt(s.stiff), s.stiff, limit, stableDt(method, DefaultDt(method, s.lat), s.stiff))
}

func methodName(method string) string {
	if method == GradientFlow {
		return "gradient (forward Euler)"
	}
	return "arrested Newton (RK4)"
}

// Flow returns the settings of the current flow, defaults resolved (dt
// included), and false when no flow has been started.
func (s *Simulation) Flow() (FlowConfig, bool) {
	if err := s.lock(); err != nil {
		return FlowConfig{}, false
	}
	defer s.mu.Unlock()
	if s.flow == nil {
		return FlowConfig{}, false
	}
	return s.flow.cfg, true
}

// DtCuts is how many times the current flow shortened its estimated dt
// after a divergence or a stall (0 without a flow).
func (s *Simulation) DtCuts() int {
	if err := s.lock(); err != nil {
		return 0
	}
	defer s.mu.Unlock()
	if s.flow == nil {
		return 0
	}
	return s.flow.dtCuts
}
