package core

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// DefaultPenalty is the doubler penalty coefficient c of the consistent form:
// W = (c/2) sum over sites and components of (d4x phi)^2 + (d4y phi)^2, with the
// undivided stencil d4 = [1, -4, 6, -4, 1]. W is O(h^6) per unit area for
// smooth fields and lifts the checkerboard modes central differences miss.
const DefaultPenalty = 1.0 / 64

// Options configure a Simulation; the zero value picks the defaults.
type Options struct {
	// Form is "continuum", "consistent" or "" for the theory family's
	// default (DefaultForm).
	Form string
	// Penalty is the doubler penalty c of the consistent form; 0 means
	// DefaultPenalty. NoPenalty turns it off (the plain discrete energy).
	Penalty   float64
	NoPenalty bool
	// Precision is the storage precision of the working buffers: "" or
	// Float64, or Float32 on a backend that offers it (StorageCompiler: the
	// CUDA and CPU backends). See Simulation.Precision.
	Precision string
}

// Storage precisions (Options.Precision).
const (
	Float64 = "float64"
	Float32 = "float32"
)

// StorageCompiler is implemented by a backend that can keep a simulation's
// working buffers (field, velocity, stage gradients) in another precision
// than float64, computing in float64 all the same (kernels/cuda and
// kernels/cpu: float32 storage). Backends without it store and compute in
// float64 only.
type StorageCompiler interface {
	CompileStorage(u kernels.Unit, precision string) (kernels.Program, error)
}

// compile builds theory for backend with the storage precision asked for.
func compile(backend kernels.Backend, theory *Theory, precision string) (kernels.Program, string, error) {
	switch precision {
	case "", Float64:
		p, err := backend.Compile(theory.unit())
		return p, Float64, err
	case Float32:
		sc, ok := backend.(StorageCompiler)
		if !ok {
			return nil, "", errs.New(errs.Backend, "precision \"float32\" (float32 storage, float64 arithmetic) is not offered by "+
				"the %s backend, which stores and computes in float64: use precision \"float64\"", backend.Name())
		}
		p, err := sc.CompileStorage(theory.unit(), Float32)
		return p, Float32, err
	}
	return nil, "", errs.New(errs.Parameter, "unknown precision %q: use %q or %q", precision, Float64, Float32)
}

// DefaultForm is the gradient form chosen for a theory by measurement
// (docs/convergence.md): the continuum form. With the power arrest it
// reached max|grad| < 1e-8 fastest on both measured families (Baby Skyrme:
// 736 steps, energy 2.2e-7 from soliton_solver's; Abelian Higgs at h = 0.2:
// 9,381 steps), at half the cost per step of the consistent form, which
// loses the Abelian Higgs vortex. The consistent form stays available.
func DefaultForm(t *Theory) kernels.Form {
	_ = t // one default for every family measured so far
	return kernels.Continuum
}

// ParseForm turns "continuum"/"consistent" into a kernels.Form.
func ParseForm(s string) (kernels.Form, error) {
	switch s {
	case "continuum":
		return kernels.Continuum, nil
	case "consistent":
		return kernels.Consistent, nil
	}
	return 0, errs.New(errs.Parameter, "unknown gradient form %q: use \"continuum\" or \"consistent\"", s)
}

// Simulation is a theory on a lattice with a field, a velocity and a flow. Its
// methods are safe for concurrent use, one at a time; Cancel may be called
// while another method runs.
type Simulation struct {
	mu      sync.Mutex
	backend kernels.Backend
	prog    kernels.Program
	theory  *Theory
	lat     Lattice
	grid    kernels.Grid
	params  []float64
	form    kernels.Form
	penalty float64
	prec    string // storage precision: Float64 or Float32

	compileTime time.Duration // Compile: kernel source to a loaded program

	phi, vel   *Field // host C memory, visible through Arrow
	phiB, velB kernels.Buffer
	g          [4]kernels.Buffer // stage gradients
	trial      kernels.Buffer
	ckptPhi    kernels.Buffer // last checked state, restored on divergence
	ckptVel    kernels.Buffer
	lz         *lanczosBuffers // the stiffness estimate's vectors, once used
	hostStale  bool            // phi and vel may be behind phiB and velB (see syncHost)
	stiff      float64         // the last stiffness estimate, when stiffOK
	stiffOK    bool            // the field has changed only by flows since, with the same parameters

	flow *flowState
	dev  *devFlow // the device flow (kernels.Stepper), if prepared

	// Dynamics (evolve.go): the current evolution, the unit-vector RK4's host
	// buffers, whether the velocity is a dynamical one (set by SetVelocity or
	// left by an evolution, so the next evolution continues from it) and the
	// clock.
	evo     *evolution
	evoHost *evolveHost
	evoAdpt *adaptiveBuffers // the adaptive steps' stage and state buffers, once an evolution needed them
	gauss   *gaussState      // the Gauss law's phase-space unit, once an evolution needed it
	kin     *kineticState    // the kinetic density's unit, once an evolution needed it
	dynVel  bool
	time    float64
	cancel  atomic.Bool
	closed  bool
}

// NewSimulation compiles theory on backend and allocates a zero field on lat.
// params are the theory's dynamic parameters in spec order.
func NewSimulation(backend kernels.Backend, theory *Theory, lat Lattice, params []float64, opt Options) (*Simulation, error) {
	if backend == nil {
		return nil, errs.New(errs.Backend, "no backend")
	}
	if err := lat.Validate(); err != nil {
		return nil, err
	}
	if lat.Nx < 5 || (lat.Dim() >= 2 && lat.Ny < 5) || (lat.Dim() == 3 && lat.Nz < 5) {
		need := "5 x 5"
		switch lat.Dim() {
		case 1:
			need = "5"
		case 3:
			need = "5 x 5 x 5"
		}
		return nil, errs.New(errs.Lattice, "the fourth-order stencils need at least %s sites, got %s", need, lat.Shape())
	}
	s := &Simulation{backend: backend, theory: theory, lat: lat}
	s.grid = lat.Grid()
	if err := s.setParams(params); err != nil {
		return nil, err
	}
	s.form = DefaultForm(theory)
	if lat.Boundary == Free {
		// The free boundary is the natural boundary of the discrete energy,
		// so its gradient is that energy's (kernels.Grid.Free).
		s.form = kernels.Consistent
	}
	if opt.Form != "" {
		f, err := ParseForm(opt.Form)
		if err != nil {
			return nil, err
		}
		if lat.Boundary == Free && f == kernels.Continuum {
			return nil, errs.New(errs.Parameter, "the free boundary needs the consistent gradient form (the exact gradient of "+
				"its energy), not the continuum form, whose expression at an edge site is the derivative of no energy: "+
				"leave the form to its default or use \"consistent\"")
		}
		s.form = f
	}
	s.penalty = DefaultPenalty
	if opt.Penalty != 0 {
		if !(opt.Penalty > 0) || math.IsInf(opt.Penalty, 0) {
			return nil, errs.New(errs.Parameter, "penalty must be positive and finite, got %v", opt.Penalty)
		}
		s.penalty = opt.Penalty
	}
	if opt.NoPenalty || s.form == kernels.Continuum {
		s.penalty = 0
	}
	t0 := time.Now()
	prog, prec, err := compile(backend, theory, opt.Precision)
	if err != nil {
		return nil, err
	}
	s.prog, s.prec, s.compileTime = prog, prec, time.Since(t0)
	if gc, ok := prog.(kernels.GridChecker); ok {
		if err := gc.CheckGrid(s.grid); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.allocate(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Simulation) allocate() error {
	var err error
	names := s.theory.Spec.Fields
	if s.phi, err = NewField(s.lat, names); err != nil {
		return err
	}
	if s.vel, err = NewField(s.lat, names); err != nil {
		return err
	}
	if s.phiB, err = s.prog.Bind(flat(s.phi)); err != nil {
		return err
	}
	if s.velB, err = s.prog.Bind(flat(s.vel)); err != nil {
		return err
	}
	n := len(names) * s.lat.Sites()
	for _, b := range []*kernels.Buffer{&s.g[0], &s.g[1], &s.g[2], &s.g[3], &s.trial, &s.ckptPhi, &s.ckptVel} {
		if *b, err = s.prog.NewBuffer(n); err != nil {
			return err
		}
	}
	return nil
}

// flat is all components of a NewField as one slice (they are contiguous).
func flat(f *Field) []float64 {
	n := f.lat.Sites() * len(f.cols)
	return unsafe.Slice(unsafe.SliceData(f.cols[0]), n)
}

func (s *Simulation) setParams(p []float64) error {
	if len(p) != len(s.theory.Spec.Params) {
		return errs.New(errs.Parameter, "theory %q takes %d parameters %v, got %d", s.theory.Spec.Name, len(s.theory.Spec.Params), s.theory.Spec.Params, len(p))
	}
	for k, v := range p {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errs.New(errs.Parameter, "parameter %q is %v", s.theory.Spec.Params[k], v)
		}
	}
	s.params = append([]float64(nil), p...)
	return nil
}

func (s *Simulation) lock() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errs.New(errs.Released, "the simulation has been closed")
	}
	return nil
}

// SetParams changes the dynamic parameters (no recompilation).
func (s *Simulation) SetParams(p []float64) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.stiffOK = false
	return s.setParams(p)
}

// FieldWritten tells the simulation that its field was written other than
// by its own methods (through a zero-copy view of the host field on the CPU
// backend, or of the device buffer): the next flow estimates the stiffness
// anew instead of keeping the previous flow's estimate, and the next read of
// the host field downloads the backend's buffers again.
func (s *Simulation) FieldWritten() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stiffOK = false
	s.hostStale = true
}

// Params returns the dynamic parameters in spec order.
func (s *Simulation) Params() []float64 { return append([]float64(nil), s.params...) }

// Theory, Lattice, Form and Penalty describe the simulation.
func (s *Simulation) Theory() *Theory          { return s.theory }
func (s *Simulation) Lattice() Lattice         { return s.lat }
func (s *Simulation) Form() kernels.Form       { return s.form }
func (s *Simulation) Penalty() float64         { return s.penalty }
func (s *Simulation) Backend() kernels.Backend { return s.backend }

// Program is the compiled program the simulation runs (for backends that
// describe their kernels).
func (s *Simulation) Program() kernels.Program { return s.prog }

// Precision is the storage precision of the working buffers on the backend:
// Float64, or Float32: the field, the velocity and the stage gradients are
// stored as float32 (on a GPU in float32 memory; on the CPU as float32 values
// in the float64 memory the host field views, no memory or time saved), every site
// computation and reduction runs in float64, and results are rounded to
// float32 when stored. The host field (Field, Save) is float64 all the same:
// the float32 values, widened exactly; SetField and Fill round to float32.
// Fields computed on the device (Density, Gradient) are stored, so rounded,
// in float32 too; Energy, Integral and a flow's energy and max|grad| are
// float64 reductions of float64 site values.
func (s *Simulation) Precision() string { return s.prec }

// CompileTime is how long NewSimulation took to turn the theory into a loaded
// program (code generation, the backend's compiler or its disk cache,
// loading); the program says whether it came from the cache (Cached, on the
// CPU and CUDA backends). The time to a first step is this, the trace before
// it and the step.
func (s *Simulation) CompileTime() time.Duration { return s.compileTime }

// Epsilon is the unit roundoff of the storage precision: 2^-24 for float32,
// 2^-53 for float64.
func (s *Simulation) Epsilon() float64 {
	if s.prec == Float32 {
		return 0x1p-24
	}
	return 0x1p-53
}

// GradientFloor estimates the smallest max|dE/dphi| a flow can resolve in
// the storage precision: rounding each stored value by at most eps*|phi|
// moves the fourth-order Laplacian by up to (64/12)(1/hx^2 + 1/hy^2) eps
// max(1, max|phi|) (the stencil's absolute weights 1+16+30+16+1 over 12 h^2,
// per direction), and a gradient of the field's own rounding noise is all
// the flow can see below that. A theory whose second-derivative coefficients
// are far from 1 shifts it by that factor. In float64 it is some 1e-13/h^2,
// out of reach of any tolerance in use; in float32 (2^-24) it is 1e-4 at
// h = 0.08. The floors measured on the H200 (Baby Skyrme and Abelian Higgs
// at 256^2, 512^2 and 1024^2, docs/performance/gpu.md) were 0.52-1.16 of it, so
// tolerances of twice the estimate are reached; below that a Minimize may run
// to MaxSteps and report Converged = false. It reads the current field.
func (s *Simulation) GradientFloor() (float64, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	return s.gradientFloor()
}

func (s *Simulation) gradientFloor() (float64, error) {
	m, err := s.prog.MaxAbs(s.phiB)
	if err != nil {
		return 0, err
	}
	inv := 1 / (s.lat.Hx * s.lat.Hx)
	if s.lat.Dim() >= 2 {
		inv += 1 / (s.lat.Hy * s.lat.Hy)
	}
	if s.lat.Dim() == 3 {
		inv += 1 / (s.lat.Hz * s.lat.Hz)
	}
	return 64.0 / 12 * inv * s.Epsilon() * math.Max(m, 1), nil
}

// FieldBuffer is the backend buffer holding the simulation's current field
// (between calls: after Advance returns, the device flow has put the state
// back in it). With kernels/cuda, (*cuda.Program).DeviceArray(FieldBuffer())
// gives its device pointer, length and element type ("float64" or
// "float32"). It stays valid until Close.
func (s *Simulation) FieldBuffer() (kernels.Buffer, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	return s.phiB, nil
}

// Field is the simulation's field, shared (not copied): it stays valid until
// Close and changes as the flow runs. Export it with Record for zero-copy views.
func (s *Simulation) Field() (*Field, error) { return s.shared(false) }

// Velocity is the flow's velocity, shared like Field.
func (s *Simulation) Velocity() (*Field, error) { return s.shared(true) }

// shared brings the field (or the velocity) up to date from its device
// buffer and returns it; the fields are read under the lock.
func (s *Simulation) shared(velocity bool) (*Field, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if err := s.syncHost(); err != nil {
		return nil, err
	}
	if velocity {
		return s.vel, nil
	}
	return s.phi, nil
}

// syncHost brings the host field and velocity up to date with the backend's
// buffers when an operation on the backend may have changed them since.
func (s *Simulation) syncHost() error {
	if !s.hostStale {
		return nil
	}
	if err := s.phiB.Download(); err != nil {
		return err
	}
	if err := s.velB.Download(); err != nil {
		return err
	}
	s.hostStale = false
	return nil
}

// SetField copies f (same size and component count) into the field. A
// unit-vector field is normalised at the sites that are not held. It ends
// the current flow and zeroes the velocity. A NaN or Inf is refused.
func (s *Simulation) SetField(f *Field) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.phi.CopyFrom(f); err != nil {
		return err
	}
	return s.fieldChanged()
}

// Fill sets the field from fn(x, y, out), out having one slot per component,
// like SetField.
func (s *Simulation) Fill(fn func(x, y float64, out []float64)) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if !s.lat.Planar() {
		return errs.New(errs.Lattice, "Fill takes f(x, y) on a planar lattice; set the field of a %dD lattice with SetField", s.lat.Dim())
	}
	out := make([]float64, s.phi.NComp())
	for j := 0; j < s.lat.Ny; j++ {
		for i := 0; i < s.lat.Nx; i++ {
			for c := range out {
				out[c] = 0
			}
			fn(s.lat.X(i), s.lat.Y(j), out)
			for c := range out {
				s.phi.cols[c][j*s.lat.Nx+i] = out[c]
			}
		}
	}
	return s.fieldChanged()
}

func (s *Simulation) fieldChanged() error {
	s.stiffOK = false
	s.endDynamics()
	for c := range s.vel.cols {
		clear(s.vel.cols[c])
	}
	s.flow = nil
	if err := s.phiB.Upload(); err != nil {
		return err
	}
	if err := s.velB.Upload(); err != nil {
		return err
	}
	s.hostStale = false
	if err := s.refuseNonFinite(); err != nil {
		return err
	}
	if s.theory.UnitVector() {
		s.hostStale = true // normalised on the backend
		return s.prog.Constrain(s.grid, s.phiB, s.velB)
	}
	return nil
}

// refuseNonFinite reports a NaN or Inf in the field, naming the site.
func (s *Simulation) refuseNonFinite() error {
	idx, err := s.prog.FirstNonFinite(s.phiB)
	if err != nil || idx < 0 {
		return err
	}
	c, site := s.siteOf(idx)
	if err := s.phiB.Download(); err != nil {
		return err
	}
	return errs.New(errs.Parameter, "the field is %v at site %s, component %q: a flow needs finite values",
		s.phi.cols[c][idx%s.lat.Sites()], site, s.theory.Spec.Fields[c])
}

// siteOf is the component of buffer index idx and its site as "(i, j)" (or
// "(i)", "(i, j, k)" as the lattice has axes).
func (s *Simulation) siteOf(idx int) (c int, site string) {
	n := s.lat.Sites()
	c, at := idx/n, idx%n
	i, j, k := at%s.lat.Nx, (at/s.lat.Nx)%s.lat.Ny, at/(s.lat.Nx*s.lat.Ny)
	switch s.lat.Dim() {
	case 1:
		return c, "(" + itoa(i) + ")"
	case 3:
		return c, "(" + itoa(i) + ", " + itoa(j) + ", " + itoa(k) + ")"
	}
	return c, "(" + itoa(i) + ", " + itoa(j) + ")"
}

func (s *Simulation) gradArgs(phi, vel, out kernels.Buffer, energy, project bool) kernels.GradientArgs {
	return kernels.GradientArgs{Grid: s.grid, Form: s.form, Penalty: s.penalty, Params: s.params,
		Project: project, Phi: phi, Vel: vel, Out: out, Energy: energy}
}

// Energy is the discrete energy hx*hy*sum(e) over the energy's sites (all of
// them when periodic or free, all but the two held layers when fixed), plus the
// doubler penalty W when the consistent form uses one. The consistent
// gradient is its exact gradient. Deterministic bit for bit.
func (s *Simulation) Energy() (float64, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	r, err := s.prog.Gradient(s.gradArgs(s.phiB, nil, s.trial, true, false))
	return r.Energy, err
}

// Integral is hx*hy times the sum of a declared density ("energy" for the
// energy density without the penalty) over the energy's sites.
func (s *Simulation) Integral(name string) (float64, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	k, err := s.theory.DensityIndex(name)
	if err != nil {
		return 0, err
	}
	return s.prog.Density(s.grid, s.params, s.phiB, k, nil)
}

// Density returns a declared density (or "energy") as a new one-component
// field named name, zero on held sites. The caller releases it.
func (s *Simulation) Density(name string) (*Field, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	k, err := s.theory.DensityIndex(name)
	if err != nil {
		return nil, err
	}
	f, err := NewField(s.lat, []string{name})
	if err != nil {
		return nil, err
	}
	b, err := s.prog.Bind(f.cols[0])
	if err == nil {
		_, err = s.prog.Density(s.grid, s.params, s.phiB, k, b)
		if err == nil {
			err = b.Download()
		}
		b.Release()
	}
	if err != nil {
		f.Release()
		return nil, err
	}
	return f, nil
}

// Gradient returns dE/dphi per unit area in the simulation's form as a new
// field (projected onto the tangent space when project is true and the theory
// is a unit-vector one), zero on held sites. The caller releases it.
func (s *Simulation) Gradient(project bool) (*Field, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	f, err := NewField(s.lat, s.theory.Spec.Fields)
	if err != nil {
		return nil, err
	}
	b, err := s.prog.Bind(flat(f))
	if err == nil {
		_, err = s.prog.Gradient(s.gradArgs(s.phiB, nil, b, false, project && s.theory.UnitVector()))
		if err == nil {
			err = b.Download()
		}
		b.Release()
	}
	if err != nil {
		f.Release()
		return nil, err
	}
	return f, nil
}

// Cancel asks a running Advance or Minimize to stop at the next kernel
// boundary; it returns errs.Cancelled and the flow can be continued.
func (s *Simulation) Cancel() { s.cancel.Store(true) }

// Close releases the field, the buffers and the compiled program. Fields
// exported earlier stay valid until their consumers release them.
func (s *Simulation) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.closeDeviceFlow()
	s.endDynamics()
	if s.evoHost != nil {
		s.evoHost.release()
	}
	if s.evoAdpt != nil {
		s.evoAdpt.release()
	}
	if s.gauss != nil {
		s.gauss.release()
	}
	if s.kin != nil {
		s.kin.release()
	}
	if s.lz != nil {
		s.lz.release()
	}
	for _, b := range []kernels.Buffer{s.phiB, s.velB, s.g[0], s.g[1], s.g[2], s.g[3], s.trial, s.ckptPhi, s.ckptVel} {
		if b != nil {
			b.Release()
		}
	}
	for _, f := range []*Field{s.phi, s.vel} {
		if f != nil {
			f.Release()
		}
	}
	if s.prog != nil {
		return s.prog.Close()
	}
	return nil
}
