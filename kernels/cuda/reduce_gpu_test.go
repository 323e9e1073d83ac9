package cuda

import (
	"math"
	"testing"

	"github.com/fieldgo/fieldgo/kernels"
)

// TestDotAndFillRandomAgreeWithCPU checks Program.Dot, MaxAbs and FillRandom on the
// device: the random values are the CPU's bits, the dot product agrees with
// the CPU's compensated sum to the float64 error of a sum of n products, and
// its bits do not change with the block size.
func TestDotAndFillRandomAgreeWithCPU(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	th := builtins(t)[0]
	p := newPair(t, b, th)
	defer p.close()
	for _, n := range []int{1, 31, kernels.DotBlock, 5*kernels.DotBlock + 999, 3 << 20} {
		x, y := p.mirror(t, n), p.mirror(t, n)
		if err := p.gp.FillRandom(x.g, 7); err != nil {
			t.Fatal(err)
		}
		if err := x.g.Download(); err != nil {
			t.Fatal(err)
		}
		for i, v := range x.h {
			if math.Float64bits(v) != math.Float64bits(kernels.RandomValue(7, i)) {
				t.Fatalf("n=%d: FillRandom differs from the CPU's at %d: %v", n, i, v)
			}
		}
		for i := range y.h {
			y.h[i] = math.Sin(0.37*float64(i)) * math.Pow(10, float64(i%7-3))
		}
		if err := y.g.Upload(); err != nil {
			t.Fatal(err)
		}
		want, err := p.cp.Dot(x.c, y.c)
		if err != nil {
			t.Fatal(err)
		}
		var abs float64
		for i := range x.h {
			abs += math.Abs(x.h[i] * y.h[i])
		}
		var first float64
		for run, bs := range []int{0, 32, 64, 256, 1024} {
			if bs > 0 {
				if err := p.gp.SetBlockSize("fg_k_dot", bs); err != nil {
					t.Fatal(err)
				}
			}
			got, err := p.gp.Dot(x.g, y.g)
			if err != nil {
				t.Fatal(err)
			}
			if run == 0 {
				first = got
				if d := math.Abs(got - want); d > 2*float64(n)*u*abs {
					t.Errorf("n=%d: Dot %v, CPU %v: |diff| %.3g above n u sum|xy| = %.3g", n, got, want, d, float64(n)*u*abs)
				}
			} else if math.Float64bits(got) != math.Float64bits(first) {
				t.Errorf("n=%d block %d: Dot %v differs from %v", n, bs, got, first)
			}
		}
		t.Logf("n=%d: Dot %.17g (CPU %.17g), the same bits at every block size", n, first, want)
		y.h[n/2] = -1e3
		if err := y.g.Upload(); err != nil {
			t.Fatal(err)
		}
		if m, err := p.gp.MaxAbs(y.g); err != nil || m != 1e3 {
			t.Errorf("n=%d: MaxAbs %v (%v), want 1000", n, m, err)
		}
		y.h[n-1] = math.NaN()
		if err := y.g.Upload(); err != nil {
			t.Fatal(err)
		}
		if m, err := p.gp.MaxAbs(y.g); err != nil || !math.IsNaN(m) {
			t.Errorf("n=%d: MaxAbs %v (%v) of a buffer holding a NaN, want NaN", n, m, err)
		}
	}
}

// TestProjectAndShiftedGradientAgreeWithCPU: Program.Project and a Gradient
// whose field is Phi + Shift (formed by the tiled kernel's loader for the
// continuum form, by a combination first for the consistent form) against
// the CPU's.
func TestProjectAndShiftedGradientAgreeWithCPU(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	for _, th := range builtins(t) {
		p := newPair(t, b, th)
		g := kernels.Grid{Nx: 130, Ny: 97, Hx: 0.1, Hy: 0.1, Ox: -6.5, Oy: -4.8}
		n := p.unit.NComp * g.Sites()
		phi, x, out := p.mirror(t, n), p.mirror(t, n), p.mirror(t, n)
		initial(th.name, g, phi.h)
		for i := range x.h {
			x.h[i] = kernels.RandomValue(9, i)
		}
		phi.g.Upload()
		x.g.Upload()
		for _, form := range []kernels.Form{kernels.Continuum, kernels.Consistent} {
			ga := kernels.GradientArgs{Grid: g, Form: form, Penalty: 0.05, Params: p.params, Energy: true,
				Phi: phi.g, Shift: []kernels.Term{{Coef: 1e-4, X: x.g}}, Out: out.g}
			rg, err := p.gp.Gradient(ga)
			if err != nil {
				t.Fatal(err)
			}
			out.g.Download()
			got := append([]float64(nil), out.h...)
			ga.Phi, ga.Shift[0].X, ga.Out = phi.c, x.c, out.c
			rc, err := p.cp.Gradient(ga)
			if err != nil {
				t.Fatal(err)
			}
			var m, d float64
			for i := range got {
				m = math.Max(m, math.Abs(out.h[i]))
				d = math.Max(d, math.Abs(got[i]-out.h[i]))
			}
			if d > 1e-9*m || math.Abs(rg.Energy-rc.Energy) > 1e-10*math.Abs(rc.Energy) {
				t.Errorf("%s %v: shifted gradient differs from the CPU's by %.3g of %.3g, energy %v vs %v", th.name, form, d, m, rg.Energy, rc.Energy)
			}
		}
		// Project, on the field as it is (unit or not: phi/|phi| is used).
		if err := p.gp.Project(g, phi.g, x.g); err != nil {
			t.Fatal(err)
		}
		x.g.Download()
		got := append([]float64(nil), x.h...)
		for i := range x.h {
			x.h[i] = kernels.RandomValue(9, i)
		}
		if err := p.cp.Project(g, phi.c, x.c); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(got[i]-x.h[i]) > 1e-13 {
				t.Fatalf("%s: Project differs from the CPU's at %d: %v vs %v", th.name, i, got[i], x.h[i])
			}
		}
		p.close()
	}
}
