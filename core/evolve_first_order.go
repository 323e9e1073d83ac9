package core

import (
	"math"
	"strings"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// First-order dynamics phi' = F(phi) (docs/dynamics_first_order.md), with g
// the engine's gradient dE/dphi per unit cell:
//
//   - EvolveLLG: the Landau-Lifshitz-Gilbert equation of a unit 3-vector
//     n' = -gamma n x H + alpha n x n' with H = -g, integrated in its
//     Landau-Lifshitz form n' = -gamma/(1+alpha^2) [n x H + alpha n x (n x H)]
//     = c1 n x g + c2 n x (n x g), c1 = gamma/(1+alpha^2), c2 = alpha c1
//     (kernels.RateLandauLifshitz).
//   - EvolveGPE: the Gross-Pitaevskii (nonlinear Schrodinger) equation
//     i psi' = dE/dpsi* for the complex fields psi = u + i v the theory
//     declares as component pairs (name_re, name_im). With E a functional of
//     u and v, dE/dpsi* = (g_u + i g_v)/2, so psi' = -i (g_u + i g_v)/2
//     (kernels.RateSchrodinger with c1 = 1/2): for E = int |grad psi|^2/2 + V
//     this is i psi' = -lap psi/2 + dV/dpsi*.
//   - EvolveGPEImaginary: the same in imaginary time, psi' = -dE/dpsi*
//     (c1 = 0, c2 = -1/2), the gradient flow of E. With KeepNorm it is the
//     normalised flow psi' = -dE/dpsi* + mu psi, mu = <psi, dE/dpsi*>/<psi, psi>
//     (real inner products over the sites that are not held), which keeps
//     <psi, psi> and whose fixed points are the stationary states
//     dE/dpsi* = mu psi of that norm, so RK4 reaches them exactly (scaling
//     after each step of the plain flow would leave an O(dt) error); each
//     step ends by scaling the field back to the initial norm (an O(dt^5)
//     correction). In real time KeepNorm only does that scaling.
//
// All three are classic RK4 on the rate, fourth order in dt:
//
//	k1 = F(phi), k2 = F(phi + dt/2 k1), k3 = F(phi + dt/2 k2), k4 = F(phi + dt k3)
//	phi' = phi + dt/6 (k1 + 2 k2 + 2 k3 + k4)
//
// each stage a gradient (its field formed by Gradient's Shift; LLG and the
// normalised flow form it in a buffer as well, the rate reads it) and a Rate. LLG then normalises n
// (Constrain: a projection method, the order stays four; the exact flow keeps
// |n| = 1). The velocity buffer is not used: it is zero, and so is the
// kinetic column of the records.

// First-order evolution methods.
const (
	EvolveLLG          = "llg"
	EvolveGPE          = "gpe"
	EvolveGPEImaginary = "gpe_imaginary"
)

// FirstOrder reports whether method is a first-order evolution (LLG, GPE).
func FirstOrder(method string) bool {
	return method == EvolveLLG || method == EvolveGPE || method == EvolveGPEImaginary
}

// rateCoefs are kernels.Rate's kind and coefficients for cfg's method.
func (c EvolveConfig) rateCoefs() (kernels.RateKind, float64, float64) {
	switch c.Method {
	case EvolveLLG:
		c1 := c.Gamma / (1 + c.Alpha*c.Alpha)
		return kernels.RateLandauLifshitz, c1, c.Alpha * c1
	case EvolveGPE:
		return kernels.RateSchrodinger, 0.5, 0
	}
	return kernels.RateSchrodinger, 0, -0.5
}

// rateScale is the largest |eigenvalue| of the rate's linearisation per unit
// of the gradient's stiffness lambda: the rate is c1 n x g + c2 n x (n x g)
// (|c1 + i c2| lambda at most) or (c2 - i c1) g.
func (c EvolveConfig) rateScale() float64 {
	_, c1, c2 := c.rateCoefs()
	return math.Hypot(c1, c2)
}

// firstOrderLimit is the largest stable RK4 step for stiffness lambda: RK4's
// region reaches 2.83 along the imaginary axis and 2.79 along the negative
// real axis; 2.5 keeps every direction in between inside it.
func firstOrderLimit(cfg EvolveConfig, lambda float64) float64 {
	r := cfg.rateScale() * lambda
	if !(r > 0) || math.IsInf(r, 0) {
		return math.Inf(1)
	}
	return 2.5 / r
}

// checkFirstOrder refuses a theory the method does not apply to.
func (s *Simulation) checkFirstOrder(method string) error {
	sp := s.theory.Spec
	switch method {
	case EvolveLLG:
		if !s.theory.UnitVector() || len(sp.Fields) != 3 {
			return errs.New(errs.Parameter, "method %q needs a unit-vector theory of 3 components (a magnetisation n): "+
				"theory %q has %d components %v and constraint %q", method, sp.Name, len(sp.Fields), sp.Fields, sp.Constraint)
		}
	default:
		if _, err := ComplexPairs(sp.Fields); err != nil || s.theory.UnitVector() {
			why := "its components are not all (name_re, name_im) pairs, each pair in a row"
			if err == nil {
				why = "it has the unit-vector constraint"
			}
			return errs.New(errs.Parameter, "method %q needs a theory of complex fields: theory %q with components %v does not "+
				"qualify: %s", method, sp.Name, sp.Fields, why)
		}
	}
	return nil
}

// ComplexPairs returns the names of the complex fields of components laid
// out as (name_re, name_im) pairs in a row, the layout of fg.complex_field and
// the built-in theories, or an error naming the first component that breaks it.
func ComplexPairs(fields []string) ([]string, error) {
	if len(fields) == 0 || len(fields)%2 != 0 {
		return nil, errs.New(errs.Parameter, "%d components cannot pair into complex fields", len(fields))
	}
	var names []string
	for m := 0; m < len(fields); m += 2 {
		re, im := fields[m], fields[m+1]
		name, ok := strings.CutSuffix(re, "_re")
		if !ok || name == "" || im != name+"_im" {
			return nil, errs.New(errs.Parameter, "components %q, %q are not a pair (name_re, name_im)", re, im)
		}
		names = append(names, name)
	}
	return names, nil
}

// stepFirstOrder takes one RK4 step of phi' = F(phi): k_i into g[i-1], the
// stage gradient into s.trial, LLG's stage field into the host buffers'
// field.
func (s *Simulation) stepFirstOrder(ev *evolution) error {
	dt := ev.dt
	phi, g := s.phiB, s.g
	kind, c1, c2 := ev.cfg.rateCoefs()
	llg := ev.cfg.Method == EvolveLLG
	normalised := ev.cfg.Method == EvolveGPEImaginary && ev.cfg.KeepNorm
	var stage kernels.Buffer
	if llg || normalised {
		hb, err := s.evolveHostBuffers()
		if err != nil {
			return err
		}
		stage = hb.phiB
	}
	T := func(c float64, x kernels.Buffer) kernels.Term { return kernels.Term{Coef: c, X: x} }
	shifts := [][]kernels.Term{nil, {T(dt/2, g[0])}, {T(dt/2, g[1])}, {T(dt, g[2])}}
	for k, shift := range shifts {
		a := s.gradArgs(phi, nil, s.trial, false, false)
		n := phi
		if stage != nil && len(shift) > 0 {
			if err := s.prog.Combine(stage, append([]kernels.Term{T(1, phi)}, shift...)...); err != nil {
				return err
			}
			n, a.Phi = stage, stage
		} else if EvolveShift {
			a.Shift = shift
		} else if len(shift) > 0 {
			if err := s.prog.Combine(s.g[3], append([]kernels.Term{T(1, phi)}, shift...)...); err != nil {
				return err
			}
			a.Phi = s.g[3]
		}
		r, err := s.prog.Gradient(a)
		if err != nil {
			return err
		}
		if math.IsNaN(r.MaxGrad) {
			return s.evoDiverged(ev, k+1, s.trial)
		}
		if normalised {
			if err := s.normalisedRate(n, g[k]); err != nil {
				return err
			}
		} else if err := s.prog.Rate(s.grid, kind, n, s.trial, g[k], c1, c2); err != nil {
			return err
		}
		if k < 3 && s.cancel.Load() {
			return errs.New(errs.Cancelled, "the evolution was cancelled at t=%g; continue it with AdvanceEvolve", s.time)
		}
	}
	if err := s.prog.Combine(phi, T(1, phi), T(dt/6, g[0]), T(dt/3, g[1]), T(dt/3, g[2]), T(dt/6, g[3])); err != nil {
		return err
	}
	if llg {
		return s.prog.Constrain(s.grid, phi, nil)
	}
	if ev.cfg.KeepNorm {
		nn, err := s.prog.Dot(phi, phi)
		if err != nil {
			return err
		}
		if !(nn > 0) || math.IsInf(nn, 0) {
			return s.evoDiverged(ev, 4, phi)
		}
		return s.prog.Combine(phi, T(math.Sqrt(ev.norm0/nn), phi))
	}
	return nil
}

// normalisedRate writes the normalised imaginary-time rate
// -g/2 + mu p, mu = <p, g>/(2 <p, p>), of the field p with gradient s.trial
// into out: Rate (c1 = 0, c2 = 1) of p is p with the held sites zeroed, over
// which the products run.
func (s *Simulation) normalisedRate(p, out kernels.Buffer) error {
	if err := s.prog.Rate(s.grid, kernels.RateSchrodinger, p, p, out, 0, 1); err != nil {
		return err
	}
	pp, err := s.prog.Dot(out, out)
	if err != nil {
		return err
	}
	pg, err := s.prog.Dot(out, s.trial)
	if err != nil {
		return err
	}
	mu := 0.0
	if pp > 0 {
		mu = pg / (2 * pp)
	}
	return s.prog.Combine(out, kernels.Term{Coef: -0.5, X: s.trial}, kernels.Term{Coef: mu, X: out})
}

// firstOrderRecord fills rec's norm (GPE) or magnetisation (LLG) from the
// host copy of the field.
func (s *Simulation) firstOrderRecord(rec *EvolveRecord) error {
	switch s.evo.cfg.Method {
	case EvolveLLG:
		var cnt float64
		var m [3]float64
		l := s.lat
		for k := range l.Planes() {
			for j := range l.Ny {
				for i := range l.Nx {
					if s.held(i, j, k) {
						continue
					}
					idx := (k*l.Ny+j)*l.Nx + i
					for c := range 3 {
						m[c] += s.phi.cols[c][idx]
					}
					cnt++
				}
			}
		}
		for c := range m {
			m[c] /= cnt
		}
		rec.Magnetisation = m
	case EvolveGPE, EvolveGPEImaginary:
		nn, err := s.prog.Dot(s.phiB, s.phiB)
		if err != nil {
			return err
		}
		rec.Norm = s.lat.Cell() * nn
	}
	return nil
}
