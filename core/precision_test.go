package core_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// The storage precision without a GPU: the CPU backend refuses float32 with
// errs.Backend naming the CUDA option; a backend that offers other storage
// (core.StorageCompiler, here a stand-in over the CPU backend that records
// what it was asked) gets the precision, which Save writes and Load restores.

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

func TestFloat32IsRefusedOnTheCPU(t *testing.T) {
	lat := lattice32(t)
	_, err := core.NewSimulation(backend(1), babySkyrme(t), lat, []float64{1, 1}, core.Options{Precision: core.Float32})
	require.Error(t, err)
	require.True(t, errs.Is(err, errs.Backend), "%v", err)
	require.Contains(t, err.Error(), "CUDA backend option")
	require.Contains(t, err.Error(), "cpu backend")

	_, err = core.NewSimulation(backend(1), babySkyrme(t), lat, []float64{1, 1}, core.Options{Precision: "float16"})
	require.True(t, errs.Is(err, errs.Parameter), "%v", err)

	for _, p := range []string{"", core.Float64} {
		s, err := core.NewSimulation(backend(1), babySkyrme(t), lat, []float64{1, 1}, core.Options{Precision: p})
		require.NoError(t, err)
		require.Equal(t, core.Float64, s.Precision())
		require.Equal(t, 0x1p-53, s.Epsilon())
		s.Close()
	}
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

	// As saved: float32 again, which the CPU backend refuses.
	_, err = core.Load(backend(1), path)
	require.True(t, errs.Is(err, errs.Backend), "%v", err)
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
