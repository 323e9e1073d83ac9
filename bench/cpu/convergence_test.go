package cpubench

import (
	"fmt"
	"math"
	"os"
	"strconv"
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

// TestConvergence measures steps and time to max|grad| < 1e-6 and < 1e-8 for
// each gradient form and arrest test on soliton_solver's lattices. It takes
// minutes: FIELDGO_CONVERGENCE=1 go test ./bench/cpu -run Convergence -v
// (FIELDGO_CONVERGENCE_MAXSTEPS caps the Baby Skyrme runs, default 5000).
func TestConvergence(t *testing.T) {
	if os.Getenv("FIELDGO_CONVERGENCE") == "" {
		t.Skip("set FIELDGO_CONVERGENCE=1 to measure convergence (minutes)")
	}
	bsMax := 5000
	if v, err := strconv.Atoi(os.Getenv("FIELDGO_CONVERGENCE_MAXSTEPS")); err == nil {
		bsMax = v
	}
	type run struct {
		model, form, arrest string
		penalty             bool
		maxSteps            int
	}
	var runs []run
	for _, form := range []string{"consistent", "continuum"} {
		for _, arrest := range []string{core.ArrestPower, core.ArrestEnergy} {
			runs = append(runs, run{"baby_skyrme", form, arrest, form == "consistent", bsMax})
		}
	}
	for _, form := range []string{"continuum", "consistent"} {
		for _, arrest := range []string{core.ArrestPower, core.ArrestEnergy} {
			runs = append(runs, run{"abelian_higgs", form, arrest, form == "consistent", 20000})
		}
	}
	fmt.Println("| model | form | arrest | steps to 1e-6 | time | steps to 1e-8 | time | final max_grad | energy | resets |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range runs {
		var s *core.Simulation
		var ref float64
		if r.model == "baby_skyrme" {
			s = newSim(t, theory(t, babySkyrmeSpec, "baby_skyrme.c"), 256, 20.0/255, []float64{1, 1}, core.Options{Form: r.form, NoPenalty: !r.penalty})
			if err := s.Fill(hedgehog); err != nil {
				t.Fatal(err)
			}
			ref = SolitonSolverEnergy
		} else {
			s = newSim(t, theory(t, abelianHiggsSpec, "abelian_higgs.c"), 81, 0.2, []float64{1}, core.Options{Form: r.form, NoPenalty: !r.penalty})
			if err := s.Fill(vortex); err != nil {
				t.Fatal(err)
			}
			ref = math.Pi
		}
		if err := s.Start(core.FlowConfig{Arrest: r.arrest, Tol: 1e-8, MaxSteps: r.maxSteps, CheckEvery: 1000}); err != nil {
			t.Fatal(err)
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
				return fmt.Sprintf("> %d | –", r.maxSteps)
			}
			return fmt.Sprintf("%d | %.1f s", c.step, c.t.Seconds())
		}
		form := r.form
		if r.penalty {
			form += " + penalty"
		}
		status := ""
		if err != nil {
			status = " (" + err.Error() + ")"
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %.2e | %.10f (%+.1e)%s | %d |\n", r.model, form, r.arrest, show(c6), show(c8),
			p.MaxGrad, p.Energy, p.Energy-ref, status, p.Resets)
		if r.model == "baby_skyrme" {
			q, _ := s.Integral("charge")
			fmt.Printf("|   | charge %.8f |\n", q)
		}
		s.Close()
	}
}
