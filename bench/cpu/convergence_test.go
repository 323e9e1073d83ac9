package cpubench

import (
	"flag"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/fieldgo/fieldgo/core"
)

// SolitonSolverEnergy is soliton_solver's Baby Skyrme charge-1 energy on the
// same lattice (256 x 256, box 20, kappa = mass = 1).
const SolitonSolverEnergy = 32.31437129153639

type crossing struct {
	step int
	t    time.Duration
}

var bsMaxSteps = flag.Int("bs-max-steps", 5000, "BenchmarkConvergence: the Baby Skyrme runs' step cap")

// BenchmarkConvergence measures steps and time to max|grad| < 1e-6 and < 1e-8
// for each gradient form and arrest test on soliton_solver's lattices
// (sub-benchmarks model/form/arrest; -bs-max-steps caps the Baby Skyrme
// runs, default 5000). It takes minutes:
//
//	go test ./bench/cpu -run '^$' -bench Convergence -benchtime 1x -v -timeout 30m
func BenchmarkConvergence(b *testing.B) {
	type run struct {
		model, form, arrest string
		penalty             bool
		maxSteps            int
	}
	var runs []run
	for _, form := range []string{"consistent", "continuum"} {
		for _, arrest := range []string{core.ArrestPower, core.ArrestEnergy} {
			runs = append(runs, run{"baby_skyrme", form, arrest, form == "consistent", *bsMaxSteps})
		}
	}
	for _, form := range []string{"continuum", "consistent"} {
		for _, arrest := range []string{core.ArrestPower, core.ArrestEnergy} {
			runs = append(runs, run{"abelian_higgs", form, arrest, form == "consistent", 20000})
		}
	}
	b.Log("| model | form | arrest | steps to 1e-6 | time | steps to 1e-8 | time | final max_grad | energy | resets |")
	for _, r := range runs {
		form := r.form
		if r.penalty {
			form += "+penalty"
		}
		b.Run(r.model+"/"+form+"/"+r.arrest, func(b *testing.B) {
			for range b.N {
				converge(b, r.model, r.form, r.arrest, r.penalty, r.maxSteps)
			}
		})
	}
}

func converge(b *testing.B, model, form, arrest string, penalty bool, maxSteps int) {
	var s *core.Simulation
	var ref float64
	if model == "baby_skyrme" {
		s = newSim(b, theory(b, babySkyrmeSpec, "baby_skyrme.c"), 256, 20.0/255, []float64{1, 1}, core.Options{Form: form, NoPenalty: !penalty})
		if err := s.Fill(hedgehog); err != nil {
			b.Fatal(err)
		}
		ref = SolitonSolverEnergy
	} else {
		s = newSim(b, theory(b, abelianHiggsSpec, "abelian_higgs.c"), 81, 0.2, []float64{1}, core.Options{Form: form, NoPenalty: !penalty})
		if err := s.Fill(vortex); err != nil {
			b.Fatal(err)
		}
		ref = math.Pi
	}
	defer s.Close()
	if err := s.Start(core.FlowConfig{Arrest: arrest, Tol: 1e-8, MaxSteps: maxSteps, CheckEvery: 1000}); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	var c6, c8 *crossing
	var p core.Progress
	var err error
	for !p.Done {
		if p, err = s.Advance(10, 0); err != nil {
			break
		}
		if c6 == nil && p.MaxGrad < 1e-6 {
			c6 = &crossing{p.Step, time.Since(t0)}
		}
		if c8 == nil && p.MaxGrad < 1e-8 {
			c8 = &crossing{p.Step, time.Since(t0)}
		}
	}
	show := func(c *crossing) string {
		if c == nil {
			return fmt.Sprintf("> %d | –", maxSteps)
		}
		return fmt.Sprintf("%d | %.1f s", c.step, c.t.Seconds())
	}
	for _, c := range []struct {
		at   *crossing
		unit string
	}{{c6, "1e-6"}, {c8, "1e-8"}} {
		if c.at != nil {
			b.ReportMetric(float64(c.at.step), "steps-to-"+c.unit)
			b.ReportMetric(c.at.t.Seconds(), "s-to-"+c.unit)
		}
	}
	if penalty {
		form += " + penalty"
	}
	status := ""
	if err != nil {
		status = " (" + err.Error() + ")"
	}
	b.Logf("| %s | %s | %s | %s | %s | %.2e | %.10f (%+.1e)%s | %d |", model, form, arrest, show(c6), show(c8),
		p.MaxGrad, p.Energy, p.Energy-ref, status, p.Resets)
	if model == "baby_skyrme" {
		q, _ := s.Integral("charge")
		b.Logf("|   | charge %.8f |", q)
	}
}
