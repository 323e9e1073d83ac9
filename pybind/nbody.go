package pybind

/*
#include "arrow_c_abi.h"
typedef struct { struct ArrowSchema schema; struct ArrowArray array; } fg_nbody_pair;
*/
import "C"

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/core/nbody"
	"github.com/fieldgo/fieldgo/errs"
)

// importColumns imports the RecordBatch in pair block p and returns its
// float64 columns by name (all of want must be present). The slices view the
// producer's memory and are valid until release is called.
func importColumns(p uintptr, want ...string) (cols map[string][]float64, n int, release func(), err error) {
	if p == 0 {
		return nil, 0, nil, errs.New(errs.Format, "null Arrow C Data address")
	}
	pair := (*C.fg_nbody_pair)(cAddr(p))
	if pair.array.release == nil || pair.schema.release == nil {
		return nil, 0, nil, errs.New(errs.Format, "the Arrow C Data structs are empty or already released")
	}
	rec, err := cdata.ImportCRecordBatch(
		(*cdata.CArrowArray)(unsafe.Pointer(&pair.array)),
		(*cdata.CArrowSchema)(unsafe.Pointer(&pair.schema)))
	if err != nil {
		return nil, 0, nil, errs.Wrap(errs.Format, err, "cannot import Arrow C Data")
	}
	cols = map[string][]float64{}
	for _, name := range want {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			rec.Release()
			return nil, 0, nil, errs.New(errs.Shape, "the bodies need one column %q (want %v)", name, want)
		}
		col := rec.Column(idx[0])
		f, ok := col.(*array.Float64)
		if !ok {
			rec.Release()
			return nil, 0, nil, errs.New(errs.Layout, "column %q has type %s, want float64", name, col.DataType())
		}
		if f.NullN() != 0 {
			rec.Release()
			return nil, 0, nil, errs.New(errs.Layout, "column %q has %d nulls", name, f.NullN())
		}
		cols[name] = f.Float64Values()
	}
	return cols, int(rec.NumRows()), rec.Release, nil
}

// float64Batch builds a RecordBatch (C memory) of named float64 columns.
func float64Batch(names []string, cols [][]float64, md map[string]string) arrow.RecordBatch {
	fields := make([]arrow.Field, len(names))
	for k, nm := range names {
		fields[k] = arrow.Field{Name: nm, Type: arrow.PrimitiveTypes.Float64}
	}
	var meta *arrow.Metadata
	if md != nil {
		var ks, vs []string
		for k, v := range md {
			ks = append(ks, k)
			vs = append(vs, v)
		}
		m := arrow.NewMetadata(ks, vs)
		meta = &m
	}
	b := array.NewRecordBuilder(core.Allocator, arrow.NewSchema(fields, meta))
	defer b.Release()
	for k, c := range cols {
		b.Field(k).(*array.Float64Builder).AppendValues(c, nil)
	}
	return b.NewRecordBatch()
}

// NBodyAccelerations computes softened gravitational accelerations (G = 1) of
// the bodies in the RecordBatch exported into pair block p (float64 columns x,
// y, z, m). precision is "float64" or "float32"; threads 0 uses every core.
// It returns a pair block with a batch of ax, ay, az (and phi when
// potentials). The input block's structs are moved; free it afterwards.
func NBodyAccelerations(p uintptr, softening float64, precision string, threads int, potentials bool, backend string) (out uintptr, err error) {
	defer recoverInto(&err)
	prec, err := nbody.ParsePrecision(precision)
	if err != nil {
		return 0, bridge(err)
	}
	dev, err := nbodyDevice(backend)
	if err != nil {
		return 0, bridge(err)
	}
	cols, n, release, err := importColumns(p, "x", "y", "z", "m")
	if err != nil {
		return 0, bridge(err)
	}
	defer release()
	ax, ay, az := make([]float64, n), make([]float64, n), make([]float64, n)
	var pot []float64
	if potentials {
		pot = make([]float64, n)
	}
	s := nbody.Solver{Softening: softening, Precision: prec, Threads: threads, Device: dev}
	if err := s.Accelerations(cols["x"], cols["y"], cols["z"], cols["m"], ax, ay, az, pot); err != nil {
		return 0, bridge(err)
	}
	names, outs := []string{"ax", "ay", "az"}, [][]float64{ax, ay, az}
	if potentials {
		names, outs = append(names, "phi"), append(outs, pot)
	}
	rec := float64Batch(names, outs, nil)
	defer rec.Release()
	return exportBatch(rec), nil
}

// NBodyErrorBoundK is k of the accuracy statement |a_i - a_i_exact| <= k u
// sum_j |a_ij| for n bodies (u the precision's unit roundoff).
func NBodyErrorBoundK(n int) float64 { return nbody.ErrorBoundK(n) }

// NBodyPlummer samples a Plummer sphere of n bodies in Hénon units (G = M = 1,
// E = -1/4), rescaled to exactly E = -1/4 when exact. It returns a pair block
// with float64 columns x, y, z, vx, vy, vz, m.
func NBodyPlummer(n int, seed int64, exact bool) (out uintptr, err error) {
	defer recoverInto(&err)
	b, err := nbody.Plummer(n, uint64(seed), exact)
	if err != nil {
		return 0, bridge(err)
	}
	rec := float64Batch([]string{"x", "y", "z", "vx", "vy", "vz", "m"},
		[][]float64{b.X, b.Y, b.Z, b.VX, b.VY, b.VZ, b.M}, nil)
	defer rec.Release()
	return exportBatch(rec), nil
}

// nbodyRun is what an N-body handle refers to: an integrator and its run.
type nbodyRun struct {
	it *nbody.Integrator

	mu       sync.Mutex
	running  bool
	cancel   context.CancelFunc
	ch       *nbody.ChannelSink // nil for a run that writes a file only
	done     chan struct{}
	err      error // the last run's error, reported once
	finished bool  // the consumer saw the end of the stream
	diags    []nbody.Diagnostics
}

type diagSink struct{ r *nbodyRun }

func (d diagSink) Write(s nbody.Snapshot) error {
	d.r.mu.Lock()
	d.r.diags = append(d.r.diags, s.Diagnostics)
	d.r.mu.Unlock()
	return nil
}
func (diagSink) Close() error { return nil }

func nbodyOf(h int64) (*nbodyRun, error) {
	r, err := lookup[*nbodyRun](h)
	if errs.Is(err, errs.Released) {
		return nil, errs.New(errs.Released, "the N-body system has been released")
	}
	return r, err
}

// NewNBody makes an N-body integrator from the RecordBatch in pair block p
// (float64 columns x, y, z, vx, vy, vz, m), copied into C memory.
func NewNBody(p uintptr, dt, softening float64, precision string, threads int, backend string) (h int64, err error) {
	defer recoverInto(&err)
	prec, err := nbody.ParsePrecision(precision)
	if err != nil {
		return 0, bridge(err)
	}
	dev, err := nbodyDevice(backend)
	if err != nil {
		return 0, bridge(err)
	}
	cols, _, release, err := importColumns(p, "x", "y", "z", "vx", "vy", "vz", "m")
	if err != nil {
		return 0, bridge(err)
	}
	defer release()
	b := &nbody.Bodies{X: cols["x"], Y: cols["y"], Z: cols["z"], VX: cols["vx"], VY: cols["vy"], VZ: cols["vz"], M: cols["m"]}
	it, err := nbody.NewIntegrator(b, nbody.Config{Dt: dt, Softening: softening, Precision: prec, Threads: threads, Device: dev})
	if err != nil {
		return 0, bridge(err)
	}
	return register(&nbodyRun{it: it}), nil
}

// NBodyStart starts `steps` leapfrog steps in the background. Snapshots (the
// start, every `every` steps and the end) go to a queue of `queue` batches
// that NBodyNext reads when stream is true, and to an Arrow IPC file at path
// when path is not empty (written by its own goroutine behind a queue of the
// same depth; energiesPath, if not empty, receives the diagnostics table at
// the end). The integration waits only when a queue is full.
func NBodyStart(h int64, steps, every int, stream bool, path, energiesPath string, queue int) (err error) {
	defer recoverInto(&err)
	r, err := nbodyOf(h)
	if err != nil {
		return bridge(err)
	}
	if steps < 0 || every < 1 {
		return bridge(errs.New(errs.Parameter, "steps must be >= 0 and every >= 1, got steps=%d every=%d", steps, every))
	}
	if queue < 1 {
		queue = 8
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running {
		return bridge(errs.New(errs.Parameter, "the N-body system is already running"))
	}
	sinks := []nbody.Sink{diagSink{r}}
	var ch *nbody.ChannelSink
	if stream {
		ch = nbody.NewChannelSink(queue)
		sinks = append(sinks, ch)
	}
	if path != "" {
		fs, err := nbody.NewIPCFileSink(path, energiesPath, r.it.Bodies().Len(), r.it.Config())
		if err != nil {
			return bridge(err)
		}
		sinks = append(sinks, nbody.Async(fs, queue))
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.running, r.cancel, r.ch, r.done, r.err, r.finished = true, cancel, ch, make(chan struct{}), nil, false
	r.diags = nil
	done := r.done
	go func() {
		defer close(done)
		err := r.it.Run(ctx, steps, every, sinks...)
		for _, s := range sinks {
			err = errors.Join(err, s.Close())
		}
		r.mu.Lock()
		r.err, r.running = err, false
		r.mu.Unlock()
	}()
	return nil
}

// NBodyNext returns the next snapshot batch (columns particle, t, x, y, z,
// vx, vy, vz; schema metadata with the run's parameters and the snapshot's
// step, t, kinetic, potential and energy) in a pair block, waiting up to
// waitMs milliseconds; 0 when none came in that time or the stream has ended
// (then NBodyFinished is true, and the run's error, if any, is returned).
func NBodyNext(h int64, waitMs int) (p uintptr, err error) {
	defer recoverInto(&err)
	r, err := nbodyOf(h)
	if err != nil {
		return 0, bridge(err)
	}
	r.mu.Lock()
	ch, done := r.ch, r.done
	r.mu.Unlock()
	if ch == nil {
		return 0, bridge(errs.New(errs.Parameter, "no stream: start the run with stream=true"))
	}
	var s nbody.Snapshot
	var ok bool
	select {
	case s, ok = <-ch.C():
	case <-time.After(time.Duration(waitMs) * time.Millisecond):
		return 0, nil
	}
	if !ok {
		<-done
		r.mu.Lock()
		r.finished = true
		err, r.err = r.err, nil
		r.mu.Unlock()
		return 0, bridge(err)
	}
	defer s.Batch.Release()
	md := s.Batch.Schema().Metadata()
	keys, vals := append([]string(nil), md.Keys()...), append([]string(nil), md.Values()...)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	keys = append(keys, "step", "time", "kinetic", "potential", "energy")
	vals = append(vals, strconv.FormatInt(s.Step, 10), f(s.T), f(s.Kinetic), f(s.Potential), f(s.Energy))
	meta := arrow.NewMetadata(keys, vals)
	schema := arrow.NewSchema(s.Batch.Schema().Fields(), &meta)
	rec := array.NewRecordBatch(schema, s.Batch.Columns(), s.Batch.NumRows())
	defer rec.Release()
	return exportBatch(rec), nil
}

// NBodyFinished reports whether the stream has ended (NBodyNext saw its end).
func NBodyFinished(h int64) (f bool, err error) {
	defer recoverInto(&err)
	r, err := nbodyOf(h)
	if err != nil {
		return false, bridge(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished, nil
}

// NBodyWait waits up to waitMs milliseconds for the run to end and reports
// whether it has; when it has, the run's error (if any) is returned once.
// For file-only runs, and after a stream was abandoned.
func NBodyWait(h int64, waitMs int) (ended bool, err error) {
	defer recoverInto(&err)
	r, err := nbodyOf(h)
	if err != nil {
		return false, bridge(err)
	}
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if done == nil {
		return true, nil
	}
	select {
	case <-done:
	case <-time.After(time.Duration(waitMs) * time.Millisecond):
		return false, nil
	}
	r.mu.Lock()
	err, r.err = r.err, nil
	r.mu.Unlock()
	return true, bridge(err)
}

// NBodyCancel asks a running integration to stop after its current step; the
// run then ends with CancelledError and the state is that of the last step.
func NBodyCancel(h int64) (err error) {
	defer recoverInto(&err)
	r, err := nbodyOf(h)
	if err != nil {
		return bridge(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		r.cancel()
	}
	return nil
}

// drain stops a run and drops what its stream still holds.
func (r *nbodyRun) drain() {
	r.mu.Lock()
	cancel, ch, done := r.cancel, r.ch, r.done
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if ch != nil {
		for s := range ch.C() {
			s.Batch.Release()
		}
	}
	if done != nil {
		<-done
	}
}

// NBodyDiagnostics returns the last run's diagnostics (one row per snapshot:
// step, t, kinetic, potential, energy, px, py, pz, lx, ly, lz) in a pair block.
func NBodyDiagnostics(h int64) (p uintptr, err error) {
	defer recoverInto(&err)
	r, err := nbodyOf(h)
	if err != nil {
		return 0, bridge(err)
	}
	r.mu.Lock()
	ds := append([]nbody.Diagnostics(nil), r.diags...)
	r.mu.Unlock()
	rec := nbody.DiagnosticsRecord(ds)
	defer rec.Release()
	return exportBatch(rec), nil
}

// NBodyState returns the current bodies (x, y, z, vx, vy, vz, m) in a pair
// block; not while a run is in progress.
func NBodyState(h int64) (p uintptr, err error) {
	defer recoverInto(&err)
	r, err := nbodyOf(h)
	if err != nil {
		return 0, bridge(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running {
		return 0, bridge(errs.New(errs.Parameter, "the N-body system is running"))
	}
	b := r.it.Bodies()
	rec := float64Batch([]string{"x", "y", "z", "vx", "vy", "vz", "m"},
		[][]float64{b.X, b.Y, b.Z, b.VX, b.VY, b.VZ, b.M},
		map[string]string{"step": strconv.FormatInt(r.it.StepCount(), 10),
			"time": strconv.FormatFloat(r.it.Time(), 'g', -1, 64)})
	defer rec.Release()
	return exportBatch(rec), nil
}

// ReleaseNBody stops a run if one is going, drops unread snapshots and frees
// the integrator. Batches already handed to Python stay valid.
func ReleaseNBody(h int64) (err error) {
	defer recoverInto(&err)
	obj, err := unregister(h)
	if err != nil {
		return bridge(errs.New(errs.Released, "the N-body system has already been released"))
	}
	r, ok := obj.(*nbodyRun)
	if !ok {
		return bridge(errs.New(errs.Handle, "handle %d is a %T, not an N-body system", h, obj))
	}
	r.drain()
	r.it.Release()
	return nil
}
