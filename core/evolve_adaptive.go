package core

import (
	"fmt"
	"math"
	"math/cmplx"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// Adaptive time steps: the Dormand-Prince 5(4) pair with step-size control
// (docs/dynamics.md, "Adaptive steps").
//
// Why this pair. It is the well-known embedded pair (MATLAB's ode45,
// SciPy's RK45, Hairer's DOPRI5) whose fifth-order solution is propagated
// and whose fourth-order companion only measures the error; it is FSAL (the
// seventh stage is evaluated at the new state and is the next step's first),
// so an accepted step costs six gradients; and its sums fit the backends'
// operations: the largest linear combination a step forms is the field, the
// velocity and six stage accelerations, Combine's eight terms
// (kernels/src/cpu_args.h FG_MAX_TERMS, cuda maxTerms). A Runge-Kutta-Nystrom
// pair for phi'' = f(phi) would save stages, but the unit-vector acceleration
// depends on the velocity (the centripetal term) and the first-order
// equations have no second derivative: one pair serves every equation the
// engine evolves. Bogacki-Shampine 3(2) is cheaper per step but third order,
// so its steps are far shorter at the tolerances of lattice work (1e-6 and
// below); Fehlberg 4(5) and Cash-Karp propagate the lower order or have no
// FSAL.
//
// Second order. For y = (phi, v), y' = (v, -m(phi, v)) with m the
// (projected) gradient plus, under the constraint, the centripetal term (as
// in stepRK4), the stage velocities w_i = v - dt sum_j a_ij m_j need not be
// stored: the stage fields are
//
//	p_i = phi + c_i dt v - dt^2 sum_l (A^2)_il m_l
//
// so the step keeps the seven stage accelerations m_i and nothing else, as
// stepRK4 keeps its four. The new state is p_7, v - dt sum b_j m_j, and the
// error estimate is (-dt^2 sum (dA)_l m_l, -dt sum d_j m_j) with
// d = b - bhat (sum d = 0, so v drops out). Under the constraint the new
// state is normalised and projected (Constrain) before its acceleration,
// the FSAL stage, is evaluated: a projection method, like stepRK4's, and the
// stage then belongs to the state the next step starts from.
//
// First order (LLG, GPE): the same tableau on phi' = F(phi), each stage a
// gradient and a Rate (stepFirstOrder's), LLG's new state normalised and a
// kept norm restored before the FSAL stage.
//
// The error norm is the largest error over sites and components, divided by
// atol + rtol max|y| with max|y| the larger of the old and new states'
// largest values, for phi and v separately (their scales differ). A per-site
// weight atol + rtol |y_i| (Hairer's) would need a per-site kernel the
// Program contract does not have; for fields the lattice-wide scale is also
// the one that makes sense: a field's magnitude is set by its vacua and its
// solitons, and a per-site relative error would demand relative accuracy in
// tails and zeros where the field has none to lose. The maximum, not an RMS
// over sites, keeps the control independent of how much empty lattice
// surrounds a soliton.
//
// The controller is the elementary one (Hairer, Norsett, Wanner I, II.4):
// dt' = dt min(5, max(0.2, 0.9 err^(-1/5))); a rejected step is retried with
// the shorter dt, and the step after a rejection does not grow. Steps are
// shortened to land exactly on the record times and on the end (a step
// that would leave less than itself before the target is halved, so no
// sliver remains); the controller's step survives such a shortening.

// EvolveRK45 is second-order dynamics with adaptive steps: the Dormand-Prince
// 5(4) pair (EvolveConfig.Adaptive is implied).
const EvolveRK45 = "rk45"

// Adaptive defaults.
const (
	DefaultRtol = 1e-6 // relative tolerance of an adaptive step
	// DefaultAtolFraction is the default absolute tolerance as a fraction of
	// rtol: the error norm's scale is atol + rtol max|y| over the lattice, so
	// atol matters only for a part of the state that is small everywhere (a
	// velocity at rest, a field near its vacuum zero), which it then
	// measures to rtol times 1e-3. Tied to rtol, it does not cap the
	// accuracy a tighter rtol asks for.
	DefaultAtolFraction = 1e-3
	// DefaultDtMinFraction is the default floor of an adaptive step as a
	// fraction of its largest: a step cut a million-fold below the stable
	// one means a blow-up (a collapse, a singular potential) or tolerances
	// the storage cannot meet, and continuing would spend the run for
	// nothing.
	DefaultDtMinFraction = 1e-6
)

// The controller's constants (Hairer, Norsett, Wanner I, II.4 and DOPRI5).
const (
	dpSafety = 0.9 // the step aims at 0.9^5 = 0.59 of the tolerance
	dpGrow   = 5.0 // largest growth per step
	dpShrink = 0.2 // largest cut per rejection
	// dpStabilitySafety is the default largest step's fraction of the pair's
	// stability limit for the stiffest mode: the Lanczos estimate is from
	// below and the stiffness changes as the field moves.
	dpStabilitySafety = 0.9
)

// dp5Tableau is the Dormand-Prince 5(4) Butcher tableau with the
// combinations the second-order form needs.
type dp5Tableau struct {
	a  [7][7]float64
	c  [7]float64
	b  [7]float64    // the fifth-order weights (row 7 of a: FSAL)
	d  [7]float64    // b - bhat: the error estimate's weights
	aa [7][7]float64 // A^2: the stage fields' weights of the stage accelerations
	da [7]float64    // d A: the field error's weights
}

var dp5 = func() dp5Tableau {
	var t dp5Tableau
	t.a[1] = [7]float64{1.0 / 5}
	t.a[2] = [7]float64{3.0 / 40, 9.0 / 40}
	t.a[3] = [7]float64{44.0 / 45, -56.0 / 15, 32.0 / 9}
	t.a[4] = [7]float64{19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729}
	t.a[5] = [7]float64{9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656}
	t.a[6] = [7]float64{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}
	t.c = [7]float64{0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1}
	t.b = t.a[6]
	bhat := [7]float64{5179.0 / 57600, 0, 7571.0 / 16695, 393.0 / 640, -92097.0 / 339200, 187.0 / 2100, 1.0 / 40}
	for i := range 7 {
		t.d[i] = t.b[i] - bhat[i]
		for l := range 7 {
			for j := range 7 {
				t.aa[i][l] += t.a[i][j] * t.a[j][l]
			}
			t.da[l] += t.d[i] * t.a[i][l]
		}
	}
	// Weights that vanish exactly in rationals ((A^2)_72, (dA)_2) come out
	// as rounding: dropped, so that no term is formed for nothing.
	snap := func(x *float64) {
		if math.Abs(*x) < 1e-14 {
			*x = 0
		}
	}
	for i := range 7 {
		for l := range 7 {
			snap(&t.aa[i][l])
		}
		snap(&t.da[i])
	}
	return t
}()

// dp5Radius is the distance from 0 to the edge of the pair's stability region
// along the ray at angle theta from the negative real axis (0: decay, pi/2:
// oscillation): the largest r with |R(z)| <= 1 on [0, r] e^{i(pi-theta)},
// R(z) = sum_{k<=5} z^k/k! + z^6/600 the propagated solution's stability
// polynomial. On the imaginary axis it is 0.997 (RK4's is 2.83): beyond it
// the pair amplifies an oscillation slowly (by 1.4e-6 a step at omega dt = 1,
// 3% at 2), so the lattice's fastest waves set the default largest step.
func dp5Radius(theta float64) float64 {
	dir := cmplx.Rect(1, math.Pi-theta)
	R := func(z complex128) float64 {
		return cmplx.Abs(1 + z*(1+z*(1.0/2+z*(1.0/6+z*(1.0/24+z*(1.0/120+z/600))))))
	}
	const step = 1e-3
	r := 0.0
	for r < 10 && R(complex(r+step, 0)*dir) <= 1+1e-12 {
		r += step
	}
	return r
}

// adaptiveState is an adaptive evolution's controller and its schedule.
type adaptiveState struct {
	rtol, atol   float64
	dtMin, dtMax float64
	dt           float64 // the controller's step: the next one tried (before shortening to a target)
	t, tEnd      float64 // the time reached and the end
	t0, span     float64 // the start and the duration (record times)
	rejected     int     // rejected steps in all
	noGrow       bool    // the last try was rejected: the next accepted step does not grow dt
	recN         int     // records at t0 + span k/recN (0: see recDt, RecordEvery)
	recDt        float64 // records at t0 + k recDt
	nextRec      int     // k of the next record time
	onRecord     bool    // the last step landed on a record time

	// m: the stage accelerations (second order) or rates (first order);
	// m[0] holds the current state's when ev.accOK (FSAL). yPhi, yVel: the
	// new state (first order: the stage fields and the error).
	m          [7]kernels.Buffer
	yPhi, yVel kernels.Buffer
}

// adaptiveBuffers are the buffers an adaptive evolution needs beyond the
// simulation's own (s.g serves as m[0..3]): kept for the simulation's life.
type adaptiveBuffers struct {
	m          [3]kernels.Buffer
	yPhi, yVel kernels.Buffer
}

func (b *adaptiveBuffers) release() {
	for _, x := range []kernels.Buffer{b.m[0], b.m[1], b.m[2], b.yPhi, b.yVel} {
		if x != nil {
			x.Release()
		}
	}
}

func (s *Simulation) adaptiveBuffers() (*adaptiveBuffers, error) {
	if s.evoAdpt != nil {
		return s.evoAdpt, nil
	}
	b := &adaptiveBuffers{}
	n := len(s.theory.Spec.Fields) * s.lat.Sites()
	for _, x := range []*kernels.Buffer{&b.m[0], &b.m[1], &b.m[2], &b.yPhi, &b.yVel} {
		var err error
		if *x, err = s.prog.NewBuffer(n); err != nil {
			b.release()
			return nil, err
		}
	}
	s.evoAdpt = b
	return b, nil
}

// minRtol is the smallest rtol the storage precision can meet: 100 machine
// epsilons (SciPy's floor: 2.2e-14 in float64, 1.2e-5 in float32); the
// error estimate below that is rounding.
func (s *Simulation) minRtol() float64 { return 100 * 2 * s.Epsilon() }

// startAdaptive sets up ev's controller: limit is the pair's stability limit
// for the field's stiffest mode (+Inf when none was seen).
func (s *Simulation) startAdaptive(ev *evolution, limit float64) error {
	cfg := ev.cfg
	ad := &adaptiveState{rtol: cfg.Rtol, atol: cfg.Atol, t: ev.t0, t0: ev.t0, span: cfg.T, tEnd: ev.t0 + cfg.T}
	if ad.rtol == 0 {
		// float32 storage resolves 100 machine epsilons, 1.2e-5, at best
		ad.rtol = math.Max(DefaultRtol, s.minRtol())
	}
	if ad.atol == 0 {
		ad.atol = DefaultAtolFraction * ad.rtol
	}
	if floor := s.minRtol(); ad.rtol < floor {
		return errs.New(errs.Parameter, "rtol=%g is below what %s storage resolves: the error estimate of a step is rounding "+
			"below 100 machine epsilons, rtol >= %.3g", ad.rtol, s.prec, floor)
	}
	ad.dtMax = cfg.Dt
	if ad.dtMax == 0 {
		ad.dtMax = dpStabilitySafety * limit
		if math.IsInf(ad.dtMax, 0) {
			ad.dtMax = DefaultEvolveDt(s.lat)
		}
	}
	ad.dtMin = cfg.DtMin
	if ad.dtMin == 0 {
		ad.dtMin = DefaultDtMinFraction * ad.dtMax
	}
	if ad.dtMin >= ad.dtMax {
		return errs.New(errs.Parameter, "dt_min=%g must be smaller than the largest step dt=%g", ad.dtMin, ad.dtMax)
	}
	ad.dt = ad.dtMax
	switch {
	case cfg.RecordEvery > 0: // by accepted steps, and at the end
	case cfg.RecordDt > 0:
		ad.recDt = cfg.RecordDt
	default:
		// DefaultRecords at even times, but no more than the largest step
		// allows, so that the records never force shorter steps.
		ad.recN = max(1, min(DefaultRecords, int(math.Ceil(cfg.T/ad.dtMax-1e-9))))
	}
	ad.nextRec = 1
	b, err := s.adaptiveBuffers()
	if err != nil {
		return err
	}
	ad.m = [7]kernels.Buffer{s.g[0], s.g[1], s.g[2], s.g[3], b.m[0], b.m[1], b.m[2]}
	ad.yPhi, ad.yVel = b.yPhi, b.yVel
	ev.ad = ad
	return nil
}

// target is the next time a step must land on: the next record time or the
// end.
func (ad *adaptiveState) target() float64 {
	switch {
	case ad.recN > 0 && ad.nextRec < ad.recN:
		return ad.t0 + ad.span*float64(ad.nextRec)/float64(ad.recN)
	case ad.recDt > 0 && float64(ad.nextRec)*ad.recDt < ad.span*(1-1e-12):
		return ad.t0 + float64(ad.nextRec)*ad.recDt
	}
	return ad.tEnd
}

// adaptiveLimit is the pair's stability limit on the step for stiffness
// lambda: the oscillation of frequency sqrt(lambda) for second-order
// dynamics, the rate's eigenvalues lambda (-c2 +- i c1) for first order.
func adaptiveLimit(cfg EvolveConfig, lambda float64) float64 {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return math.Inf(1)
	}
	if !FirstOrder(cfg.Method) {
		return dp5Radius(math.Pi/2) / math.Sqrt(lambda)
	}
	_, c1, c2 := cfg.rateCoefs()
	return dp5Radius(math.Atan2(math.Abs(c1), math.Abs(c2))) / (math.Hypot(c1, c2) * lambda)
}

// stepAdaptive takes one accepted step, retrying rejected ones, and sets
// ad.t (exactly the target when it lands on one).
func (s *Simulation) stepAdaptive(ev *evolution) error {
	ad := ev.ad
	first := FirstOrder(ev.cfg.Method)
	if !ev.accOK {
		var err error
		if first {
			err = s.rateAt(ev, s.phiB, ad.m[0])
		} else {
			err = s.accelAt(s.phiB, nil, []kernels.Term{{Coef: 1, X: s.velB}}, ad.m[0])
		}
		if err != nil {
			return err
		}
		if m, err := s.prog.MaxAbs(ad.m[0]); err != nil {
			return err
		} else if math.IsNaN(m) || math.IsInf(m, 0) {
			return s.evoDiverged(ev, 1, ad.m[0])
		}
		ev.accOK = true
	}
	ad.onRecord = false
	for {
		target := ad.target()
		h, land := ad.dt, false
		if rem := target - ad.t; h >= rem {
			h, land = rem, true
		} else if 2*h > rem {
			h = rem / 2 // two equal steps to the target, not a step and a sliver
		}
		var errNorm float64
		var err error
		if first {
			errNorm, err = s.tryFirstOrder(ev, h)
		} else {
			errNorm, err = s.trySecondOrder(ev, h)
		}
		if err != nil {
			return err
		}
		if math.IsNaN(errNorm) {
			errNorm = math.Inf(1) // a stage that is not finite: the step was too long
		}
		if errNorm <= 1 {
			if err := s.prog.Combine(s.phiB, kernels.Term{Coef: 1, X: ad.yPhi}); err != nil {
				return err
			}
			if !first {
				if err := s.prog.Combine(s.velB, kernels.Term{Coef: 1, X: ad.yVel}); err != nil {
					return err
				}
			}
			ad.m[0], ad.m[6] = ad.m[6], ad.m[0] // FSAL
			fac := dpGrow
			if errNorm > 0 {
				fac = math.Min(dpGrow, math.Max(dpShrink, dpSafety*math.Pow(errNorm, -0.2)))
			}
			if ad.noGrow {
				fac = math.Min(fac, 1)
			}
			next := h * fac
			if h < ad.dt {
				// Shortened to land: the controller's own step still holds.
				next = math.Max(next, ad.dt)
			}
			ad.dt, ad.noGrow = math.Min(next, ad.dtMax), false
			if land {
				ad.t, ad.onRecord = target, true
				ad.nextRec++
			} else {
				ad.t += h
			}
			return nil
		}
		ad.rejected++
		ad.noGrow = true
		ad.dt = h * math.Max(dpShrink, dpSafety*math.Pow(errNorm, -0.2))
		if floor := math.Max(ad.dtMin, 16*0x1p-53*math.Abs(ad.t)); ad.dt < floor {
			ev.done = true
			why := fmt.Sprintf("the last error estimate was %.3g times the tolerance", errNorm)
			if math.IsInf(errNorm, 0) {
				why = "a stage was not finite"
			}
			return errs.New(errs.StepSize, "the adaptive step fell below its floor at t=%g (step %d): dt=%.3g < dt_min=%.3g after "+
				"%d rejected steps in all (%s). The solution may blow up here, or rtol=%g, atol=%g cannot be met in %s; the field "+
				"and velocity are those of the last accepted step, at t=%g, and the history holds the records so far",
				ad.t, ev.step, ad.dt, floor, ad.rejected, why, ad.rtol, ad.atol, s.prec, ad.t)
		}
		if s.cancel.Load() {
			return errs.New(errs.Cancelled, "the evolution was cancelled at t=%g; continue it with AdvanceEvolve", s.time)
		}
	}
}

// accelAt writes m(phi + shift, vel) into out: the gradient at the stage field,
// projected and with the centripetal term under the constraint (vel is read
// only then).
func (s *Simulation) accelAt(phi kernels.Buffer, shift, vel []kernels.Term, out kernels.Buffer) error {
	if s.stageReadsVelocity() {
		_, err := s.velocityStage(phi, shift, vel, out)
		return err
	}
	a := s.gradArgs(phi, nil, out, false, false)
	if len(shift) <= 2 && EvolveShift {
		a.Shift = shift
	} else {
		if err := s.prog.Combine(s.trial, append([]kernels.Term{{Coef: 1, X: phi}}, shift...)...); err != nil {
			return err
		}
		a.Phi = s.trial
	}
	_, err := s.prog.Gradient(a)
	return err
}

// rateAt writes the first-order rate F(n) into out (the gradient into
// s.trial on the way).
func (s *Simulation) rateAt(ev *evolution, n, out kernels.Buffer) error {
	if _, err := s.prog.Gradient(s.gradArgs(n, nil, s.trial, false, false)); err != nil {
		return err
	}
	if ev.cfg.Method == EvolveGPEImaginary && ev.cfg.KeepNorm {
		return s.normalisedRate(n, out)
	}
	kind, c1, c2 := ev.cfg.rateCoefs()
	return s.prog.Rate(s.grid, kind, n, s.trial, out, c1, c2)
}

// terms appends coef_j X_j for the nonzero coefficients.
func terms(ts []kernels.Term, coef func(j int) float64, xs []kernels.Buffer) []kernels.Term {
	for j, x := range xs {
		if c := coef(j); c != 0 {
			ts = append(ts, kernels.Term{Coef: c, X: x})
		}
	}
	return ts
}

// trySecondOrder forms the step of length h from (phi, v) with m[0] the
// acceleration there into (yPhi, yVel), m[6] the acceleration at it, and
// returns the error norm.
func (s *Simulation) trySecondOrder(ev *evolution, h float64) (float64, error) {
	ad, t := ev.ad, &dp5
	phi, v, m := s.phiB, s.velB, ad.m[:]
	uv := s.theory.UnitVector()
	for i := 1; i < 6; i++ {
		shift := terms([]kernels.Term{{Coef: t.c[i] * h, X: v}}, func(l int) float64 { return -h * h * t.aa[i][l] }, m[:i])
		var vel []kernels.Term
		if s.stageReadsVelocity() {
			vel = terms([]kernels.Term{{Coef: 1, X: v}}, func(j int) float64 { return -h * t.a[i][j] }, m[:i])
		}
		if err := s.accelAt(phi, shift, vel, m[i]); err != nil {
			return 0, err
		}
		if s.cancel.Load() {
			return 0, errs.New(errs.Cancelled, "the evolution was cancelled at t=%g; continue it with AdvanceEvolve", s.time)
		}
	}
	T := func(c float64, x kernels.Buffer) kernels.Term { return kernels.Term{Coef: c, X: x} }
	if err := s.prog.Combine(ad.yPhi, terms([]kernels.Term{T(1, phi), T(h, v)}, func(l int) float64 { return -h * h * t.aa[6][l] }, m[:6])...); err != nil {
		return 0, err
	}
	if err := s.prog.Combine(ad.yVel, terms([]kernels.Term{T(1, v)}, func(j int) float64 { return -h * t.b[j] }, m[:6])...); err != nil {
		return 0, err
	}
	if uv {
		if err := s.prog.Constrain(s.grid, ad.yPhi, ad.yVel); err != nil {
			return 0, err
		}
	}
	if err := s.accelAt(ad.yPhi, nil, []kernels.Term{T(1, ad.yVel)}, m[6]); err != nil {
		return 0, err
	}
	// The error estimate, the field's and the velocity's, in s.trial.
	ePhi, err := s.combineMax(s.trial, terms(nil, func(l int) float64 { return -h * h * t.da[l] }, m[:6]))
	if err != nil {
		return 0, err
	}
	eVel, err := s.combineMax(s.trial, terms(nil, func(j int) float64 { return -h * t.d[j] }, m))
	if err != nil {
		return 0, err
	}
	nPhi, err := s.scale(ad, phi, ad.yPhi)
	if err != nil {
		return 0, err
	}
	nVel, err := s.scale(ad, v, ad.yVel)
	if err != nil {
		return 0, err
	}
	return math.Max(ePhi/nPhi, eVel/nVel), nil
}

// tryFirstOrder forms the step of length h from phi with m[0] the rate there
// into yPhi, m[6] the rate at it, and returns the error norm. The stage
// fields are formed in yPhi, the error in yVel.
func (s *Simulation) tryFirstOrder(ev *evolution, h float64) (float64, error) {
	ad, t := ev.ad, &dp5
	phi, m := s.phiB, ad.m[:]
	T := func(c float64, x kernels.Buffer) kernels.Term { return kernels.Term{Coef: c, X: x} }
	for i := 1; i < 6; i++ {
		if err := s.prog.Combine(ad.yPhi, terms([]kernels.Term{T(1, phi)}, func(j int) float64 { return h * t.a[i][j] }, m[:i])...); err != nil {
			return 0, err
		}
		if err := s.rateAt(ev, ad.yPhi, m[i]); err != nil {
			return 0, err
		}
		if s.cancel.Load() {
			return 0, errs.New(errs.Cancelled, "the evolution was cancelled at t=%g; continue it with AdvanceEvolve", s.time)
		}
	}
	if err := s.prog.Combine(ad.yPhi, terms([]kernels.Term{T(1, phi)}, func(j int) float64 { return h * t.b[j] }, m[:6])...); err != nil {
		return 0, err
	}
	switch {
	case ev.cfg.Method == EvolveLLG:
		if err := s.prog.Constrain(s.grid, ad.yPhi, nil); err != nil {
			return 0, err
		}
	case ev.cfg.KeepNorm:
		nn, err := s.prog.Dot(ad.yPhi, ad.yPhi)
		if err != nil {
			return 0, err
		}
		if !(nn > 0) || math.IsInf(nn, 0) {
			return math.Inf(1), nil
		}
		if err := s.prog.Combine(ad.yPhi, T(math.Sqrt(ev.norm0/nn), ad.yPhi)); err != nil {
			return 0, err
		}
	}
	if err := s.rateAt(ev, ad.yPhi, m[6]); err != nil {
		return 0, err
	}
	e, err := s.combineMax(ad.yVel, terms(nil, func(j int) float64 { return h * t.d[j] }, m))
	if err != nil {
		return 0, err
	}
	n, err := s.scale(ad, phi, ad.yPhi)
	if err != nil {
		return 0, err
	}
	return e / n, nil
}

// combineMax sets out to the sum of ts and returns its largest |value| (NaN
// if any is NaN).
func (s *Simulation) combineMax(out kernels.Buffer, ts []kernels.Term) (float64, error) {
	if err := s.prog.Combine(out, ts...); err != nil {
		return 0, err
	}
	return s.prog.MaxAbs(out)
}

// scale is the error norm's unit for a part of the state: atol + rtol times
// the larger of its old (x) and new (y) largest |values|.
func (s *Simulation) scale(ad *adaptiveState, x, y kernels.Buffer) (float64, error) {
	a, err := s.prog.MaxAbs(x)
	if err != nil {
		return 0, err
	}
	b, err := s.prog.MaxAbs(y)
	if err != nil {
		return 0, err
	}
	return ad.atol + ad.rtol*math.Max(a, b), nil
}
