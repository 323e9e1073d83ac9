package core

import (
	"math"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/errs"
)

func testLattice(t testing.TB) Lattice {
	lat, err := CenteredLattice(6, 4, 0.5, 0.25, Periodic)
	require.NoError(t, err)
	return lat
}

func TestLatticeValidation(t *testing.T) {
	bad := []Lattice{
		{Nx: 0, Ny: 3, Hx: 1, Hy: 1},
		{Nx: 3, Ny: -1, Hx: 1, Hy: 1},
		{Nx: 3, Ny: 3, Hx: 0, Hy: 1},
		{Nx: 3, Ny: 3, Hx: 1, Hy: math.NaN()},
		{Nx: 3, Ny: 3, Hx: 1, Hy: math.Inf(1)},
		{Nx: 3, Ny: 3, Hx: 1, Hy: 1, Ox: math.NaN()},
		{Nx: 3, Ny: 3, Hx: 1, Hy: 1, Boundary: Boundary(7)},
	}
	for _, l := range bad {
		err := l.Validate()
		require.Error(t, err, "%+v", l)
		assert.Equal(t, errs.Lattice, errs.KindOf(err))
	}
	_, err := ParseBoundary("dirichlet")
	assert.True(t, errs.Is(err, errs.Lattice))
	for _, b := range []Boundary{Fixed, Periodic, Free} {
		got, err := ParseBoundary(b.String())
		require.NoError(t, err)
		assert.Equal(t, b, got)
	}
	lat := testLattice(t)
	assert.InDelta(t, -lat.X(0), lat.X(lat.Nx-1), 1e-15)
	assert.InDelta(t, -lat.Y(0), lat.Y(lat.Ny-1), 1e-15)
}

func TestFieldLayoutIsStructOfArrays(t *testing.T) {
	lat := testLattice(t)
	f, err := NewField(lat, []string{"a", "b", "c"})
	require.NoError(t, err)
	defer f.Release()
	stride, ok := f.Stride()
	require.True(t, ok)
	assert.Equal(t, lat.Sites(), stride)
	require.NoError(t, f.Set(1, 2, 3, 7))
	// component c of site (i, j) lives at c*nx*ny + j*nx + i of one block
	base := unsafe.Pointer(&f.Comp(0)[0])
	v := *(*float64)(unsafe.Add(base, 8*(1*lat.Sites()+3*lat.Nx+2)))
	assert.Equal(t, 7.0, v)
}

func TestRecordSharesMemoryAndCarriesMetadata(t *testing.T) {
	lat := testLattice(t)
	f, err := NewField(lat, []string{"n1", "n2"})
	require.NoError(t, err)
	rec, err := f.Record()
	require.NoError(t, err)
	defer rec.Release()
	f.Comp(1)[5] = 3.5
	assert.Equal(t, 3.5, rec.Column(1).(*array.Float64).Value(5))
	got, ok, err := LatticeFromMetadata(rec.Schema().Metadata())
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, lat, got)
	names, err := ComponentsFromMetadata(rec.Schema().Metadata())
	require.NoError(t, err)
	assert.Equal(t, []string{"n1", "n2"}, names)
	// The batch keeps the memory alive after the field is released.
	require.NoError(t, f.Release())
	assert.Equal(t, 3.5, rec.Column(1).(*array.Float64).Value(5))
}

func TestCDataRoundTripIsZeroCopyAndLeakFree(t *testing.T) {
	lat := testLattice(t)
	start := AllocatedBytes()
	for k := 0; k < 1000; k++ {
		f, err := NewField(lat, []string{"a", "b"})
		require.NoError(t, err)
		f.Comp(0)[0] = float64(k)
		rec, err := f.Record()
		require.NoError(t, err)
		var ca cdata.CArrowArray
		var cs cdata.CArrowSchema
		cdata.ExportArrowRecordBatch(rec, &ca, &cs)
		rec.Release()
		back, err := cdata.ImportCRecordBatch(&ca, &cs)
		require.NoError(t, err)
		g, err := FieldFromRecord(back, nil)
		require.NoError(t, err)
		back.Release()
		assert.Equal(t, &f.Comp(0)[0], &g.Comp(0)[0])
		assert.Equal(t, float64(k), g.Comp(0)[0])
		require.NoError(t, f.Release())
		require.NoError(t, g.Release())
	}
	assert.Equal(t, start, AllocatedBytes())
}

func TestFieldFromRecordRejectsBadColumns(t *testing.T) {
	lat := testLattice(t)
	n := lat.Sites()
	mk := func(dt arrow.DataType, length int, nulls bool) arrow.RecordBatch {
		b := array.NewBuilder(memory.DefaultAllocator, dt)
		defer b.Release()
		for i := 0; i < length; i++ {
			switch bb := b.(type) {
			case *array.Float64Builder:
				if nulls && i == 0 {
					bb.AppendNull()
				} else {
					bb.Append(1)
				}
			case *array.Int64Builder:
				bb.Append(1)
			}
		}
		arr := b.NewArray()
		defer arr.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: dt, Nullable: true}}, nil)
		return array.NewRecordBatch(schema, []arrow.Array{arr}, int64(length))
	}
	cases := []struct {
		rec  arrow.RecordBatch
		kind errs.Kind
	}{
		{mk(arrow.PrimitiveTypes.Int64, n, false), errs.Layout},
		{mk(arrow.PrimitiveTypes.Float64, n, true), errs.Layout},
		{mk(arrow.PrimitiveTypes.Float64, n-1, false), errs.Shape},
	}
	for _, c := range cases {
		_, err := FieldFromRecord(c.rec, &lat)
		assert.Equal(t, c.kind, errs.KindOf(err), "%v", err)
		c.rec.Release()
	}
	noMeta := mk(arrow.PrimitiveTypes.Float64, n, false)
	defer noMeta.Release()
	_, err := FieldFromRecord(noMeta, nil)
	assert.Equal(t, errs.Format, errs.KindOf(err))
}

func TestReleaseTwiceAndUseAfterRelease(t *testing.T) {
	f, err := NewField(testLattice(t), []string{"a"})
	require.NoError(t, err)
	require.NoError(t, f.Release())
	assert.True(t, errs.Is(f.Release(), errs.Released))
	_, err = f.Sum(0)
	assert.True(t, errs.Is(err, errs.Released))
	_, err = f.Record()
	assert.True(t, errs.Is(err, errs.Released))
}

func TestSumCompensatedIsAccurate(t *testing.T) {
	xs := []float64{1e16, 1, -1e16, 1}
	assert.Equal(t, 2.0, SumCompensated(xs))
}
