package core_test

import (
	"math"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/internal/diskcache"
	"github.com/fieldgo/fieldgo/internal/fixtures"
	"github.com/fieldgo/fieldgo/kernels/cpu"
)

const (
	babySkyrmeSpec   = `{"name": "baby_skyrme", "fields": ["n1", "n2", "n3"], "params": ["kappa", "mass"], "densities": ["charge", "skyrme", "potential"], "constraint": "unit_vector", "gradient": "derived"}`
	abelianHiggsSpec = `{"name": "abelian_higgs", "fields": ["psi1", "psi2", "a1", "a2"], "params": ["lambda"], "densities": ["flux"], "constraint": "", "gradient": "derived"}`
)

func theory(t testing.TB, spec, file string) *core.Theory {
	t.Helper()
	src, err := os.ReadFile("testdata/" + file)
	require.NoError(t, err)
	th, err := core.ParseTheory(spec, string(src))
	require.NoError(t, err)
	return th
}

func babySkyrme(t testing.TB) *core.Theory   { return theory(t, babySkyrmeSpec, "baby_skyrme.c") }
func abelianHiggs(t testing.TB) *core.Theory { return theory(t, abelianHiggsSpec, "abelian_higgs.c") }

// backend returns a CPU backend with the given thread count (0: GOMAXPROCS),
// caching objects in a per-process directory shared by the tests.
func backend(threads int) *cpu.Backend {
	return cpu.New(cpu.Options{Threads: threads, CacheDir: testCache})
}

var testCache = func() string {
	if d, err := diskcache.Dir(diskcache.CPU); err == nil {
		return d
	}
	return os.TempDir() + "/fieldgo-test-cache"
}()

func newSim(t testing.TB, th *core.Theory, nx, ny int, hx, hy float64, b core.Boundary, params []float64, opt core.Options, threads int) *core.Simulation {
	t.Helper()
	lat, err := core.CenteredLattice(nx, ny, hx, hy, b)
	require.NoError(t, err)
	s, err := core.NewSimulation(backend(threads), th, lat, params, opt)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// The initial fields the tests start from (internal/fixtures).
var hedgehog, vortex = fixtures.Hedgehog, fixtures.Vortex

func columnFloat(t testing.TB, rec arrow.RecordBatch, name string) []float64 {
	t.Helper()
	idx := rec.Schema().FieldIndices(name)
	require.NotEmpty(t, idx, "no column %q", name)
	return append([]float64(nil), rec.Column(idx[0]).(*array.Float64).Float64Values()...)
}

// smoothHedgehog has f = pi (1 - tanh(r/size)): pi - f is odd in r, so n is
// smooth at the origin (pi exp(-r) leaves an r*x term there that spoils the
// O(h^4) comparison of stencils).
func smoothHedgehog(size float64) func(x, y float64, out []float64) {
	return func(x, y float64, out []float64) {
		r, th := math.Hypot(x, y), math.Atan2(y, x)
		f := math.Pi * (1 - math.Tanh(r/size))
		out[0], out[1], out[2] = math.Sin(f)*math.Cos(th), math.Sin(f)*math.Sin(th), math.Cos(f)
	}
}
