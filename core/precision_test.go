package core_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// The storage precision without a GPU. The CPU backend offers float32
// storage as the CUDA backend defines it (float64 arithmetic, every stored
// field value rounded to float32), in float64 memory; a backend that offers
// other storage (core.StorageCompiler, here a stand-in over the CPU backend
// that records what it was asked) gets the precision, which Save writes and
// Load restores.

type storageBackend struct {
	kernels.Backend
	asked []string
}

func (b *storageBackend) CompileStorage(u kernels.Unit, precision string) (kernels.Program, error) {
	b.asked = append(b.asked, precision)
	return b.Backend.Compile(u)
}

func lattice32(t *testing.T) core.Lattice {
	lat, err := core.CenteredLattice(24, 24, 0.5, 0.5, core.Fixed)
	require.NoError(t, err)
	return lat
}

// float32Exact fails unless every value is a float32 widened exactly.
func float32Exact(t *testing.T, what string, f *core.Field) {
	t.Helper()
	for c := 0; c < f.NComp(); c++ {
		for i, v := range f.Comp(c) {
			if v != float64(float32(v)) {
				t.Fatalf("%s: component %d site %d holds %v, not a float32 value", what, c, i, v)
			}
		}
	}
}

func TestFloat32StorageOnTheCPU(t *testing.T) {
	lat := lattice32(t)
	_, err := core.NewSimulation(backend(1), babySkyrme(t), lat, []float64{1, 1}, core.Options{Precision: "float16"})
	require.True(t, errs.Is(err, errs.Parameter), "%v", err)
	for _, p := range []string{"", core.Float64} {
		s, err := core.NewSimulation(backend(1), babySkyrme(t), lat, []float64{1, 1}, core.Options{Precision: p})
		require.NoError(t, err)
		require.Equal(t, core.Float64, s.Precision())
		require.Equal(t, 0x1p-53, s.Epsilon())
		s.Close()
	}

	run := func(prec string, threads, steps int) (*core.Simulation, *core.Field) {
		s, err := core.NewSimulation(backend(threads), babySkyrme(t), lat, []float64{1, 1}, core.Options{Precision: prec})
		require.NoError(t, err)
		require.Equal(t, prec, s.Precision())
		require.NoError(t, s.Fill(hedgehog(1)))
		require.NoError(t, s.Start(core.FlowConfig{Tol: 1e-300, MaxSteps: steps, Dt: 0.05}))
		_, err = s.Advance(steps, 0)
		require.NoError(t, err)
		f, err := s.Field()
		require.NoError(t, err)
		return s, f
	}
	s32, f32 := run(core.Float32, 1, 100)
	defer s32.Close()
	require.Equal(t, 0x1p-24, s32.Epsilon())
	float32Exact(t, "field after 100 steps", f32) // stored, so rounded
	v, err := s32.Velocity()
	require.NoError(t, err)
	float32Exact(t, "velocity after 100 steps", v)
	g, err := s32.Gradient(true)
	require.NoError(t, err)
	float32Exact(t, "gradient field", g)
	g.Release()

	// Deterministic whatever the thread count.
	s32b, f32b := run(core.Float32, 3, 100)
	defer s32b.Close()
	for c := 0; c < 3; c++ {
		require.Equal(t, f32.Comp(c), f32b.Comp(c), "component %d: float32 runs on 1 and 3 threads differ", c)
	}

	// Against float64 from the same start: each step rounds each stored value
	// once (relative 2^-24) and a relaxing flow does not amplify it, so after n
	// steps |phi32 - phi64| <= n * 8 * 2^-24 * max(1, |phi|) (the bound of
	// tests/python/test_gpu.py); and the difference is real rounding, not zero.
	s64, f64 := run(core.Float64, 1, 100)
	defer s64.Close()
	worst := 0.0
	for c := 0; c < 3; c++ {
		for i, a := range f32.Comp(c) {
			worst = math.Max(worst, math.Abs(a-f64.Comp(c)[i])/math.Max(1, math.Abs(f64.Comp(c)[i])))
		}
	}
	t.Logf("after 100 steps max|phi32 - phi64|/max(1,|phi|) = %.3g (bound %.3g)", worst, 100*8*0x1p-24)
	require.Greater(t, worst, 0.0)
	require.LessOrEqual(t, worst, 100*8*0x1p-24)
	e32, err := s32.Energy()
	require.NoError(t, err)
	e64, err := s64.Energy()
	require.NoError(t, err)
	require.InDelta(t, e64, e32, 1e-5*math.Abs(e64))
}

func TestPrecisionIsSavedAndRestored(t *testing.T) {
	lat := lattice32(t)
	sb := &storageBackend{Backend: backend(1)}
	s, err := core.NewSimulation(sb, babySkyrme(t), lat, []float64{1, 1}, core.Options{Precision: core.Float32})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, []string{core.Float32}, sb.asked)
	require.Equal(t, core.Float32, s.Precision())
	require.Equal(t, 0x1p-24, s.Epsilon())
	require.NoError(t, s.Fill(hedgehog(1)))
	// The floor: (64/12)(2/h^2) eps max(1, max|phi|) with unit vectors.
	floor, err := s.GradientFloor()
	require.NoError(t, err)
	require.InDelta(t, 64.0/12*(2/0.25)*0x1p-24, floor, 1e-15)
	buf, err := s.FieldBuffer()
	require.NoError(t, err)
	require.Equal(t, 3*24*24, buf.Len())

	path := filepath.Join(t.TempDir(), "f32.arrow")
	require.NoError(t, s.Save(path))
	p, err := core.SavedPrecision(path)
	require.NoError(t, err)
	require.Equal(t, core.Float32, p)

	// As saved: float32 again, on the CPU backend too.
	l32, err := core.Load(backend(1), path)
	require.NoError(t, err)
	require.Equal(t, core.Float32, l32.Precision())
	l32.Close()
	sb2 := &storageBackend{Backend: backend(1)}
	l, err := core.Load(sb2, path)
	require.NoError(t, err)
	require.Equal(t, []string{core.Float32}, sb2.asked)
	require.Equal(t, core.Float32, l.Precision())
	l.Close()
	// Overridden: float64 on the CPU.
	l, err = core.LoadAs(backend(1), path, core.Float64)
	require.NoError(t, err)
	require.Equal(t, core.Float64, l.Precision())
	l.Close()

	// A float64 file says so.
	s64, err := core.NewSimulation(backend(1), babySkyrme(t), lat, []float64{1, 1}, core.Options{})
	require.NoError(t, err)
	defer s64.Close()
	path64 := filepath.Join(t.TempDir(), "f64.arrow")
	require.NoError(t, s64.Save(path64))
	p, err = core.SavedPrecision(path64)
	require.NoError(t, err)
	require.Equal(t, core.Float64, p)
}
