package pybind

import (
	"bytes"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fieldgo/fieldgo/core/radiation"
	"github.com/fieldgo/fieldgo/core/trajectory"
)

// Bad arguments across the bridge are typed errors, never panics.
func TestRadiationBridgeErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		kind string
	}{
		{"null pairs", radiationError(0, 0, 0, 1, ""), "FormatError"},
		{"bad options", radiationError(0, 0, 0, 1, "{"), "ParameterError"},
		{"bad method", radiationError(0, 0, 0, 1, `{"method":"euler"}`), "ParameterError"},
		{"unknown call", func() error { _, err := CallWait(1<<40, 1); return err }(), "ReleasedError"},
		{"empty info pair", func() error { p := NewArrowPair(); defer FreeArrowPair(p); _, err := TrajectoryInfo(p, 0); return err }(), "FormatError"},
		{"lab time null", func() error { _, err := TrajectoryFromLabTime(0, "", 1, "1", "1"); return err }(), "FormatError"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), "fieldgo["+c.kind+"]") {
			t.Errorf("%s: %v, want %s", c.name, c.err, c.kind)
		}
	}
	// A call's handle is released by its result, once.
	h, err := RadiationFieldsStart(0, 0, 0, 1, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := CallCancel(h); err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		if done, err = CallWait(h, 10); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := CallResultPointer(h); err == nil {
		t.Fatal("a call on null pairs succeeded")
	}
	if _, err := CallResultPointer(h); err == nil || !strings.Contains(err.Error(), "ReleasedError") {
		t.Fatalf("a call's result taken twice: %v", err)
	}
}

// radiationError runs a radiation call to its end and returns its error.
func radiationError(traj, obs, times uintptr, nsamples int, options string) error {
	h, err := RadiationFieldsStart(traj, obs, times, nsamples, options, false)
	if err != nil {
		return err
	}
	for done := false; !done; {
		if done, err = CallWait(h, 10); err != nil {
			return err
		}
	}
	_, err = CallResultPointer(h)
	return err
}

// radiationScene is the api benchmark's table (16 circular orbits at beta
// 0.5..0.8, 16 knots per period, 8 periods) with o observers on a sphere of
// radius 50 and s shared times, as Arrow records.
func radiationScene(tb testing.TB, o, s int) (traj, obs, times arrow.RecordBatch) {
	var ls trajectory.LabSamples
	ls.C, ls.Charge, ls.Mass = 1, []float64{1}, []float64{1}
	for p := 0; p < 16; p++ {
		beta := 0.5 + 0.3*float64(p)/15
		period := 2 * math.Pi / beta
		ls.Off = append(ls.Off, len(ls.T))
		ls.IDs = append(ls.IDs, int64(p))
		for k := 0; k <= 8*16; k++ {
			t := -4*period + 8*period*float64(k)/128
			sn, cs := math.Sincos(beta*t + float64(p))
			ls.T, ls.X, ls.Y, ls.Z = append(ls.T, t), append(ls.X, cs), append(ls.Y, sn), append(ls.Z, 0)
			ls.Vx, ls.Vy, ls.Vz = append(ls.Vx, -beta*sn), append(ls.Vy, beta*cs), append(ls.Vz, 0)
		}
	}
	ls.Off = append(ls.Off, len(ls.T))
	traj, err := trajectory.FromLabTime(ls)
	if err != nil {
		tb.Fatal(err)
	}
	column := func(v []float64) arrow.Array {
		b := array.NewFloat64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(v, nil)
		return b.NewArray()
	}
	var x, y, z, ts []float64
	for i := 0; i < o; i++ {
		zi := 1 - 2*(float64(i)+0.5)/float64(o)
		r, ph := math.Sqrt(1-zi*zi), float64(i)*math.Pi*(3-math.Sqrt(5))
		x, y, z = append(x, 50*r*math.Cos(ph)), append(y, 50*r*math.Sin(ph)), append(z, 50*zi)
	}
	for i := 0; i < s; i++ {
		ts = append(ts, 50+2*(2*math.Pi/0.5)*float64(i)/float64(s))
	}
	f64 := arrow.PrimitiveTypes.Float64
	obs = array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: f64}, {Name: "y", Type: f64}, {Name: "z", Type: f64}}, nil),
		[]arrow.Array{column(x), column(y), column(z)}, int64(o))
	times = array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "t", Type: f64}}, nil), []arrow.Array{column(ts)}, int64(s))
	return traj, obs, times
}

// BenchmarkRadiationFieldsCall is one fields call through the bridge's
// functions on a tiny scene (1 observer x 1 sample x 16 particles, the
// same table every call): "call" is the Go share of a call's fixed cost
// (the exports of the inputs, which Python makes, included), "fields" the
// computation alone on the kept table, which the call adds to.
func BenchmarkRadiationFieldsCall(b *testing.B) {
	traj, obs, times := radiationScene(b, 1, 1)
	defer traj.Release()
	defer obs.Release()
	defer times.Release()
	opts := `{"method":"newton","search":"warm","precision":"float64","backend":"cpu"}`
	call := func() {
		pairs := []uintptr{exportBatch(traj), exportBatch(obs), exportBatch(times)}
		h, err := RadiationFieldsStart(pairs[0], pairs[1], pairs[2], 1, opts, false)
		if err != nil {
			b.Fatal(err)
		}
		for done := false; !done; {
			if done, err = CallWait(h, 10); err != nil {
				b.Fatal(err)
			}
		}
		out, err := CallResultPointer(h)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range append(pairs, out) {
			FreeArrowPair(p)
		}
	}
	b.Run("call", func(b *testing.B) {
		for b.Loop() {
			call()
		}
	})
	b.Run("fields", func(b *testing.B) {
		call() // keeps the table
		pair := exportBatch(traj)
		defer FreeArrowPair(pair)
		src, err := preparedSourceOf(pair, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer keepSource(src, false)
		var ro radiationOptions
		opt, _ := ro.options()
		col := func(rec arrow.RecordBatch, k int) []float64 { return rec.Column(k).(*array.Float64).Float64Values() }
		ob := radiation.Observers{X: col(obs, 0), Y: col(obs, 1), Z: col(obs, 2)}
		for b.Loop() {
			cube, err := fieldsOf(src, ob, col(times, 0), 1, opt)
			if err != nil {
				b.Fatal(err)
			}
			cube.Release()
		}
	})
	if err := ForgetRadiationInputs(); err != nil {
		b.Fatal(err)
	}
}

// The kept table is recognised by every byte: the same table matches, and
// one changed in place (a value, its metadata, a shorter slice of it) or a
// new one with other values, or another tolerance, does not.
func TestTableKeySeesEveryChange(t *testing.T) {
	traj, _, _ := radiationScene(t, 1, 1)
	defer traj.Release()
	var key bytes.Buffer
	writeTableKey(&key, traj, 0)
	if !keyMatches(traj, 0, key.Bytes()) {
		t.Fatal("the same table does not match its key")
	}
	if keyMatches(traj, 1e-9, key.Bytes()) {
		t.Fatal("another tolerance matches")
	}
	x := traj.Column(traj.Schema().FieldIndices("x")[0]).(*array.Float64).Float64Values()
	old := x[77]
	x[77] = math.Nextafter(old, 2) // in place: the same buffers, one bit changed
	if keyMatches(traj, 0, key.Bytes()) {
		t.Fatal("a value changed in place matches")
	}
	x[77] = old
	if !keyMatches(traj, 0, key.Bytes()) {
		t.Fatal("the table restored does not match")
	}
	short := traj.NewSlice(0, traj.NumRows()-1)
	defer short.Release()
	if keyMatches(short, 0, key.Bytes()) {
		t.Fatal("a slice of the table matches")
	}
	md := traj.Schema().Metadata()
	keys, vals := md.Keys(), append([]string(nil), md.Values()...)
	for i, k := range keys {
		if k == "c" {
			vals[i] = "2"
		}
	}
	other := arrow.NewMetadata(keys, vals)
	recharged := array.NewRecordBatch(arrow.NewSchema(traj.Schema().Fields(), &other), traj.Columns(), traj.NumRows())
	defer recharged.Release()
	if keyMatches(recharged, 0, key.Bytes()) {
		t.Fatal("other metadata matches")
	}
	fields := traj.Schema().Fields()
	fields[3].Name = "x2"
	renamed := array.NewRecordBatch(arrow.NewSchema(fields, &md), traj.Columns(), traj.NumRows())
	defer renamed.Release()
	fields[3].Name, fields[3].Metadata = traj.Schema().Field(3).Name, arrow.NewMetadata([]string{"unit"}, []string{"cm"})
	annotated := array.NewRecordBatch(arrow.NewSchema(fields, &md), traj.Columns(), traj.NumRows())
	defer annotated.Release()
	if keyMatches(renamed, 0, key.Bytes()) || keyMatches(annotated, 0, key.Bytes()) {
		t.Fatal("a renamed or annotated column matches")
	}
	if keyMatches(traj, 0, key.Bytes()[:key.Len()-1]) || keyMatches(traj, 0, append(key.Bytes(), 0)) {
		t.Fatal("a key shorter or longer than the table's matches")
	}
}

// float64Columns reads plain float64 batches where they lie (a slice's
// offsets included) and declines every other batch, which the import then
// judges; the block's structs stay with their owner.
func TestFloat64ColumnsReadsPlainBatchesInPlace(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	batch := func(names []string, types []arrow.DataType, valid []bool, cols ...[]float64) arrow.RecordBatch {
		fields := make([]arrow.Field, len(names))
		arrs := make([]arrow.Array, len(names))
		for i, name := range names {
			fields[i] = arrow.Field{Name: name, Type: types[i], Nullable: true}
			switch types[i] {
			case f64:
				b := array.NewFloat64Builder(memory.DefaultAllocator)
				b.AppendValues(cols[i], valid)
				arrs[i] = b.NewArray()
				b.Release()
			default:
				b := array.NewFloat32Builder(memory.DefaultAllocator)
				for _, v := range cols[i] {
					b.Append(float32(v))
				}
				arrs[i] = b.NewArray()
				b.Release()
			}
		}
		return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(len(cols[0])))
	}
	xyz := []string{"x", "y", "z"}
	all := []arrow.DataType{f64, f64, f64}
	x, y, z := []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, []float64{9, 10, 11, 12}
	read := func(rec arrow.RecordBatch, names ...string) ([][]float64, bool) {
		p := exportBatch(rec)
		defer FreeArrowPair(p)
		cols, ok := float64Columns(p, names...)
		if ok {
			cols2 := make([][]float64, len(cols))
			for i, c := range cols {
				cols2[i] = append([]float64(nil), c...) // the block is freed on return
			}
			cols = cols2
		}
		return cols, ok
	}
	plain := batch(xyz, all, nil, x, y, z)
	defer plain.Release()
	if cols, ok := read(plain, xyz...); !ok || !slices.Equal(cols[0], x) || !slices.Equal(cols[2], z) {
		t.Fatalf("plain batch: %v %v", cols, ok)
	}
	part := plain.NewSlice(1, 3)
	defer part.Release()
	if cols, ok := read(part, xyz...); !ok || !slices.Equal(cols[1], y[1:3]) {
		t.Fatalf("a slice: %v %v", cols, ok)
	}
	empty := plain.NewSlice(2, 2)
	defer empty.Release()
	if cols, ok := read(empty, xyz...); !ok || len(cols[0]) != 0 {
		t.Fatalf("no rows: %v %v", cols, ok)
	}
	declined := map[string]arrow.RecordBatch{
		"a null":         batch(xyz, all, []bool{true, false, true, true}, x, y, z),
		"another order":  batch([]string{"y", "x", "z"}, all, nil, x, y, z),
		"a float32":      batch(xyz, []arrow.DataType{f64, arrow.PrimitiveTypes.Float32, f64}, nil, x, y, z),
		"another column": batch([]string{"x", "y", "z", "w"}, []arrow.DataType{f64, f64, f64, f64}, nil, x, y, z, z),
	}
	for what, rec := range declined {
		if _, ok := read(rec, xyz...); ok {
			t.Errorf("%s: read in place", what)
		}
		rec.Release()
	}
	if _, ok := float64Columns(0, xyz...); ok {
		t.Error("a null block: read")
	}
	p := exportBatch(plain)
	defer FreeArrowPair(p)
	float64Columns(p, xyz...)
	if rec, err := importPair(p, "observers"); err != nil { // the structs are still there
		t.Fatal(err)
	} else {
		rec.Release()
	}
}

// The options of a call are decoded once per distinct string; a bad string
// after a good one is still refused, and the good one still reads.
func TestRadiationOptionsOf(t *testing.T) {
	for _, c := range []struct {
		s      string
		method string
		bad    bool
	}{{`{"method":"rk4"}`, "rk4", false}, {`{"method":"rk4"}`, "rk4", false}, {`{"method":`, "", true},
		{`{"method":"rk4"}`, "rk4", false}, {"", "", false}, {`{"nmethod":"rk4"}`, "", true}, {"", "", false}} {
		ro, err := radiationOptionsOf(c.s)
		if (err != nil) != c.bad || ro.Method != c.method {
			t.Fatalf("%q: %+v, %v", c.s, ro, err)
		}
	}
}

// writeCKey keys a table by its C structs: two exports of the same table
// have the same key, and a value changed in place, a slice, other metadata,
// another tolerance or a column renamed change it; a column it does not
// read (a string) makes it decline, and the table is imported instead.
func TestCKeySeesEveryChange(t *testing.T) {
	traj, _, _ := radiationScene(t, 1, 1)
	defer traj.Release()
	key := func(rec arrow.RecordBatch, tol float64) ([]byte, bool) {
		p := exportBatch(rec)
		defer FreeArrowPair(p)
		var b bytes.Buffer
		ok := writeCKey(&b, p, tol)
		return b.Bytes(), ok
	}
	k0, ok := key(traj, 0)
	if !ok || int64(len(k0)) < traj.NumRows()*8*10 {
		t.Fatalf("the api table: ok=%v, %d bytes", ok, len(k0))
	}
	if k1, _ := key(traj, 0); !bytes.Equal(k0, k1) {
		t.Fatal("two exports of one table have different keys")
	}
	if k1, _ := key(traj, 1e-9); bytes.Equal(k0, k1) {
		t.Fatal("another tolerance has the same key")
	}
	x := traj.Column(traj.Schema().FieldIndices("x")[0]).(*array.Float64).Float64Values()
	old := x[100]
	x[100] = math.Nextafter(old, 2)
	if k1, _ := key(traj, 0); bytes.Equal(k0, k1) {
		t.Fatal("a value changed in place has the same key")
	}
	x[100] = old
	part := traj.NewSlice(1, traj.NumRows())
	defer part.Release()
	md := traj.Schema().Metadata()
	keys, vals := md.Keys(), append([]string(nil), md.Values()...)
	vals[0] += " "
	other := arrow.NewMetadata(keys, vals)
	remeta := array.NewRecordBatch(arrow.NewSchema(traj.Schema().Fields(), &other), traj.Columns(), traj.NumRows())
	defer remeta.Release()
	fields := traj.Schema().Fields()
	fields[2].Name = "t2"
	renamed := array.NewRecordBatch(arrow.NewSchema(fields, &md), traj.Columns(), traj.NumRows())
	defer renamed.Release()
	for what, rec := range map[string]arrow.RecordBatch{"a slice": part, "other metadata": remeta, "a renamed column": renamed} {
		if k1, ok := key(rec, 0); !ok || bytes.Equal(k0, k1) {
			t.Errorf("%s: ok=%v, same key %v", what, ok, bytes.Equal(k0, k1))
		}
	}
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.AppendValues(make([]string, traj.NumRows()), nil)
	names := sb.NewArray()
	sb.Release()
	defer names.Release()
	labelled := array.NewRecordBatch(arrow.NewSchema(append(traj.Schema().Fields(), arrow.Field{Name: "label", Type: arrow.BinaryTypes.String}), &md),
		append(traj.Columns(), names), traj.NumRows())
	defer labelled.Release()
	if _, ok := key(labelled, 0); ok {
		t.Error("a string column was keyed")
	}
	if writeCKey(io.Discard, 0, 0) {
		t.Error("a null block was keyed")
	}
}

// A kept table is found again by its C key without an import, and one
// with a column writeCKey does not read is kept by its imported key; each
// is prepared again when it changes.
func TestKeptTableEitherKey(t *testing.T) {
	traj, obs, times := radiationScene(t, 2, 3)
	defer traj.Release()
	defer obs.Release()
	defer times.Release()
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.AppendValues(make([]string, traj.NumRows()), nil)
	names := sb.NewArray()
	sb.Release()
	defer names.Release()
	md := traj.Schema().Metadata()
	labelled := array.NewRecordBatch(arrow.NewSchema(append(traj.Schema().Fields(), arrow.Field{Name: "label", Type: arrow.BinaryTypes.String}), &md),
		append(traj.Columns(), names), traj.NumRows())
	defer labelled.Release()
	defer ForgetRadiationInputs()
	for _, rec := range []arrow.RecordBatch{traj, labelled} {
		ForgetRadiationInputs()
		var first *preparedSource
		for call := 0; call < 3; call++ {
			p := exportBatch(rec)
			src, err := preparedSourceOf(p, 0)
			FreeArrowPair(p)
			if err != nil {
				t.Fatal(err)
			}
			keepSource(src, true)
			if call == 0 {
				first = src
			} else if src != first {
				t.Fatalf("%d columns, call %d: the kept table was prepared again", rec.NumCols(), call)
			}
		}
		want := map[int64]byte{10: cKeyKind, 11: goKeyKind}[rec.NumCols()]
		if first.key[0] != want {
			t.Fatalf("%d columns: a key of kind %c, want %c", rec.NumCols(), first.key[0], want)
		}
		x := rec.Column(rec.Schema().FieldIndices("x")[0]).(*array.Float64).Float64Values()
		x[5] += 1e-3
		p := exportBatch(rec)
		src, err := preparedSourceOf(p, 0)
		FreeArrowPair(p)
		x[5] -= 1e-3
		if err != nil {
			t.Fatal(err)
		}
		if src == first {
			t.Fatalf("%d columns: a table changed in place was not prepared again", rec.NumCols())
		}
		keepSource(src, false)
	}
}
