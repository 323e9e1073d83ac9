package pybind

import (
	"encoding/json"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

// latticeDesc is Python's description of a lattice (fg.Lattice._json): the
// planar one of one boundary as nx, ny, hx, hy, origin, boundary; one of any
// number of axes, or with a boundary per axis, as n, h, origin (one entry per
// axis) and boundaries (one name, or one per axis).
type latticeDesc struct {
	Nx, Ny     int
	Hx, Hy     float64
	Origin     []float64
	Boundary   string
	N          []int
	H          []float64
	Boundaries []string
}

// latticeFromJSON reads a latticeDesc.
func latticeFromJSON(s string) (core.Lattice, error) {
	var l latticeDesc
	if e := json.Unmarshal([]byte(s), &l); e != nil {
		return core.Lattice{}, errs.New(errs.Lattice, "bad lattice description: %v", e)
	}
	if l.N == nil {
		if len(l.Origin) != 2 {
			return core.Lattice{}, errs.New(errs.Lattice, "a planar lattice's origin is (ox, oy), got %v", l.Origin)
		}
		return lattice(l.Nx, l.Ny, l.Hx, l.Hy, l.Origin[0], l.Origin[1], l.Boundary)
	}
	bounds := make([]core.Boundary, len(l.Boundaries))
	for a, name := range l.Boundaries {
		b, err := core.ParseBoundary(name)
		if err != nil {
			return core.Lattice{}, err
		}
		bounds[a] = b
	}
	return core.NewLatticeND(l.N, l.H, l.Origin, bounds)
}

// latticeInfo is the description FieldInfo and SimDescribe give of lat: the
// planar keys, and for another lattice also dims, nz, hz, the origin per axis
// and the boundaries per axis.
func latticeInfo(lat core.Lattice) map[string]any {
	d := map[string]any{"nx": lat.Nx, "ny": lat.Ny, "hx": lat.Hx, "hy": lat.Hy,
		"origin": []float64{lat.Ox, lat.Oy}, "boundary": lat.Boundary.String()}
	if !lat.Planar() {
		dim := lat.Dim()
		bounds := make([]string, dim)
		for a := range bounds {
			bounds[a] = lat.AxisBoundary(a).String()
		}
		d["dims"], d["nz"], d["hz"] = dim, lat.Planes(), lat.Hz
		d["origin"] = []float64{lat.Ox, lat.Oy, lat.Oz}[:dim]
		d["boundaries"] = bounds
	}
	return d
}

// CheckLatticeJSON validates a lattice description (latticeDesc); Python's
// fg.Lattice calls it so that Go and Python agree on what a valid lattice is.
func CheckLatticeJSON(desc string) (err error) {
	defer recoverInto(&err)
	_, err = latticeFromJSON(desc)
	return bridge(err)
}

// NewFieldOn allocates a zeroed field on a described lattice (latticeDesc);
// names is a JSON list of component names.
func NewFieldOn(desc, names string) (h int64, err error) {
	defer recoverInto(&err)
	lat, err := latticeFromJSON(desc)
	if err != nil {
		return 0, bridge(err)
	}
	var ns []string
	if e := json.Unmarshal([]byte(names), &ns); e != nil {
		return 0, bridge(errs.New(errs.Shape, "component names must be a list of strings: %v", e))
	}
	f, err := core.NewField(lat, ns)
	if err != nil {
		return 0, bridge(err)
	}
	return register(f), nil
}

// NewSimulationOn is NewSimulation on a described lattice (latticeDesc): one,
// two or three axes, a boundary per axis. Lattices other than the planar one
// of one boundary run on the CPU backend (backend "cuda" is refused, saying so).
func NewSimulationOn(spec, source, desc, options string) (h int64, err error) {
	defer recoverInto(&err)
	lat, err := latticeFromJSON(desc)
	if err != nil {
		return 0, bridge(err)
	}
	return newSimulation(spec, source, lat, options)
}
