package kernels

import "sync/atomic"

// Stepper is optionally implemented by a Program that can run a whole
// arrested Newton flow step on its own, with no host round trip per step: the
// stage-1 gradient with its reductions, the arrest decision and the
// convergence test, the RK4 stages and the final update (with the unit-vector
// constraint) all stay on the device, and the host reads where the flow
// stands only every few steps. core uses it when the Program offers one and
// keeps its own step loop otherwise; the math is the same (classic RK4 on
// phi” = -dE/dphi, velocity zeroed by the arrest test).
type Stepper interface {
	// NewFlow prepares a flow over spec's buffers. A Program that cannot run
	// spec (a form or setting it does not fuse) returns an error and the
	// caller steps on the host.
	NewFlow(spec FlowSpec) (Flow, error)
}

// FlowSpec is what a device flow needs: the gradient's settings, the flow's
// settings and the buffers it updates. Phi and Vel are updated in place; G
// receives the stage gradients g1..g4 (G[0] is the stage-1 gradient at the
// step's field), so that a caller can name the site where a stage went
// non-finite.
type FlowSpec struct {
	Grid       Grid
	Form       Form
	Penalty    float64
	Params     []float64
	UnitVector bool // project the gradients, normalise phi and project v

	Dt           float64
	Tol          float64 // converged when max|grad| < Tol at stage 1
	EnergyArrest bool    // arrest when the energy rose; else when v.g > 0
	// NoArrest: never arrest, the velocity is kept: classic RK4 on
	// phi'' = -dE/dphi, the second-order dynamics of evolve (with Tol 0,
	// which max|grad| never undercuts, the run stops only at its step limit).
	NoArrest bool

	Phi, Vel Buffer
	G        [4]Buffer
}

// FlowState is the part of a flow's state that lives outside the buffers.
type FlowState struct {
	Step       int
	Resets     int
	PrevEnergy float64 // stage-1 energy of the previous step (+Inf before the first)
}

// FlowRecord is one step's stage-1 reductions: the flow's history row.
type FlowRecord struct {
	Step    int
	Energy  float64
	MaxGrad float64
	Resets  int // before this step's arrest
}

// FlowStop says why a Run ended before its step limit.
type FlowStop int

const (
	FlowRunning   FlowStop = iota // not stopped: the step limit was reached or the run cancelled
	FlowConverged                 // max|grad| < Tol at the start of State.Step (that step not taken)
	FlowNonFinite                 // a gradient went non-finite in RK4 stage Stage of step State.Step (not taken)
)

// FlowResult is where a Run left the flow.
type FlowResult struct {
	State     FlowState
	Taken     int          // steps taken by this Run
	Stop      FlowStop     // why it stopped, FlowRunning if it did not
	Stage     int          // FlowNonFinite: the RK4 stage (1..4) whose gradient was not finite
	Cancelled bool         // the run ended because cancel was set
	Records   []FlowRecord // stage-1 records of every step evaluated, in order
}

// Flow is a flow prepared on a device.
type Flow interface {
	// Run continues the flow from state st for at most maxSteps steps. For
	// each step it evaluates stage 1 at the current field; it stops without
	// taking the step when converged or non-finite, else takes it. The host
	// looks at the device every pollEvery steps (0: the Flow's choice); when
	// cancel is set there it stops launching steps, and returns with the
	// steps already launched completed, the buffers consistent. The same
	// state and buffers give the same bits, however the steps are split
	// into Runs.
	Run(st FlowState, maxSteps, pollEvery int, cancel *atomic.Bool) (FlowResult, error)
	// Describe says how the flow runs (graph or plain launches, shapes).
	Describe() string
	Close() error
}
