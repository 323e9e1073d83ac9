package core

import (
	"math"

	"github.com/fieldgo/fieldgo/errs"
)

// Boundary says what lies beyond the edges of a lattice.
type Boundary int

const (
	// Fixed holds the outer two layers of sites at their initial values; the
	// energy sums over the other sites. The held layers are part of the
	// problem: a relaxed energy depends on the field they were given
	// (docs/robustness.md).
	Fixed Boundary = iota
	// Periodic wraps both directions.
	Periodic
	// Free holds no site and sums the energy over every site, with in-box
	// stencils at the edges: the natural (Neumann) boundary of the discrete
	// energy, whose relaxed solitons do not depend on the starting field
	// (kernels/src/cpu_kernels.c.tmpl says how the edges are differenced).
	// Only the consistent gradient form is its gradient.
	Free
)

func (b Boundary) String() string {
	switch b {
	case Fixed:
		return "fixed"
	case Periodic:
		return "periodic"
	case Free:
		return "free"
	}
	return "unknown"
}

// ParseBoundary turns a boundary name into a Boundary.
func ParseBoundary(name string) (Boundary, error) {
	switch name {
	case "fixed":
		return Fixed, nil
	case "periodic":
		return Periodic, nil
	case "free":
		return Free, nil
	}
	return 0, errs.New(errs.Lattice, "unknown boundary %q: use \"fixed\", \"periodic\" or \"free\"", name)
}

// Lattice is a rectangular nx × ny grid of sites with spacings hx, hy. Site (i, j)
// sits at (Ox + i·Hx, Oy + j·Hy); i runs along x, fastest in memory.
type Lattice struct {
	Nx, Ny   int
	Hx, Hy   float64
	Ox, Oy   float64
	Boundary Boundary
}

// maxSites bounds nx·ny so that byte sizes cannot overflow an int.
const maxSites = 1 << 40

// NewLattice validates its arguments and returns a Lattice.
func NewLattice(nx, ny int, hx, hy, ox, oy float64, b Boundary) (Lattice, error) {
	l := Lattice{Nx: nx, Ny: ny, Hx: hx, Hy: hy, Ox: ox, Oy: oy, Boundary: b}
	return l, l.Validate()
}

// CenteredLattice returns a lattice whose sites are centred on the origin.
func CenteredLattice(nx, ny int, hx, hy float64, b Boundary) (Lattice, error) {
	return NewLattice(nx, ny, hx, hy, -float64(nx-1)*hx/2, -float64(ny-1)*hy/2, b)
}

// Validate reports the first thing wrong with l.
func (l Lattice) Validate() error {
	if l.Nx <= 0 || l.Ny <= 0 {
		return errs.New(errs.Lattice, "lattice size must be positive, got nx=%d, ny=%d", l.Nx, l.Ny)
	}
	if int64(l.Nx)*int64(l.Ny) > maxSites {
		return errs.New(errs.Lattice, "lattice of %d x %d sites is too large", l.Nx, l.Ny)
	}
	for _, h := range []struct {
		name string
		v    float64
	}{{"hx", l.Hx}, {"hy", l.Hy}} {
		if !(h.v > 0) || math.IsInf(h.v, 0) {
			return errs.New(errs.Lattice, "spacing %s must be positive and finite, got %v", h.name, h.v)
		}
	}
	if math.IsNaN(l.Ox) || math.IsInf(l.Ox, 0) || math.IsNaN(l.Oy) || math.IsInf(l.Oy, 0) {
		return errs.New(errs.Lattice, "origin must be finite, got (%v, %v)", l.Ox, l.Oy)
	}
	if l.Boundary != Fixed && l.Boundary != Periodic && l.Boundary != Free {
		return errs.New(errs.Lattice, "unknown boundary %d", int(l.Boundary))
	}
	return nil
}

// Sites is nx·ny.
func (l Lattice) Sites() int { return l.Nx * l.Ny }

// X and Y give the coordinates of column i and row j.
func (l Lattice) X(i int) float64 { return l.Ox + float64(i)*l.Hx }
func (l Lattice) Y(j int) float64 { return l.Oy + float64(j)*l.Hy }

// Area is the area of one lattice cell, hx·hy.
func (l Lattice) Area() float64 { return l.Hx * l.Hy }
