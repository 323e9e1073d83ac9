package core

import (
	"math"
	"sync"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/par"
	"github.com/fieldgo/fieldgo/kernels"
)

// A kinetic density other than |phi'|^2/2: L = sum over sites of
// cell (K(phi, dphi, v) - e(phi)) with K = v.M(phi, dphi).v/2 a quadratic form
// in the velocity v = phi' (the Skyrme term's time derivatives, a sigma-model
// metric). Its Euler-Lagrange equation, solved for the acceleration a per
// site, is
//
//	M a = R - g,   R = dK/dphi - (dM/dt) v,   g = dE/dphi,
//
// with (dM/dt) v the momentum p = M v's time derivative at fixed a. Under the
// unit-vector constraint the constraint force lambda phi joins the right
// side and phi.a = -|v|^2 fixes lambda: the (n+1)-square system
// [M phi; phi^T 0] (a, -lambda) = (R - g, -|v|^2) per site, which needs M
// positive on the tangent space only. The conserved energy is the cell sum
// of K plus E; the momentum density is p.
//
// The theory's point source carries a kinetic unit (Theory.KineticUnit,
// python/fieldgo/frontend/kinetic.py): C = n + n(n+1)/2 components (the
// field's n, the velocities' n, then columns it never reads) whose energy
// density is K and whose gradient is (R, M's upper triangle row by row). Its
// gradient kernel, in the continuum form on the simulation's backend, gives
// every R and M entry of a stage in one pass over the lattice, and its energy
// reduction the cell sum of K; the small systems are solved on the host
// (where a CPU backend's buffers are; a GPU's stage costs a download and an
// upload of the field, the velocity, the gradient and the unit's output).

const kineticPrefix = "//fg-kinetic| "

// KineticUnit is the point source of the theory's kinetic density
// (docs/abi.md), or "" when it has none.
func (t *Theory) KineticUnit() string { return t.embedded(kineticPrefix) }

// HasKineticDensity reports whether the theory declares a kinetic density.
func (t *Theory) HasKineticDensity() bool { return t.Spec.KineticDensity }

// kineticComponents is the kinetic unit's component count C for n fields:
// its gradient holds R (n) and M's upper triangle (n(n+1)/2).
func kineticComponents(n int) int { return n + n*(n+1)/2 }

func (t *Theory) kineticUnit() kernels.Unit {
	src := t.KineticUnit()
	return kernels.Unit{Point: src, NComp: kineticComponents(len(t.Spec.Fields)), NParams: len(t.Spec.Params),
		ThreeD: fgDim3.MatchString(src)}
}

// kineticState is the compiled kinetic unit and its buffers.
type kineticState struct {
	prog       kernels.Program
	ps         *Field         // host: the field, the velocity, then columns the unit never reads
	psB        kernels.Buffer // ps on prog's backend
	phiB, velB kernels.Buffer // ps's first 2n columns on the simulation's Program
	out        *Field         // host: R, then M's upper triangle
	outB       kernels.Buffer // out on prog's backend
	g          *Field         // host: dE/dphi, then minus the acceleration (or the momentum density)
	gB         kernels.Buffer // g on the simulation's Program
	held       []bool         // the sites the lattice holds (nil: none)
	why        string         // why the last solve failed (a site's mass matrix), "" if it did not
}

func (k *kineticState) release() {
	for _, b := range []kernels.Buffer{k.psB, k.phiB, k.velB, k.outB, k.gB} {
		if b != nil {
			b.Release()
		}
	}
	for _, f := range []*Field{k.ps, k.out, k.g} {
		if f != nil {
			f.Release()
		}
	}
	if k.prog != nil {
		_ = k.prog.Close()
	}
}

// kineticProgram compiles the kinetic unit once per simulation.
func (s *Simulation) kineticProgram() (*kineticState, error) {
	if s.kin != nil {
		return s.kin, nil
	}
	fields := s.theory.Spec.Fields
	n, sites := len(fields), s.lat.Sites()
	c := kineticComponents(n)
	names, outNames := make([]string, c), make([]string, c)
	for i := range c {
		switch {
		case i < n:
			names[i], outNames[i] = fields[i], "r_"+fields[i]
		case i < 2*n:
			names[i] = fields[i-n] + "_t"
		default:
			names[i] = "unread_" + itoa(i-2*n)
		}
		if i >= n {
			a, b := kineticPair(n, i-n)
			outNames[i] = "m_" + itoa(a) + "_" + itoa(b)
		}
	}
	k := &kineticState{}
	var err error
	if k.prog, err = s.backend.Compile(s.theory.kineticUnit()); err == nil {
		if k.ps, err = NewField(s.lat, names); err == nil {
			if k.out, err = NewField(s.lat, outNames); err == nil {
				k.g, err = NewField(s.lat, fields)
			}
		}
	}
	if err == nil {
		all := flat(k.ps)
		if k.psB, err = k.prog.Bind(all); err == nil {
			if k.phiB, err = s.prog.Bind(all[:n*sites]); err == nil {
				if k.velB, err = s.prog.Bind(all[n*sites : 2*n*sites]); err == nil {
					if k.outB, err = k.prog.Bind(flat(k.out)); err == nil {
						k.gB, err = s.prog.Bind(flat(k.g))
					}
				}
			}
		}
	}
	if err != nil {
		k.release()
		return nil, err
	}
	for i := range sites {
		if s.held(i%s.lat.Nx, (i/s.lat.Nx)%s.lat.Ny, i/(s.lat.Nx*s.lat.Ny)) {
			if k.held == nil {
				k.held = make([]bool, sites)
			}
			k.held[i] = true
		}
	}
	s.kin = k
	return k, nil
}

// kineticPair is the (row, column) of entry m of M's upper triangle, row by row.
func kineticPair(n, m int) (a, b int) {
	for a = 0; a < n; a++ {
		if m < n-a {
			return a, a + m
		}
		m -= n - a
	}
	return -1, -1
}

// kineticUnitAt loads phi + shift and the velocity vel into the unit's
// columns, writes the simulation's gradient dE/dphi there (k.g, host) when
// grad, and evaluates the unit (k.out, host); it returns the cell sum of K.
func (s *Simulation) kineticUnitAt(k *kineticState, phi kernels.Buffer, shift, vel []kernels.Term, grad bool) (float64, error) {
	if err := s.prog.Combine(k.phiB, append([]kernels.Term{{Coef: 1, X: phi}}, shift...)...); err != nil {
		return 0, err
	}
	if err := s.prog.Combine(k.velB, vel...); err != nil {
		return 0, err
	}
	if grad {
		if _, err := s.prog.Gradient(s.gradArgs(k.phiB, nil, k.gB, false, false)); err != nil {
			return 0, err
		}
		if err := k.gB.Download(); err != nil {
			return 0, err
		}
	}
	for _, b := range []kernels.Buffer{k.phiB, k.velB} {
		if err := b.Download(); err != nil {
			return 0, err
		}
	}
	if err := k.psB.Upload(); err != nil {
		return 0, err
	}
	r, err := k.prog.Gradient(kernels.GradientArgs{Grid: s.grid, Form: kernels.Continuum, Params: s.params,
		Phi: k.psB, Out: k.outB, Energy: !grad})
	if err != nil {
		return 0, err
	}
	return r.Energy, k.outB.Download()
}

// kineticStage writes m = -a(phi + shift, vel) into out: minus the
// acceleration the kinetic density gives at the stage field and velocity. A
// site whose system cannot be solved (M not positive definite, or not on the
// tangent space) gets NaN, which ends the evolution as a divergence naming
// the site and why (k.why).
func (s *Simulation) kineticStage(phi kernels.Buffer, shift, vel []kernels.Term, out kernels.Buffer) (float64, error) {
	k, err := s.kineticProgram()
	if err != nil {
		return 0, err
	}
	if _, err := s.kineticUnitAt(k, phi, shift, vel, true); err != nil {
		return 0, err
	}
	n := len(s.theory.Spec.Fields)
	uv := s.theory.UnitVector()
	var once sync.Once
	var mu sync.Mutex
	largest := 0.0 // max |a|, NaN once a site has none
	par.For(s.lat.Sites(), 1024, func(i0, i1 int) {
		local := 0.0
		m := n
		if uv {
			m = n + 1
		}
		A, x := make([]float64, m*m), make([]float64, m)
		for i := i0; i < i1; i++ {
			if k.held != nil && k.held[i] {
				for c := range n {
					k.g.cols[c][i] = 0
				}
				continue
			}
			for a := range n {
				x[a] = k.out.cols[a][i] - k.g.cols[a][i]
			}
			for e := range n * (n + 1) / 2 {
				a, b := kineticPair(n, e)
				A[a*m+b] = k.out.cols[n+e][i]
				A[b*m+a] = A[a*m+b]
			}
			if uv {
				var ww float64
				for a := range n {
					p, w := k.ps.cols[a][i], k.ps.cols[n+a][i]
					A[a*m+n], A[n*m+a] = p, p
					ww += w * w
				}
				A[n*m+n], x[n] = 0, -ww
			}
			inputs := finite(A) && finite(x)
			var ok bool
			if uv {
				ok = solveLU(A, x, m)
			} else {
				ok = solveCholesky(A, x, m)
			}
			if !ok && inputs {
				// finite inputs and no solution: M itself (a field or gradient that
				// is not finite is the divergence evoDiverged names without help)
				once.Do(func() {
					_, site := s.siteOf(i)
					what := "positive definite"
					if uv {
						what = "positive on the tangent space of the unit vector"
					}
					k.why = "the kinetic density's mass matrix M = d2K/dv2 is not " + what + " at site " + site
				})
			}
			if !ok {
				for c := range n {
					k.g.cols[c][i] = math.NaN()
				}
				local = math.NaN()
				continue
			}
			for c := range n {
				k.g.cols[c][i] = -x[c]
				if !math.IsNaN(local) {
					local = math.Max(local, math.Abs(x[c]))
				}
			}
		}
		mu.Lock()
		if math.IsNaN(local) || math.IsNaN(largest) {
			largest = math.NaN()
		} else {
			largest = math.Max(largest, local)
		}
		mu.Unlock()
	})
	if err := k.gB.Upload(); err != nil {
		return 0, err
	}
	return largest, s.prog.Combine(out, kernels.Term{Coef: 1, X: k.gB})
}

// kineticRecord is the cell sum of K at the current field and velocity and
// the momentum density p = M v per component (host columns, valid until the
// next stage).
func (s *Simulation) kineticRecord() (float64, [][]float64, error) {
	k, err := s.kineticProgram()
	if err != nil {
		return 0, nil, err
	}
	kin, err := s.kineticUnitAt(k, s.phiB, nil, []kernels.Term{{Coef: 1, X: s.velB}}, false)
	if err != nil {
		return 0, nil, err
	}
	n := len(s.theory.Spec.Fields)
	par.For(s.lat.Sites(), 4096, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			for a := range n {
				var p float64
				for b := range n {
					e := kineticIndex(n, min(a, b), max(a, b))
					p += k.out.cols[n+e][i] * k.ps.cols[n+b][i]
				}
				k.g.cols[a][i] = p
			}
		}
	})
	return kin, k.g.cols, nil
}

// kineticIndex is the position of M_ab (a <= b) in the upper triangle.
func kineticIndex(n, a, b int) int { return a*n - a*(a-1)/2 + b - a }

// solveCholesky solves A x = b in place (x holds b) for a symmetric A of
// order m (row-major, overwritten), reporting false unless A is positive
// definite and the solution finite.
func solveCholesky(A, x []float64, m int) bool {
	for j := range m {
		d := A[j*m+j]
		for k := range j {
			d -= A[j*m+k] * A[j*m+k]
		}
		if !(d > 0) || math.IsInf(d, 0) {
			return false
		}
		d = math.Sqrt(d)
		A[j*m+j] = d
		for i := j + 1; i < m; i++ {
			v := A[i*m+j]
			for k := range j {
				v -= A[i*m+k] * A[j*m+k]
			}
			A[i*m+j] = v / d
		}
	}
	for i := range m { // L y = b
		v := x[i]
		for k := range i {
			v -= A[i*m+k] * x[k]
		}
		x[i] = v / A[i*m+i]
	}
	for i := m - 1; i >= 0; i-- { // L^T x = y
		v := x[i]
		for k := i + 1; k < m; k++ {
			v -= A[k*m+i] * x[k]
		}
		x[i] = v / A[i*m+i]
	}
	return finite(x)
}

// solveLU solves A x = b in place (x holds b) by Gaussian elimination with
// partial pivoting, reporting false for a singular A or a solution that is not
// finite.
func solveLU(A, x []float64, m int) bool {
	scale := 0.0
	for _, v := range A {
		scale = math.Max(scale, math.Abs(v))
	}
	for j := range m {
		p := j
		for i := j + 1; i < m; i++ {
			if math.Abs(A[i*m+j]) > math.Abs(A[p*m+j]) {
				p = i
			}
		}
		if !(math.Abs(A[p*m+j]) > 1e-13*scale) {
			return false
		}
		if p != j {
			for k := range m {
				A[j*m+k], A[p*m+k] = A[p*m+k], A[j*m+k]
			}
			x[j], x[p] = x[p], x[j]
		}
		for i := j + 1; i < m; i++ {
			f := A[i*m+j] / A[j*m+j]
			for k := j; k < m; k++ {
				A[i*m+k] -= f * A[j*m+k]
			}
			x[i] -= f * x[j]
		}
	}
	for i := m - 1; i >= 0; i-- {
		v := x[i]
		for k := i + 1; k < m; k++ {
			v -= A[i*m+k] * x[k]
		}
		x[i] = v / A[i*m+i]
	}
	return finite(x)
}

func finite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// checkKinetic refuses what a kinetic density cannot run with: the leapfrog
// (its kick needs an acceleration free of the velocity) and the free
// boundary (the unit runs the continuum form, which that boundary refuses).
func (s *Simulation) checkKinetic(method string) error {
	if !s.theory.HasKineticDensity() || FirstOrder(method) {
		return nil
	}
	if method == EvolveLeapfrog {
		return errs.New(errs.Parameter, "theory %q has a kinetic density, whose acceleration depends on the velocity: "+
			"the leapfrog's kicks need one that does not; use method=\"rk4\" or \"rk45\"", s.theory.Spec.Name)
	}
	if s.lat.Boundary == Free {
		return errs.New(errs.Parameter, "theory %q has a kinetic density, which evolves on periodic and fixed "+
			"boundaries: the free boundary's consistent form has no counterpart for it yet", s.theory.Spec.Name)
	}
	return nil
}
