package core

import (
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// Flow methods and arrest tests.
const (
	ArrestedNewtonFlow = "anf"      // classic RK4 on phi'' = -dE/dphi with an arrest test
	GradientFlow       = "gradient" // phi' = -dE/dphi, forward Euler

	ArrestPower  = "power"  // zero the velocity when it points uphill: v.g > 0
	ArrestEnergy = "energy" // soliton_solver's: zero it when the energy rose
)

// FlowConfig configures a flow; zero fields take defaults.
type FlowConfig struct {
	Method     string  // ArrestedNewtonFlow (default) or GradientFlow
	Arrest     string  // ArrestPower (default) or ArrestEnergy
	Dt         float64 // time step; 0: DefaultDt capped by the field's stiffness (see Stiffness)
	Tol        float64 // stop when max|dE/dphi| per unit area < Tol; 0: 1e-6
	MaxSteps   int     // stop after this many steps; 0: 100000
	CheckEvery int     // history row and checkpoint every this many steps; 0: 100
}

// DefaultDt is the default time step on lat: half the smaller spacing for
// arrested Newton flow (RK4 is stable for omega*dt < 2.8 and the stiffest
// lattice mode has omega ~ 3.3/h), a tenth of its square for gradient flow.
func DefaultDt(method string, lat Lattice) float64 {
	h := lat.Hx
	if lat.Dim() >= 2 {
		h = math.Min(h, lat.Hy)
	}
	if lat.Dim() == 3 {
		h = math.Min(h, lat.Hz)
	}
	if method == GradientFlow {
		return 0.1 * h * h
	}
	return 0.5 * h
}

func (c FlowConfig) withDefaults(lat Lattice) (FlowConfig, error) {
	if c.Method == "" {
		c.Method = ArrestedNewtonFlow
	}
	if c.Method != ArrestedNewtonFlow && c.Method != GradientFlow {
		return c, errs.New(errs.Parameter, "unknown flow %q: use %q or %q", c.Method, ArrestedNewtonFlow, GradientFlow)
	}
	if c.Arrest == "" {
		c.Arrest = ArrestPower
	}
	if c.Arrest != ArrestPower && c.Arrest != ArrestEnergy {
		return c, errs.New(errs.Parameter, "unknown arrest test %q: use %q or %q", c.Arrest, ArrestPower, ArrestEnergy)
	}
	if c.Dt == 0 {
		c.Dt = DefaultDt(c.Method, lat)
	}
	if c.Tol == 0 {
		c.Tol = 1e-6
	}
	if c.MaxSteps == 0 {
		c.MaxSteps = 100000
	}
	if c.CheckEvery == 0 {
		c.CheckEvery = 100
	}
	if !(c.Dt > 0) || math.IsInf(c.Dt, 0) || !(c.Tol >= 0) || c.MaxSteps < 0 || c.CheckEvery < 0 {
		return c, errs.New(errs.Parameter, "bad flow settings: dt=%v tol=%v max_steps=%d check_every=%d", c.Dt, c.Tol, c.MaxSteps, c.CheckEvery)
	}
	return c, nil
}

// Progress is where a flow stands.
type Progress struct {
	Step      int     // steps taken
	Energy    float64 // energy at Step
	MaxGrad   float64 // max |dE/dphi| per unit area at Step (projected when constrained)
	Resets    int     // velocity resets by the arrest test
	Converged bool    // MaxGrad < Tol
	Done      bool    // converged or MaxSteps reached
}

// flowState is everything a flow carries between steps (and Save writes).
type flowState struct {
	cfg        FlowConfig
	step       int
	prevEnergy float64 // energy at the start of the previous step (energy arrest)
	resets     int
	ckptStep   int
	last       Progress
	done       bool
	converged  bool
	hist       history
	// auto: dt is the stiffness estimate's, so a divergence may shorten it
	// (dtCuts times so far; see shortenDt).
	auto    bool
	dtCuts  int
	cutStep int // the step of the last cut: stalled looks at the history after it
}

// Start begins a new flow from the current field with zero velocity. The
// field must be finite.
func (s *Simulation) Start(cfg FlowConfig) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	return s.start(cfg)
}

func (s *Simulation) start(cfg FlowConfig) error {
	auto := cfg.Dt == 0
	cfg, err := cfg.withDefaults(s.lat)
	if err != nil {
		return err
	}
	if err := s.refuseNonFinite(); err != nil {
		return err
	}
	// A field changed only by earlier flows of this simulation keeps their
	// stiffness estimate: consecutive calls then step like one long call, and
	// a call's start costs no gradient evaluations.
	if !s.stiffOK {
		lambda, err := s.stiffness(stiffnessIterations)
		if err != nil {
			return err
		}
		s.stiff, s.stiffOK = lambda, true
	}
	if auto {
		cfg.Dt = stableDt(cfg.Method, cfg.Dt, s.stiff)
	} else if s.theory.UnitVector() && cfg.Dt > stabilityLimit(cfg.Method, s.stiff)*(1+stabilityMargin) {
		// Certain to fail, and silently: the projection onto the sphere
		// keeps the field finite, so the flow would not diverge but churn to
		// MaxSteps with the velocity reset on nearly every step. (Without a
		// constraint such a dt diverges within a few steps, and the
		// divergence error names the limit.)
		return errs.New(errs.Parameter, "dt=%g is beyond the stability limit of the %s flow for this field: %s",
			cfg.Dt, methodName(cfg.Method), s.stabilityAdvice(cfg.Method))
	}
	if err := s.prog.Combine(s.velB); err != nil {
		return err
	}
	s.endDynamics() // a flow starts at rest; a later evolution too
	s.flow = &flowState{cfg: cfg, prevEnergy: math.Inf(1), hist: newHistory(s.theory.Spec.Densities), auto: auto}
	return s.checkpoint()
}

// Minimize starts a flow and runs it to convergence or MaxSteps, returning its
// history (the caller releases it). A cancelled run returns errs.Cancelled;
// Continue resumes it.
func (s *Simulation) Minimize(cfg FlowConfig) (arrow.RecordBatch, error) {
	if err := s.Start(cfg); err != nil {
		return nil, err
	}
	if _, err := s.Advance(0, 0); err != nil {
		return nil, err
	}
	return s.History()
}

// Advance continues the current flow for at most maxSteps steps (0: no limit)
// and about budget of wall time (0: no limit), returning where it stands.
// Repeated calls give the same bits as one long call. It polls Cancel between
// kernels and then returns errs.Cancelled, leaving the flow resumable.
func (s *Simulation) Advance(maxSteps int, budget time.Duration) (Progress, error) {
	if err := s.lock(); err != nil {
		return Progress{}, err
	}
	defer s.mu.Unlock()
	// Cancel applies to a running Advance: one that arrived while none ran (a
	// Ctrl-C just after a chunk ended) must not stop the next call.
	s.cancel.Store(false)
	defer s.cancel.Store(false)
	fl := s.flow
	if fl == nil {
		return Progress{}, errs.New(errs.Parameter, "no flow to advance: call Start or Minimize first")
	}
	t0 := time.Now()
	for taken := 0; !fl.done; {
		if (maxSteps > 0 && taken >= maxSteps) || (budget > 0 && taken > 0 && time.Since(t0) >= budget) {
			break
		}
		// Steps between checks run on the device when the Program can
		// (kernels.Stepper); a check step (history row, checkpoint) and the
		// last step run here. Which steps run where depends on the step
		// number alone, so chunking never changes the bits.
		if n := s.deviceSteps(fl, maxSteps-taken, maxSteps > 0); n > 0 {
			if df := s.deviceFlow(fl); df != nil {
				k, err := s.runDevice(fl, df, n)
				taken += k
				if err != nil {
					return fl.last, err
				}
				continue
			}
		}
		if err := s.step(fl); err != nil {
			return fl.last, err
		}
		taken++
	}
	if !fl.done {
		// Report the state reached, not the one the last step started from.
		r, err := s.prog.Gradient(s.gradArgs(s.phiB, nil, s.g[0], true, s.theory.UnitVector()))
		if err != nil {
			return fl.last, err
		}
		fl.last = Progress{Step: fl.step, Energy: r.Energy, MaxGrad: r.MaxGrad, Resets: fl.resets}
	}
	// The host copies of the field and velocity are refreshed when read
	// (Field, Velocity, Save, ...), not here: a chunk of a long flow costs no
	// copy (a 4096^2 Baby Skyrme field and its velocity are 0.8 GB).
	s.hostStale = true
	return fl.last, nil
}

// Continue is Advance without limits: it runs the current flow to its end.
func (s *Simulation) Continue() (Progress, error) { return s.Advance(0, 0) }

// Progress reports the current flow's state.
func (s *Simulation) Progress() (Progress, error) {
	if err := s.lock(); err != nil {
		return Progress{}, err
	}
	defer s.mu.Unlock()
	if s.flow == nil {
		return Progress{}, errs.New(errs.Parameter, "no flow has been started")
	}
	return s.flow.last, nil
}

var errCancelled = errs.New(errs.Cancelled, "the flow was cancelled; continue it with Advance")

// step takes one step, or stops at its end: the stage-1 gradient at the
// current field gives the energy, max|grad| and power, decides convergence
// and the arrest, then the remaining stages run. The field and velocity
// change only in the last kernels, so a cancelled step leaves them untouched.
func (s *Simulation) step(fl *flowState) error {
	if err := s.recheckDt(fl); err != nil {
		return err
	}
	cfg := fl.cfg
	uv := s.theory.UnitVector()
	anf := cfg.Method == ArrestedNewtonFlow
	var vel kernels.Buffer
	if anf {
		vel = s.velB
	}
	r, err := s.prog.Gradient(s.gradArgs(s.phiB, vel, s.g[0], true, uv))
	if err != nil {
		return err
	}
	if math.IsNaN(r.MaxGrad) || math.IsInf(r.Energy, 0) || math.IsNaN(r.Energy) {
		return s.diverged(fl, 1, s.g[0])
	}
	fl.last = Progress{Step: fl.step, Energy: r.Energy, MaxGrad: r.MaxGrad, Resets: fl.resets}
	if r.MaxGrad < cfg.Tol || fl.step >= cfg.MaxSteps {
		fl.done, fl.converged = true, r.MaxGrad < cfg.Tol
		fl.last.Done, fl.last.Converged = true, fl.converged
		return s.record(fl)
	}
	if cfg.CheckEvery > 0 && fl.step%cfg.CheckEvery == 0 {
		if err := s.record(fl); err != nil {
			return err
		}
		if err := s.checkpoint(); err != nil {
			return err
		}
		cuts := fl.dtCuts
		if err := s.stalled(fl); err != nil {
			return err
		}
		if fl.dtCuts != cuts { // dt was shortened: the next step starts from here, at rest
			return nil
		}
	}
	if s.cancel.Load() {
		return errCancelled
	}
	dt := cfg.Dt
	if !anf {
		if err := s.prog.Combine(s.phiB, kernels.Term{Coef: 1, X: s.phiB}, kernels.Term{Coef: -dt, X: s.g[0]}); err != nil {
			return err
		}
		if uv {
			if err := s.prog.Constrain(s.grid, s.phiB, nil); err != nil {
				return err
			}
		}
		fl.step++
		return nil
	}
	// The arrest zeroes the velocity; applied as a coefficient so that the
	// stored velocity changes only at the end of the step.
	arrest := (cfg.Arrest == ArrestEnergy && r.Energy > fl.prevEnergy) || (cfg.Arrest == ArrestPower && r.Power > 0)
	kv := 1.0
	if arrest {
		kv = 0
	}
	phi, v, g, trial := s.phiB, s.velB, s.g, s.trial
	T := func(c float64, x kernels.Buffer) kernels.Term { return kernels.Term{Coef: c, X: x} }
	// Classic RK4 on (phi, v)' = (v, -g(phi)):
	//   phi2 = phi + dt/2 v,              g2 = g(phi2)
	//   phi3 = phi + dt/2 v - dt²/4 g1,   g3 = g(phi3)
	//   phi4 = phi + dt v - dt²/2 g2,     g4 = g(phi4)
	//   phi' = phi + dt v - dt²/6 (g1 + g2 + g3)
	//   v'   = v - dt/6 (g1 + 2 g2 + 2 g3 + g4)
	stages := []struct {
		terms []kernels.Term
		out   kernels.Buffer
	}{
		{[]kernels.Term{T(1, phi), T(kv*dt/2, v)}, g[1]},
		{[]kernels.Term{T(1, phi), T(kv*dt/2, v), T(-dt*dt/4, g[0])}, g[2]},
		{[]kernels.Term{T(1, phi), T(kv*dt, v), T(-dt*dt/2, g[1])}, g[3]},
	}
	for k, st := range stages {
		if err := s.prog.Combine(trial, st.terms...); err != nil {
			return err
		}
		rs, err := s.prog.Gradient(s.gradArgs(trial, nil, st.out, false, uv))
		if err != nil {
			return err
		}
		if math.IsNaN(rs.MaxGrad) {
			return s.diverged(fl, k+2, st.out)
		}
		if s.cancel.Load() {
			return errCancelled
		}
	}
	h := dt * dt / 6
	if err := s.prog.Combine(phi, T(1, phi), T(kv*dt, v), T(-h, g[0]), T(-h, g[1]), T(-h, g[2])); err != nil {
		return err
	}
	if err := s.prog.Combine(v, T(kv, v), T(-dt/6, g[0]), T(-dt/3, g[1]), T(-dt/3, g[2]), T(-dt/6, g[3])); err != nil {
		return err
	}
	if uv {
		if err := s.prog.Constrain(s.grid, phi, v); err != nil {
			return err
		}
	}
	if arrest {
		fl.resets++
	}
	fl.prevEnergy = r.Energy
	fl.step++
	return nil
}

// checkpoint copies the field and velocity aside, the state a divergence
// falls back to.
func (s *Simulation) checkpoint() error {
	if err := s.prog.Combine(s.ckptPhi, kernels.Term{Coef: 1, X: s.phiB}); err != nil {
		return err
	}
	if err := s.prog.Combine(s.ckptVel, kernels.Term{Coef: 1, X: s.velB}); err != nil {
		return err
	}
	if s.flow != nil {
		s.flow.ckptStep = s.flow.step
	}
	return nil
}

// diverged ends the flow with errs.Divergence naming where the gradient went
// non-finite. The field kept is the one at the start of the step when its
// gradient was finite, else the last checkpoint (taken only from states whose
// energy and gradient were finite).
func (s *Simulation) diverged(fl *flowState, stage int, g kernels.Buffer) error {
	fl.done = true
	where := "the field"
	idx, err := s.prog.FirstNonFinite(g)
	if err != nil {
		return err
	}
	if idx < 0 {
		if idx, err = s.prog.FirstNonFinite(s.phiB); err != nil {
			return err
		}
	} else {
		where = "the gradient"
	}
	what := "the field is not finite at an unknown site"
	if idx >= 0 {
		c, site := s.siteOf(idx)
		what = where + " is not finite at site " + site + ", component \"" + s.theory.Spec.Fields[c] + "\""
	} else if stage == 1 {
		// Stage 1 also sums the energy: with the field and its gradient
		// finite, the sum is what overflowed.
		what = "the energy is not finite while the field and its gradient are (it overflowed)"
	}
	// At stage 1 the current field itself is bad; later stages started from
	// a field whose gradient was finite, which is kept.
	goodStep := fl.step
	if stage == 1 {
		if err := s.prog.Combine(s.phiB, kernels.Term{Coef: 1, X: s.ckptPhi}); err != nil {
			return err
		}
		if err := s.prog.Combine(s.velB, kernels.Term{Coef: 1, X: s.ckptVel}); err != nil {
			return err
		}
		goodStep = fl.ckptStep
	}
	if fl.auto && fl.dtCuts < maxDtCuts {
		// From the last checkpoint: a mode that grew until it overflowed
		// has been growing for a while, and the step's start carries it.
		if stage != 1 {
			if err := s.prog.Combine(s.phiB, kernels.Term{Coef: 1, X: s.ckptPhi}); err != nil {
				return err
			}
		}
		return s.shortenDt(fl)
	}
	defer func() { s.stiffOK = false }()
	s.hostStale = true
	if err := s.syncHost(); err != nil {
		return err
	}
	fl.last.Done = true
	advice := "try a smaller dt"
	if s.stiffOK && s.stiff > 0 {
		advice = s.stabilityAdvice(fl.cfg.Method)
	}
	return errs.New(errs.Divergence,
		"the flow diverged at step %d (RK4 stage %d, dt=%g): %s; the field kept is the last good one, from step %d (%s)",
		fl.step, stage, fl.cfg.Dt, what, goodStep, advice)
}

// recheckDt estimates the stiffness again at check steps 1, 2, 4, 8, ...
// times CheckEvery of a flow whose dt was estimated, and shortens dt where
// the field has grown stiffer than it allows with RK4's margin: relaxing
// can stiffen a field (a 3D Skyrmion's core shrinks under its mass term;
// a hedgehog at 40^3, h = 0.2, relaxes to 1.49 x the start's estimate and
// the start's dt diverged at step 216). The doubling schedule makes the
// checks cost a few steps' worth in all (about 1% of a 1000-step call) and
// looks most often early, when the field changes most. dt only shortens,
// and only past 2.6/omega (stableDt aims at 2.5, the limit is 2.83), so a
// flow whose stiffness holds keeps its dt and its bits.
func (s *Simulation) recheckDt(fl *flowState) error {
	every := fl.cfg.CheckEvery
	if !fl.auto || every <= 0 || fl.step == 0 || fl.step%every != 0 || fl.step >= fl.cfg.MaxSteps {
		return nil
	}
	if k := fl.step / every; k&(k-1) != 0 {
		return nil
	}
	lambda, err := s.stiffness(stiffnessIterations)
	if err != nil || !(lambda > 0) {
		return err
	}
	s.stiff, s.stiffOK = lambda, true
	limit := 2.6 / math.Sqrt(lambda)
	if fl.cfg.Method == GradientFlow {
		limit = 1.04 / lambda
	}
	if fl.cfg.Dt > limit {
		fl.cfg.Dt = stableDt(fl.cfg.Method, fl.cfg.Dt, lambda)
		fl.dtCuts++
	}
	return nil
}

// maxDtCuts is how many times a flow whose dt came from the stiffness
// estimate may shorten it after a divergence before it reports one.
const maxDtCuts = 4

// shortenDt continues a flow with an estimated dt that diverged or
// stalled: the estimate holds for the field it was made at, and relaxing
// can make a field stiffer (recheckDt). From the kept field (the caller has
// restored it), at rest, with the stiffness estimated there, dt becomes the
// smaller of that estimate's and 1/sqrt(2) of the one that failed, so every
// cut shortens it (recheckDt's checks make this the exception). The history and the step count go on; Describe reports
// the cuts and the dt in use. Deterministic, so a run cut and one resumed
// from a save agree.
func (s *Simulation) shortenDt(fl *flowState) error {
	lambda, err := s.stiffness(stiffnessIterations)
	if err != nil {
		return err
	}
	s.stiff, s.stiffOK = lambda, true
	fl.dtCuts++
	fl.cutStep = fl.step
	fl.cfg.Dt = math.Min(stableDt(fl.cfg.Method, fl.cfg.Dt, lambda), fl.cfg.Dt/math.Sqrt2)
	fl.done, fl.last.Done = false, false
	fl.prevEnergy = math.Inf(1)
	if err := s.prog.Combine(s.velB); err != nil {
		return err
	}
	s.hostStale = true
	return s.checkpoint()
}

// stallWindow is the span of steps over which a flow must make progress.
const stallWindow = 200

// stalled ends a flow that makes no progress, with errs.Divergence: over
// the last stallWindow steps or more (history rows) either the energy rose
// by more than 1e-3 of itself while max|grad| grew (a healthy arrested
// Newton flow may drift up by 1e-6 while its gradient falls), or the energy
// did not fall and max|grad| did not halve while the flow reset its
// velocity on at least 90% of the steps (a gradient flow has no resets: not
// falling suffices). It is how
// a too large dt shows under a constraint, where the projection keeps the
// field finite; a flow resting on the rounding floor of its storage
// precision (GradientFloor) is left to reach MaxSteps.
func (s *Simulation) stalled(fl *flowState) error {
	h := &fl.hist
	now := h.len() - 1
	k := -1
	for i := now - 1; i >= 0; i-- {
		if h.step[i] <= h.step[now]-stallWindow {
			k = i
			break
		}
	}
	if k < 0 || h.step[k] < int64(fl.cutStep) {
		return nil
	}
	steps, resets := h.step[now]-h.step[k], h.resets[now]-h.resets[k]
	rose := h.energy[now] > h.energy[k]+1e-3*math.Abs(h.energy[k]) && h.maxGrad[now] >= h.maxGrad[k]
	flat := h.energy[now] >= h.energy[k] && h.maxGrad[now] > 0.5*h.maxGrad[k] &&
		(fl.cfg.Method == GradientFlow || float64(resets) >= 0.9*float64(steps))
	if !rose && !flat {
		return nil
	}
	floor, err := s.gradientFloor()
	if err != nil {
		return err
	}
	if h.maxGrad[now] < 100*floor {
		return nil
	}
	if fl.auto && fl.dtCuts < maxDtCuts {
		return s.shortenDt(fl)
	}
	fl.done, fl.last.Done = true, true
	advice := "try a smaller dt"
	if s.stiffOK && s.stiff > 0 {
		advice = s.stabilityAdvice(fl.cfg.Method)
	}
	return errs.New(errs.Divergence, "the flow makes no progress: from step %d to %d the velocity was reset on %d of %d steps, "+
		"the energy went from %.10g to %.10g and max|grad| from %.3g to %.3g, so dt=%g is likely too large for this field "+
		"(%s); the field kept is the one at step %d", h.step[k], h.step[now], resets, steps, h.energy[k], h.energy[now],
		h.maxGrad[k], h.maxGrad[now], fl.cfg.Dt, advice, fl.step)
}

func itoa(i int) string { return fmtFloat(float64(i)) }

// UseStepper lets flows run on the device when the backend's Program
// implements kernels.Stepper (the default). Tests and benchmarks turn it off
// to compare with the host loop on the same backend.
var UseStepper = true

// stepperPoll is how many device steps run between host polls.
const stepperPoll = 50

// devFlow is a device flow prepared for one flow configuration.
type devFlow struct {
	flow   kernels.Flow
	key    string
	failed bool // the Program declined this configuration: step on the host
}

// deviceSteps is how many steps from fl.step the device may take now: none
// for a check step (step % CheckEvery == 0, which records and checkpoints)
// and from MaxSteps on, else up to the next check step, MaxSteps and the
// caller's limit.
func (s *Simulation) deviceSteps(fl *flowState, left int, limited bool) int {
	cfg := fl.cfg
	// The device flows fuse the plain continuum step; a theory with auxiliary
	// components (saddle form) steps on the host on every backend.
	if !UseStepper || cfg.Method != ArrestedNewtonFlow || fl.step >= cfg.MaxSteps || s.theory.HasAuxiliary() {
		return 0
	}
	if _, ok := s.prog.(kernels.Stepper); !ok {
		return 0
	}
	n := cfg.MaxSteps - fl.step
	if cfg.CheckEvery > 0 {
		r := fl.step % cfg.CheckEvery
		if r == 0 {
			return 0
		}
		n = min(n, cfg.CheckEvery-r)
	}
	if limited {
		n = min(n, left)
	}
	return max(n, 0)
}

// deviceFlow returns the device flow for fl's settings and the current
// parameters, preparing it if needed; nil when the Program declines.
func (s *Simulation) deviceFlow(fl *flowState) kernels.Flow {
	cfg := fl.cfg
	return s.cachedFlow(fmtFloat(cfg.Dt)+"|"+fmtFloat(cfg.Tol)+"|"+cfg.Arrest, kernels.FlowSpec{
		UnitVector: s.theory.UnitVector(), Dt: cfg.Dt, Tol: cfg.Tol, EnergyArrest: cfg.Arrest == ArrestEnergy})
}

// cachedFlow returns the device flow of spec (its gradient settings and
// buffers filled in here: the simulation's), kept under key plus the
// gradient settings and parameters while they hold; nil when the Program
// declines it (remembered under the same key).
func (s *Simulation) cachedFlow(key string, spec kernels.FlowSpec) kernels.Flow {
	key += "|" + s.form.String() + "|" + fmtFloat(s.penalty)
	for _, p := range s.params {
		key += "|" + fmtFloat(p)
	}
	if d := s.dev; d != nil && d.key == key {
		if d.failed {
			return nil
		}
		return d.flow
	}
	s.closeDeviceFlow()
	spec.Grid, spec.Form, spec.Penalty, spec.Params = s.grid, s.form, s.penalty, s.params
	spec.Phi, spec.Vel, spec.G = s.phiB, s.velB, s.g
	f, err := s.prog.(kernels.Stepper).NewFlow(spec)
	s.dev = &devFlow{flow: f, key: key, failed: err != nil}
	if err != nil {
		return nil
	}
	return f
}

func (s *Simulation) closeDeviceFlow() {
	if s.dev != nil && s.dev.flow != nil {
		s.dev.flow.Close()
	}
	s.dev = nil
}

// DeviceFlow describes how the current flow's steps run on the device, or
// "" when they run on the host.
func (s *Simulation) DeviceFlow() string {
	if err := s.lock(); err != nil {
		return ""
	}
	defer s.mu.Unlock()
	if s.dev == nil || s.dev.flow == nil {
		return ""
	}
	return s.dev.flow.Describe()
}

// runDevice runs n steps on the device and brings fl up to date: the same
// state, records and outcomes step() would give.
func (s *Simulation) runDevice(fl *flowState, df kernels.Flow, n int) (int, error) {
	res, err := df.Run(kernels.FlowState{Step: fl.step, Resets: fl.resets, PrevEnergy: fl.prevEnergy}, n, stepperPoll, &s.cancel)
	if err != nil {
		return 0, err
	}
	fl.step, fl.resets, fl.prevEnergy = res.State.Step, res.State.Resets, res.State.PrevEnergy
	if k := len(res.Records); k > 0 {
		r := res.Records[k-1]
		fl.last = Progress{Step: r.Step, Energy: r.Energy, MaxGrad: r.MaxGrad, Resets: r.Resets}
	}
	switch res.Stop {
	case kernels.FlowConverged:
		fl.done, fl.converged = true, true
		fl.last.Done, fl.last.Converged = true, true
		return res.Taken, s.record(fl)
	case kernels.FlowNonFinite:
		return res.Taken, s.diverged(fl, res.Stage, s.g[res.Stage-1])
	}
	if res.Cancelled {
		return res.Taken, errCancelled
	}
	return res.Taken, nil
}
