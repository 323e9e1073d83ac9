package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cpu"
)

// The field engine on lines, 3D lattices and boundaries set per axis
// (grid.go, cuda_site3d.cu) against the CPU backend, operation by
// operation. Without a GPU every test here skips, saying why.

// gridCases are the grids of the tests: every kind of axis and boundary,
// lengths that are not multiples of the 32-site chunk.
func gridCases() []kernels.Grid {
	mk := func(n []int, h []float64, wrap [3]bool) kernels.Grid {
		g := kernels.Grid{Dims: len(n), Nx: n[0], Ny: 1, Hx: h[0], Hy: 1, Hz: 1, Wrap: wrap}
		g.Ox = -float64(n[0]-1) * h[0] / 2
		if len(n) >= 2 {
			g.Ny, g.Hy = n[1], h[1]
			g.Oy = -float64(n[1]-1)*h[1]/2 + 0.1
		}
		if len(n) == 3 {
			g.Nz, g.Hz = n[2], h[2]
			g.Oz = -float64(n[2]-1)*h[2]/2 - 0.05
		}
		return g
	}
	return []kernels.Grid{
		mk([]int{37, 11, 9}, []float64{0.3, 0.35, 0.4}, [3]bool{false, true, true}),
		mk([]int{40, 12, 10}, []float64{0.3, 0.3, 0.3}, [3]bool{true, true, true}),
		mk([]int{21, 9, 13}, []float64{0.4, 0.3, 0.35}, [3]bool{false, false, false}),
		mk([]int{35, 8, 7}, []float64{0.3, 0.3, 0.3}, [3]bool{true, false, true}),
		mk([]int{70}, []float64{0.2}, [3]bool{}),
		mk([]int{67}, []float64{0.25}, [3]bool{true}),
		mk([]int{45, 33}, []float64{0.25, 0.3}, [3]bool{true, false}),
		mk([]int{38, 29}, []float64{0.25, 0.25}, [3]bool{false, true}),
	}
}

// freeCases are gridCases' shapes on the free boundary (no site held, in-box
// edge stencils): boxes, planes and lines, the smallest the stencils allow too.
func freeCases() []kernels.Grid {
	var out []kernels.Grid
	for _, g := range gridCases() {
		g.Wrap, g.Free = [3]bool{}, true
		out = append(out, g)
	}
	small := kernels.Grid{Dims: 3, Nx: 5, Ny: 6, Nz: 5, Hx: 0.3, Hy: 0.35, Hz: 0.4, Ox: -0.6, Oy: -0.8, Oz: -0.9, Free: true}
	plane := kernels.Grid{Nx: 5, Ny: 5, Hx: 0.3, Hy: 0.3, Hz: 1, Ox: -0.6, Oy: -0.5, Free: true}
	return append(out, small, plane)
}

// gridParams are the dynamic parameters the tests run each theory with.
func gridParams(name string) []float64 {
	switch name {
	case "baby_skyrme":
		return []float64{1, 1}
	case "sigma4_3d":
		return []float64{0.5}
	}
	return []float64{1}
}

// unitVector reports whether the theory's field is a unit vector.
func unitVector(name string) bool { return name == "baby_skyrme" || name == "sigma4_3d" }

// gridInitial fills a smooth field depending on every axis the grid has,
// normalised to unit vectors for the constrained theories.
func gridInitial(name string, nc int, g kernels.Grid, f []float64) {
	n := g.Sites()
	for idx := 0; idx < n; idx++ {
		i, line := idx%g.Nx, idx/g.Nx
		j, k := line%g.Ny, line/g.Ny
		x, y, z := g.Ox+float64(i)*g.Hx, g.Oy+float64(j)*g.Hy, g.Oz+float64(k)*g.Hz
		nn := 0.0
		for c := 0; c < nc; c++ {
			v := math.Tanh(1.3*x+0.2*float64(c)) + 0.3*math.Sin(0.9*y+float64(c))*math.Cos(0.7*z-0.5*float64(c)) + 0.1*float64(c)
			f[c*n+idx] = v
			nn += v * v
		}
		if unitVector(name) {
			for c := 0; c < nc; c++ {
				f[c*n+idx] /= math.Sqrt(nn)
			}
		}
	}
}

// gridTermScale is termScale with the spacings of every axis: the largest
// stencil term a point gradient adds, three second derivatives at most.
func gridTermScale(g kernels.Grid, phiMax float64) float64 {
	h := g.Hx
	if g.Dim() >= 2 {
		h = math.Min(h, g.Hy)
	}
	if g.Dim() == 3 {
		h = math.Min(h, g.Hz)
	}
	d1, d2 := 1.5*phiMax/h, 5.4*phiMax/(h*h)
	return float64(g.Dim()) * d2 * (1 + d1*d1)
}

func cell(g kernels.Grid) float64 {
	switch g.Dim() {
	case 1:
		return g.Hx
	case 2:
		return g.Hx * g.Hy
	}
	return g.Hx * g.Hy * g.Hz
}

func TestGridAgreesWithCPU(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	for _, th := range gridBuiltins(t) {
		p := newGridPair(t, b, th)
		for _, g := range gridCases() {
			t.Run(fmt.Sprintf("%s/%dD/%dx%dx%d/wrap=%v", th.name, g.Dim(), g.Nx, g.Ny, g.Planes(), g.Wrap), func(t *testing.T) {
				gridAgree(t, p, g)
			})
		}
		p.close()
	}
}

// TestGridFreeAgreesWithCPU is TestGridAgreesWithCPU on the free boundary
// (cuda_free.cu against the CPU's _free kernels), planes of the planar
// theories included, which run on the grid unit: the consistent form with and
// without a shift, its energy, max and power, the densities and the site
// operations with no site held.
func TestGridFreeAgreesWithCPU(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	for _, th := range gridBuiltins(t) {
		p := newGridPair(t, b, th)
		for _, g := range freeCases() {
			t.Run(fmt.Sprintf("%s/%dD/%dx%dx%d/free", th.name, g.Dim(), g.Nx, g.Ny, g.Planes()), func(t *testing.T) {
				gridAgree(t, p, g)
				ga := kernels.GradientArgs{Grid: g, Form: kernels.Continuum, Params: p.params}
				if _, err := p.gp.Gradient(ga); err == nil {
					t.Errorf("the continuum form ran on the free boundary")
				}
			})
		}
		p.close()
	}
}

func newGridPair(t testing.TB, b *Backend, th builtin) *pair {
	t.Helper()
	gp, err := b.CompileProgram(th.unit)
	if err != nil {
		t.Fatalf("%s: %v", th.name, err)
	}
	cp, err := cpu.New(cpu.Options{CacheDir: cacheDir(t) + "/cpu"}).Compile(th.unit)
	if err != nil {
		t.Fatalf("%s cpu: %v", th.name, err)
	}
	return &pair{name: th.name, unit: th.unit, params: gridParams(th.name), gp: gp, cp: cp, b: b}
}

func gridAgree(t *testing.T, p *pair, g kernels.Grid) {
	nc := p.unit.NComp
	n := nc * g.Sites()
	phi, vel, outG, sh := p.mirror(t, n), p.mirror(t, n), p.mirror(t, n), p.mirror(t, n)
	outC := p.host(t, n)
	oc, _ := p.cp.Bind(outC)
	gridInitial(p.name, nc, g, phi.h)
	for i := range vel.h {
		vel.h[i] = math.Sin(0.37 * float64(i))
		sh.h[i] = 0.01 * math.Cos(0.23*float64(i))
	}
	for _, m := range []*mirror{phi, vel, sh} {
		if err := m.g.Upload(); err != nil {
			t.Fatal(err)
		}
	}
	pm := maxAbs(phi.h)
	T := gridTermScale(g, pm)
	tolG := 256 * u * T
	dens := p.host(t, g.Sites())
	db, _ := p.cp.Bind(dens)
	if _, err := p.cp.Density(g, p.params, phi.c, -1, db); err != nil {
		t.Fatal(err)
	}
	eabs := 0.0
	for _, v := range dens {
		eabs += math.Abs(v) * cell(g)
	}
	type variant struct {
		form    kernels.Form
		shifted bool
	}
	variants := []variant{{kernels.Continuum, false}, {kernels.Continuum, true}, {kernels.Consistent, false}, {kernels.Consistent, true}}
	if g.Free {
		// The continuum form has no free boundary (refused on both backends).
		variants = variants[2:]
	}
	for _, v := range variants {
		shifted := v.shifted
		ga := kernels.GradientArgs{Grid: g, Form: v.form, Penalty: 0.1, Params: p.params, Project: unitVector(p.name), Energy: true}
		if shifted {
			ga.Shift = []kernels.Term{{Coef: 0.5, X: sh.g}}
		}
		ga.Phi, ga.Vel, ga.Out = phi.g, vel.g, outG.g
		rg, err := p.gp.Gradient(ga)
		if err != nil {
			t.Fatal(err)
		}
		ga.Phi, ga.Vel, ga.Out = phi.c, vel.c, oc
		if shifted {
			ga.Shift = []kernels.Term{{Coef: 0.5, X: sh.c}}
		}
		rc, err := p.cp.Gradient(ga)
		if err != nil {
			t.Fatal(err)
		}
		if err := outG.g.Download(); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i := range outC {
			d := math.Abs(outG.h[i] - outC[i])
			if !(d <= tolG) {
				t.Fatalf("%v shifted=%v gradient at %d: gpu %v cpu %v (|diff| %.3g > %.3g)", v.form, shifted, i, outG.h[i], outC[i], d, tolG)
			}
			worst = math.Max(worst, d)
		}
		tolE := float64(g.Lines()+g.Nx+256)*u*eabs + float64(g.Sites())*256*u*T*cell(g)*pm
		if shifted {
			tolE *= 2
		}
		if v.form == kernels.Consistent {
			// The doubler penalty's sum (c/2) w sum(d4^2): d4 of O(|phi|) values is at most 16 |phi|.
			tolE += float64(g.Sites()) * 256 * u * 0.1 * 256 * pm * pm * float64(g.Dim())
		}
		if d := math.Abs(rg.Energy - rc.Energy); !(d <= tolE) {
			t.Errorf("%v shifted=%v energy: gpu %v cpu %v (|diff| %.3g > %.3g)", v.form, shifted, rg.Energy, rc.Energy, d, tolE)
		}
		if d := math.Abs(rg.MaxGrad - rc.MaxGrad); !(d <= tolG) {
			t.Errorf("%v shifted=%v max|grad|: gpu %v cpu %v (|diff| %.3g > %.3g)", v.form, shifted, rg.MaxGrad, rc.MaxGrad, d, tolG)
		}
		tolP := float64(n)*(tolG*maxAbs(vel.h)) + float64(n+256)*u*maxAbs(vel.h)*maxAbs(outC)*float64(n)
		if d := math.Abs(rg.Power - rc.Power); !(d <= tolP) {
			t.Errorf("%v shifted=%v power: gpu %v cpu %v (|diff| %.3g > %.3g)", v.form, shifted, rg.Power, rc.Power, d, tolP)
		}
		t.Logf("%v shifted=%v: max site |diff| %.3g (bound %.3g); energy %.17g vs %.17g; max %.6g; power %.6g vs %.6g",
			v.form, shifted, worst, tolG, rg.Energy, rc.Energy, rg.MaxGrad, rg.Power, rc.Power)
	}

	// Densities: the energy density and each declared one.
	dg := p.mirror(t, g.Sites())
	for k := -1; k < p.unit.NDens; k++ {
		ig, err := p.gp.Density(g, p.params, phi.g, k, dg.g)
		if err != nil {
			t.Fatal(err)
		}
		ic, err := p.cp.Density(g, p.params, phi.c, k, db)
		if err != nil {
			t.Fatal(err)
		}
		dg.g.Download()
		sabs := 0.0
		for i := range dens {
			if d := math.Abs(dg.h[i] - dens[i]); !(d <= tolG*pm) {
				t.Fatalf("density %d at %d: gpu %v cpu %v", k, i, dg.h[i], dens[i])
			}
			sabs += math.Abs(dens[i]) * cell(g)
		}
		tolI := float64(g.Lines()+g.Nx+256)*u*sabs + float64(g.Sites())*tolG*pm*cell(g)
		if d := math.Abs(ig - ic); !(d <= tolI) {
			t.Errorf("density %d integral: gpu %v cpu %v (|diff| %.3g > %.3g)", k, ig, ic, d, tolI)
		}
		// Without an output buffer: the same integral, bit for bit.
		if ig2, err := p.gp.Density(g, p.params, phi.g, k, nil); err != nil || ig2 != ig {
			t.Errorf("density %d integral without output: %v (%v), with: %v", k, ig2, err, ig)
		}
	}

	// Combine, Dot, MaxAbs, FillRandom on the program (the planar or the
	// grid unit's elementwise kernels).
	cg := p.mirror(t, n)
	if err := p.gp.Combine(cg.g, kernels.Term{Coef: 0.5, X: phi.g}, kernels.Term{Coef: -0.25, X: vel.g}, kernels.Term{Coef: 2, X: outG.g}); err != nil {
		t.Fatal(err)
	}
	cg.g.Download()
	for i := range cg.h {
		w := 0.5*phi.h[i] - 0.25*vel.h[i] + 2*outG.h[i]
		s := 0.5*math.Abs(phi.h[i]) + 0.25*math.Abs(vel.h[i]) + 2*math.Abs(outG.h[i])
		if d := math.Abs(cg.h[i] - w); !(d <= 4*u*s) {
			t.Fatalf("combine at %d: gpu %v want %v", i, cg.h[i], w)
		}
	}
	dotG, err := p.gp.Dot(phi.g, vel.g)
	if err != nil {
		t.Fatal(err)
	}
	dotC, _ := p.cp.Dot(phi.c, vel.c)
	if d := math.Abs(dotG - dotC); !(d <= float64(n)*2*u*pm*maxAbs(vel.h)) {
		t.Errorf("Dot: gpu %v cpu %v", dotG, dotC)
	}
	if mg, err := p.gp.MaxAbs(phi.g); err != nil || mg != pm {
		t.Errorf("MaxAbs: gpu %v (%v), want %v", mg, err, pm)
	}
	if err := p.gp.FillRandom(cg.g, 7); err != nil {
		t.Fatal(err)
	}
	cg.g.Download()
	for i := range cg.h {
		if cg.h[i] != kernels.RandomValue(7, i) {
			t.Fatalf("FillRandom at %d: %v, want %v", i, cg.h[i], kernels.RandomValue(7, i))
		}
	}

	// Project and Constrain, on the sites that are not held.
	if unitVector(p.name) {
		xc := p.host(t, n)
		copy(xc, vel.h)
		xcb, _ := p.cp.Bind(xc)
		if err := p.gp.Project(g, phi.g, vel.g); err != nil {
			t.Fatal(err)
		}
		if err := p.cp.Project(g, phi.c, xcb); err != nil {
			t.Fatal(err)
		}
		vel.g.Download()
		xm := maxAbs(xc)
		for i := range xc {
			if d := math.Abs(vel.h[i] - xc[i]); !(d <= 16*u*(1+xm)) {
				t.Fatalf("project at %d: gpu %v cpu %v", i, vel.h[i], xc[i])
			}
		}
		for i := range phi.h {
			phi.h[i] *= 1 + 0.01*math.Cos(float64(i))
			vel.h[i] = math.Sin(0.37 * float64(i))
		}
		phi.g.Upload()
		vel.g.Upload()
		vc, pc := p.host(t, n), p.host(t, n)
		copy(vc, vel.h)
		copy(pc, phi.h)
		vcb, _ := p.cp.Bind(vc)
		pcb, _ := p.cp.Bind(pc)
		if err := p.gp.Constrain(g, phi.g, vel.g); err != nil {
			t.Fatal(err)
		}
		if err := p.cp.Constrain(g, pcb, vcb); err != nil {
			t.Fatal(err)
		}
		phi.g.Download()
		vel.g.Download()
		vm := maxAbs(vc)
		for i := range pc {
			if d := math.Abs(phi.h[i] - pc[i]); !(d <= 8*u) {
				t.Fatalf("constrain phi at %d: gpu %v cpu %v", i, phi.h[i], pc[i])
			}
			if d := math.Abs(vel.h[i] - vc[i]); !(d <= 16*u*(1+vm)) {
				t.Fatalf("constrain vel at %d: gpu %v cpu %v", i, vel.h[i], vc[i])
			}
		}
	}

	// FirstNonFinite, and a NaN in the field makes max|grad| NaN.
	phi.h[n/2+1] = math.NaN()
	phi.g.Upload()
	if k, err := p.gp.FirstNonFinite(phi.g); err != nil || k != n/2+1 {
		t.Fatalf("FirstNonFinite: %d (%v), want %d", k, err, n/2+1)
	}
	for i := range phi.h {
		phi.h[i] = math.NaN()
	}
	phi.g.Upload()
	ga := kernels.GradientArgs{Grid: g, Form: kernels.Continuum, Params: p.params, Phi: phi.g, Out: outG.g}
	if g.Free {
		ga.Form = kernels.Consistent
	}
	if r, err := p.gp.Gradient(ga); err != nil || !math.IsNaN(r.MaxGrad) {
		t.Fatalf("max|grad| with a NaN field: %v, %v", r.MaxGrad, err)
	}
}

// TestGridDeterministic: the gradient and its reductions on a 3D lattice are
// the same bits run to run and for any block size.
func TestGridDeterministic(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	th := gridBuiltins(t)[1] // sigma4_3d
	p := newGridPair(t, b, th)
	defer p.close()
	g := gridCases()[0]
	n := th.unit.NComp * g.Sites()
	phi, vel, out := p.mirror(t, n), p.mirror(t, n), p.mirror(t, n)
	gridInitial(th.name, th.unit.NComp, g, phi.h)
	for i := range vel.h {
		vel.h[i] = math.Sin(0.37 * float64(i))
	}
	phi.g.Upload()
	vel.g.Upload()
	ga := kernels.GradientArgs{Grid: g, Form: kernels.Continuum, Params: p.params, Project: true, Energy: true, Phi: phi.g, Vel: vel.g, Out: out.g}
	// run evaluates the gradient with fg_k_nd_continuum at block size bs
	// (0: the occupancy API's).
	run := func(bs int) (kernels.Reduction, []float64) {
		t.Helper()
		if bs > 0 {
			p.gp.mu.Lock()
			err := p.gp.b.onDevice(func() error { _, err := p.gp.gridKernels(); return err })
			if err == nil {
				p.gp.grid.k["fg_k_nd_continuum"].info.BlockSize = bs
			}
			p.gp.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
		}
		r, err := p.gp.Gradient(ga)
		if err != nil {
			t.Fatal(err)
		}
		out.g.Download()
		return r, append([]float64(nil), out.h...)
	}
	sameBits := func(what string, r, r0 kernels.Reduction, o, o0 []float64) {
		t.Helper()
		if math.Float64bits(r.Energy) != math.Float64bits(r0.Energy) || math.Float64bits(r.MaxGrad) != math.Float64bits(r0.MaxGrad) ||
			math.Float64bits(r.Power) != math.Float64bits(r0.Power) {
			t.Errorf("%s: reductions %+v, first %+v", what, r, r0)
		}
		for i := range o {
			if math.Float64bits(o[i]) != math.Float64bits(o0[i]) {
				t.Fatalf("%s: gradient at %d differs", what, i)
			}
		}
	}
	// Block sizes up to 512 (1024 threads of 100-odd registers do not fit a
	// multiprocessor's 65536), then the occupancy API's again: run to run.
	first, firstOut := run(0)
	p.gp.mu.Lock()
	bs0 := p.gp.grid.k["fg_k_nd_continuum"].info.BlockSize
	p.gp.mu.Unlock()
	for _, bs := range []int{32, 64, 160, 256, 512, bs0} {
		r, o := run(bs)
		sameBits(fmt.Sprintf("fg_k_nd_continuum block %d", bs), r, first, o, firstOut)
	}
	// The kernels of the grid unit are described.
	found := false
	for _, in := range p.gp.Describe() {
		if in.Name == "fg_k_nd_continuum" {
			found = true
			t.Logf("%+v", in)
			if in.Registers == 0 || in.Registers > BudgetAs(in.Name, Float64, th.name) {
				t.Errorf("fg_k_nd_continuum: %d registers, budget %d", in.Registers, BudgetAs(in.Name, Float64, th.name))
			}
		}
	}
	if !found {
		t.Errorf("Describe does not list fg_k_nd_continuum")
	}
}

// TestPlanarTheoryLoadsTheGridUnitOnDemand: a planar theory's Program runs
// its planar grids on the planar unit and loads the grid unit the first time
// a line or a 3D lattice comes.
func TestPlanarTheoryLoadsTheGridUnitOnDemand(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	th := builtins(t)[0]
	p := newGridPair(t, b, th)
	defer p.close()
	g := grids()[0]
	n := th.unit.NComp * g.Sites()
	phi, out := p.mirror(t, n), p.mirror(t, n)
	initial(th.name, g, phi.h)
	phi.g.Upload()
	if _, err := p.gp.Gradient(kernels.GradientArgs{Grid: g, Form: kernels.Continuum, Params: p.params, Phi: phi.g, Out: out.g}); err != nil {
		t.Fatal(err)
	}
	if p.gp.grid != nil {
		t.Fatalf("a planar grid loaded the grid unit")
	}
	g3 := gridCases()[0]
	n3 := th.unit.NComp * g3.Sites()
	phi3, out3 := p.mirror(t, n3), p.mirror(t, n3)
	gridInitial(th.name, th.unit.NComp, g3, phi3.h)
	phi3.g.Upload()
	if _, err := p.gp.Gradient(kernels.GradientArgs{Grid: g3, Form: kernels.Continuum, Params: p.params, Phi: phi3.g, Out: out3.g}); err != nil {
		t.Fatal(err)
	}
	if p.gp.grid == nil || p.gp.grid.shared {
		t.Fatalf("a 3D grid did not load the grid unit: %+v", p.gp.grid)
	}
}

// A planar theory's free-boundary plane runs on the grid unit, loaded on
// demand: the planar unit has no free stencils.
func TestPlanarTheoryRunsTheFreePlaneOnTheGridUnit(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	th := builtins(t)[0]
	p := newGridPair(t, b, th)
	defer p.close()
	g := grids()[0]
	g.Periodic, g.Free = false, true
	n := th.unit.NComp * g.Sites()
	phi, out := p.mirror(t, n), p.mirror(t, n)
	initial(th.name, g, phi.h)
	phi.g.Upload()
	if _, err := p.gp.Gradient(kernels.GradientArgs{Grid: g, Form: kernels.Consistent, Penalty: 0.1, Params: p.params, Phi: phi.g, Out: out.g}); err != nil {
		t.Fatal(err)
	}
	if p.gp.grid == nil || p.gp.grid.shared {
		t.Fatalf("a free plane did not load the grid unit: %+v", p.gp.grid)
	}
}
