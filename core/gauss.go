package core

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fieldgo/fieldgo/kernels"
)

// Gauss's law of a gauge theory evolved in temporal gauge (A_0 = 0): the
// constraint density G(phi, v) = div E - rho per site, with E = -d_t A and
// rho the matter's charge density, is conserved by the exact dynamics, so
// its change along an evolution measures the scheme's error (spatial
// discretisation and time step; the lattice's central differences are not
// the gauge-covariant links that would keep it exactly).
//
// The theory's point source carries G as the density of a phase-space unit
// (Theory.GaussUnit): a unit of 2n components, the field's and then their
// velocities. It is compiled on the simulation's backend when an evolution
// first needs it and evaluated, at every record, on a host field that holds
// phi and v side by side; every backend runs its own density kernel on it, so
// G needs no kernel of its own.

// Gauss-law columns of a second-order evolution's history, after every other.
const (
	GaussMaxColumn = "gauss_max" // max over the sites that are not held of |G|
	GaussL2Column  = "gauss_l2"  // sqrt(cell sum of G^2): the L2 norm over the lattice
)

// gaussState is the compiled phase-space unit and its buffers.
type gaussState struct {
	prog kernels.Program
	ps   *Field         // host: the n field columns, then the n velocity columns
	psB  kernels.Buffer // ps on prog's backend
	out  kernels.Buffer // G per site
}

func (g *gaussState) release() {
	for _, b := range []kernels.Buffer{g.psB, g.out} {
		if b != nil {
			b.Release()
		}
	}
	if g.ps != nil {
		g.ps.Release()
	}
	if g.prog != nil {
		_ = g.prog.Close()
	}
}

// recordsGauss reports whether the current evolution's records carry the
// Gauss-law columns: the theory has a Gauss law and the dynamics has a
// velocity (second order).
func (s *Simulation) recordsGauss(method string) bool {
	return s.theory.Spec.GaussLaw && !FirstOrder(method)
}

// recordGauss fills rec's Gauss-law values when the evolution records them
// (the host field and velocity are current).
func (s *Simulation) recordGauss(rec *EvolveRecord) error {
	if !s.recordsGauss(s.evo.cfg.Method) {
		return nil
	}
	var err error
	rec.GaussMax, rec.GaussL2, err = s.gaussViolation()
	return err
}

// withGaussColumns is a history batch of rows with the Gauss-law columns
// added when the evolution of method records them (b itself otherwise;
// released either way once the new batch holds its columns).
func (s *Simulation) withGaussColumns(b arrow.RecordBatch, rows []EvolveRecord, method string) (arrow.RecordBatch, error) {
	if !s.recordsGauss(method) {
		return b, nil
	}
	defer b.Release()
	fields := append([]arrow.Field(nil), b.Schema().Fields()...)
	cols := append([]arrow.Array(nil), b.Columns()...)
	for _, c := range []struct {
		name string
		val  func(EvolveRecord) float64
	}{
		{GaussMaxColumn, func(r EvolveRecord) float64 { return r.GaussMax }},
		{GaussL2Column, func(r EvolveRecord) float64 { return r.GaussL2 }},
	} {
		fb := array.NewFloat64Builder(Allocator)
		for _, r := range rows {
			fb.Append(c.val(r))
		}
		a := fb.NewArray()
		fb.Release()
		defer a.Release()
		fields = append(fields, arrow.Field{Name: c.name, Type: arrow.PrimitiveTypes.Float64})
		cols = append(cols, a)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(rows))), nil
}

// gaussProgram compiles the phase-space unit once per simulation.
func (s *Simulation) gaussProgram() (*gaussState, error) {
	if s.gauss != nil {
		return s.gauss, nil
	}
	g := &gaussState{}
	var err error
	if g.prog, err = s.backend.Compile(s.theory.gaussUnit()); err != nil {
		return nil, err
	}
	names := append(append([]string(nil), s.theory.Spec.Fields...), s.theory.Spec.Fields...)
	for c := len(s.theory.Spec.Fields); c < len(names); c++ {
		names[c] += "_t"
	}
	if g.ps, err = NewField(s.lat, names); err == nil {
		if g.psB, err = g.prog.Bind(flat(g.ps)); err == nil {
			g.out, err = g.prog.NewBuffer(s.lat.Sites())
		}
	}
	if err != nil {
		g.release()
		return nil, err
	}
	s.gauss = g
	return g, nil
}

// gaussViolation is (max |G|, the L2 norm of G) for the host field and
// velocity (s.phi, s.vel, synchronised by the caller).
func (s *Simulation) gaussViolation() (maxAbs, l2 float64, err error) {
	g, err := s.gaussProgram()
	if err != nil {
		return 0, 0, err
	}
	n := len(s.phi.cols)
	for c := range n {
		copy(g.ps.cols[c], s.phi.cols[c])
		copy(g.ps.cols[n+c], s.vel.cols[c])
	}
	if err := g.psB.Upload(); err != nil {
		return 0, 0, err
	}
	if _, err := g.prog.Density(s.grid, s.params, g.psB, 0, g.out); err != nil {
		return 0, 0, err
	}
	if maxAbs, err = g.prog.MaxAbs(g.out); err != nil {
		return 0, 0, err
	}
	sq, err := g.prog.Dot(g.out, g.out)
	if err != nil {
		return 0, 0, err
	}
	return maxAbs, math.Sqrt(s.lat.Cell() * sq), nil
}
