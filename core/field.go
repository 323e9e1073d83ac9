package core

import (
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// Field is C components of float64 over a lattice, structure of arrays: component
// c is a column of nx·ny values, x fastest. The memory is C memory, either one
// allocation made by Allocator (NewField) or buffers imported through the Arrow C
// Data Interface (FieldFromRecord), which the field keeps alive until released.
type Field struct {
	lat   Lattice
	names []string
	cols  [][]float64 // views of C memory, one per component

	owned    *memory.Buffer    // the single allocation of a NewField, or nil
	imported arrow.RecordBatch // the producer's batch of an imported field, or nil
	released atomic.Bool
}

// NewField allocates a zeroed field with the named components in one contiguous
// block of C memory.
func NewField(lat Lattice, names []string) (*Field, error) {
	if err := lat.Validate(); err != nil {
		return nil, err
	}
	if err := checkNames(names); err != nil {
		return nil, err
	}
	n := lat.Sites()
	nbytes := n * len(names) * 8
	buf := memory.NewBufferWithAllocator(Allocator.Allocate(nbytes), Allocator)
	f := &Field{lat: lat, names: append([]string(nil), names...), owned: buf}
	base := unsafe.Pointer(unsafe.SliceData(buf.Bytes()))
	for c := range names {
		f.cols = append(f.cols, unsafe.Slice((*float64)(unsafe.Add(base, c*n*8)), n))
	}
	return f, nil
}

func checkNames(names []string) error {
	if len(names) == 0 {
		return errs.New(errs.Shape, "a field needs at least one component")
	}
	seen := map[string]bool{}
	for _, s := range names {
		if s == "" {
			return errs.New(errs.Shape, "component names must not be empty")
		}
		if seen[s] {
			return errs.New(errs.Shape, "component name %q appears twice", s)
		}
		seen[s] = true
	}
	return nil
}

func (f *Field) check() error {
	if f == nil || f.released.Load() {
		return errs.New(errs.Released, "the field has been released")
	}
	return nil
}

// Lattice returns the field's lattice.
func (f *Field) Lattice() Lattice { return f.lat }

// Names returns the component names.
func (f *Field) Names() []string { return append([]string(nil), f.names...) }

// NComp is the number of components.
func (f *Field) NComp() int { return len(f.names) }

// Comp returns component c as a slice over C memory (index j·nx + i). It panics
// on a released field or a bad index, like a slice would.
func (f *Field) Comp(c int) []float64 {
	if err := f.check(); err != nil {
		panic(err)
	}
	return f.cols[c]
}

// Component is Comp with errors instead of panics.
func (f *Field) Component(c int) ([]float64, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if c < 0 || c >= len(f.cols) {
		return nil, errs.New(errs.Shape, "component %d out of range: the field has %d", c, len(f.cols))
	}
	return f.cols[c], nil
}

// At returns component c at site (i, j).
func (f *Field) At(c, i, j int) (float64, error) {
	col, err := f.site(c, i, j)
	if err != nil {
		return 0, err
	}
	return col[j*f.lat.Nx+i], nil
}

// Set writes v to component c at site (i, j).
func (f *Field) Set(c, i, j int, v float64) error {
	col, err := f.site(c, i, j)
	if err != nil {
		return err
	}
	col[j*f.lat.Nx+i] = v
	return nil
}

func (f *Field) site(c, i, j int) ([]float64, error) {
	col, err := f.Component(c)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= f.lat.Nx || j < 0 || j >= f.lat.Ny {
		return nil, errs.New(errs.Shape, "site (%d, %d) outside the %d x %d lattice", i, j, f.lat.Nx, f.lat.Ny)
	}
	return col, nil
}

// Sum returns the sum of component c over all sites, compensated (Neumaier) and
// in a fixed order, so it is the same bit for bit on every run.
func (f *Field) Sum(c int) (float64, error) {
	col, err := f.Component(c)
	if err != nil {
		return 0, err
	}
	return SumCompensated(col), nil
}

// SumCompensated is Neumaier's compensated sum of xs, in index order (the
// one fixed-order sum of kernels.SumCompensated).
func SumCompensated(xs []float64) float64 { return kernels.SumCompensated(xs) }

// Stride is the distance in float64s between consecutive components when they
// are evenly spaced in memory (always for NewField), and ok=false otherwise.
func (f *Field) Stride() (stride int, ok bool) {
	if len(f.cols) == 1 {
		return f.lat.Sites(), true
	}
	p0 := uintptr(unsafe.Pointer(unsafe.SliceData(f.cols[0])))
	p1 := uintptr(unsafe.Pointer(unsafe.SliceData(f.cols[1])))
	d := int(p1) - int(p0)
	if d%8 != 0 {
		return 0, false
	}
	for c := 2; c < len(f.cols); c++ {
		pc := uintptr(unsafe.Pointer(unsafe.SliceData(f.cols[c])))
		if int(pc)-int(p0) != c*d {
			return 0, false
		}
	}
	return d / 8, true
}

// CopyFrom copies the values of g (same lattice size and component count) into f.
func (f *Field) CopyFrom(g *Field) error {
	if err := f.check(); err != nil {
		return err
	}
	if err := g.check(); err != nil {
		return err
	}
	if f.lat.Nx != g.lat.Nx || f.lat.Ny != g.lat.Ny || len(f.cols) != len(g.cols) {
		return errs.New(errs.Shape, "cannot copy a %d-component %d x %d field into a %d-component %d x %d one",
			len(g.cols), g.lat.Nx, g.lat.Ny, len(f.cols), f.lat.Nx, f.lat.Ny)
	}
	for c := range f.cols {
		copy(f.cols[c], g.cols[c])
	}
	return nil
}

// Release drops the field's hold on its memory. Exports made earlier stay valid
// until their consumers release them. Releasing twice is an error.
func (f *Field) Release() error {
	if f == nil || !f.released.CompareAndSwap(false, true) {
		return errs.New(errs.Released, "the field has already been released")
	}
	if f.owned != nil {
		f.owned.Release()
		f.owned = nil
	}
	if f.imported != nil {
		f.imported.Release()
		f.imported = nil
	}
	f.cols = nil
	return nil
}
