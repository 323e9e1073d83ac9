package cpubench

import (
	"math"
	"os"
	"testing"

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

func hedgehog(x, y float64, out []float64) {
	r, t := math.Hypot(x, y), math.Atan2(y, x)
	f := math.Pi * math.Exp(-r)
	out[0], out[1], out[2] = math.Sin(f)*math.Cos(t), math.Sin(f)*math.Sin(t), math.Cos(f)
}

func vortex(x, y float64, out []float64) {
	r, t := math.Hypot(x, y), math.Atan2(y, x)
	f := math.Tanh(r)
	out[0], out[1] = f*math.Cos(t), f*math.Sin(t)
	a := 0.5
	if r > 1e-6 {
		a = (1 - 1/math.Cosh(r)) / (r * r)
	}
	out[2], out[3] = -a*y, a*x
}
