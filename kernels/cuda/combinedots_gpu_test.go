package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/fieldgo/fieldgo/kernels"
)

// TestCombineDotsAgreesWithItsParts: CombineDots leaves in out the bits that
// Combine and then Project leave, on the planar grids and the grid unit's
// (lines, planes, 3D lattices with every wrap mix), and its two sums agree
// with the CPU's compensated Dot to the float64 error of a sum of n
// products; the sums keep their bits at every block size.
func TestCombineDotsAgreesWithItsParts(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	type tc struct {
		th    builtin
		grids []kernels.Grid
		unit  bool
	}
	var cases []tc
	for _, th := range builtins(t) {
		cases = append(cases, tc{th, grids(), th.name == "baby_skyrme"})
	}
	for _, th := range gridBuiltins(t) {
		cases = append(cases, tc{th, gridCases(), unitVector(th.name)})
	}
	for _, c := range cases {
		p := newGridPair(t, b, c.th)
		for _, g := range c.grids {
			t.Run(fmt.Sprintf("%s/%dD/%dx%dx%d", c.th.name, g.Dim(), g.Nx, g.Ny, g.Planes()), func(t *testing.T) {
				combineDotsAgree(t, p, g, c.unit)
			})
		}
		p.close()
	}
}

func combineDotsAgree(t *testing.T, p *pair, g kernels.Grid, unit bool) {
	n := p.unit.NComp * g.Sites()
	phi, x, y, got, want := p.mirror(t, n), p.mirror(t, n), p.mirror(t, n), p.mirror(t, n), p.mirror(t, n)
	for i := range phi.h {
		phi.h[i] = math.Sin(0.37*float64(i)) + 0.2
		x.h[i] = math.Cos(0.11*float64(i)) * math.Pow(10, float64(i%5-2))
		y.h[i] = math.Sin(1.7*float64(i) + 0.3)
	}
	for _, m := range []*mirror{phi, x, y} {
		if err := m.g.Upload(); err != nil {
			t.Fatal(err)
		}
	}
	var proj kernels.Buffer
	if unit {
		proj = phi.g
	}
	terms := []kernels.Term{{Coef: 0.7, X: x.g}, {Coef: -1.3, X: y.g}, {Coef: 0.25, X: phi.g}}
	if err := p.gp.Combine(want.g, terms...); err != nil {
		t.Fatal(err)
	}
	if unit {
		if err := p.gp.Project(g, phi.g, want.g); err != nil {
			t.Fatal(err)
		}
	}
	if err := want.g.Download(); err != nil {
		t.Fatal(err)
	}
	var first [2]float64
	names := []string{"fg_k_combine_dots"}
	if p.gp.onGrid(g) {
		names = []string{"fg_k_nd_combine_dots"}
	}
	for run, bs := range []int{0, 32, 96, 512} {
		if bs > 0 {
			if err := p.gp.setAnyBlockSize(g, names[0], bs); err != nil {
				t.Fatal(err)
			}
		}
		oo, oy, err := p.gp.CombineDots(g, proj, got.g, y.g, terms...)
		if err != nil {
			t.Fatal(err)
		}
		if err := got.g.Download(); err != nil {
			t.Fatal(err)
		}
		for i := range got.h {
			if math.Float64bits(got.h[i]) != math.Float64bits(want.h[i]) {
				t.Fatalf("value %d: CombineDots %v, Combine and Project %v", i, got.h[i], want.h[i])
			}
		}
		if run == 0 {
			first = [2]float64{oo, oy}
			var absO, absY float64
			for i := range want.h {
				absO += want.h[i] * want.h[i]
				absY += math.Abs(want.h[i] * y.h[i])
			}
			wo, _ := p.cp.Dot(want.c, want.c)
			wy, _ := p.cp.Dot(want.c, y.c)
			if d := math.Abs(oo - wo); d > 2*float64(n)*u*absO {
				t.Errorf("out.out %v, CPU %v", oo, wo)
			}
			if d := math.Abs(oy - wy); d > 2*float64(n)*u*absY {
				t.Errorf("out.y %v, CPU %v", oy, wy)
			}
		} else if [2]float64{oo, oy} != first {
			t.Errorf("block %d: sums %v differ from %v", bs, [2]float64{oo, oy}, first)
		}
	}
}

// setAnyBlockSize sets the block size of kernel name in whichever module
// runs grid g (the grid unit's is loaded by the first operation on g).
func (p *Program) setAnyBlockSize(g kernels.Grid, name string, block int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	ks := p.k
	if p.grid != nil && p.onGrid(g) {
		ks = p.grid.k
	}
	k, ok := ks[name]
	if !ok {
		return fmt.Errorf("no kernel %s loaded for this grid", name)
	}
	k.info.BlockSize = block
	return nil
}
