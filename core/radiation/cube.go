package radiation

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Schema metadata keys of a cube's RecordBatch.
const (
	MetaObservers = "observers"
	MetaSamples   = "samples"
	MetaParticles = "particles"
	MetaMethod    = "method"
	MetaNIters    = "n_iters"
	MetaNSubsteps = "n_substeps"
	MetaSearch    = "search"
	MetaCoefReuse = "coef_reuse"
	MetaPrecision = "precision"
	MetaC         = "c"
)

// Record returns the cube as an Arrow RecordBatch sharing its memory: one
// float64 column per component (and retarded time), O*S rows observer-major,
// sizes and options in the schema metadata. Release it when done.
func (c *Cube) Record() arrow.RecordBatch {
	n := c.O * c.S
	fields := make([]arrow.Field, len(c.Columns))
	cols := make([]arrow.Array, len(c.Columns))
	for k, name := range c.Columns {
		fields[k] = arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64}
		buf := memory.SliceBuffer(c.buf, k*n*8, n*8)
		d := array.NewData(arrow.PrimitiveTypes.Float64, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
		buf.Release()
		cols[k] = array.MakeFromData(d)
		d.Release()
	}
	o := c.Options
	md := arrow.NewMetadata(
		[]string{MetaObservers, MetaSamples, MetaParticles, MetaMethod, MetaNIters, MetaNSubsteps, MetaSearch, MetaCoefReuse, MetaPrecision, MetaC},
		[]string{strconv.Itoa(c.O), strconv.Itoa(c.S), strconv.Itoa(c.P), o.Method.String(), strconv.Itoa(o.NIters),
			strconv.Itoa(o.NSubsteps), o.Search.String(), strconv.FormatBool(o.CoefReuse), o.Precision.String(),
			strconv.FormatFloat(c.C, 'g', -1, 64)})
	rec := array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, int64(n))
	for _, a := range cols {
		a.Release()
	}
	return rec
}
