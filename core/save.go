package core

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/diskcache"
	"github.com/fieldgo/fieldgo/kernels"
)

// Metadata keys of a saved simulation (besides the lattice keys).
const (
	MetaFormat    = "fieldgo.format" // "simulation/1"
	MetaSpec      = "fieldgo.theory.spec"
	MetaSource    = "fieldgo.theory.source"
	MetaParams    = "fieldgo.params"    // JSON list, spec order
	MetaForm      = "fieldgo.form"      // "continuum" | "consistent"
	MetaPenalty   = "fieldgo.penalty"   // doubler penalty c
	MetaFlow      = "fieldgo.flow"      // JSON flowFile; absent without a flow
	MetaHistory   = "fieldgo.history"   // base64 Arrow IPC stream of the history
	MetaPrecision = "fieldgo.precision" // storage precision ("float64" if absent)
	saveFormat    = "simulation/1"
	velocityName  = "velocity."
)

// flowFile is flowState as saved; floats as IEEE bits so that Inf and every
// last bit survive.
type flowFile struct {
	Cfg        FlowConfig `json:"config"`
	Step       int        `json:"step"`
	PrevEnergy uint64     `json:"prev_energy_bits"`
	Resets     int        `json:"resets"`
	Done       bool       `json:"done"`
	Converged  bool       `json:"converged"`
	LastEnergy uint64     `json:"last_energy_bits"`
	LastMax    uint64     `json:"last_max_grad_bits"`
	LastStep   int        `json:"last_step"`
	LastResets int        `json:"last_resets"`
	AutoDt     bool       `json:"auto_dt"`
	DtCuts     int        `json:"dt_cuts"`
	CutStep    int        `json:"cut_step"`
}

// Save writes the simulation as one Arrow IPC file: a RecordBatch with the
// field's columns then the velocity's ("velocity.<name>"), and schema
// metadata holding the lattice, the theory's spec and point source, the
// parameters, the gradient form, the flow's state and its history (an Arrow
// IPC stream, base64). Load resumes it bit for bit. The file is written to a
// temporary name and renamed into place.
func (s *Simulation) Save(path string) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.syncHost(); err != nil {
		return err
	}
	names := s.theory.Spec.Fields
	md := LatticeMetadata(s.lat, names)
	keys, vals := md.Keys(), md.Values()
	params, _ := json.Marshal(s.params)
	keys = append(keys, MetaFormat, MetaSpec, MetaSource, MetaParams, MetaForm, MetaPenalty, MetaPrecision)
	vals = append(vals, saveFormat, s.theory.SpecJSON, s.theory.Source, string(params), s.form.String(), fmtFloat(s.penalty), s.prec)
	if s.dynVel {
		keys, vals = append(keys, MetaDynamics), append(vals, s.dynamicsMeta())
	}
	if fl := s.flow; fl != nil {
		ff := flowFile{Cfg: fl.cfg, Step: fl.step, PrevEnergy: math.Float64bits(fl.prevEnergy), Resets: fl.resets,
			Done: fl.done, Converged: fl.converged, LastEnergy: math.Float64bits(fl.last.Energy),
			LastMax: math.Float64bits(fl.last.MaxGrad), LastStep: fl.last.Step, LastResets: fl.last.Resets,
			AutoDt: fl.auto, DtCuts: fl.dtCuts, CutStep: fl.cutStep}
		js, _ := json.Marshal(ff)
		hist, err := encodeBatch(fl.hist.recordBatch())
		if err != nil {
			return err
		}
		keys = append(keys, MetaFlow, MetaHistory)
		vals = append(vals, string(js), hist)
	}
	var fields []arrow.Field
	var cols []arrow.Array
	for _, f := range []struct {
		prefix string
		fld    *Field
	}{{"", s.phi}, {velocityName, s.vel}} {
		for c, name := range names {
			fields = append(fields, arrow.Field{Name: f.prefix + name, Type: arrow.PrimitiveTypes.Float64})
			cols = append(cols, float64Array(f.fld.cols[c]))
		}
	}
	meta := arrow.NewMetadata(keys, vals)
	schema := arrow.NewSchema(fields, &meta)
	rec := array.NewRecordBatch(schema, cols, int64(s.lat.Sites()))
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()

	// Through a temporary file beside path: a crash never leaves half a file.
	err := diskcache.WriteAtomicWith(path, func(f *os.File) error {
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(Allocator))
		if err != nil {
			return err
		}
		err = w.Write(rec)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return errs.Wrap(errs.Format, err, "cannot write %s", path)
	}
	return nil
}

// float64Array views xs (C memory that outlives the array) as an Arrow array.
func float64Array(xs []float64) arrow.Array {
	buf := memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(xs))
	d := array.NewData(arrow.PrimitiveTypes.Float64, len(xs), []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

func encodeBatch(rec arrow.RecordBatch) (string, error) {
	defer rec.Release()
	var b bytes.Buffer
	w := ipc.NewWriter(&b, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(Allocator))
	if err := w.Write(rec); err != nil {
		return "", errs.Wrap(errs.Format, err, "cannot encode the history")
	}
	if err := w.Close(); err != nil {
		return "", errs.Wrap(errs.Format, err, "cannot encode the history")
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// SavedPrecision is the storage precision a file written by Save was run
// in ("float64" for files from before the option).
func SavedPrecision(path string) (string, error) {
	v, err := savedMeta(path, [2]string{MetaPrecision, Float64})
	return v[0], err
}

// SavedRun is what a caller choosing the backend needs to know of a file
// written by Save before Load: the storage precision ("float64" for files
// from before the option), the boundary ("fixed", "periodic" or "free"; one
// name per axis, comma-separated, for a lattice other than the planar one),
// the gradient form, whether the lattice is the planar one of one boundary and
// whether the theory uses z (its point source defines FG_DIM 3).
type SavedRun struct {
	Precision, Boundary, Form string
	Planar, ThreeD            bool
}

// Free reports whether the saved lattice has the free boundary.
func (r SavedRun) Free() bool { return strings.HasPrefix(r.Boundary, Free.String()) }

// SavedSettings reads a SavedRun from a file written by Save, in one read of
// its schema.
func SavedSettings(path string) (SavedRun, error) {
	v, err := savedMeta(path, [2]string{MetaPrecision, Float64}, [2]string{MetaBoundary, "fixed"}, [2]string{MetaDims, ""},
		[2]string{MetaForm, ""}, [2]string{MetaSource, ""})
	return SavedRun{Precision: v[0], Boundary: v[1], Planar: v[2] == "", Form: v[3], ThreeD: fgDim3.MatchString(v[4])}, err
}

// savedMeta reads keys of a saved file's schema metadata, each {key,
// default when absent}.
func savedMeta(path string, keys ...[2]string) ([]string, error) {
	out := make([]string, len(keys))
	f, err := os.Open(path)
	if err != nil {
		return out, errs.Wrap(errs.Format, err, "cannot open %s", path)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(Allocator))
	if err != nil {
		return out, errs.Wrap(errs.Format, err, "%s is not an Arrow IPC file", path)
	}
	defer r.Close()
	md := r.Schema().Metadata()
	for i, k := range keys {
		out[i] = k[1]
		if j := md.FindKey(k[0]); j >= 0 && md.Values()[j] != "" {
			out[i] = md.Values()[j]
		}
	}
	return out, nil
}

// Load reads a file written by Save and rebuilds the simulation on backend,
// with its field, velocity, parameters, flow and storage precision, so that
// Advance continues exactly where the saved run stood. (A float32 run saves
// its float32 values widened to float64, so they round back to the same
// bits.)
func Load(backend kernels.Backend, path string) (*Simulation, error) {
	return LoadAs(backend, path, "")
}

// LoadAs is Load with the storage precision chosen: "" keeps the saved one,
// Float64 or Float32 overrides it (a float32 run continued in float64 starts
// from its float32 values; it is no longer bit-identical to the saved run).
func LoadAs(backend kernels.Backend, path, precision string) (*Simulation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errs.Wrap(errs.Format, err, "cannot open %s", path)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, errs.Wrap(errs.Format, err, "cannot open %s", path)
	}
	// The reader refuses record bodies over 256 MB unless told otherwise (a
	// guard against corrupt lengths); a body cannot be larger than the file,
	// and a 4096^2 field with its velocity is 805 MB.
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(Allocator), ipc.WithBodySizeLimit(max(st.Size(), 1)))
	if err != nil {
		return nil, errs.Wrap(errs.Format, err, "%s is not an Arrow IPC file", path)
	}
	defer r.Close()
	if r.NumRecords() != 1 {
		return nil, errs.New(errs.Format, "%s holds %d record batches, a saved simulation has 1", path, r.NumRecords())
	}
	rec, err := r.RecordBatch(0)
	if err != nil {
		return nil, errs.Wrap(errs.Format, err, "cannot read %s", path)
	}
	md := rec.Schema().Metadata()
	get := func(k string) (string, bool) {
		i := md.FindKey(k)
		if i < 0 {
			return "", false
		}
		return md.Values()[i], true
	}
	if v, _ := get(MetaFormat); v != saveFormat {
		return nil, errs.New(errs.Format, "%s is not a saved fieldgo simulation (format %q)", path, v)
	}
	lat, ok, err := LatticeFromMetadata(md)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.New(errs.Format, "%s has no lattice", path)
	}
	spec, _ := get(MetaSpec)
	source, _ := get(MetaSource)
	th, err := ParseTheory(spec, source)
	if err != nil {
		return nil, err
	}
	var params []float64
	if v, _ := get(MetaParams); json.Unmarshal([]byte(v), &params) != nil {
		return nil, errs.New(errs.Format, "%s: bad parameters %q", path, v)
	}
	form, _ := get(MetaForm)
	penStr, _ := get(MetaPenalty)
	pen, perr := strconv.ParseFloat(penStr, 64)
	if perr != nil {
		return nil, errs.New(errs.Format, "%s: bad penalty %q", path, penStr)
	}
	if precision == "" {
		precision, _ = get(MetaPrecision)
	}
	s, err := NewSimulation(backend, th, lat, params, Options{Form: form, Penalty: pen, NoPenalty: pen == 0, Precision: precision})
	if err != nil {
		return nil, err
	}
	if err := s.loadColumns(rec); err != nil {
		s.Close()
		return nil, errs.Wrap(errs.Format, err, "%s", path)
	}
	if v, ok := get(MetaDynamics); ok {
		if err := s.loadDynamics(v); err != nil {
			s.Close()
			return nil, errs.Wrap(errs.Format, err, "%s", path)
		}
	}
	if js, ok := get(MetaFlow); ok {
		hist, _ := get(MetaHistory)
		if err := s.loadFlow(js, hist); err != nil {
			s.Close()
			return nil, errs.Wrap(errs.Format, err, "%s", path)
		}
	}
	return s, nil
}

func (s *Simulation) loadColumns(rec arrow.RecordBatch) error {
	s.stiffOK = false
	names := s.theory.Spec.Fields
	if int(rec.NumCols()) != 2*len(names) || int(rec.NumRows()) != s.lat.Sites() {
		return errs.New(errs.Format, "expected %d columns of %d rows, found %d of %d", 2*len(names), s.lat.Sites(), rec.NumCols(), rec.NumRows())
	}
	for k, f := range []*Field{s.phi, s.vel} {
		for c := range names {
			col, ok := rec.Column(k*len(names) + c).(*array.Float64)
			if !ok || col.NullN() != 0 {
				return errs.New(errs.Format, "column %d is not float64 without nulls", k*len(names)+c)
			}
			copy(f.cols[c], col.Float64Values())
		}
	}
	if err := s.phiB.Upload(); err != nil {
		return err
	}
	if err := s.velB.Upload(); err != nil {
		return err
	}
	s.hostStale = false
	return nil
}

func (s *Simulation) loadFlow(js, hist string) error {
	var ff flowFile
	if err := json.Unmarshal([]byte(js), &ff); err != nil {
		return errs.Wrap(errs.Format, err, "bad flow state")
	}
	cfg, err := ff.Cfg.withDefaults(s.lat)
	if err != nil {
		return err
	}
	fl := &flowState{cfg: cfg, step: ff.Step, prevEnergy: math.Float64frombits(ff.PrevEnergy), resets: ff.Resets,
		done: ff.Done, converged: ff.Converged, hist: newHistory(s.theory.Spec.Densities), auto: ff.AutoDt, dtCuts: ff.DtCuts, cutStep: ff.CutStep}
	fl.last = Progress{Step: ff.LastStep, Energy: math.Float64frombits(ff.LastEnergy), MaxGrad: math.Float64frombits(ff.LastMax),
		Resets: ff.LastResets, Done: ff.Done, Converged: ff.Converged}
	raw, err := base64.StdEncoding.DecodeString(hist)
	if err != nil {
		return errs.Wrap(errs.Format, err, "bad history")
	}
	r, err := ipc.NewReader(bytes.NewReader(raw), ipc.WithAllocator(Allocator))
	if err != nil {
		return errs.Wrap(errs.Format, err, "bad history")
	}
	defer r.Release()
	for r.Next() {
		rec := r.RecordBatch()
		nd := len(fl.hist.densities)
		if int(rec.NumCols()) != 4+nd {
			return errs.New(errs.Format, "history has %d columns, want %d", rec.NumCols(), 4+nd)
		}
		fl.hist.step = append(fl.hist.step, rec.Column(0).(*array.Int64).Int64Values()...)
		fl.hist.energy = append(fl.hist.energy, rec.Column(1).(*array.Float64).Float64Values()...)
		fl.hist.maxGrad = append(fl.hist.maxGrad, rec.Column(2).(*array.Float64).Float64Values()...)
		for k := 0; k < nd; k++ {
			fl.hist.integrals[k] = append(fl.hist.integrals[k], rec.Column(3+k).(*array.Float64).Float64Values()...)
		}
		fl.hist.resets = append(fl.hist.resets, rec.Column(3+nd).(*array.Int64).Int64Values()...)
	}
	if err := r.Err(); err != nil {
		return errs.Wrap(errs.Format, err, "bad history")
	}
	s.flow = fl
	return s.checkpoint()
}
