package core

import (
	"math"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
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

// Lattice is a rectangular grid of sites with one, two or three axes. Site
// (i, j, k) sits at (Ox + i·Hx, Oy + j·Hy, Oz + k·Hz) and at index
// (k·Ny + j)·Nx + i: i runs along x, fastest in memory, then j, then k. The
// zero values of Dims, Nz, Hz, Oz and Axes are the planar lattice of two axes
// with one boundary: NewLattice's. A line (Dims 1) has Ny = 1, a line or a
// plane Nz ≤ 1; along an axis it lacks the field is constant.
type Lattice struct {
	Nx, Ny   int
	Hx, Hy   float64
	Ox, Oy   float64
	Boundary Boundary // every axis's, unless Axes sets them one by one

	Dims   int // 1, 2 or 3 axes; 0 is 2
	Nz     int // sites along z (Dims 3)
	Hz, Oz float64
	// Axes, when PerAxis, are the boundaries of x, y and z one by one
	// (fixed or periodic); Boundary is then ignored.
	PerAxis bool
	Axes    [3]Boundary
}

// maxSites bounds the site count so that byte sizes cannot overflow an int.
const maxSites = 1 << 40

// NewLattice validates its arguments and returns a planar Lattice.
func NewLattice(nx, ny int, hx, hy, ox, oy float64, b Boundary) (Lattice, error) {
	l := Lattice{Nx: nx, Ny: ny, Hx: hx, Hy: hy, Ox: ox, Oy: oy, Boundary: b}
	return l, l.Validate()
}

// CenteredLattice returns a planar lattice whose sites are centred on the origin.
func CenteredLattice(nx, ny int, hx, hy float64, b Boundary) (Lattice, error) {
	return NewLattice(nx, ny, hx, hy, -float64(nx-1)*hx/2, -float64(ny-1)*hy/2, b)
}

// NewLatticeND returns a lattice of len(n) axes (1, 2 or 3) with sizes n,
// spacings h and origin o (one per axis) and a boundary per axis (one
// boundary for all, or one per axis). A lattice of two axes with one
// boundary is NewLattice's.
func NewLatticeND(n []int, h, o []float64, bounds []Boundary) (Lattice, error) {
	d := len(n)
	if d < 1 || d > 3 {
		return Lattice{}, errs.New(errs.Lattice, "a lattice has 1, 2 or 3 axes, got %d sizes", d)
	}
	if len(h) != d || len(o) != d {
		return Lattice{}, errs.New(errs.Lattice, "%d sizes need %d spacings and %d origin coordinates, got %d and %d", d, d, d, len(h), len(o))
	}
	if len(bounds) != 1 && len(bounds) != d {
		return Lattice{}, errs.New(errs.Lattice, "give one boundary or one per axis (%d), got %d", d, len(bounds))
	}
	l := Lattice{Dims: d, Nx: n[0], Hx: h[0], Ox: o[0], Ny: 1, Hy: h[0], Nz: 1, Hz: h[0], Boundary: bounds[0]}
	if d >= 2 {
		l.Ny, l.Hy, l.Oy = n[1], h[1], o[1]
		l.Hz = h[1]
	}
	if d == 3 {
		l.Nz, l.Hz, l.Oz = n[2], h[2], o[2]
	}
	if len(bounds) > 1 {
		same := true
		for _, b := range bounds[1:] {
			same = same && b == bounds[0]
		}
		if !same {
			l.PerAxis = true
			copy(l.Axes[:], bounds)
		}
	}
	if d == 2 && !l.PerAxis {
		l.Dims, l.Nz, l.Hz = 0, 0, 0 // the planar lattice, exactly NewLattice's
	}
	return l, l.Validate()
}

// Dim is the number of axes: 1, 2 or 3.
func (l Lattice) Dim() int {
	if l.Dims == 0 {
		return 2
	}
	return l.Dims
}

// Planes is the number of planes along z (1 unless l has three axes).
func (l Lattice) Planes() int {
	if l.Nz < 1 {
		return 1
	}
	return l.Nz
}

// AxisBoundary is the boundary of axis a (0: x, 1: y, 2: z).
func (l Lattice) AxisBoundary(a int) Boundary {
	if l.PerAxis {
		return l.Axes[a]
	}
	return l.Boundary
}

// Planar reports whether l is the planar lattice of two axes with one
// boundary (every backend runs it; the others run on the CPU backend).
func (l Lattice) Planar() bool { return l.Dim() == 2 && !l.PerAxis }

// Shape describes the sizes, "64 x 64 x 64".
func (l Lattice) Shape() string {
	switch l.Dim() {
	case 1:
		return itoa(l.Nx)
	case 3:
		return itoa(l.Nx) + " x " + itoa(l.Ny) + " x " + itoa(l.Nz)
	}
	return itoa(l.Nx) + " x " + itoa(l.Ny)
}

// Grid is l as the kernels see it.
func (l Lattice) Grid() kernels.Grid {
	g := kernels.Grid{Nx: l.Nx, Ny: l.Ny, Hx: l.Hx, Hy: l.Hy, Ox: l.Ox, Oy: l.Oy,
		Periodic: !l.PerAxis && l.Boundary == Periodic, Free: !l.PerAxis && l.Boundary == Free}
	if l.Dims != 0 {
		g.Dims, g.Nz, g.Hz, g.Oz = l.Dims, l.Nz, l.Hz, l.Oz
	}
	if l.PerAxis {
		for a := range 3 {
			g.Wrap[a] = l.Axes[a] == Periodic
		}
	}
	return g
}

// Validate reports the first thing wrong with l.
func (l Lattice) Validate() error {
	d := l.Dim()
	if d < 1 || d > 3 {
		return errs.New(errs.Lattice, "a lattice has 1, 2 or 3 axes, not %d", d)
	}
	if l.Nx <= 0 || l.Ny <= 0 || (d == 3 && l.Nz <= 0) {
		return errs.New(errs.Lattice, "lattice size must be positive, got %s", l.Shape())
	}
	if d == 1 && l.Ny != 1 || d < 3 && l.Planes() != 1 {
		return errs.New(errs.Lattice, "a %dD lattice has one site along its missing axes, got %d x %d x %d", d, l.Nx, l.Ny, l.Planes())
	}
	if int64(l.Nx)*int64(l.Ny)*int64(l.Planes()) > maxSites {
		return errs.New(errs.Lattice, "lattice of %s sites is too large", l.Shape())
	}
	sp := []struct {
		name string
		v    float64
	}{{"hx", l.Hx}, {"hy", l.Hy}}
	if d == 3 {
		sp = append(sp, struct {
			name string
			v    float64
		}{"hz", l.Hz})
	}
	for _, h := range sp {
		if !(h.v > 0) || math.IsInf(h.v, 0) {
			return errs.New(errs.Lattice, "spacing %s must be positive and finite, got %v", h.name, h.v)
		}
	}
	if math.IsNaN(l.Ox) || math.IsInf(l.Ox, 0) || math.IsNaN(l.Oy) || math.IsInf(l.Oy, 0) || math.IsNaN(l.Oz) || math.IsInf(l.Oz, 0) {
		return errs.New(errs.Lattice, "origin must be finite, got (%v, %v, %v)", l.Ox, l.Oy, l.Oz)
	}
	if l.Boundary != Fixed && l.Boundary != Periodic && l.Boundary != Free {
		return errs.New(errs.Lattice, "unknown boundary %d", int(l.Boundary))
	}
	if l.PerAxis {
		for a := range d {
			if b := l.Axes[a]; b != Fixed && b != Periodic {
				return errs.New(errs.Lattice, "a boundary set per axis is \"fixed\" or \"periodic\", got %q for axis %c "+
					"(the free boundary is one for every axis)", b.String(), "xyz"[a])
			}
		}
	}
	return nil
}

// Sites is nx·ny·nz.
func (l Lattice) Sites() int { return l.Nx * l.Ny * l.Planes() }

// X, Y and Z give the coordinates of column i, row j and plane k.
func (l Lattice) X(i int) float64 { return l.Ox + float64(i)*l.Hx }
func (l Lattice) Y(j int) float64 { return l.Oy + float64(j)*l.Hy }
func (l Lattice) Z(k int) float64 { return l.Oz + float64(k)*l.Hz }

// Area is the area of one lattice cell, hx·hy.
func (l Lattice) Area() float64 { return l.Hx * l.Hy }

// Cell is the measure of one site: hx on a line, hx·hy on a plane, hx·hy·hz
// in three dimensions.
func (l Lattice) Cell() float64 {
	switch l.Dim() {
	case 1:
		return l.Hx
	case 3:
		return l.Hx * l.Hy * l.Hz
	}
	return l.Hx * l.Hy
}
