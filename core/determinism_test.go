package core_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

type endState struct {
	field, vel []float64
	energy     float64
	charge     float64
	history    map[string][]float64
	progress   core.Progress
}

func snapshot(t *testing.T, s *core.Simulation) endState {
	t.Helper()
	var st endState
	f, err := s.Field()
	require.NoError(t, err)
	v, err := s.Velocity()
	require.NoError(t, err)
	for c := 0; c < f.NComp(); c++ {
		st.field = append(st.field, f.Comp(c)...)
		st.vel = append(st.vel, v.Comp(c)...)
	}
	st.energy, err = s.Energy()
	require.NoError(t, err)
	st.charge, err = s.Integral("charge")
	require.NoError(t, err)
	h, err := s.History()
	require.NoError(t, err)
	defer h.Release()
	st.history = map[string][]float64{}
	for _, name := range []string{"energy", "max_grad", "charge"} {
		st.history[name] = columnFloat(t, h, name)
	}
	st.progress, err = s.Progress()
	require.NoError(t, err)
	return st
}

func requireBitIdentical(t *testing.T, want, got endState, what string) {
	t.Helper()
	require.Equal(t, len(want.field), len(got.field))
	for k := range want.field {
		if math.Float64bits(want.field[k]) != math.Float64bits(got.field[k]) || math.Float64bits(want.vel[k]) != math.Float64bits(got.vel[k]) {
			t.Fatalf("%s: state differs at index %d: %v vs %v", what, k, want.field[k], got.field[k])
		}
	}
	require.Equal(t, math.Float64bits(want.energy), math.Float64bits(got.energy), "%s: energy", what)
	require.Equal(t, math.Float64bits(want.charge), math.Float64bits(got.charge), "%s: charge", what)
	for name, col := range want.history {
		require.Equal(t, len(col), len(got.history[name]), "%s: history %s", what, name)
		for k := range col {
			require.Equal(t, math.Float64bits(col[k]), math.Float64bits(got.history[name][k]), "%s: history %s row %d", what, name, k)
		}
	}
	require.Equal(t, want.progress, got.progress, what)
}

var detFlow = core.FlowConfig{Tol: 1e-12, MaxSteps: 60, CheckEvery: 7}

func detSim(t *testing.T, threads int, form string) *core.Simulation {
	s := newSim(t, babySkyrme(t), 48, 40, 0.3, 0.3, core.Fixed, []float64{1, 1}, core.Options{Form: form}, threads)
	require.NoError(t, s.Fill(hedgehog(1.2)))
	return s
}

// 1, 2 and 8 threads give the same bits, run to run.
func TestThreadCountBitIdentical(t *testing.T) {
	for _, form := range []string{"consistent", "continuum"} {
		var ref endState
		for k, threads := range []int{1, 2, 8, 2} {
			s := detSim(t, threads, form)
			_, err := s.Minimize(detFlow)
			require.NoError(t, err)
			st := snapshot(t, s)
			if k == 0 {
				ref = st
				continue
			}
			requireBitIdentical(t, ref, st, form)
		}
	}
}

// Advancing in chunks (steps or wall time) is the same as one long call.
func TestChunkedAdvanceBitIdentical(t *testing.T) {
	long := detSim(t, 0, "")
	_, err := long.Minimize(detFlow)
	require.NoError(t, err)
	want := snapshot(t, long)

	chunked := detSim(t, 0, "")
	require.NoError(t, chunked.Start(detFlow))
	for calls := 0; ; calls++ {
		p, err := chunked.Advance(3, 0)
		require.NoError(t, err)
		if p.Done {
			break
		}
		require.Less(t, calls, 100)
	}
	requireBitIdentical(t, want, snapshot(t, chunked), "chunked by steps")

	timed := detSim(t, 0, "")
	require.NoError(t, timed.Start(detFlow))
	for {
		p, err := timed.Advance(0, time.Millisecond)
		require.NoError(t, err)
		if p.Done {
			break
		}
	}
	requireBitIdentical(t, want, snapshot(t, timed), "chunked by time")
}

// Cancel stops a running flow with errs.Cancelled; continuing it gives the
// uninterrupted result.
func TestCancelThenContinue(t *testing.T) {
	long := detSim(t, 0, "")
	_, err := long.Minimize(detFlow)
	require.NoError(t, err)
	want := snapshot(t, long)

	s := detSim(t, 0, "")
	require.NoError(t, s.Start(detFlow))
	done := make(chan struct{})
	go func() {
		time.Sleep(2 * time.Millisecond)
		s.Cancel()
		close(done)
	}()
	p, err := s.Continue()
	<-done
	if err != nil {
		require.True(t, errs.Is(err, errs.Cancelled), "got %v", err)
		require.False(t, p.Done)
	}
	_, err = s.Continue()
	require.NoError(t, err)
	requireBitIdentical(t, want, snapshot(t, s), "cancelled and continued")
}

// A far too large time step ends in errs.Divergence naming the step, and the
// field left behind is finite.
func TestDivergenceKeepsLastGoodField(t *testing.T) {
	s := newSim(t, abelianHiggs(t), 32, 32, 0.4, 0.4, core.Fixed, []float64{1}, core.Options{}, 0)
	require.NoError(t, s.Fill(vortex(1)))
	require.NoError(t, s.Start(core.FlowConfig{Dt: 5, MaxSteps: 10000, CheckEvery: 5}))
	_, err := s.Continue()
	require.Error(t, err)
	require.True(t, errs.Is(err, errs.Divergence), "got %v", err)
	assert.Contains(t, err.Error(), "step ")
	assert.Contains(t, err.Error(), "site (")
	t.Log(err)
	f, err := s.Field()
	require.NoError(t, err)
	for c := 0; c < f.NComp(); c++ {
		for _, v := range f.Comp(c) {
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0))
		}
	}
	e, err := s.Energy()
	require.NoError(t, err)
	assert.False(t, math.IsNaN(e) || math.IsInf(e, 0))
}

// A NaN in the initial field is refused before any step.
func TestNaNInitialFieldRefused(t *testing.T) {
	s := newSim(t, abelianHiggs(t), 16, 16, 0.5, 0.5, core.Fixed, []float64{1}, core.Options{}, 0)
	err := s.Fill(func(x, y float64, out []float64) {
		vortex(1)(x, y, out)
		if x > 1 && x < 1.5 && y > 0 && y < 0.5 {
			out[2] = math.NaN()
		}
	})
	require.Error(t, err)
	assert.True(t, errs.Is(err, errs.Parameter), "got %v", err)
	assert.Contains(t, err.Error(), `component "a1"`)
	err = s.Start(core.FlowConfig{})
	require.Error(t, err)
	_, err = s.Progress()
	require.Error(t, err, "no flow may have started")
}

// Save mid-run, load, continue: the end state is the uninterrupted one.
func TestSaveLoadContinueBitIdentical(t *testing.T) {
	long := detSim(t, 0, "")
	_, err := long.Minimize(detFlow)
	require.NoError(t, err)
	want := snapshot(t, long)

	s := detSim(t, 0, "")
	require.NoError(t, s.Start(detFlow))
	_, err = s.Advance(25, 0)
	require.NoError(t, err)
	path := t.TempDir() + "/run.arrow"
	require.NoError(t, s.Save(path))
	require.NoError(t, s.Close())

	loaded, err := core.Load(backend(0), path)
	require.NoError(t, err)
	defer loaded.Close()
	p, err := loaded.Progress()
	require.NoError(t, err)
	require.Equal(t, 25, p.Step)
	_, err = loaded.Continue()
	require.NoError(t, err)
	requireBitIdentical(t, want, snapshot(t, loaded), "saved, loaded and continued")
	assert.Equal(t, "baby_skyrme", loaded.Theory().Spec.Name)
}

// A field whose saved record is beyond the Arrow reader's default 256 MB
// body limit loads: 4096 x 2048 sites of 3 components are 201 MB for the
// field and as much for the velocity.
func TestSaveLoadOfALargeField(t *testing.T) {
	s := newSim(t, babySkyrme(t), 4096, 2048, 0.01, 0.01, core.Periodic, []float64{1, 1}, core.Options{}, 0)
	require.NoError(t, s.Fill(func(x, y float64, out []float64) {
		out[0], out[1], out[2] = math.Sin(x), math.Cos(x)*math.Sin(y), math.Cos(x)*math.Cos(y)
	}))
	path := t.TempDir() + "/large.arrow"
	require.NoError(t, s.Save(path))
	want, err := s.Field()
	require.NoError(t, err)
	loaded, err := core.Load(backend(0), path)
	require.NoError(t, err)
	defer loaded.Close()
	got, err := loaded.Field()
	require.NoError(t, err)
	for c := 0; c < 3; c++ {
		require.Equal(t, want.Comp(c), got.Comp(c))
	}
}
