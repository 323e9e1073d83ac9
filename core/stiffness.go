package core

import (
	"math"

	"github.com/fieldgo/fieldgo/kernels"
)

// stiffnessIterations is the number of power-iteration steps of the stiffness
// estimate; each costs one gradient evaluation.
const stiffnessIterations = 24

// Stiffness estimates the largest |eigenvalue| lambda of the Hessian of
// dE/dphi (per unit area) at the current field, by power iteration on finite
// differences of the gradient: the flow's fastest mode has omega^2 = lambda.
// The estimate is from below and deterministic (fixed start vector).
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
	return s.stiffness(stiffnessIterations)
}

func (s *Simulation) stiffness(iters int) (float64, error) {
	n := s.phi.NComp() * s.lat.Sites()
	host, err := NewField(s.lat, append(append([]string{}, s.theory.Spec.Fields...), dup(s.theory.Spec.Fields, "w.")...))
	if err != nil {
		return 0, err
	}
	defer host.Release()
	all := flat(host)
	v, w := all[:n], all[n:]
	vb, err := s.prog.Bind(v)
	if err != nil {
		return 0, err
	}
	defer vb.Release()
	wb, err := s.prog.Bind(w)
	if err != nil {
		return 0, err
	}
	defer wb.Release()
	if _, err := s.prog.Gradient(s.gradArgs(s.phiB, nil, s.g[0], false, false)); err != nil {
		return 0, err
	}
	// A fixed pseudo-random start vector (splitmix64), max-norm 1.
	x := uint64(0x9e3779b97f4a7c15)
	for i := range v {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		v[i] = float64(z>>11)/float64(1<<53)*2 - 1
	}
	// For a unit-vector field the flow moves on the sphere, so only tangent
	// directions count: v and w are projected at every site (the radial
	// stiffness of the unconstrained energy is not a mode of the flow).
	uv := s.theory.UnitVector()
	var phi []float64
	if uv {
		if err := s.phiB.Download(); err != nil {
			return 0, err
		}
		phi = flat(s.phi)
	}
	project := func(x []float64) {
		if !uv {
			return
		}
		sites, nc := s.lat.Sites(), s.phi.NComp()
		// Auxiliary components are not constrained (s.theory.Auxiliary).
		on := make([]bool, nc)
		for c := range on {
			on[c] = !s.theory.Auxiliary(c)
		}
		for i := 0; i < sites; i++ {
			var d float64
			for c := 0; c < nc; c++ {
				if on[c] {
					d += x[c*sites+i] * phi[c*sites+i]
				}
			}
			for c := 0; c < nc; c++ {
				if on[c] {
					x[c*sites+i] -= d * phi[c*sites+i]
				}
			}
		}
	}
	project(v)
	const eps = 1e-6 // perturbation per site, relative to O(1) field values
	lambda := 0.0
	for it := 0; it < iters; it++ {
		if err := vb.Upload(); err != nil {
			return 0, err
		}
		if err := s.prog.Combine(s.trial, kernels.Term{Coef: 1, X: s.phiB}, kernels.Term{Coef: eps, X: vb}); err != nil {
			return 0, err
		}
		if _, err := s.prog.Gradient(s.gradArgs(s.trial, nil, s.g[1], false, false)); err != nil {
			return 0, err
		}
		if err := s.prog.Combine(wb, kernels.Term{Coef: 1 / eps, X: s.g[1]}, kernels.Term{Coef: -1 / eps, X: s.g[0]}); err != nil {
			return 0, err
		}
		if err := wb.Download(); err != nil {
			return 0, err
		}
		project(w)
		var nv, nw, wmax float64
		for i := range v {
			nv += v[i] * v[i]
			nw += w[i] * w[i]
			wmax = math.Max(wmax, math.Abs(w[i]))
		}
		if !(wmax > 0) || math.IsInf(wmax, 0) {
			break // no curvature seen (or a non-finite gradient: the flow reports it)
		}
		lambda = math.Sqrt(nw / nv)
		for i := range v {
			v[i] = w[i] / wmax
		}
	}
	return lambda, nil
}

func dup(names []string, prefix string) []string {
	out := make([]string, len(names))
	for i, s := range names {
		out[i] = prefix + s
	}
	return out
}

// stableDt caps dt by the stiffness lambda: omega*dt <= 2.5 for RK4 (stable up
// to 2.83 on the imaginary axis; 24 power iterations estimate omega to about
// 1% on a Baby Skyrme skyrmion, where it is 2.2x the Laplacian's 3.3/h because
// the Skyrme term stiffens the core), lambda*dt <= 1 for forward Euler (stable
// to 2).
func stableDt(method string, dt, lambda float64) float64 {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return dt
	}
	if method == GradientFlow {
		return math.Min(dt, 1/lambda)
	}
	return math.Min(dt, 2.5/math.Sqrt(lambda))
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
