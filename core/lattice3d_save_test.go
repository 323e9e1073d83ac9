package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
)

// ndState is what a resumed run must reproduce bit for bit: the field, the
// velocity, the energy, the history and the flow's progress.
type ndState struct {
	field, vel []float64
	energy     float64
	history    map[string][]float64
	progress   core.Progress
}

func ndSnapshot(t *testing.T, s *core.Simulation) ndState {
	t.Helper()
	var st ndState
	f, err := s.Field()
	require.NoError(t, err)
	v, err := s.Velocity()
	require.NoError(t, err)
	st.field = append(st.field, f.Comp(0)...)
	st.vel = append(st.vel, v.Comp(0)...)
	st.energy, err = s.Energy()
	require.NoError(t, err)
	h, err := s.History()
	require.NoError(t, err)
	defer h.Release()
	st.history = map[string][]float64{}
	for _, name := range []string{"energy", "max_grad"} {
		st.history[name] = columnFloat(t, h, name)
	}
	st.progress, err = s.Progress()
	require.NoError(t, err)
	return st
}

func requireSameBits(t *testing.T, want, got ndState, what string) {
	t.Helper()
	require.Equal(t, len(want.field), len(got.field), what)
	for k := range want.field {
		if math.Float64bits(want.field[k]) != math.Float64bits(got.field[k]) || math.Float64bits(want.vel[k]) != math.Float64bits(got.vel[k]) {
			t.Fatalf("%s: state differs at index %d: %v vs %v", what, k, want.field[k], got.field[k])
		}
	}
	require.Equal(t, math.Float64bits(want.energy), math.Float64bits(got.energy), "%s: energy", what)
	for name, col := range want.history {
		require.Len(t, got.history[name], len(col), "%s: history %s", what, name)
		for k := range col {
			require.Equal(t, math.Float64bits(col[k]), math.Float64bits(got.history[name][k]), "%s: history %s row %d", what, name, k)
		}
	}
	require.Equal(t, want.progress, got.progress, what)
}

// ndRun is a phi^4 run on a lattice of len(n) axes with its own spacing and
// origin per axis, started from a bumpy wall so that every axis moves.
func ndRun(t *testing.T, n []int, h, o []float64, bounds []core.Boundary, opt core.Options) *core.Simulation {
	t.Helper()
	lat, err := core.NewLatticeND(n, h, o, bounds)
	require.NoError(t, err)
	s, err := core.NewSimulation(backend(0), phi4(t), lat, []float64{1.1}, opt)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	f, err := core.NewField(lat, []string{"u"})
	require.NoError(t, err)
	defer f.Release()
	u := f.Comp(0)
	for idx := range u {
		i, j, k := idx%lat.Nx, (idx/lat.Nx)%lat.Ny, idx/(lat.Nx*lat.Ny)
		x, y, z := lat.X(i), lat.Y(j), lat.Oz+float64(k)*lat.Hz
		u[idx] = math.Tanh(1.3*x+0.3*math.Sin(1.7*y)) + 0.1*math.Cos(2.1*z+y)
	}
	require.NoError(t, s.SetField(f))
	return s
}

// Saving a run on a line, a 3D lattice and a plane with boundaries per axis
// mid-flow and loading it gives back the lattice (sizes, spacing, origin and
// boundary of each axis), the form and the precision, and the loaded run
// continues bit for bit as the uninterrupted one.
func TestSaveLoadContinueBeyondPlanar(t *testing.T) {
	flow := core.FlowConfig{Tol: 1e-14, MaxSteps: 40, CheckEvery: 6}
	for _, c := range []struct {
		name   string
		n      []int
		h, o   []float64
		bounds []core.Boundary
		opt    core.Options
	}{
		{"3d", []int{17, 7, 6}, []float64{0.3, 0.35, 0.4}, []float64{-2.5, 0.1, -1}, []core.Boundary{core.Fixed, core.Periodic, core.Periodic}, core.Options{}},
		{"3d_consistent_float32", []int{15, 6, 7}, []float64{0.3, 0.35, 0.4}, []float64{-2, 0, 0.5}, []core.Boundary{core.Periodic, core.Fixed, core.Periodic},
			core.Options{Form: "consistent", Precision: core.Float32}},
		{"1d", []int{41}, []float64{0.25}, []float64{-5}, []core.Boundary{core.Fixed}, core.Options{}},
		{"2d_per_axis", []int{19, 8}, []float64{0.3, 0.45}, []float64{-2.7, 1}, []core.Boundary{core.Fixed, core.Periodic}, core.Options{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			long := ndRun(t, c.n, c.h, c.o, c.bounds, c.opt)
			_, err := long.Minimize(flow)
			require.NoError(t, err)
			want := ndSnapshot(t, long)

			s := ndRun(t, c.n, c.h, c.o, c.bounds, c.opt)
			require.NoError(t, s.Start(flow))
			_, err = s.Advance(15, 0)
			require.NoError(t, err)
			path := t.TempDir() + "/run.arrow"
			require.NoError(t, s.Save(path))
			lat := s.Lattice()

			loaded, err := core.Load(backend(0), path)
			require.NoError(t, err)
			defer loaded.Close()
			assert.Equal(t, lat, loaded.Lattice())
			assert.Equal(t, len(c.n), loaded.Lattice().Dim())
			for a := range c.n {
				assert.Equal(t, c.bounds[a], loaded.Lattice().AxisBoundary(a), "axis %d", a)
			}
			assert.Equal(t, s.Form(), loaded.Form())
			assert.Equal(t, s.Precision(), loaded.Precision())
			p, err := loaded.Progress()
			require.NoError(t, err)
			require.Equal(t, 15, p.Step)
			_, err = loaded.Continue()
			require.NoError(t, err)
			requireSameBits(t, want, ndSnapshot(t, loaded), "saved, loaded and continued")

			// The saved run itself, continued, agrees too.
			_, err = s.Continue()
			require.NoError(t, err)
			requireSameBits(t, want, ndSnapshot(t, s), "continued after saving")
		})
	}
}

// A field describes every axis of its lattice.
func TestFieldStringNamesEveryAxis(t *testing.T) {
	lat, err := core.NewLatticeND([]int{7, 6, 5}, []float64{0.1, 0.2, 0.3}, []float64{0, 0, 0}, []core.Boundary{core.Fixed, core.Periodic, core.Periodic})
	require.NoError(t, err)
	f, err := core.NewField(lat, []string{"u"})
	require.NoError(t, err)
	defer f.Release()
	assert.Equal(t, "Field([u], 7 x 6 x 5, h=(0.1, 0.2, 0.3), fixed, periodic, periodic)", f.String())
	plane, err := core.NewField(mustLattice(t, 8, 9), []string{"u"})
	require.NoError(t, err)
	defer plane.Release()
	assert.Equal(t, "Field([u], 8 x 9, h=(0.5, 0.5), periodic)", plane.String())
}

func mustLattice(t *testing.T, nx, ny int) core.Lattice {
	t.Helper()
	lat, err := core.NewLattice(nx, ny, 0.5, 0.5, 0, 0, core.Periodic)
	require.NoError(t, err)
	return lat
}
