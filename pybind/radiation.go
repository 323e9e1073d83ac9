package pybind

/*
#include <stdlib.h>
#include <string.h>
#include "arrow_c_abi.h"
typedef struct { struct ArrowSchema schema; struct ArrowArray array; } fg_arrow_pair_r;
*/
import "C"

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/fieldgo/fieldgo/core/radiation"
	"github.com/fieldgo/fieldgo/core/trajectory"
	"github.com/fieldgo/fieldgo/errs"
)

// importPair moves the RecordBatch exported into pair block p into Go (no
// copy of the data). Free the block afterwards.
func importPair(p uintptr, what string) (arrow.RecordBatch, error) {
	if p == 0 {
		return nil, errs.New(errs.Format, "%s: null Arrow C Data address", what)
	}
	pair := (*C.fg_arrow_pair_r)(cAddr(p))
	if pair.array.release == nil || pair.schema.release == nil {
		return nil, errs.New(errs.Format, "%s: the Arrow C Data structs are empty or already released", what)
	}
	rec, err := cdata.ImportCRecordBatch(
		(*cdata.CArrowArray)(unsafe.Pointer(&pair.array)),
		(*cdata.CArrowSchema)(unsafe.Pointer(&pair.schema)))
	if err != nil {
		return nil, errs.Wrap(errs.Format, err, "%s: cannot import Arrow C Data", what)
	}
	return rec, nil
}

// float64Columns are the columns of the record batch in pair block p, read
// where its exporter keeps them, when the batch is a struct of exactly the
// named float64 columns, in that order, with no nulls: the observers and
// times a call brings. Importing such a batch cost more than the rest of
// its handling (a third of a small call's Go time for three batches). ok is
// false for any other batch, which importPair then reads and judges. The
// slices are the exporter's memory: use them only until the block is freed,
// and leave the block's structs where they are (its owner releases them).
func float64Columns(p uintptr, names ...string) (cols [][]float64, ok bool) {
	if p == 0 {
		return nil, false
	}
	pair := (*C.fg_arrow_pair_r)(cAddr(p))
	s, a := &pair.schema, &pair.array
	k := len(names)
	if s.release == nil || a.release == nil || s.format == nil || C.GoString(s.format) != "+s" || s.dictionary != nil ||
		int(s.n_children) != k || int(a.n_children) != k || a.offset != 0 || a.length < 0 || a.dictionary != nil || !noNulls(a) {
		return nil, false
	}
	n := int(a.length)
	sc, ac := unsafe.Slice(s.children, k), unsafe.Slice(a.children, k)
	cols = make([][]float64, k)
	for i, name := range names {
		cs, ca := sc[i], ac[i]
		if cs == nil || ca == nil || cs.format == nil || cs.name == nil || C.GoString(cs.format) != "g" || C.GoString(cs.name) != name ||
			cs.dictionary != nil || ca.n_buffers != 2 || ca.offset < 0 || ca.length < a.length || !noNulls(ca) {
			return nil, false
		}
		data := unsafe.Slice(ca.buffers, 2)[1]
		if n == 0 {
			cols[i] = []float64{}
			continue
		}
		if data == nil {
			return nil, false
		}
		off := int(ca.offset)
		cols[i] = unsafe.Slice((*float64)(data), off+n)[off:]
	}
	return cols, true
}

// noNulls reports whether array a has no nulls by its count, or by having
// no validity bitmap when the count is unknown (-1).
func noNulls(a *C.struct_ArrowArray) bool {
	if a.null_count == 0 {
		return true
	}
	return a.null_count == -1 && (a.n_buffers < 1 || unsafe.Slice(a.buffers, 1)[0] == nil)
}

func float64Column(rec arrow.RecordBatch, name, what string) ([]float64, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil, errs.New(errs.Format, "%s: no column %q", what, name)
	}
	col, ok := rec.Column(idx[0]).(*array.Float64)
	if !ok {
		return nil, errs.New(errs.Layout, "%s: column %q has type %s, want float64", what, name, rec.Column(idx[0]).DataType())
	}
	if col.NullN() != 0 {
		return nil, errs.New(errs.Layout, "%s: column %q has nulls", what, name)
	}
	return col.Float64Values(), nil
}

// radiationOptions is the JSON options object of RadiationFields.
type radiationOptions struct {
	Method    string  `json:"method"`     // "newton" | "rk4"
	NIters    *int    `json:"n_iters"`    // default 2
	NSubsteps *int    `json:"n_substeps"` // default 4
	Search    string  `json:"search"`     // "warm" | "cold"
	CoefReuse *bool   `json:"coef_reuse"` // default true
	Precision string  `json:"precision"`  // "float64" | "float32"
	Retarded  bool    `json:"retarded"`
	Threads   int     `json:"threads"`
	Segment   int     `json:"segment"`   // samples per walk; 0: automatic
	Tolerance float64 `json:"tolerance"` // of u.u = c^2
	Backend   string  `json:"backend"`   // "auto" | "cpu" | "cuda"
}

func (ro radiationOptions) options() (radiation.Options, error) {
	o := radiation.DefaultOptions()
	switch strings.ToLower(ro.Method) {
	case "", "newton":
	case "rk4":
		o.Method = radiation.RK4
	default:
		return o, errs.New(errs.Parameter, "method=%q: use \"newton\" or \"rk4\"", ro.Method)
	}
	switch strings.ToLower(ro.Search) {
	case "", "warm":
	case "cold":
		o.Search = radiation.Cold
	default:
		return o, errs.New(errs.Parameter, "search=%q: use \"warm\" or \"cold\"", ro.Search)
	}
	switch strings.ToLower(ro.Precision) {
	case "", "float64":
	case "float32":
		o.Precision = radiation.Float32
	default:
		return o, errs.New(errs.Parameter, "precision=%q: use \"float64\" or \"float32\"", ro.Precision)
	}
	if ro.NIters != nil {
		o.NIters = *ro.NIters
	}
	if ro.NSubsteps != nil {
		o.NSubsteps = *ro.NSubsteps
	}
	if ro.CoefReuse != nil {
		o.CoefReuse = *ro.CoefReuse
	}
	o.Retarded, o.Threads, o.Segment = ro.Retarded, ro.Threads, ro.Segment
	return o, nil
}

// RadiationFieldsStart starts computing the Liénard–Wiechert cube and
// returns the call's handle (CallWait, CallCancel; a cancelled call fails
// with CancelledError). traj, obs and times are pair blocks holding a
// trajectory table, the observers (columns x, y, z) and the observation
// times (column t: nsamples values shared by all observers, or observers x
// nsamples, observer-major); options is a JSON object (see
// radiationOptions). The call reads the blocks' structs until it returns:
// free them only after. Its result (CallResultPointer) is a new pair block
// holding the cube as a RecordBatch (one float64 column per component,
// observers x samples rows); with onDevice, the cube stays in GPU memory
// and the result (CallResult) is JSON {handle, ptr, bytes, device, columns,
// observers, samples}: the columns one after the other (observers x samples
// float64 each, observer-major) from device address ptr, settled;
// ReleaseRadiationCube(handle) frees it.
func RadiationFieldsStart(traj, obs, times uintptr, nsamples int, options string, onDevice bool) (h int64, err error) {
	defer recoverInto(&err)
	return startCall(func(cancel *atomic.Bool) (string, uintptr, error) {
		cube, err := radiationCube(cancel, traj, obs, times, nsamples, options, onDevice)
		if err != nil {
			return "", 0, err
		}
		if onDevice {
			d := map[string]any{"columns": cube.Columns, "observers": cube.O, "samples": cube.S, "ptr": uint64(0), "bytes": 0, "device": 0}
			if cube.Device != nil {
				d["ptr"], d["bytes"], d["device"] = cube.Device.Ptr, cube.Device.Bytes, cube.Device.Device
			}
			d["handle"] = register(cube)
			return jsonString(d), 0, nil
		}
		rec := cube.Record()
		cube.Release() // the record holds its own reference
		defer rec.Release()
		return "", exportBatch(rec), nil
	}, nil), nil
}

// ReleaseRadiationCube frees a cube left on the device.
func ReleaseRadiationCube(h int64) (err error) {
	defer recoverInto(&err)
	obj, err := unregister(h)
	if err != nil {
		return bridge(errs.New(errs.Released, "the device cube has already been released"))
	}
	cube, ok := obj.(*radiation.Cube)
	if !ok {
		return bridge(errs.New(errs.Handle, "handle %d is a %T, not a radiation cube", h, obj))
	}
	return bridge(cube.Release())
}

func radiationCube(cancel *atomic.Bool, traj, obs, times uintptr, nsamples int, options string, onDevice bool) (*radiation.Cube, error) {
	ro, err := radiationOptionsOf(options)
	if err != nil {
		return nil, err
	}
	opt, err := ro.options()
	if err != nil {
		return nil, err
	}
	if opt.Device, err = radiationDevice(ro.Backend); err != nil {
		return nil, err
	}
	opt.OnDevice, opt.Cancel = onDevice, cancel
	src, err := preparedSourceOf(traj, ro.Tolerance)
	if err != nil {
		return nil, err
	}
	ob, ts, release, err := observersAndTimes(obs, times)
	defer release()
	var cube *radiation.Cube
	if err == nil {
		cube, err = fieldsOf(src, ob, ts, nsamples, opt)
	}
	keepSource(src, err == nil)
	return cube, err
}

// observersAndTimes reads the observers' x, y, z and the times' t from
// their pair blocks: in place when they are plain float64 columns
// (float64Columns), else through an import, which also names what is wrong
// with them. release ends the imports' hold.
func observersAndTimes(obs, times uintptr) (ob radiation.Observers, ts []float64, release func(), err error) {
	var recs []arrow.RecordBatch
	release = func() {
		for _, r := range recs {
			r.Release()
		}
	}
	if cols, ok := float64Columns(obs, "x", "y", "z"); ok {
		ob.X, ob.Y, ob.Z = cols[0], cols[1], cols[2]
	} else {
		rec, err := importPair(obs, "observers")
		if err != nil {
			return ob, nil, release, err
		}
		recs = append(recs, rec)
		for i, name := range []string{"x", "y", "z"} {
			col, err := float64Column(rec, name, "observers")
			if err != nil {
				return ob, nil, release, err
			}
			*[]*[]float64{&ob.X, &ob.Y, &ob.Z}[i] = col
		}
	}
	if cols, ok := float64Columns(times, "t"); ok {
		return ob, cols[0], release, nil
	}
	rec, err := importPair(times, "times")
	if err != nil {
		return ob, nil, release, err
	}
	recs = append(recs, rec)
	ts, err = float64Column(rec, "t", "times")
	return ob, ts, release, err
}

// lastOptions is the options string a radiation call decoded last, with
// what it decoded to: a loop of calls passes the same string each time.
var lastOptions atomic.Pointer[optionsMemo]

type optionsMemo struct {
	s  string
	ro radiationOptions // read only: its pointers are shared by the calls
}

// radiationOptionsOf decodes the options JSON of a radiation call.
func radiationOptionsOf(s string) (radiationOptions, error) {
	if d := lastOptions.Load(); d != nil && d.s == s {
		return d.ro, nil
	}
	var ro radiationOptions
	if s != "" {
		if e := decodeOptions(s, &ro); e != nil {
			return ro, errs.New(errs.Parameter, "radiation options are not a JSON object: %v", e)
		}
	}
	lastOptions.Store(&optionsMemo{s: s, ro: ro})
	return ro, nil
}

func fieldsOf(src *preparedSource, ob radiation.Observers, ts []float64, nsamples int, opt radiation.Options) (*radiation.Cube, error) {
	opt.Prepared = src.prep
	return radiation.Fields(src.src, ob, ts, nsamples, opt)
}

// preparedSource is a trajectory table's splines with their
// radiation.Prepared (knots, records, observer arrays), kept after a
// successful call while the next calls bring the same table: validating,
// splining and preparing it again was about a third of an on-device call on
// the GPU benchmark's scene. key is its kind (cKeyKind, goKeyKind) and
// then the table's bytes (schema, metadata, every buffer) and the
// tolerance; refs counts the cache's hold and each running call's.
type preparedSource struct {
	key  []byte
	src  radiation.Source
	prep *radiation.Prepared
	refs atomic.Int32
}

func (p *preparedSource) release() {
	if p.refs.Add(-1) == 0 {
		p.src.State.Release()
		p.src.Accel.Release()
	}
}

// lastSource holds the last table's preparedSource (one: a sweep over
// observers or times repeats one table; other tables are splined per call).
var lastSource struct {
	sync.Mutex
	p *preparedSource
}

// The kinds of table keys: writeCKey's (the table's C structs, before any
// import) and writeTableKey's (an imported table's).
const (
	cKeyKind  = 'c'
	goKeyKind = 'g'
)

// preparedSourceOf is the kept preparedSource of the table in pair block
// pair when it is the last table's, else a new one; release it with
// keepSource.
func preparedSourceOf(pair uintptr, tolerance float64) (*preparedSource, error) {
	lastSource.Lock()
	kept := lastSource.p
	if kept != nil {
		kept.refs.Add(1)
	}
	lastSource.Unlock()
	// A table whose structs writeCKey reads is compared, and keyed, where
	// pyarrow keeps it (a kept table is then never imported: the import was
	// the largest part of a repeated call's Go time); any other is imported
	// and keyed by writeTableKey.
	if kept != nil && kept.key[0] == cKeyKind {
		m := keyMatcher{key: kept.key[1:], ok: true}
		if writeCKey(&m, pair, tolerance) && m.ok && len(m.key) == 0 {
			return kept, nil
		}
	}
	var key bytes.Buffer
	key.WriteByte(cKeyKind)
	if !writeCKey(&key, pair, tolerance) {
		key.Reset()
	}
	rec, err := importPair(pair, "trajectories")
	if err != nil {
		if kept != nil {
			kept.release()
		}
		return nil, err
	}
	defer rec.Release()
	if kept != nil && kept.key[0] == goKeyKind && keyMatches(rec, tolerance, kept.key[1:]) {
		return kept, nil
	}
	if kept != nil {
		kept.release()
	}
	if key.Len() == 0 {
		key.WriteByte(goKeyKind)
		writeTableKey(&key, rec, tolerance)
	}
	tr, err := trajectory.FromRecord(rec, trajectory.Options{Tolerance: tolerance})
	if err != nil {
		return nil, err
	}
	defer tr.Release()
	state, accel, err := tr.Splines()
	if err != nil {
		return nil, err
	}
	p := &preparedSource{key: key.Bytes(), prep: &radiation.Prepared{},
		src: radiation.Source{State: state, Accel: accel, Charge: append([]float64(nil), tr.Charge...), C: tr.C}}
	p.refs.Store(1)
	return p, nil
}

// keepSource ends a call's hold on p, and keeps p for the next calls when
// the call succeeded (a failed or cancelled call leaves no memory behind).
func keepSource(p *preparedSource, ok bool) {
	if ok {
		lastSource.Lock()
		if old := lastSource.p; old != p {
			p.refs.Add(1)
			lastSource.p = p
			if old != nil {
				old.release()
			}
		}
		lastSource.Unlock()
	}
	p.release()
}

// ForgetRadiationInputs drops the kept trajectory splines (C memory that
// fieldgo.allocated_bytes counts) of the last radiation call.
func ForgetRadiationInputs() (err error) {
	defer recoverInto(&err)
	lastSource.Lock()
	p := lastSource.p
	lastSource.p = nil
	lastSource.Unlock()
	if p != nil {
		p.release()
	}
	return nil
}

// writeTableKey writes rec's identity for lastSource to w: its fields'
// names, types, nullability and metadata, its metadata, the tolerance, every
// column's type, length, offset and buffers' bytes. (Schema.String, which
// says the same, took half of a kept table's comparison.)
func writeTableKey(w io.Writer, rec arrow.RecordBatch, tolerance float64) {
	var scratch [8]byte
	word := func(v uint64) { binary.LittleEndian.PutUint64(scratch[:], v); w.Write(scratch[:]) }
	str := func(s string) { word(uint64(len(s))); io.WriteString(w, s) }
	meta := func(md arrow.Metadata) {
		word(uint64(md.Len()))
		for i, k := range md.Keys() {
			str(k)
			str(md.Values()[i])
		}
	}
	sch := rec.Schema()
	word(uint64(sch.NumFields()))
	for i := 0; i < sch.NumFields(); i++ {
		f := sch.Field(i)
		str(f.Name)
		str(f.Type.String())
		nullable := uint64(0)
		if f.Nullable {
			nullable = 1
		}
		word(nullable)
		meta(f.Metadata)
	}
	meta(sch.Metadata())
	word(math.Float64bits(tolerance))
	var data func(d arrow.ArrayData)
	data = func(d arrow.ArrayData) {
		str(d.DataType().String())
		word(uint64(d.Len()))
		word(uint64(d.Offset()))
		for _, buf := range d.Buffers() {
			if buf == nil {
				word(^uint64(0))
				continue
			}
			word(uint64(buf.Len()))
			w.Write(buf.Bytes())
		}
		for _, c := range d.Children() {
			data(c)
		}
	}
	for _, col := range rec.Columns() {
		data(col.Data())
	}
}

// writeCKey writes the identity of the record batch in pair block p to w,
// read from its Arrow C structs without importing them: the tolerance, and
// for the batch and each column its format, name, flags, metadata, length,
// null count, offset and buffers' bytes. It reports false, having written
// part of it or nothing, for a block it does not read: null, released, or a
// layout other than a struct of fixed-width primitive or boolean columns.
// (A buffer is read from its start to its last value used, the values
// before an offset included: a key then and again is the same only if
// every byte the values come from is.)
func writeCKey(w io.Writer, p uintptr, tolerance float64) bool {
	if p == 0 {
		return false
	}
	pair := (*C.fg_arrow_pair_r)(cAddr(p))
	if pair.schema.release == nil || pair.array.release == nil {
		return false
	}
	var scratch [8]byte
	word := func(v uint64) { binary.LittleEndian.PutUint64(scratch[:], v); w.Write(scratch[:]) }
	bytesAt := func(ptr unsafe.Pointer, n int) { word(uint64(n)); w.Write(unsafe.Slice((*byte)(ptr), n)) }
	word(math.Float64bits(tolerance))
	var node func(s *C.struct_ArrowSchema, a *C.struct_ArrowArray, depth int) bool
	node = func(s *C.struct_ArrowSchema, a *C.struct_ArrowArray, depth int) bool {
		if s == nil || a == nil || s.format == nil || s.dictionary != nil || a.dictionary != nil || depth > 1 ||
			a.length < 0 || a.offset < 0 || a.n_buffers < 0 || a.n_children < 0 || s.n_children != a.n_children {
			return false
		}
		format := C.GoString(s.format)
		width, buffers := 0, 2
		switch format {
		case "+s":
			buffers = 1
		case "b":
		case "c", "C":
			width = 1
		case "s", "S", "e":
			width = 2
		case "i", "I", "f":
			width = 4
		case "l", "L", "g":
			width = 8
		default:
			return false
		}
		if int(a.n_buffers) != buffers || (format != "+s" && a.n_children != 0) {
			return false
		}
		bytesAt(unsafe.Pointer(s.format), len(format))
		if s.name != nil {
			bytesAt(unsafe.Pointer(s.name), int(C.strlen(s.name)))
		} else {
			word(^uint64(0))
		}
		word(uint64(s.flags))
		md, ok := metadataBytes(s.metadata)
		if !ok {
			return false
		}
		bytesAt(unsafe.Pointer(unsafe.SliceData(md)), len(md))
		word(uint64(a.length))
		word(uint64(a.null_count))
		word(uint64(a.offset))
		word(uint64(a.n_children))
		end := int(a.offset) + int(a.length)
		bufs := unsafe.Slice(a.buffers, buffers)
		for i, b := range bufs {
			n := (end + 7) / 8 // a validity bitmap, or booleans
			if i == 1 && width > 0 {
				n = width * end
			}
			if b == nil {
				if i == 1 && end > 0 {
					return false
				}
				word(^uint64(0))
				continue
			}
			bytesAt(unsafe.Pointer(b), n)
		}
		if a.n_children > 0 {
			sc, ac := unsafe.Slice(s.children, a.n_children), unsafe.Slice(a.children, a.n_children)
			for i := range sc {
				if !node(sc[i], ac[i], depth+1) {
					return false
				}
			}
		}
		return true
	}
	return node(&pair.schema, &pair.array, 0)
}

// metadataBytes are the bytes of an Arrow C schema's metadata (an int32
// count, then each key and value as an int32 length and its bytes), empty
// for none; ok is false for a negative count or length.
func metadataBytes(md *C.char) (b []byte, ok bool) {
	if md == nil {
		return nil, true
	}
	base := unsafe.Pointer(md)
	at := 0
	i32 := func() int {
		v := *(*int32)(unsafe.Add(base, at))
		at += 4
		return int(v)
	}
	n := i32()
	if n < 0 {
		return nil, false
	}
	for k := 0; k < 2*n; k++ {
		l := i32()
		if l < 0 {
			return nil, false
		}
		at += l
	}
	return unsafe.Slice((*byte)(base), at), true
}

// keyMatches reports whether rec and tolerance have the table key key. It
// compares as writeTableKey writes, without building the key: a repeated
// call reads the table once and allocates nothing (building and comparing
// the key was a fifth of a call on a small scene). Every byte is compared,
// so a table changed in place is seen.
func keyMatches(rec arrow.RecordBatch, tolerance float64, key []byte) bool {
	m := keyMatcher{key: key, ok: true}
	writeTableKey(&m, rec, tolerance)
	return m.ok && len(m.key) == 0
}

// keyMatcher is an io.Writer that compares what it is given with the rest
// of key.
type keyMatcher struct {
	key []byte
	ok  bool
}

func (m *keyMatcher) Write(p []byte) (int, error) {
	if m.ok {
		if len(p) > len(m.key) || !bytes.Equal(m.key[:len(p)], p) {
			m.ok = false
		} else {
			m.key = m.key[len(p):]
		}
	}
	return len(p), nil
}

// TrajectoryInfo validates the trajectory table in pair block p (moving its
// structs) and describes it as JSON: particles, ids, rows, charge, mass, c,
// units, tau range per particle.
func TrajectoryInfo(p uintptr, tolerance float64) (info string, err error) {
	defer recoverInto(&err)
	rec, err := importPair(p, "trajectories")
	if err != nil {
		return "", bridge(err)
	}
	defer rec.Release()
	tr, err := trajectory.FromRecord(rec, trajectory.Options{Tolerance: tolerance})
	if err != nil {
		return "", bridge(err)
	}
	defer tr.Release()
	ranges := make([][2]float64, tr.P)
	for q := range ranges {
		ranges[q] = [2]float64{tr.Tau[tr.Off[q]], tr.Tau[tr.Off[q+1]-1]}
	}
	b, _ := json.Marshal(map[string]any{
		"particles": tr.P, "ids": tr.IDs, "rows": rec.NumRows(), "charge": tr.Charge, "mass": tr.Mass,
		"c": tr.C, "units": tr.Units, "tau_range": ranges, "acceleration": tr.Accel != nil,
	})
	return string(b), nil
}

// TrajectoryFromLabTime converts the lab-time samples in pair block p
// (columns particle, t, x, y, z, vx, vy, vz; rows grouped by particle, t
// increasing) into a trajectory table, returned in a new pair block. charge
// and mass are JSON numbers or lists (one per particle).
func TrajectoryFromLabTime(p uintptr, units string, c float64, charge, mass string) (out uintptr, err error) {
	defer recoverInto(&err)
	rec, err := importPair(p, "lab samples")
	if err != nil {
		return 0, bridge(err)
	}
	defer rec.Release()
	parse := func(s, what string) ([]float64, error) {
		var one float64
		if json.Unmarshal([]byte(s), &one) == nil {
			return []float64{one}, nil
		}
		var list []float64
		if json.Unmarshal([]byte(s), &list) != nil || len(list) == 0 {
			return nil, errs.New(errs.Parameter, "%s=%q: a number or a list of numbers", what, s)
		}
		return list, nil
	}
	ls := trajectory.LabSamples{C: c, Units: units}
	if ls.Charge, err = parse(charge, "charge"); err != nil {
		return 0, bridge(err)
	}
	if ls.Mass, err = parse(mass, "mass"); err != nil {
		return 0, bridge(err)
	}
	for i, name := range []string{"t", "x", "y", "z", "vx", "vy", "vz"} {
		col, err := float64Column(rec, name, "lab samples")
		if err != nil {
			return 0, bridge(err)
		}
		*[]*[]float64{&ls.T, &ls.X, &ls.Y, &ls.Z, &ls.Vx, &ls.Vy, &ls.Vz}[i] = col
	}
	idx := rec.Schema().FieldIndices("particle")
	if len(idx) == 0 {
		return 0, bridge(errs.New(errs.Format, "lab samples: no column \"particle\""))
	}
	var pid func(int) int64
	switch col := rec.Column(idx[0]).(type) {
	case *array.Int64:
		pid = col.Value
	case *array.Int32:
		pid = func(i int) int64 { return int64(col.Value(i)) }
	default:
		return 0, bridge(errs.New(errs.Layout, "lab samples: column \"particle\" has type %s: use int32 or int64", col.DataType()))
	}
	n := int(rec.NumRows())
	seen := map[int64]bool{}
	for i := 0; i < n; i++ {
		if i == 0 || pid(i) != pid(i-1) {
			if seen[pid(i)] {
				return 0, bridge(errs.New(errs.Trajectory, "lab samples: particle %d's rows are not contiguous (again at row %d)", pid(i), i))
			}
			seen[pid(i)] = true
			ls.Off = append(ls.Off, i)
			ls.IDs = append(ls.IDs, pid(i))
		}
	}
	ls.Off = append(ls.Off, n)
	if len(ls.IDs) == 0 {
		return 0, bridge(errs.New(errs.Trajectory, "lab samples: the table is empty"))
	}
	tab, err := trajectory.FromLabTime(ls)
	if err != nil {
		return 0, bridge(err)
	}
	defer tab.Release()
	return exportBatch(tab), nil
}
