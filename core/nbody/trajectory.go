package nbody

import (
	"errors"
	"os"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/hostmem"
)

// Snapshot is the state at one step: a record batch with one row per body
// (TrajectorySchema) and the step's diagnostics. The batch belongs to the
// caller of Write: a sink that keeps it past Write must Retain it.
type Snapshot struct {
	Diagnostics
	Batch arrow.RecordBatch
}

// Schema metadata keys of a trajectory.
const (
	MetaN         = "n"
	MetaDt        = "dt"
	MetaSoftening = "softening"
	MetaPrecision = "precision"
	MetaG         = "G"
)

// TrajectorySchema is the schema of trajectory batches: particle (int64), t,
// x, y, z, vx, vy, vz (float64), with the run's parameters as metadata.
func TrajectorySchema(n int, cfg Config) *arrow.Schema {
	f64 := arrow.PrimitiveTypes.Float64
	fields := []arrow.Field{{Name: "particle", Type: arrow.PrimitiveTypes.Int64}, {Name: "t", Type: f64}}
	for _, c := range []string{"x", "y", "z", "vx", "vy", "vz"} {
		fields = append(fields, arrow.Field{Name: c, Type: f64})
	}
	md := arrow.NewMetadata(
		[]string{MetaN, MetaDt, MetaSoftening, MetaPrecision, MetaG},
		[]string{strconv.Itoa(n), fmtFloat(cfg.Dt), fmtFloat(cfg.Softening), cfg.Precision.String(), "1"})
	return arrow.NewSchema(fields, &md)
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// record copies the current state into a new batch of C memory.
func (it *Integrator) record() arrow.RecordBatch {
	s := &it.state
	n := len(s.M)
	schema := TrajectorySchema(n, it.cfg)
	b := array.NewRecordBuilder(hostmem.Allocator, schema)
	defer b.Release()
	pid := b.Field(0).(*array.Int64Builder)
	pid.Reserve(n)
	for i := 0; i < n; i++ {
		pid.UnsafeAppend(int64(i))
	}
	tb := b.Field(1).(*array.Float64Builder)
	tb.Reserve(n)
	t := it.Time()
	for i := 0; i < n; i++ {
		tb.UnsafeAppend(t)
	}
	for c, col := range [][]float64{s.X, s.Y, s.Z, s.VX, s.VY, s.VZ} {
		b.Field(2+c).(*array.Float64Builder).AppendValues(col, nil)
	}
	return b.NewRecordBatch()
}

// Sink consumes snapshots.
type Sink interface {
	Write(Snapshot) error
	Close() error
}

// DiagnosticsSchema is the schema of a run's diagnostics table: one row per
// snapshot.
func DiagnosticsSchema() *arrow.Schema {
	f64 := arrow.PrimitiveTypes.Float64
	fields := []arrow.Field{{Name: "step", Type: arrow.PrimitiveTypes.Int64}}
	for _, c := range []string{"t", "kinetic", "potential", "energy", "px", "py", "pz", "lx", "ly", "lz"} {
		fields = append(fields, arrow.Field{Name: c, Type: f64})
	}
	return arrow.NewSchema(fields, nil)
}

// DiagnosticsRecord makes the diagnostics table of ds (C memory).
func DiagnosticsRecord(ds []Diagnostics) arrow.RecordBatch {
	b := array.NewRecordBuilder(hostmem.Allocator, DiagnosticsSchema())
	defer b.Release()
	for _, d := range ds {
		b.Field(0).(*array.Int64Builder).Append(d.Step)
		for c, v := range []float64{d.T, d.Kinetic, d.Potential, d.Energy, d.Px, d.Py, d.Pz, d.Lx, d.Ly, d.Lz} {
			b.Field(1 + c).(*array.Float64Builder).Append(v)
		}
	}
	return b.NewRecordBatch()
}

// ChannelSink hands snapshots to a consumer through a buffered channel of the
// given depth: the integration runs ahead of the consumer by up to depth
// snapshots and waits only when the queue is full (memory stays bounded).
// The consumer releases each Batch it receives.
type ChannelSink struct {
	ch     chan Snapshot
	once   sync.Once
	closed chan struct{}
}

// NewChannelSink makes a ChannelSink with a queue of depth snapshots.
func NewChannelSink(depth int) *ChannelSink {
	if depth < 1 {
		depth = 1
	}
	return &ChannelSink{ch: make(chan Snapshot, depth), closed: make(chan struct{})}
}

// C is the channel of snapshots; it is closed by Close.
func (c *ChannelSink) C() <-chan Snapshot { return c.ch }

// Write queues s (retaining its batch).
func (c *ChannelSink) Write(s Snapshot) error {
	s.Batch.Retain()
	c.ch <- s
	return nil
}

// Close closes the channel: the consumer drains what is queued.
func (c *ChannelSink) Close() error {
	c.once.Do(func() { close(c.ch) })
	return nil
}

// Async runs sink on its own goroutine behind a queue of depth snapshots, so
// that a slow sink (a disk, a Python consumer) does not stall the integration
// until depth snapshots are waiting. A write error is returned by the next
// Write and by Close; Close waits until every queued snapshot is written.
func Async(sink Sink, depth int) Sink {
	if depth < 1 {
		depth = 1
	}
	a := &asyncSink{sink: sink, ch: make(chan Snapshot, depth), done: make(chan struct{})}
	go a.loop()
	return a
}

type asyncSink struct {
	sink Sink
	ch   chan Snapshot
	done chan struct{}
	mu   sync.Mutex
	err  error
	once sync.Once
}

func (a *asyncSink) loop() {
	defer close(a.done)
	for s := range a.ch {
		if a.failed() == nil {
			if err := a.sink.Write(s); err != nil {
				a.mu.Lock()
				a.err = err
				a.mu.Unlock()
			}
		}
		s.Batch.Release()
	}
}

func (a *asyncSink) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (a *asyncSink) Write(s Snapshot) error {
	if err := a.failed(); err != nil {
		return err
	}
	s.Batch.Retain()
	a.ch <- s
	return nil
}

func (a *asyncSink) Close() error {
	var err error
	a.once.Do(func() {
		close(a.ch)
		<-a.done
		err = errors.Join(a.failed(), a.sink.Close())
	})
	return err
}

// IPCFileSink writes trajectory batches to an Arrow IPC file and, at Close,
// the diagnostics table to a second IPC file when a path was given.
type IPCFileSink struct {
	f           *os.File
	w           *ipc.FileWriter
	diagPath    string
	diagnostics []Diagnostics
}

// NewIPCFileSink creates (truncates) path for trajectories with the schema of
// n bodies under cfg; diagPath ("" for none) receives the diagnostics.
func NewIPCFileSink(path, diagPath string, n int, cfg Config) (*IPCFileSink, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, errs.Wrap(errs.Format, err, "cannot create trajectory file")
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(TrajectorySchema(n, cfg)), ipc.WithAllocator(hostmem.Allocator))
	if err != nil {
		f.Close()
		return nil, errs.Wrap(errs.Format, err, "cannot start trajectory file %s", path)
	}
	return &IPCFileSink{f: f, w: w, diagPath: diagPath}, nil
}

// Write appends s's batch to the file.
func (s *IPCFileSink) Write(snap Snapshot) error {
	if err := s.w.Write(snap.Batch); err != nil {
		return errs.Wrap(errs.Format, err, "writing trajectory batch at step %d", snap.Step)
	}
	s.diagnostics = append(s.diagnostics, snap.Diagnostics)
	return nil
}

// Diagnostics are those of every snapshot written so far.
func (s *IPCFileSink) Diagnostics() []Diagnostics { return s.diagnostics }

// Close finishes the file (footer) and writes the diagnostics file.
func (s *IPCFileSink) Close() error {
	err := s.w.Close()
	if e := s.f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return errs.Wrap(errs.Format, err, "closing trajectory file")
	}
	if s.diagPath == "" {
		return nil
	}
	return WriteDiagnostics(s.diagPath, s.diagnostics)
}

// WriteDiagnostics writes ds as an Arrow IPC file.
func WriteDiagnostics(path string, ds []Diagnostics) error {
	rec := DiagnosticsRecord(ds)
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		return errs.Wrap(errs.Format, err, "cannot create diagnostics file")
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(hostmem.Allocator))
	if err == nil {
		err = w.Write(rec)
		if e := w.Close(); err == nil {
			err = e
		}
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return errs.Wrap(errs.Format, err, "writing diagnostics file %s", path)
	}
	return nil
}

// Collector keeps every snapshot in memory (retaining the batches): the
// simplest sink, for tests and small runs. Release drops the batches.
type Collector struct {
	Snapshots []Snapshot
}

func (c *Collector) Write(s Snapshot) error {
	s.Batch.Retain()
	c.Snapshots = append(c.Snapshots, s)
	return nil
}

func (c *Collector) Close() error { return nil }

// Release drops every batch held.
func (c *Collector) Release() {
	for _, s := range c.Snapshots {
		s.Batch.Release()
	}
	c.Snapshots = nil
}
