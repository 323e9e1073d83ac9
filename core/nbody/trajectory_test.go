package nbody

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

// TestTrajectoryBatches: snapshots at step 0, every k steps and at the end,
// with the schema's columns, and all C memory returned afterwards.
func TestTrajectoryBatches(t *testing.T) {
	before := core.AllocatedBytes()
	b := sphere(t)
	it, err := NewIntegrator(b, Config{Dt: 0.01, Softening: sphereEps})
	if err != nil {
		t.Fatal(err)
	}
	c := &Collector{}
	if err := it.Run(context.Background(), 23, 5, c); err != nil {
		t.Fatal(err)
	}
	var steps []int64
	for _, s := range c.Snapshots {
		steps = append(steps, s.Step)
		rec := s.Batch
		if rec.NumRows() != int64(sphereN) || rec.NumCols() != 8 {
			t.Fatalf("batch %d x %d", rec.NumRows(), rec.NumCols())
		}
		for k, name := range []string{"particle", "t", "x", "y", "z", "vx", "vy", "vz"} {
			if rec.ColumnName(k) != name {
				t.Fatalf("column %d is %q, want %q", k, rec.ColumnName(k), name)
			}
		}
		if tt := rec.Column(1).(*array.Float64).Value(7); tt != s.T || math.Abs(s.T-float64(s.Step)*0.01) > 1e-15 {
			t.Fatalf("step %d: t column %v, snapshot t %v", s.Step, tt, s.T)
		}
		if p := rec.Column(0).(*array.Int64).Value(9); p != 9 {
			t.Fatalf("particle column %d at row 9", p)
		}
	}
	want := []int64{0, 5, 10, 15, 20, 23}
	if len(steps) != len(want) {
		t.Fatalf("snapshots at %v, want %v", steps, want)
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Fatalf("snapshots at %v, want %v", steps, want)
		}
	}
	// The last batch is the integrator's state.
	last := c.Snapshots[len(c.Snapshots)-1].Batch
	if last.Column(5).(*array.Float64).Value(3) != it.Bodies().VX[3] {
		t.Fatal("last batch is not the final state")
	}
	// Continuing does not repeat step 23.
	if err := it.Run(context.Background(), 2, 5, c); err != nil {
		t.Fatal(err)
	}
	if got := c.Snapshots[len(c.Snapshots)-1].Step; got != 25 || c.Snapshots[len(c.Snapshots)-2].Step != 23 {
		t.Fatalf("continued run snapshots end at %d", got)
	}
	c.Release()
	it.Release()
	if after := core.AllocatedBytes(); after != before {
		t.Fatalf("C memory: %d bytes before, %d after", before, after)
	}
}

// TestIPCFile: an Async IPC sink writes what the integration produced, batch
// for batch, and the diagnostics file has one row per snapshot.
func TestIPCFile(t *testing.T) {
	dir := t.TempDir()
	path, dpath := filepath.Join(dir, "traj.arrow"), filepath.Join(dir, "energies.arrow")
	b := sphere(t)
	cfg := Config{Dt: 0.01, Softening: sphereEps}
	it, err := NewIntegrator(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Release()
	fs, err := NewIPCFileSink(path, dpath, b.Len(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sink := Async(fs, 4)
	c := &Collector{}
	defer c.Release()
	if err := it.Run(context.Background(), 30, 10, sink, c); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(core.Allocator))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumRecords() != len(c.Snapshots) {
		t.Fatalf("file has %d batches, run made %d", r.NumRecords(), len(c.Snapshots))
	}
	if md := r.Schema().Metadata(); md.Values()[md.FindKey(MetaDt)] != "0.01" {
		t.Fatalf("metadata %v", md)
	}
	for k := 0; k < r.NumRecords(); k++ {
		rec, err := r.RecordBatch(k)
		if err != nil {
			t.Fatal(err)
		}
		want := c.Snapshots[k].Batch
		for col := 0; col < 8; col++ {
			if !array.Equal(rec.Column(col), want.Column(col)) {
				t.Fatalf("batch %d column %s differs from the run's", k, rec.ColumnName(col))
			}
		}
	}
	df, err := os.Open(dpath)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	dr, err := ipc.NewFileReader(df, ipc.WithAllocator(core.Allocator))
	if err != nil {
		t.Fatal(err)
	}
	defer dr.Close()
	drec, _ := dr.RecordBatch(0)
	if drec.NumRows() != 4 || drec.Column(4).(*array.Float64).Value(3) != c.Snapshots[3].Energy {
		t.Fatalf("diagnostics: %d rows", drec.NumRows())
	}
}

// slowSink takes its time over every batch.
type slowSink struct {
	delay time.Duration
	n     int
}

func (s *slowSink) Write(Snapshot) error { time.Sleep(s.delay); s.n++; return nil }
func (s *slowSink) Close() error         { return nil }

// TestAsyncDoesNotStall: with a queue deep enough for every snapshot, the
// integration finishes without waiting for a slow sink, which then gets
// every snapshot by Close.
func TestAsyncDoesNotStall(t *testing.T) {
	b, _ := Plummer(64, 1, false)
	it, err := NewIntegrator(b, Config{Dt: 1e-3, Softening: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Release()
	slow := &slowSink{delay: 50 * time.Millisecond}
	sink := Async(slow, 16)
	start := time.Now()
	if err := it.Run(context.Background(), 10, 1, sink); err != nil { // 11 snapshots
		t.Fatal(err)
	}
	ran := time.Since(start)
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	total := time.Since(start)
	t.Logf("integration %v, with the sink drained %v", ran, total)
	if slow.n != 11 {
		t.Fatalf("sink got %d snapshots, want 11", slow.n)
	}
	if ran > 11*slow.delay/2 {
		t.Fatalf("integration took %v: it waited for the sink (%v per snapshot)", ran, slow.delay)
	}
}

type failingSink struct{}

func (failingSink) Write(Snapshot) error { return errs.New(errs.Format, "disk full") }
func (failingSink) Close() error         { return nil }

func TestRunErrors(t *testing.T) {
	b := kepler(0.1)
	it, _ := NewIntegrator(b, Config{Dt: 0.01})
	defer it.Release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := it.Run(ctx, 10, 1); !errs.Is(err, errs.Cancelled) {
		t.Fatalf("cancelled run: %v", err)
	}
	a := Async(failingSink{}, 1)
	var err error
	for k := 0; k < 20 && err == nil; k++ {
		err = it.Run(context.Background(), 1, 1, a)
		time.Sleep(time.Millisecond)
	}
	if err == nil {
		err = a.Close()
	}
	if !errs.Is(err, errs.Format) {
		t.Fatalf("failing sink: %v", err)
	}
	// Two coincident bodies without softening: a Divergence error, not NaNs.
	c := NewBodies(2)
	c.M[0], c.M[1] = 1, 1
	ci, _ := NewIntegrator(c, Config{Dt: 0.01})
	defer ci.Release()
	if err := ci.Run(context.Background(), 1, 1); !errs.Is(err, errs.Divergence) {
		t.Fatalf("coincident bodies: %v", err)
	}
	for _, cfg := range []Config{{Dt: 0}, {Dt: -1}, {Dt: math.NaN()}, {Dt: 1, Softening: -1}} {
		if _, err := NewIntegrator(b, cfg); err == nil {
			t.Fatalf("config %+v accepted", cfg)
		}
	}
}
