package core

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/par"
	"github.com/fieldgo/fieldgo/kernels"
)

// Time evolution: second-order (relativistic) dynamics
//
//	phi'' = -dE/dphi / cell = -g(phi)
//
// for the Lagrangian L = sum over sites of cell (|phi'|^2/2) - E(phi): the
// engine's gradient buffers are dE/dphi per unit cell (kernels.GradientArgs),
// so the acceleration is minus the very gradient a flow uses, in either form
// (the continuum Euler-Lagrange expression, or the exact gradient of the
// discrete energy with its doubler penalty). The total energy
// cell sum |phi'|^2/2 + E is conserved by the semi-discrete system.
//
// Under the unit-vector constraint the dynamics is that of a field on the
// sphere: phi'' = -P g - (|v|^2/|phi|^2) phi with P the projection onto the
// tangent space of phi/|phi| and v = phi'; the last (centripetal) term keeps
// |phi| and phi.v constant along the exact flow.
//
// The steppers drive kernels.Program exactly as the flow's host loop does
// (Gradient with Shift terms, Combine, Constrain, Project, Dot), so they run
// on every backend and lattice (lines, planes, 3D lattices). docs/dynamics.md
// describes the schemes:
//
//   - EvolveRK4: classic RK4 on (phi, v)' = (v, a(phi, v)); four gradients a
//     step, like a step of arrested Newton flow. Fourth order in dt. Under the
//     constraint a includes the centripetal term, evaluated per site by the
//     backend (CentripetalProgram) or on the host, and each step
//     ends by normalising phi and projecting v (a projection method: the
//     order stays four).
//   - EvolveLeapfrog: velocity Verlet (kick-drift-kick), one gradient a step
//     (the last kick's gradient is the next step's first). Second order,
//     time-reversible: the energy error stays bounded. Under the constraint the
//     drift moves phi along the great circle through phi in the direction of
//     v (phi' = (phi + dt v)/|phi + dt v|) and carries v along it by parallel
//     transport, the composition of two reflections (v' = R_b v with
//     b = phi + phi', R_b x = 2 P_b x - x), then the kicks use the projected
//     gradient. Every operation is a kernel, the step time-reversible (the
//     drift is its own inverse under dt -> -dt), so second order.
//
//   - EvolveRK45 (and Adaptive with the first-order methods): the
//     Dormand-Prince 5(4) pair with step-size control (evolve_adaptive.go).
//
// First-order dynamics (Landau-Lifshitz-Gilbert, Gross-Pitaevskii:
// phi' = F(phi)) is another stepper (evolve_first_order.go): StartEvolve picks
// evolution.stepFn (stepRK4, stepLeapfrog, stepFirstOrder, stepAdaptive), and
// AdvanceEvolve, the records, snapshots, chunks, cancellation and divergence
// reports go through it without knowing the scheme.

// Evolution methods.
const (
	EvolveRK4      = "rk4"
	EvolveLeapfrog = "leapfrog"
)

// EvolveConfig configures an evolution; zero fields take defaults.
type EvolveConfig struct {
	// Method is EvolveRK4 (default), EvolveLeapfrog or EvolveRK45 (second
	// order in time), or EvolveLLG, EvolveGPE, EvolveGPEImaginary (first order).
	Method string
	T      float64 // how long to evolve: the run ends at exactly the start time + T
	// Dt is the largest time step (0: DefaultEvolveDt capped by the field's
	// stiffness); the step taken is T/ceil(T/Dt), so that the run ends at T.
	// Adaptive: the largest step and the first one tried (0: 0.9 of the
	// pair's stability limit for the field's stiffest mode).
	Dt          float64
	RecordEvery int  // a record (and snapshot) every this many (accepted) steps, and at the end; 0: DefaultRecords records in all
	Snapshots   bool // copy the field at every record (TakeSnapshot hands them out)

	// Adaptive steps (evolve_adaptive.go): the Dormand-Prince 5(4) pair with
	// step-size control. EvolveRK45 implies it; with EvolveLLG, EvolveGPE,
	// EvolveGPEImaginary it replaces their RK4.
	Adaptive bool
	Rtol     float64 // relative tolerance (0: DefaultRtol; in float32 storage 1.2e-5, what it resolves)
	Atol     float64 // absolute tolerance (0: DefaultAtolFraction of Rtol)
	DtMin    float64 // the floor of a step: below it the run stops with errs.StepSize (0: DefaultDtMinFraction of the largest step)
	// RecordDt records every this much time (steps land on the record
	// times), exclusive with RecordEvery; with neither, DefaultRecords
	// records at even times (fewer when the largest step allows fewer).
	RecordDt float64

	Gamma    float64 // EvolveLLG: the gyromagnetic ratio gamma > 0 (0: 1)
	Alpha    float64 // EvolveLLG: the Gilbert damping alpha >= 0
	KeepNorm bool    // EvolveGPE, EvolveGPEImaginary: scale the field back to its initial norm after every step
}

// EvolveRecord is one row of an evolution's history.
type EvolveRecord struct {
	Step      int
	T         float64
	Kinetic   float64 // cell sum |v|^2 / 2
	Potential float64 // the engine's energy E (the penalty included in the consistent form)
	Momentum  [3]float64
	Integrals []float64 // each declared density's integral
	// A theory with a Gauss law, second-order methods: max |G| and its L2 norm (gauss.go)
	GaussMax, GaussL2 float64
	// First-order evolutions (the kinetic term and momentum are zero):
	Norm          float64    // EvolveGPE, EvolveGPEImaginary: cell sum |psi|^2 over the complex fields
	Magnetisation [3]float64 // EvolveLLG: the mean of n over the sites that are not held
	// Adaptive evolutions (Step counts the accepted steps):
	Dt       float64 // the controller's current step (the next one it tries)
	Rejected int     // rejected steps so far
}

// EvolveProgress is where an evolution stands.
type EvolveProgress struct {
	Step   int     // steps taken (accepted)
	Steps  int     // steps in all (0 for an adaptive evolution: not known ahead)
	T      float64 // time reached
	TEnd   float64 // the time the evolution ends at
	Energy float64 // kinetic + potential at the last record
	Done   bool
	// Adaptive evolutions:
	Adaptive bool
	Rejected int // rejected steps so far
}

// Snapshot is the field at a record: the field (the caller releases it), its
// time and step.
type Snapshot struct {
	Field *Field
	T     float64
	Step  int
}

// evolution is an evolution's state between Advance calls.
type evolution struct {
	cfg    EvolveConfig
	dt     float64
	t0     float64 // the time at step 0
	steps  int     // steps in all
	step   int
	done   bool
	hist   []EvolveRecord
	snaps  []Snapshot
	stepFn func(*evolution) error // the scheme: stepRK4, stepLeapfrog, stepFirstOrder, stepAdaptive
	norm0  float64                // KeepNorm: phi.phi at the start
	accOK  bool                   // leapfrog: g[0] holds the (projected) gradient at phi; adaptive: ad.m[0] the rate or acceleration (FSAL)
	ckStep int                    // the step of the last record (the state kept on divergence)
	ad     *adaptiveState         // adaptive: the controller (nil for a fixed step)
}

// finished reports whether the evolution has reached its end (or stopped).
func (ev *evolution) finished() bool {
	if ev.done {
		return true
	}
	if ev.ad != nil {
		return ev.ad.t >= ev.ad.tEnd
	}
	return ev.step >= ev.steps
}

// evolveHost is the host memory of the unit-vector RK4's centripetal term.
type evolveHost struct {
	phi, vel   *Field
	phiB, velB kernels.Buffer
}

func (h *evolveHost) release() {
	for _, b := range []kernels.Buffer{h.phiB, h.velB} {
		if b != nil {
			b.Release()
		}
	}
	for _, f := range []*Field{h.phi, h.vel} {
		if f != nil {
			f.Release()
		}
	}
}

// DefaultRecords is about how many records (and snapshots) an evolution
// takes when RecordEvery is not given: one every ceil(steps/100) steps, so
// that the snapshots a long run keeps in memory stay bounded.
const DefaultRecords = 100

// DefaultEvolveDt is the default largest step on lat: a quarter of the
// smallest spacing (a Courant number of 1/4, well inside the stability of
// both schemes for the wave operator, whose fastest mode with the
// fourth-order stencils has omega = 2.31/h per axis).
func DefaultEvolveDt(lat Lattice) float64 { return DefaultDt(ArrestedNewtonFlow, lat) / 2 }

// evolveLimit is the largest stable dt for stiffness lambda (omega^2): RK4
// is stable for omega dt < 2 sqrt 2, leapfrog for omega dt < 2.
func evolveLimit(method string, lambda float64) float64 {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return math.Inf(1)
	}
	if method == EvolveLeapfrog {
		return 2 / math.Sqrt(lambda)
	}
	return 2 * math.Sqrt2 / math.Sqrt(lambda)
}

func (c EvolveConfig) check() (EvolveConfig, error) {
	if c.Method == "" {
		c.Method = EvolveRK4
	}
	if c.Method != EvolveRK4 && c.Method != EvolveLeapfrog && c.Method != EvolveRK45 && !FirstOrder(c.Method) {
		return c, errs.New(errs.Parameter, "unknown evolution method %q: use %q, %q, %q, %q, %q or %q", c.Method,
			EvolveRK4, EvolveLeapfrog, EvolveRK45, EvolveLLG, EvolveGPE, EvolveGPEImaginary)
	}
	if c.Method == EvolveRK45 {
		c.Adaptive = true
	}
	if c.Adaptive && !FirstOrder(c.Method) && c.Method != EvolveRK45 {
		return c, errs.New(errs.Parameter, "adaptive steps are method %q for second-order dynamics (or %q, %q, %q with adaptive "+
			"steps), not %q, whose step is fixed", EvolveRK45, EvolveLLG, EvolveGPE, EvolveGPEImaginary, c.Method)
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"rtol", c.Rtol}, {"atol", c.Atol}, {"dt_min", c.DtMin}, {"record_dt", c.RecordDt}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			return c, errs.New(errs.Parameter, "%s must be positive and finite, got %v", v.name, v.x)
		}
		if v.x != 0 && !c.Adaptive {
			return c, errs.New(errs.Parameter, "%s applies to adaptive steps (method %q, or adaptive with %q, %q, %q), not to "+
				"method %q with its fixed step", v.name, EvolveRK45, EvolveLLG, EvolveGPE, EvolveGPEImaginary, c.Method)
		}
	}
	if c.RecordDt > 0 && c.RecordEvery > 0 {
		return c, errs.New(errs.Parameter, "record_every (%d steps) and record_dt (%g in time) are exclusive: give one", c.RecordEvery, c.RecordDt)
	}
	if c.Gamma == 0 {
		c.Gamma = 1
	}
	if !(c.Gamma > 0) || math.IsInf(c.Gamma, 0) {
		return c, errs.New(errs.Parameter, "gamma must be positive and finite, got %v", c.Gamma)
	}
	if !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0) {
		return c, errs.New(errs.Parameter, "the damping alpha must be finite and >= 0, got %v", c.Alpha)
	}
	if c.KeepNorm && c.Method != EvolveGPE && c.Method != EvolveGPEImaginary {
		return c, errs.New(errs.Parameter, "keep_norm applies to %q and %q, not to %q", EvolveGPE, EvolveGPEImaginary, c.Method)
	}
	if !(c.T >= 0) || math.IsInf(c.T, 0) {
		return c, errs.New(errs.Parameter, "the evolution time t must be finite and >= 0, got %v", c.T)
	}
	if math.IsNaN(c.Dt) || math.IsInf(c.Dt, 0) || c.Dt < 0 {
		return c, errs.New(errs.Parameter, "dt must be positive and finite, got %v", c.Dt)
	}
	if c.RecordEvery < 0 {
		return c, errs.New(errs.Parameter, "record_every must be a positive number of steps, got %d", c.RecordEvery)
	}
	return c, nil
}

// SetVelocity copies f (same size and component count as the field) into
// the velocity phi'. Values on held sites (the two outer layers of a fixed
// axis) are set to zero: those sites do not move. Under the unit-vector
// constraint v is projected onto the tangent space of the field. A NaN or Inf
// is refused. The next Evolve starts from this velocity (an Evolve after a
// Minimize otherwise starts at rest).
func (s *Simulation) SetVelocity(f *Field) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.syncHost(); err != nil {
		return err
	}
	if err := s.vel.CopyFrom(f); err != nil {
		return err
	}
	s.zeroHeld(s.vel)
	if err := s.velB.Upload(); err != nil {
		return err
	}
	if idx, err := s.prog.FirstNonFinite(s.velB); err != nil || idx >= 0 {
		if err != nil {
			return err
		}
		c, site := s.siteOf(idx)
		v := s.vel.cols[c][idx%s.lat.Sites()]
		for c := range s.vel.cols {
			clear(s.vel.cols[c])
		}
		if err := s.velB.Upload(); err != nil {
			return err
		}
		return errs.New(errs.Parameter, "the velocity is %v at site %s, component %q: it must be finite", v, site, s.theory.Spec.Fields[c])
	}
	if s.theory.UnitVector() {
		if err := s.prog.Project(s.grid, s.phiB, s.velB); err != nil {
			return err
		}
		s.hostStale = true
	}
	s.closeDeviceFlow()
	s.dynVel = true
	if s.evo != nil {
		s.evo.accOK = false
	}
	return nil
}

// held reports whether site (i, j, k) is held (a fixed axis's outer two layers).
func (s *Simulation) held(i, j, k int) bool {
	l := s.lat
	if l.Boundary == Free && !l.PerAxis {
		return false
	}
	n := [3]int{l.Nx, l.Ny, l.Planes()}
	at := [3]int{i, j, k}
	for a := range l.Dim() {
		if l.AxisBoundary(a) == Fixed && (at[a] < 2 || at[a] >= n[a]-2) {
			return true
		}
	}
	return false
}

func (s *Simulation) zeroHeld(f *Field) {
	l := s.lat
	for k := range l.Planes() {
		for j := range l.Ny {
			for i := range l.Nx {
				if s.held(i, j, k) {
					idx := (k*l.Ny+j)*l.Nx + i
					for c := range f.cols {
						f.cols[c][idx] = 0
					}
				}
			}
		}
	}
}

// StartEvolve begins an evolution from the current field and velocity: the
// velocity set by SetVelocity or left by an earlier evolution (which this one
// continues in time), else zero. The field must be finite.
func (s *Simulation) StartEvolve(cfg EvolveConfig) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	cfg, err := cfg.check()
	if err != nil {
		return err
	}
	if s.theory.HasAuxiliary() {
		return errs.New(errs.Parameter, "theory %q has auxiliary fields %v, fixed by their own equation rather than moved by "+
			"dynamics: evolve does not run such theories yet", s.theory.Spec.Name, s.theory.Spec.Auxiliary)
	}
	first := FirstOrder(cfg.Method)
	if first {
		if err := s.checkFirstOrder(cfg.Method); err != nil {
			return err
		}
	}
	if err := s.checkKinetic(cfg.Method); err != nil {
		return err
	}
	if err := s.refuseNonFinite(); err != nil {
		return err
	}
	t0 := 0.0
	if first {
		// A first-order evolution has no velocity: it is zero, and an
		// evolution after it starts at rest.
		if err := s.prog.Combine(s.velB); err != nil {
			return err
		}
		s.hostStale = true
		if !s.dynVel {
			s.time = 0
		}
	} else if !s.dynVel {
		if err := s.prog.Combine(s.velB); err != nil {
			return err
		}
		s.hostStale = true
		s.time = 0
	}
	t0 = s.time
	if !s.stiffOK {
		lambda, err := s.stiffness(stiffnessIterations)
		if err != nil {
			return err
		}
		s.stiff, s.stiffOK = lambda, true
	}
	limit := evolveLimit(cfg.Method, s.stiff)
	if first {
		limit = firstOrderLimit(cfg, s.stiff)
	}
	if cfg.Adaptive {
		return s.startAdaptiveEvolution(cfg, t0, adaptiveLimit(cfg, s.stiff))
	}
	dt := cfg.Dt
	if dt == 0 {
		dt = math.Min(DefaultEvolveDt(s.lat), limit/2)
	}
	steps := 0
	if cfg.T > 0 {
		steps = int(math.Ceil(cfg.T/dt - 1e-9))
		steps = max(steps, 1)
		dt = cfg.T / float64(steps)
	}
	if cfg.Dt > 0 && dt > limit*(1+stabilityMargin) && (s.theory.UnitVector() || cfg.KeepNorm) {
		// The constraint (or the norm kept) keeps an unstable run finite:
		// refuse it rather than return noise.
		return errs.New(errs.Parameter, "dt=%g is beyond the stability limit of %s for this field: the stiffest mode has "+
			"omega = %.4g, so the scheme is stable only for dt < %.4g", dt, cfg.Method, math.Sqrt(s.stiff), limit)
	}
	if cfg.RecordEvery == 0 {
		cfg.RecordEvery = max(1, (steps+DefaultRecords-1)/DefaultRecords)
	}
	s.closeDeviceFlow()
	s.releaseSnapshots()
	s.evo = &evolution{cfg: cfg, dt: dt, t0: t0, steps: steps, stepFn: s.stepRK4}
	switch {
	case cfg.Method == EvolveLeapfrog:
		s.evo.stepFn = s.stepLeapfrog
	case first:
		s.evo.stepFn = s.stepFirstOrder
	}
	return s.beginEvolution()
}

// startAdaptiveEvolution is StartEvolve's end for adaptive steps, limit the
// pair's stability limit for the field's stiffest mode.
func (s *Simulation) startAdaptiveEvolution(cfg EvolveConfig, t0, limit float64) error {
	s.closeDeviceFlow()
	s.releaseSnapshots()
	ev := &evolution{cfg: cfg, t0: t0}
	if err := s.startAdaptive(ev, limit); err != nil {
		return err
	}
	ev.dt, ev.stepFn = ev.ad.dt, s.stepAdaptive
	s.evo = ev
	return s.beginEvolution()
}

// beginEvolution completes s.evo's start: the norm a KeepNorm evolution
// keeps, and the first record.
func (s *Simulation) beginEvolution() error {
	var err error
	if s.evo.cfg.KeepNorm {
		if s.evo.norm0, err = s.prog.Dot(s.phiB, s.phiB); err != nil {
			s.evo = nil
			return err
		}
		if !(s.evo.norm0 > 0) {
			s.evo = nil
			return errs.New(errs.Parameter, "keep_norm needs a field of nonzero norm")
		}
	}
	s.dynVel = true
	if err := s.evoRecord(); err != nil {
		s.evo = nil
		return err
	}
	return nil
}

// Evolve runs StartEvolve and AdvanceEvolve to the end, returning the history.
func (s *Simulation) Evolve(cfg EvolveConfig) (arrow.RecordBatch, error) {
	if err := s.StartEvolve(cfg); err != nil {
		return nil, err
	}
	if _, err := s.AdvanceEvolve(0, 0); err != nil {
		return nil, err
	}
	return s.EvolveHistory()
}

// AdvanceEvolve continues the evolution for at most maxSteps steps (0: no
// limit) and about budget of wall time (0: none). Chunks give the same bits
// as one call. Cancel stops it between kernels with errs.Cancelled, the
// evolution resumable.
func (s *Simulation) AdvanceEvolve(maxSteps int, budget time.Duration) (EvolveProgress, error) {
	if err := s.lock(); err != nil {
		return EvolveProgress{}, err
	}
	defer s.mu.Unlock()
	s.cancel.Store(false)
	defer s.cancel.Store(false)
	ev := s.evo
	if ev == nil {
		return EvolveProgress{}, errs.New(errs.Parameter, "no evolution to advance: call StartEvolve first")
	}
	// The field or the parameters may have changed between calls (nothing
	// else steps on this simulation's buffers while an evolution is current,
	// but SetParams may run): the leapfrog's gradient is evaluated again,
	// which gives the same bits when nothing changed.
	ev.accOK = false
	t0 := time.Now()
	defer func() { s.hostStale = true; s.stiffOK = false }()
	for taken := 0; !ev.finished(); {
		if (maxSteps > 0 && taken >= maxSteps) || (budget > 0 && taken > 0 && time.Since(t0) >= budget) {
			break
		}
		if s.cancel.Load() {
			return s.evoProgress(), errs.New(errs.Cancelled, "the evolution was cancelled at t=%g; continue it with AdvanceEvolve", s.time)
		}
		n := 1
		if k := s.evolveDeviceSteps(ev, maxSteps-taken, maxSteps > 0); k > 0 {
			var err error
			if n, err = s.runEvolveDevice(ev, k); err != nil {
				return s.evoProgress(), err
			}
		} else {
			if err := ev.stepFn(ev); err != nil {
				return s.evoProgress(), err
			}
			ev.step++
		}
		var record bool
		if ad := ev.ad; ad != nil {
			s.time, ev.dt = ad.t, ad.dt
			record = ad.onRecord || (ev.cfg.RecordEvery > 0 && ev.step%ev.cfg.RecordEvery == 0) || ad.t == ad.tEnd
		} else {
			s.evoClock()
			record = ev.step%ev.cfg.RecordEvery == 0 || ev.step == ev.steps
		}
		if record {
			if err := s.evoRecord(); err != nil {
				return s.evoProgress(), err
			}
		}
		taken += n
	}
	ev.done = ev.finished()
	return s.evoProgress(), nil
}

// evoClock sets the clock from a fixed-step evolution's step count.
func (s *Simulation) evoClock() {
	ev := s.evo
	s.time = ev.t0 + float64(ev.step)*ev.dt
	if ev.step == ev.steps {
		s.time = ev.t0 + ev.cfg.T // exactly
	}
}

// evolveDeviceSteps is how many RK4 steps the device may take now from
// ev.step: up to the next record, the end and the caller's limit; 0 when
// the steps run on the host. The device flow of minimize (kernels.Stepper)
// with its arrest test off is classic RK4 on phi” = -dE/dphi, evolve's
// step for a field without a constraint or a kinetic density: the stages
// and the update fused, launched many steps ahead without a host sync.
func (s *Simulation) evolveDeviceSteps(ev *evolution, left int, limited bool) int {
	if !UseStepper || ev.ad != nil || ev.cfg.Method != EvolveRK4 || s.stageReadsVelocity() || s.theory.HasAuxiliary() {
		return 0
	}
	if _, ok := s.prog.(kernels.Stepper); !ok {
		return 0
	}
	n := min(ev.cfg.RecordEvery-ev.step%ev.cfg.RecordEvery, ev.steps-ev.step)
	if limited {
		n = min(n, left)
	}
	if n <= 0 || s.evolveFlow(ev) == nil {
		return 0
	}
	return n
}

// evolveFlow returns the device flow of ev's RK4 steps, preparing it if
// needed; nil when the Program declines (the steps then run on the host).
func (s *Simulation) evolveFlow(ev *evolution) kernels.Flow {
	return s.cachedFlow("evolve|"+fmtFloat(ev.dt), kernels.FlowSpec{Dt: ev.dt, Tol: 0, NoArrest: true})
}

// runEvolveDevice takes n RK4 steps on the device and returns how many it
// took: ev.step and the clock follow, a non-finite stage ends the evolution
// as the host's step would (evoDiverged), a cancel returns errs.Cancelled
// with the steps taken kept.
func (s *Simulation) runEvolveDevice(ev *evolution, n int) (int, error) {
	res, err := s.dev.flow.Run(kernels.FlowState{Step: ev.step, PrevEnergy: math.Inf(1)}, n, stepperPoll, &s.cancel)
	if err != nil {
		return 0, err
	}
	ev.step = res.State.Step
	s.evoClock()
	switch res.Stop {
	case kernels.FlowNonFinite:
		return res.Taken, s.evoDiverged(ev, res.Stage, s.g[res.Stage-1])
	case kernels.FlowConverged:
		return res.Taken, errs.New(errs.Internal, "the device flow of an evolution stopped as converged at step %d", ev.step)
	}
	if res.Cancelled {
		return res.Taken, errs.New(errs.Cancelled, "the evolution was cancelled at t=%g; continue it with AdvanceEvolve", s.time)
	}
	return res.Taken, nil
}

func (s *Simulation) evoProgress() EvolveProgress {
	ev := s.evo
	p := EvolveProgress{Step: ev.step, Steps: ev.steps, T: s.time, TEnd: ev.t0 + ev.cfg.T, Done: ev.done}
	if ev.ad != nil {
		p.Adaptive, p.Rejected = true, ev.ad.rejected
	}
	if n := len(ev.hist); n > 0 {
		p.Energy = ev.hist[n-1].Kinetic + ev.hist[n-1].Potential
	}
	return p
}

// EvolveProgress reports the current evolution's state.
func (s *Simulation) EvolveProgress() (EvolveProgress, error) {
	if err := s.lock(); err != nil {
		return EvolveProgress{}, err
	}
	defer s.mu.Unlock()
	if s.evo == nil {
		return EvolveProgress{}, errs.New(errs.Parameter, "no evolution has been started")
	}
	return s.evoProgress(), nil
}

// Time is the simulation's clock: the time its evolutions have reached since
// the field was set (0 after SetField or a Minimize).
func (s *Simulation) Time() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.time
}

// EvolveDt is the step the current evolution takes (0 when none); for
// adaptive steps the controller's current step.
func (s *Simulation) EvolveDt() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.evo == nil {
		return 0
	}
	if s.evo.ad != nil {
		return s.evo.ad.dt
	}
	return s.evo.dt
}

// EvolveConfig is the current evolution's settings, defaults resolved
// (adaptive: Dt the largest step, Rtol, Atol, DtMin), and false when there
// is none.
func (s *Simulation) EvolveConfig() (EvolveConfig, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.evo == nil {
		return EvolveConfig{}, false
	}
	c := s.evo.cfg
	if ad := s.evo.ad; ad != nil {
		c.Dt, c.Rtol, c.Atol, c.DtMin = ad.dtMax, ad.rtol, ad.atol, ad.dtMin
	} else {
		c.Dt = s.evo.dt
	}
	return c, true
}

// EvolveShift has RK4's stage gradients form their field in the gradient's
// loader (kernels.GradientArgs.Shift) instead of a Combine into a buffer
// first. Benchmarks turn it off to compare.
var EvolveShift = true

// stepRK4 takes one classic RK4 step of (phi, v)' = (v, -m(phi, v)), with m
// the projected gradient plus, under the constraint, the centripetal term:
//
//	m1 = m(phi, v)
//	m2 = m(phi + dt/2 v,                v - dt/2 m1)
//	m3 = m(phi + dt/2 v - dt²/4 m1,     v - dt/2 m2)
//	m4 = m(phi + dt v - dt²/2 m2,       v - dt m3)
//	phi' = phi + dt v - dt²/6 (m1 + m2 + m3)
//	v'   = v - dt/6 (m1 + 2 m2 + 2 m3 + m4)
//
// The field and velocity change only in the last kernels.
func (s *Simulation) stepRK4(ev *evolution) error {
	dt := ev.dt
	uv := s.theory.UnitVector()
	phi, v, g := s.phiB, s.velB, s.g
	T := func(c float64, x kernels.Buffer) kernels.Term { return kernels.Term{Coef: c, X: x} }
	stages := []struct {
		shift []kernels.Term // the stage field is phi + these
		vel   []kernels.Term // the stage velocity (constraint only)
	}{
		{nil, []kernels.Term{T(1, v)}},
		{[]kernels.Term{T(dt/2, v)}, []kernels.Term{T(1, v), T(-dt/2, g[0])}},
		{[]kernels.Term{T(dt/2, v), T(-dt*dt/4, g[0])}, []kernels.Term{T(1, v), T(-dt/2, g[1])}},
		{[]kernels.Term{T(dt, v), T(-dt*dt/2, g[1])}, []kernels.Term{T(1, v), T(-dt, g[2])}},
	}
	withVel := s.stageReadsVelocity()
	for k, st := range stages {
		if withVel {
			m, err := s.velocityStage(phi, st.shift, st.vel, g[k])
			if err != nil {
				return err
			}
			if math.IsNaN(m) {
				return s.evoDiverged(ev, k+1, g[k])
			}
		} else {
			a := s.gradArgs(phi, nil, g[k], false, false)
			if EvolveShift {
				a.Shift = st.shift
			} else if len(st.shift) > 0 {
				if err := s.prog.Combine(s.trial, append([]kernels.Term{T(1, phi)}, st.shift...)...); err != nil {
					return err
				}
				a.Phi = s.trial
			}
			r, err := s.prog.Gradient(a)
			if err != nil {
				return err
			}
			if math.IsNaN(r.MaxGrad) {
				return s.evoDiverged(ev, k+1, g[k])
			}
		}
		if k < 3 && s.cancel.Load() {
			return errs.New(errs.Cancelled, "the evolution was cancelled at t=%g; continue it with AdvanceEvolve", s.time)
		}
	}
	h := dt * dt / 6
	if err := s.prog.Combine(phi, T(1, phi), T(dt, v), T(-h, g[0]), T(-h, g[1]), T(-h, g[2])); err != nil {
		return err
	}
	if err := s.prog.Combine(v, T(1, v), T(-dt/6, g[0]), T(-dt/3, g[1]), T(-dt/3, g[2]), T(-dt/6, g[3])); err != nil {
		return err
	}
	if uv {
		return s.prog.Constrain(s.grid, phi, v)
	}
	return nil
}

// stageReadsVelocity reports whether minus the acceleration depends on the
// stage velocity too: under the unit-vector constraint (the centripetal
// term) and with a kinetic density.
func (s *Simulation) stageReadsVelocity() bool {
	return s.theory.UnitVector() || s.theory.HasKineticDensity()
}

// velocityStage writes minus the acceleration at the stage field phi + shift
// and velocity vel into out, for a stage that reads the velocity, and returns
// the max |gradient| at the stage field, NaN if anything it computed is not
// finite. A velocity that went non-finite alone shows one stage later, in the
// field it moves: the stage needs no pass of its own to look.
func (s *Simulation) velocityStage(phi kernels.Buffer, shift, vel []kernels.Term, out kernels.Buffer) (float64, error) {
	if s.theory.HasKineticDensity() {
		return s.kineticStage(phi, shift, vel, out)
	}
	return s.centripetalStage(phi, shift, vel, out)
}

// CentripetalProgram is optionally implemented by a kernels.Program that
// adds the centripetal term of a unit-vector field's acceleration on the
// backend: out += (|w|^2/|p|^2) p at every site that is not held, over the
// components that are not auxiliary. The kernels' contract has no per-site
// product of two fields (Combine's coefficients are numbers, Project and
// Constrain depend on directions only), so without it the unit-vector RK4
// forms the term on the host: free on the CPU backend, whose buffers are host
// memory, but a download of p and w and an upload of the term per RK4 stage
// on a GPU (docs/dynamics.md). The CUDA backend implements it
// (fg_k_centripetal, fg_k_nd_centripetal), keeping the step on the device.
type CentripetalProgram interface {
	AddCentripetal(g kernels.Grid, p, w, out kernels.Buffer) error
}

// centripetalStage writes m = P g(phi + shift) + (|w|^2/|p|^2) p into out,
// with p = phi + shift the stage field and w the stage velocity: minus the
// acceleration of a unit-vector field. The stage field and velocity are
// formed on the backend into host-bound buffers; the per-site term is added
// by the Program (CentripetalProgram) or computed on the host (no copy on the
// CPU backend, a download and an upload on a device) and added on the
// backend.
func (s *Simulation) centripetalStage(phi kernels.Buffer, shift, vel []kernels.Term, out kernels.Buffer) (float64, error) {
	hb, err := s.evolveHostBuffers()
	if err != nil {
		return 0, err
	}
	if err := s.prog.Combine(hb.phiB, append([]kernels.Term{{Coef: 1, X: phi}}, shift...)...); err != nil {
		return 0, err
	}
	if err := s.prog.Combine(hb.velB, vel...); err != nil {
		return 0, err
	}
	r, err := s.prog.Gradient(s.gradArgs(hb.phiB, nil, out, false, true))
	if err != nil {
		return 0, err
	}
	if cp, ok := s.prog.(CentripetalProgram); ok {
		return r.MaxGrad, cp.AddCentripetal(s.grid, hb.phiB, hb.velB, out)
	}
	if err := hb.phiB.Download(); err != nil {
		return 0, err
	}
	if err := hb.velB.Download(); err != nil {
		return 0, err
	}
	p, w := hb.phi.cols, hb.vel.cols
	n := s.lat.Sites()
	par.For(n, 4096, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			var ww, pp float64
			for c := range p {
				if s.theory.Auxiliary(c) {
					continue
				}
				ww += w[c][i] * w[c][i]
				pp += p[c][i] * p[c][i]
			}
			f := 0.0
			if ww != 0 {
				f = ww / pp
			}
			for c := range p {
				w[c][i] = f * p[c][i]
			}
		}
	})
	if err := hb.velB.Upload(); err != nil {
		return 0, err
	}
	return r.MaxGrad, s.prog.Combine(out, kernels.Term{Coef: 1, X: out}, kernels.Term{Coef: 1, X: hb.velB})
}

func (s *Simulation) evolveHostBuffers() (*evolveHost, error) {
	if s.evoHost != nil {
		return s.evoHost, nil
	}
	hb := &evolveHost{}
	var err error
	names := s.theory.Spec.Fields
	if hb.phi, err = NewField(s.lat, names); err == nil {
		if hb.vel, err = NewField(s.lat, names); err == nil {
			if hb.phiB, err = s.prog.Bind(flat(hb.phi)); err == nil {
				hb.velB, err = s.prog.Bind(flat(hb.vel))
			}
		}
	}
	if err != nil {
		hb.release()
		return nil, err
	}
	s.evoHost = hb
	return hb, nil
}

// stepLeapfrog takes one velocity Verlet step with g[0] the (projected)
// gradient at phi:
//
//	v   -= dt/2 g(phi)
//	phi += dt v            (constraint: phi <- (phi + dt v)/|...|, v parallel-transported)
//	v   -= dt/2 g(phi)
func (s *Simulation) stepLeapfrog(ev *evolution) error {
	dt := ev.dt
	uv := s.theory.UnitVector()
	phi, v, g := s.phiB, s.velB, s.g
	T := func(c float64, x kernels.Buffer) kernels.Term { return kernels.Term{Coef: c, X: x} }
	if !ev.accOK {
		r, err := s.prog.Gradient(s.gradArgs(phi, nil, g[0], false, uv))
		if err != nil {
			return err
		}
		if math.IsNaN(r.MaxGrad) {
			return s.evoDiverged(ev, 1, g[0])
		}
		ev.accOK = true
	}
	if err := s.prog.Combine(v, T(1, v), T(-dt/2, g[0])); err != nil {
		return err
	}
	if uv {
		// g[1] keeps the old field, g[2] the bisector, g[3] the projection.
		if err := s.prog.Combine(g[1], T(1, phi)); err != nil {
			return err
		}
	}
	if err := s.prog.Combine(phi, T(1, phi), T(dt, v)); err != nil {
		return err
	}
	if uv {
		if err := s.prog.Constrain(s.grid, phi, nil); err != nil {
			return err
		}
		if err := s.prog.Combine(g[2], T(1, g[1]), T(1, phi)); err != nil {
			return err
		}
		if err := s.prog.Combine(g[3], T(1, v)); err != nil {
			return err
		}
		if err := s.prog.Project(s.grid, g[2], g[3]); err != nil {
			return err
		}
		if err := s.prog.Combine(v, T(2, g[3]), T(-1, v)); err != nil {
			return err
		}
	}
	ev.accOK = false
	r, err := s.prog.Gradient(s.gradArgs(phi, nil, g[0], false, uv))
	if err != nil {
		return err
	}
	if math.IsNaN(r.MaxGrad) {
		return s.evoDiverged(ev, 2, g[0])
	}
	ev.accOK = true
	if err := s.prog.Combine(v, T(1, v), T(-dt/2, g[0])); err != nil {
		return err
	}
	if uv {
		return s.prog.Project(s.grid, phi, v)
	}
	return nil
}

// evoRecord appends the current state's row (and snapshot) and keeps the
// state as the one a divergence falls back to.
func (s *Simulation) evoRecord() error {
	ev := s.evo
	r, err := s.prog.Gradient(s.gradArgs(s.phiB, nil, s.trial, true, false))
	if err != nil {
		return err
	}
	vv, err := s.prog.Dot(s.velB, s.velB)
	if err != nil {
		return err
	}
	rec := EvolveRecord{Step: ev.step, T: s.time, Kinetic: 0.5 * s.lat.Cell() * vv, Potential: r.Energy}
	var momentumDensity [][]float64 // p = dK/dv, nil: the velocity
	if s.theory.HasKineticDensity() && !FirstOrder(ev.cfg.Method) {
		if rec.Kinetic, momentumDensity, err = s.kineticRecord(); err != nil {
			return err
		}
	}
	if ev.ad != nil {
		rec.Dt, rec.Rejected = ev.ad.dt, ev.ad.rejected
	}
	for k := range s.theory.Spec.Densities {
		v, err := s.prog.Density(s.grid, s.params, s.phiB, k, nil)
		if err != nil {
			return err
		}
		rec.Integrals = append(rec.Integrals, v)
	}
	s.hostStale = true
	if err := s.syncHost(); err != nil {
		return err
	}
	if momentumDensity == nil {
		momentumDensity = s.vel.cols
	}
	rec.Momentum = s.momentum(momentumDensity)
	if err := s.recordGauss(&rec); err != nil {
		return err
	}
	if FirstOrder(ev.cfg.Method) {
		if err := s.firstOrderRecord(&rec); err != nil {
			return err
		}
	}
	ev.hist = append(ev.hist, rec)
	if ev.cfg.Snapshots {
		f, err := NewField(s.lat, s.theory.Spec.Fields)
		if err != nil {
			return err
		}
		if err := f.CopyFrom(s.phi); err != nil {
			f.Release()
			return err
		}
		ev.snaps = append(ev.snaps, Snapshot{Field: f, T: s.time, Step: ev.step})
	}
	if err := s.prog.Combine(s.ckptPhi, kernels.Term{Coef: 1, X: s.phiB}); err != nil {
		return err
	}
	if err := s.prog.Combine(s.ckptVel, kernels.Term{Coef: 1, X: s.velB}); err != nil {
		return err
	}
	ev.ckStep = ev.step
	return nil
}

// momentum is P_a = -cell sum over sites of p . d_a phi for each axis, p the
// momentum density (the velocity, or dK/dv for a kinetic density), with
// fourth-order central differences (second order next to an edge of a free
// axis, one-sided at it); held sites have p = 0 and contribute nothing.
func (s *Simulation) momentum(p [][]float64) [3]float64 {
	var P [3]float64
	l := s.lat
	n := [3]int{l.Nx, l.Ny, l.Planes()}
	h := [3]float64{l.Hx, l.Hy, l.Hz}
	stride := [3]int{1, l.Nx, l.Nx * l.Ny}
	for a := range l.Dim() {
		wrap := l.AxisBoundary(a) == Periodic
		sum := make([]float64, l.Sites())
		par.For(l.Sites(), 4096, func(i0, i1 int) {
			for idx := i0; idx < i1; idx++ {
				i := (idx / stride[a]) % n[a]
				at := func(d int) (int, bool) {
					j := i + d
					if wrap {
						j = ((j % n[a]) + n[a]) % n[a]
					} else if j < 0 || j >= n[a] {
						return 0, false
					}
					return idx + (j-i)*stride[a], true
				}
				var acc float64
				for c, col := range s.phi.cols {
					vc := p[c][idx]
					if vc == 0 {
						continue
					}
					m2, ok2 := at(-2)
					m1, ok1 := at(-1)
					p1, okp1 := at(1)
					p2, okp2 := at(2)
					var d float64
					switch {
					case ok2 && ok1 && okp1 && okp2:
						d = (col[m2] - 8*col[m1] + 8*col[p1] - col[p2]) / (12 * h[a])
					case ok1 && okp1:
						d = (col[p1] - col[m1]) / (2 * h[a])
					case okp1:
						d = (col[p1] - col[idx]) / h[a]
					case ok1:
						d = (col[idx] - col[m1]) / h[a]
					}
					acc += vc * d
				}
				sum[idx] = acc
			}
		})
		P[a] = -l.Cell() * kernels.SumCompensated(sum)
	}
	return P
}

// evoDiverged ends the evolution with errs.Divergence naming the site and the
// stage where the gradient went non-finite, and puts back the last recorded
// field and velocity.
func (s *Simulation) evoDiverged(ev *evolution, stage int, g kernels.Buffer) error {
	ev.done = true
	ev.steps = ev.step
	what := "the field is not finite at an unknown site"
	idx, err := s.prog.FirstNonFinite(g)
	if err != nil {
		return err
	}
	where := "the gradient"
	if idx < 0 {
		where = "the field"
		if idx, err = s.prog.FirstNonFinite(s.phiB); err != nil {
			return err
		}
	}
	if idx >= 0 {
		c, site := s.siteOf(idx)
		what = where + " is not finite at site " + site + ", component \"" + s.theory.Spec.Fields[c] + "\""
	}
	if s.kin != nil && s.kin.why != "" {
		what, s.kin.why = s.kin.why, ""
	}
	t := s.time
	if err := s.prog.Combine(s.phiB, kernels.Term{Coef: 1, X: s.ckptPhi}); err != nil {
		return err
	}
	if err := s.prog.Combine(s.velB, kernels.Term{Coef: 1, X: s.ckptVel}); err != nil {
		return err
	}
	s.time = ev.t0 + float64(ev.ckStep)*ev.dt
	if n := len(ev.hist); n > 0 {
		s.time = ev.hist[n-1].T
	}
	s.hostStale = true
	s.stiffOK = false
	stageName, advice := "leapfrog gradient", "try a smaller dt"
	switch {
	case ev.ad != nil:
		ev.ad.t = s.time
		stageName, advice = "RK45 stage", "the field's rate is not finite where the field is"
	case ev.cfg.Method != EvolveLeapfrog:
		stageName = "RK4 stage"
	}
	return errs.New(errs.Divergence, "the evolution diverged at step %d (t=%g, %s %d, dt=%g): %s; the field and velocity kept "+
		"are the last recorded ones, at step %d (t=%g); %s", ev.step, t, stageName, stage, ev.dt, what, ev.ckStep, s.time, advice)
}

// EvolveHistorySchema is a second-order evolution history's schema: step, t,
// kinetic, potential, energy (their sum), momentum_x (_y, _z as the lattice
// has axes), then each declared density's integral.
func EvolveHistorySchema(dim int, densities []string) *arrow.Schema {
	return EvolveHistorySchemaOf(EvolveRK4, dim, densities)
}

// EvolveHistorySchemaOf is the history schema of method: EvolveHistorySchema
// for the second-order methods; for the first-order ones the momentum columns
// give way to norm (GPE) or m_x, m_y, m_z (LLG), and kinetic is zero. An
// adaptive method (EvolveRK45) adds dt and rejected (EvolveHistorySchemaFor).
func EvolveHistorySchemaOf(method string, dim int, densities []string) *arrow.Schema {
	return EvolveHistorySchemaFor(method, method == EvolveRK45, dim, densities)
}

// EvolveHistorySchemaFor is EvolveHistorySchemaOf with adaptive steps or not:
// with them, dt (the controller's current step) and rejected (int64, the
// rejected steps so far) follow the method's columns, before the integrals.
func EvolveHistorySchemaFor(method string, adaptive bool, dim int, densities []string) *arrow.Schema {
	f64 := arrow.PrimitiveTypes.Float64
	fields := []arrow.Field{{Name: "step", Type: arrow.PrimitiveTypes.Int64}, {Name: "t", Type: f64},
		{Name: "kinetic", Type: f64}, {Name: "potential", Type: f64}, {Name: "energy", Type: f64}}
	for _, name := range historyExtras(method, dim) {
		fields = append(fields, arrow.Field{Name: name, Type: f64})
	}
	if adaptive {
		fields = append(fields, arrow.Field{Name: "dt", Type: f64}, arrow.Field{Name: "rejected", Type: arrow.PrimitiveTypes.Int64})
	}
	for _, d := range densities {
		fields = append(fields, arrow.Field{Name: d, Type: f64})
	}
	return arrow.NewSchema(fields, nil)
}

// historyExtras are the columns of method's history between energy and the
// integrals.
func historyExtras(method string, dim int) []string {
	switch method {
	case EvolveLLG:
		return []string{"m_x", "m_y", "m_z"}
	case EvolveGPE, EvolveGPEImaginary:
		return []string{"norm"}
	}
	var out []string
	for a := range dim {
		out = append(out, "momentum_"+string("xyz"[a]))
	}
	return out
}

// EvolveHistory returns the current evolution's rows from row from on as a
// RecordBatch in C memory; the caller releases it.
func (s *Simulation) EvolveHistory() (arrow.RecordBatch, error) { return s.EvolveHistoryFrom(0) }

// EvolveHistoryFrom is EvolveHistory from row from on.
func (s *Simulation) EvolveHistoryFrom(from int) (arrow.RecordBatch, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	dim := s.lat.Dim()
	method, adaptive := EvolveRK4, false
	var rows []EvolveRecord
	if s.evo != nil {
		rows, method, adaptive = s.evo.hist, s.evo.cfg.Method, s.evo.cfg.Adaptive
	}
	b := array.NewRecordBuilder(Allocator, EvolveHistorySchemaFor(method, adaptive, dim, s.theory.Spec.Densities))
	defer b.Release()
	if from < 0 || from > len(rows) {
		return nil, errs.New(errs.Parameter, "history row %d out of range (%d rows)", from, len(rows))
	}
	for _, r := range rows[from:] {
		b.Field(0).(*array.Int64Builder).Append(int64(r.Step))
		vals := []float64{r.T, r.Kinetic, r.Potential, r.Kinetic + r.Potential}
		switch method {
		case EvolveLLG:
			vals = append(vals, r.Magnetisation[:]...)
		case EvolveGPE, EvolveGPEImaginary:
			vals = append(vals, r.Norm)
		default:
			vals = append(vals, r.Momentum[:dim]...)
		}
		if adaptive {
			vals = append(vals, r.Dt)
		}
		for k, v := range vals {
			b.Field(1 + k).(*array.Float64Builder).Append(v)
		}
		next := 1 + len(vals)
		if adaptive {
			b.Field(next).(*array.Int64Builder).Append(int64(r.Rejected))
			next++
		}
		for k, v := range r.Integrals {
			b.Field(next + k).(*array.Float64Builder).Append(v)
		}
	}
	return s.withGaussColumns(b.NewRecordBatch(), rows[from:], method)
}

// EvolveRecords returns a copy of the current evolution's rows.
func (s *Simulation) EvolveRecords() []EvolveRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.evo == nil {
		return nil
	}
	return append([]EvolveRecord(nil), s.evo.hist...)
}

// TakeSnapshot hands out the oldest snapshot not yet taken (false when none);
// the caller releases its field.
func (s *Simulation) TakeSnapshot() (Snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.evo == nil || len(s.evo.snaps) == 0 {
		return Snapshot{}, false
	}
	sn := s.evo.snaps[0]
	s.evo.snaps = s.evo.snaps[1:]
	return sn, true
}

func (s *Simulation) releaseSnapshots() {
	if s.evo == nil {
		return
	}
	for _, sn := range s.evo.snaps {
		sn.Field.Release()
	}
	s.evo.snaps = nil
}

// MetaDynamics is the metadata key of a saved simulation whose velocity is a
// dynamical one (SetVelocity, Evolve): JSON {"time": the clock as an exact
// decimal}. Load restores it, so an Evolve after Load continues the motion
// and the clock; without it an Evolve starts at rest.
const MetaDynamics = "fieldgo.dynamics"

func (s *Simulation) dynamicsMeta() string {
	return `{"time": "` + strconv.FormatFloat(s.time, 'g', -1, 64) + `"}`
}

func (s *Simulation) loadDynamics(v string) error {
	var d struct {
		Time string `json:"time"`
	}
	if err := json.Unmarshal([]byte(v), &d); err != nil {
		return errs.Wrap(errs.Format, err, "bad dynamics state %q", v)
	}
	t, err := strconv.ParseFloat(d.Time, 64)
	if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
		return errs.New(errs.Format, "bad dynamics time %q", d.Time)
	}
	s.dynVel, s.time = true, t
	return nil
}

// endDynamics forgets the dynamical velocity and the clock: the field was
// set, or a flow started (which starts at rest).
func (s *Simulation) endDynamics() {
	s.releaseSnapshots()
	s.evo = nil
	s.dynVel = false
	s.time = 0
}
