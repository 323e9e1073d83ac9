// Package kernels is where fieldgo's code runs. A Backend compiles a theory's
// point source (docs/abi.md) together with the backend's kernel templates into a
// Program; a Program owns buffers and launches step-level operations on them:
// the gradient of a whole field with its reductions, linear combinations of
// fields (the stages of a flow), the constraint, densities.
//
// The flows themselves (arrested Newton flow, arrest tests, convergence,
// history) live in package core, which is handed a Backend and never imports a
// concrete one. Every operation works on whole fields, so a device backend can
// fuse, graph and reduce on the device without changing core.
//
// The trajectory workloads follow the same direction: their device contracts
// live here too (NBodyDevice for core/nbody, RadiationDevice for
// core/radiation, in plain slices and numbers), with the one Precision type
// every workload uses; kernels/cuda/gpunbody and kernels/cuda/gpuradiation
// implement them. No package under kernels/ imports a physics package
// (TestNoPhysicsImports).
package kernels

import "github.com/fieldgo/fieldgo/errs"

// Unit is a translation unit to compile: the theory's point source and the
// sizes it declares.
type Unit struct {
	Point   string // the C99 point source of docs/abi.md
	NComp   int    // FG_NCOMP
	NParams int    // FG_NPARAMS
	NDens   int    // FG_NDENS
	// ThreeD: the source's site has z derivatives (FG_DIM 3, docs/abi.md).
	// The CPU templates compile such a source, and the CUDA backend's grid
	// unit (kernels/src/cuda_site3d.cu, docs/kernels/grids.md).
	ThreeD bool
}

// Backend compiles Units into Programs.
type Backend interface {
	// Name identifies the backend ("cpu", "cuda").
	Name() string
	// Compile builds u. A compiler error is errs.Compile with the compiler's
	// log; a missing compiler or device is errs.Backend.
	Compile(u Unit) (Program, error)
}

// Grid is the lattice a kernel runs over (see core.Lattice). Site (i, j, k) is
// at (Ox + i*Hx, Oy + j*Hy, Oz + k*Hz) and at index (k*Ny + j)*Nx + i: i is
// fastest in memory, then j, then k. A planar grid (Dims 0 or 2) has one plane
// (Nz 0 or 1); a line (Dims 1) has Ny = 1 as well. The kernels take no
// derivative along an axis the grid does not have: the field is constant
// along it (a point source's dy on a line, dz on a plane, is zero).
type Grid struct {
	Nx, Ny   int
	Hx, Hy   float64
	Ox, Oy   float64
	Periodic bool // wrap every axis
	// Free is the natural (Neumann) boundary of the discrete energy: no site
	// is held, the energy sums over every site, and the stencils near the
	// edges use only in-box sites (kernels/src/cpu_kernels.c.tmpl). Only the
	// Consistent form is its gradient. Neither Periodic nor Free: "fixed",
	// the outer two layers are held and carry no energy.
	Free bool

	// Dims is the number of axes, 1, 2 or 3; 0 is 2 (a planar grid).
	Dims   int
	Nz     int // sites along z; 0 or 1 unless Dims is 3
	Hz, Oz float64
	// Wrap makes single axes (x, y, z) periodic, the others fixed; Periodic
	// wraps them all. Both backends run such grids (the CUDA backend in the
	// continuum form, docs/kernels/grids.md).
	Wrap [3]bool
}

// Dim is the number of axes of g: 1, 2 or 3.
func (g Grid) Dim() int {
	if g.Dims == 0 {
		return 2
	}
	return g.Dims
}

// Planes is the number of planes along z (1 unless g is three-dimensional).
func (g Grid) Planes() int {
	if g.Nz < 1 {
		return 1
	}
	return g.Nz
}

// Lines is the number of lines along x, Ny*Planes(): the row index of the
// per-row reductions runs over them, j fastest.
func (g Grid) Lines() int { return g.Ny * g.Planes() }

// Sites is Nx*Ny*Planes().
func (g Grid) Sites() int { return g.Nx * g.Ny * g.Planes() }

// Wraps reports whether axis a (0: x, 1: y, 2: z) is periodic.
func (g Grid) Wraps(a int) bool { return g.Periodic || g.Wrap[a] }

// Planar reports whether g is the planar grid every backend runs: two axes,
// one boundary for both.
func (g Grid) Planar() bool { return g.Dim() == 2 && g.Planes() == 1 && g.Wrap == [3]bool{} }

// CheckLaunch is what every backend checks before a launch on grid g with
// params for unit u: the stencils' smallest grid and the parameter count.
func (u Unit) CheckLaunch(g Grid, params []float64) error {
	switch d := g.Dim(); {
	case d == 1 && (g.Nx < 5 || g.Ny != 1 || g.Planes() != 1):
		return errs.New(errs.Lattice, "a line needs at least 5 sites and ny = nz = 1, got %d x %d x %d", g.Nx, g.Ny, g.Planes())
	case d == 2 && (g.Nx < 5 || g.Ny < 5 || g.Planes() != 1):
		return errs.New(errs.Lattice, "the stencils need at least 5 x 5 sites, got %d x %d", g.Nx, g.Ny)
	case d == 3 && (g.Nx < 5 || g.Ny < 5 || g.Nz < 5):
		return errs.New(errs.Lattice, "the stencils need at least 5 x 5 x 5 sites, got %d x %d x %d", g.Nx, g.Ny, g.Nz)
	case d < 1 || d > 3:
		return errs.New(errs.Lattice, "a grid has 1, 2 or 3 axes, not %d", d)
	}
	if g.Periodic && g.Free {
		return errs.New(errs.Lattice, "a grid is periodic or free, not both")
	}
	if g.Free && g.Wrap != [3]bool{} {
		return errs.New(errs.Lattice, "the free boundary is one for every axis: a grid is free or wraps axes one by one, not both")
	}
	if len(params) != u.NParams {
		return errs.New(errs.Parameter, "%d parameters given, the theory has %d", len(params), u.NParams)
	}
	return nil
}

// Form selects how the gradient is discretised.
type Form int

const (
	// Continuum evaluates the point source's fg_gradient (the continuum
	// Euler–Lagrange form) with fourth-order stencils at every site.
	Continuum Form = iota
	// Consistent is the exact gradient of the discrete energy the engine
	// reports (plus the doubler penalty), divided by hx*hy.
	Consistent
)

func (f Form) String() string {
	switch f {
	case Continuum:
		return "continuum"
	case Consistent:
		return "consistent"
	}
	return "unknown"
}

// GridChecker is implemented by a Program that runs only some grids (a
// boundary it does not implement). core asks it when a simulation is made, so
// the refusal comes before any work; the Program's operations refuse such a
// grid all the same.
type GridChecker interface {
	CheckGrid(g Grid) error
}

// Buffer is memory a Program's operations read and write: n float64 values,
// for a field C columns of nx*ny, x fastest.
type Buffer interface {
	Len() int
	// Upload copies the bound host memory to the backend, Download the
	// reverse; both are no-ops for a buffer without host memory and on
	// backends whose buffers are the host memory.
	Upload() error
	Download() error
	Release()
}

// GradientArgs describes one gradient evaluation.
type GradientArgs struct {
	Grid    Grid
	Form    Form
	Penalty float64   // doubler penalty c (Consistent only; 0 turns it off)
	Params  []float64 // dynamic parameters, spec order
	Project bool      // project onto the tangent space of a unit-vector field
	Phi     Buffer    // the field
	Shift   []Term    // at most 2: the field is Phi + these terms, formed as Combine would (nil: Phi)
	Vel     Buffer    // a velocity for the power v.g, or nil
	Out     Buffer    // the gradient per unit area; zero on held sites
	Energy  bool      // also compute the energy (needed for Reduction.Energy)
}

// Reduction holds the deterministic reductions of a gradient evaluation: the
// same bits for any thread count or block size.
type Reduction struct {
	Energy  float64 // the discrete energy (penalty included), when asked for
	MaxGrad float64 // max over sites and components of |Out|; NaN if any is not finite
	Power   float64 // sum over sites of Vel.Out (0 without Vel)
}

// Term is one term Coef*X of a linear combination.
type Term struct {
	Coef float64
	X    Buffer
}

// RateKind selects the per-site rate Program.Rate writes: the right-hand
// side of a first-order evolution phi' = F(phi) from the field and its
// gradient g = dE/dphi per unit cell.
type RateKind int

const (
	// RateLandauLifshitz: out = c1 n x g + c2 n x (n x g) over the first
	// three components that are not auxiliary (n: the field, g: the
	// gradient), the other components zero. With c1 = gamma/(1+alpha^2) and
	// c2 = alpha c1 it is the Landau-Lifshitz form of the LLG equation with
	// the effective field H = -g.
	RateLandauLifshitz RateKind = iota
	// RateSchrodinger: the components pair up as (re, im) = (2m, 2m+1) and
	// out = (c2 - i c1) g per pair, that is out_re = c2 g_re + c1 g_im,
	// out_im = c2 g_im - c1 g_re (an auxiliary component of a pair and an
	// unpaired last component zero). c1 = 1/2, c2 = 0 is the
	// Gross-Pitaevskii equation in real time, c1 = 0, c2 = -1/2 in imaginary
	// time (docs/dynamics_first_order.md). The field is not read.
	RateSchrodinger
)

func (k RateKind) String() string {
	switch k {
	case RateLandauLifshitz:
		return "landau-lifshitz"
	case RateSchrodinger:
		return "schrodinger"
	}
	return "unknown"
}

// Program is a compiled Unit. Its operations are synchronous: when one
// returns, its outputs are in the buffers (for a device backend: on the
// device; Download brings them to the host).
type Program interface {
	// NewBuffer allocates n zeroed values of backend memory.
	NewBuffer(n int) (Buffer, error)
	// Bind makes a Buffer over host memory that must be C memory (not the Go
	// heap) and outlive the buffer. A host backend uses it in place; a device
	// backend mirrors it (Upload/Download).
	Bind(host []float64) (Buffer, error)

	// Gradient evaluates the gradient of a.Phi into a.Out with its reductions.
	Gradient(a GradientArgs) (Reduction, error)
	// Combine sets out = sum of the terms, elementwise (out may be one of
	// them); with no terms it zeroes out.
	Combine(out Buffer, terms ...Term) error
	// Constrain normalises phi to a unit vector at every site that is not
	// held and projects vel onto the tangent space there.
	Constrain(g Grid, phi, vel Buffer) error
	// Project removes from x, at every site that is not held, its part along
	// the unit vector phi/|phi| (the constrained components; phi is read,
	// not written).
	Project(g Grid, phi, x Buffer) error
	// Density writes density k of phi (k < 0: the energy density e; k >= 0:
	// the point source's fg_density(k)) into out (nil: not written) and
	// returns its integral, hx*hy times the sum over the energy's sites.
	Density(g Grid, params []float64, phi Buffer, k int, out Buffer) (float64, error)
	// FirstNonFinite returns the index of the first NaN or Inf in b, or -1.
	FirstNonFinite(b Buffer) (int, error)
	// Dot returns the sum over elements of a*b (b may be a), reduced in a
	// fixed order: the same bits for any thread count or block size.
	Dot(a, b Buffer) (float64, error)
	// MaxAbs returns the largest |value| in b, NaN if any value is NaN.
	MaxAbs(b Buffer) (float64, error)
	// FillRandom sets element e of b to RandomValue(seed, e), stored in the
	// buffer's precision.
	FillRandom(b Buffer, seed uint64) error
	// CombineDots sets out = the sum of the terms as Combine does; when phi is
	// not nil it then projects out as Project(g, phi, out) does; and it
	// returns out.out and out.y (0 when y is nil), summed in a fixed order.
	// It is one pass over the lattice where Combine, Project and two Dots are
	// four: the stiffness estimate's Lanczos step is bound by these passes.
	CombineDots(g Grid, phi, out, y Buffer, terms ...Term) (oo, oy float64, err error)
	// Rate writes the per-site rate of kind (RateKind) from the field phi
	// and its gradient grad into out at every site that is not held (zero on
	// held sites): the right-hand side of a first-order evolution. out must
	// be neither phi nor grad.
	Rate(g Grid, kind RateKind, phi, grad, out Buffer, c1, c2 float64) error

	Close() error
}
