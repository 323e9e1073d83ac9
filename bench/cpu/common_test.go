package cpubench

import (
	"os"
	"testing"

	"github.com/fieldgo/fieldgo/internal/fixtures"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/kernels/cpu"
)

const (
	babySkyrmeSpec   = `{"name": "baby_skyrme", "fields": ["n1", "n2", "n3"], "params": ["kappa", "mass"], "densities": ["charge", "skyrme", "potential"], "constraint": "unit_vector", "gradient": "derived"}`
	abelianHiggsSpec = `{"name": "abelian_higgs", "fields": ["psi1", "psi2", "a1", "a2"], "params": ["lambda"], "densities": ["flux"], "constraint": "", "gradient": "derived"}`
)

func theory(tb testing.TB, spec, file string) *core.Theory {
	src, err := os.ReadFile("../../core/testdata/" + file)
	if err != nil {
		tb.Fatal(err)
	}
	th, err := core.ParseTheory(spec, string(src))
	if err != nil {
		tb.Fatal(err)
	}
	return th
}

func newSim(tb testing.TB, th *core.Theory, n int, h float64, params []float64, opt core.Options) *core.Simulation {
	lat, err := core.CenteredLattice(n, n, h, h, core.Fixed)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := core.NewSimulation(cpu.New(cpu.Options{}), th, lat, params, opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// The benchmarks' initial fields (internal/fixtures).
var hedgehog, vortex = fixtures.Hedgehog(1), fixtures.Vortex(1)
