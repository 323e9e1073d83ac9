package core

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fieldgo/fieldgo/errs"
)

// Schema metadata keys of a field's RecordBatch.
const (
	MetaNx         = "nx"
	MetaNy         = "ny"
	MetaHx         = "hx"
	MetaHy         = "hy"
	MetaOrigin     = "origin"     // JSON [ox, oy]
	MetaBoundary   = "boundary"   // "fixed" | "periodic" | "free"
	MetaComponents = "components" // JSON list of component names
	MetaTheory     = "theory"     // optional theory name
	// A lattice other than the planar one of one boundary adds its number of
	// axes, z's size and spacing; its origin has one coordinate per axis and
	// its boundary is one name per axis, comma-separated.
	MetaDims = "dims"
	MetaNz   = "nz"
	MetaHz   = "hz"
)

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// LatticeMetadata returns the schema metadata that describes lat and names.
func LatticeMetadata(lat Lattice, names []string) arrow.Metadata {
	comps, _ := json.Marshal(names)
	if !lat.Planar() {
		d := lat.Dim()
		origin, _ := json.Marshal([]float64{lat.Ox, lat.Oy, lat.Oz}[:d])
		bounds := make([]string, d)
		for a := range bounds {
			bounds[a] = lat.AxisBoundary(a).String()
		}
		return arrow.NewMetadata(
			[]string{MetaDims, MetaNx, MetaNy, MetaNz, MetaHx, MetaHy, MetaHz, MetaOrigin, MetaBoundary, MetaComponents},
			[]string{strconv.Itoa(d), strconv.Itoa(lat.Nx), strconv.Itoa(lat.Ny), strconv.Itoa(lat.Planes()),
				fmtFloat(lat.Hx), fmtFloat(lat.Hy), fmtFloat(lat.Hz), string(origin), strings.Join(bounds, ","), string(comps)})
	}
	origin, _ := json.Marshal([]float64{lat.Ox, lat.Oy})
	return arrow.NewMetadata(
		[]string{MetaNx, MetaNy, MetaHx, MetaHy, MetaOrigin, MetaBoundary, MetaComponents},
		[]string{strconv.Itoa(lat.Nx), strconv.Itoa(lat.Ny), fmtFloat(lat.Hx), fmtFloat(lat.Hy),
			string(origin), lat.Boundary.String(), string(comps)})
}

// LatticeFromMetadata reads a lattice from schema metadata written by
// LatticeMetadata. ok is false when the metadata has no lattice at all.
func LatticeFromMetadata(md arrow.Metadata) (lat Lattice, ok bool, err error) {
	if md.FindKey(MetaNx) < 0 && md.FindKey(MetaNy) < 0 {
		return Lattice{}, false, nil
	}
	get := func(k string) (string, error) {
		i := md.FindKey(k)
		if i < 0 {
			return "", errs.New(errs.Format, "field metadata lacks %q", k)
		}
		return md.Values()[i], nil
	}
	var s string
	num := func(k string, bits int) (float64, error) {
		if s, err = get(k); err != nil {
			return 0, err
		}
		v, perr := strconv.ParseFloat(s, 64)
		if perr != nil {
			return 0, errs.New(errs.Format, "field metadata %q=%q is not a number", k, s)
		}
		return v, nil
	}
	nx, err := num(MetaNx, 0)
	if err != nil {
		return lat, true, err
	}
	ny, err := num(MetaNy, 0)
	if err != nil {
		return lat, true, err
	}
	if nx != float64(int(nx)) || ny != float64(int(ny)) {
		return lat, true, errs.New(errs.Format, "field metadata nx=%v, ny=%v are not integers", nx, ny)
	}
	hx, err := num(MetaHx, 0)
	if err != nil {
		return lat, true, err
	}
	hy, err := num(MetaHy, 0)
	if err != nil {
		return lat, true, err
	}
	if md.FindKey(MetaDims) >= 0 {
		return latticeNDFromMetadata(md, get, num, int(nx), int(ny), hx, hy)
	}
	var origin []float64
	if s, err = get(MetaOrigin); err != nil {
		return lat, true, err
	}
	if json.Unmarshal([]byte(s), &origin) != nil || len(origin) != 2 {
		return lat, true, errs.New(errs.Format, "field metadata origin=%q is not [ox, oy]", s)
	}
	if s, err = get(MetaBoundary); err != nil {
		return lat, true, err
	}
	b, err := ParseBoundary(s)
	if err != nil {
		return lat, true, err
	}
	lat, err = NewLattice(int(nx), int(ny), hx, hy, origin[0], origin[1], b)
	return lat, true, err
}

// latticeNDFromMetadata reads the rest of a lattice LatticeMetadata wrote
// with MetaDims.
func latticeNDFromMetadata(md arrow.Metadata, get func(string) (string, error), num func(string, int) (float64, error),
	nx, ny int, hx, hy float64) (Lattice, bool, error) {
	var lat Lattice
	dims, err := num(MetaDims, 0)
	if err != nil {
		return lat, true, err
	}
	nz, err := num(MetaNz, 0)
	if err != nil {
		return lat, true, err
	}
	hz, err := num(MetaHz, 0)
	if err != nil {
		return lat, true, err
	}
	d := int(dims)
	if float64(d) != dims || d < 1 || d > 3 || nz != float64(int(nz)) {
		return lat, true, errs.New(errs.Format, "field metadata dims=%v, nz=%v are not 1, 2 or 3 and an integer", dims, nz)
	}
	s, err := get(MetaOrigin)
	if err != nil {
		return lat, true, err
	}
	var origin []float64
	if json.Unmarshal([]byte(s), &origin) != nil || len(origin) != d {
		return lat, true, errs.New(errs.Format, "field metadata origin=%q does not have %d coordinates", s, d)
	}
	if s, err = get(MetaBoundary); err != nil {
		return lat, true, err
	}
	var bounds []Boundary
	for _, name := range strings.Split(s, ",") {
		b, err := ParseBoundary(name)
		if err != nil {
			return lat, true, err
		}
		bounds = append(bounds, b)
	}
	n := []int{nx, ny, int(nz)}[:d]
	h := []float64{hx, hy, hz}[:d]
	lat, err = NewLatticeND(n, h, origin, bounds)
	return lat, true, err
}

// ComponentsFromMetadata reads the component names, if present.
func ComponentsFromMetadata(md arrow.Metadata) ([]string, error) {
	i := md.FindKey(MetaComponents)
	if i < 0 {
		return nil, nil
	}
	var names []string
	if err := json.Unmarshal([]byte(md.Values()[i]), &names); err != nil {
		return nil, errs.New(errs.Format, "field metadata components=%q is not a list of names", md.Values()[i])
	}
	return names, nil
}

// Record returns the field as an Arrow RecordBatch sharing its memory: one float64
// column per component, lattice and names in the schema metadata. The batch holds
// its own reference to the memory; release it when done.
func (f *Field) Record() (arrow.RecordBatch, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	n := f.lat.Sites()
	fields := make([]arrow.Field, len(f.names))
	cols := make([]arrow.Array, len(f.names))
	for c, name := range f.names {
		fields[c] = arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64}
		var buf *memory.Buffer
		if f.owned != nil {
			buf = memory.SliceBuffer(f.owned, c*n*8, n*8)
		} else {
			// An imported column: share the producer's buffer (kept alive by the
			// retained column data).
			data := f.imported.Column(c).Data()
			buf = memory.SliceBuffer(data.Buffers()[1], data.Offset()*8, n*8)
		}
		d := array.NewData(arrow.PrimitiveTypes.Float64, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
		buf.Release()
		cols[c] = array.MakeFromData(d)
		d.Release()
	}
	schema := arrow.NewSchema(fields, ptrMeta(LatticeMetadata(f.lat, f.names)))
	rec := array.NewRecordBatch(schema, cols, int64(n))
	for _, a := range cols {
		a.Release()
	}
	return rec, nil
}

func ptrMeta(m arrow.Metadata) *arrow.Metadata { return &m }

// FieldFromRecord makes a field that shares rec's memory without copying. Every
// column must be float64 without nulls and of length nx·ny. The lattice comes
// from lat when given, otherwise from rec's schema metadata; names come from the
// columns. The field retains rec until it is released.
func FieldFromRecord(rec arrow.RecordBatch, lat *Lattice) (*Field, error) {
	md := rec.Schema().Metadata()
	mdLat, hasLat, err := LatticeFromMetadata(md)
	if err != nil {
		return nil, err
	}
	if lat == nil {
		if !hasLat {
			return nil, errs.New(errs.Format, "the Arrow data carries no lattice metadata (nx, ny, hx, hy, origin, boundary): pass a lattice")
		}
		lat = &mdLat
	} else if err := lat.Validate(); err != nil {
		return nil, err
	}
	if rec.NumCols() == 0 {
		return nil, errs.New(errs.Shape, "a field needs at least one column")
	}
	n := lat.Sites()
	if int(rec.NumRows()) != n {
		return nil, errs.New(errs.Shape, "%d rows do not fit a %s lattice (%d sites)", rec.NumRows(), lat.Shape(), n)
	}
	names := make([]string, rec.NumCols())
	cols := make([][]float64, rec.NumCols())
	for c := range names {
		fld := rec.Schema().Field(c)
		names[c] = fld.Name
		if fld.Type.ID() != arrow.FLOAT64 {
			return nil, errs.New(errs.Layout, "column %q has type %s: fields are float64 (cast it, or pass copy=True)", fld.Name, fld.Type)
		}
		col := rec.Column(c).(*array.Float64)
		if col.NullN() != 0 {
			return nil, errs.New(errs.Layout, "column %q has %d nulls: a field has a value at every site", fld.Name, col.NullN())
		}
		vals := col.Float64Values()
		if len(vals) != n {
			return nil, errs.New(errs.Shape, "column %q has %d values, want %d", fld.Name, len(vals), n)
		}
		if n > 0 && uintptr(unsafe.Pointer(&vals[0]))%8 != 0 {
			return nil, errs.New(errs.Layout, "column %q is not 8-byte aligned (pass copy=True)", fld.Name)
		}
		cols[c] = vals
	}
	if err := checkNames(names); err != nil {
		return nil, err
	}
	rec.Retain()
	return &Field{lat: *lat, names: names, cols: cols, imported: rec}, nil
}

// String describes the field briefly.
func (f *Field) String() string {
	l := f.lat
	if !l.Planar() {
		d := l.Dim()
		h, b := make([]string, d), make([]string, d)
		for a := range d {
			h[a] = fmtFloat([]float64{l.Hx, l.Hy, l.Hz}[a])
			b[a] = l.AxisBoundary(a).String()
		}
		return fmt.Sprintf("Field(%v, %s, h=(%s), %s)", f.names, l.Shape(), strings.Join(h, ", "), strings.Join(b, ", "))
	}
	return fmt.Sprintf("Field(%v, %d x %d, h=(%g, %g), %s)", f.names, l.Nx, l.Ny, l.Hx, l.Hy, l.Boundary)
}
