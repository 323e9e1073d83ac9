package cuda

import (
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cpu"
)

// u is the unit roundoff of float64.
const u = 0x1p-53

// gpu opens the device or skips the test, saying why.
func gpu(t testing.TB) *Backend {
	t.Helper()
	b, err := New(Options{CacheDir: cacheDir(t)})
	if err != nil {
		t.Skipf("no usable GPU: %v", err)
	}
	t.Logf("device: %s", b.Device())
	return b
}

var testCache string

func cacheDir(t testing.TB) string {
	if testCache == "" {
		d, err := os.MkdirTemp("", "fieldgo-cuda-test-")
		if err != nil {
			t.Fatal(err)
		}
		testCache = d
	}
	return testCache
}

// pair is one theory compiled for both backends, with host memory (pinned,
// so C memory) for fields.
type pair struct {
	name   string
	unit   kernels.Unit
	params []float64
	gp     *Program
	cp     kernels.Program
	b      *Backend
	frees  []func()
}

func newPair(t testing.TB, b *Backend, th builtin) *pair {
	t.Helper()
	gp, err := b.CompileProgram(th.unit)
	if err != nil {
		t.Fatalf("%s: %v", th.name, err)
	}
	cp, err := cpu.New(cpu.Options{CacheDir: cacheDir(t) + "/cpu"}).Compile(th.unit)
	if err != nil {
		t.Fatalf("%s cpu: %v", th.name, err)
	}
	params := []float64{1.0, 1.0}
	if th.name == "abelian_higgs" {
		params = []float64{1.0}
	}
	return &pair{name: th.name, unit: th.unit, params: params, gp: gp, cp: cp, b: b}
}

func (p *pair) close() {
	p.gp.Close()
	p.cp.Close()
	for _, f := range p.frees {
		f()
	}
}

func (p *pair) host(t testing.TB, n int) []float64 {
	t.Helper()
	h, free, err := p.b.HostAlloc(n)
	if err != nil {
		t.Fatal(err)
	}
	p.frees = append(p.frees, free)
	return h
}

// mirror binds host memory on both backends.
type mirror struct {
	h    []float64
	g, c kernels.Buffer
}

func (p *pair) mirror(t testing.TB, n int) *mirror {
	t.Helper()
	m := &mirror{h: p.host(t, n)}
	var err error
	if m.g, err = p.gp.Bind(m.h); err != nil {
		t.Fatal(err)
	}
	if m.c, err = p.cp.Bind(m.h); err != nil {
		t.Fatal(err)
	}
	return m
}

// initial fills a smooth, asymmetric field: a charge-1 hedgehog for Baby
// Skyrme (unit vectors), a winding-1 vortex with a gauge field for Abelian
// Higgs.
func initial(name string, g kernels.Grid, f []float64) {
	n := g.Sites()
	for j := 0; j < g.Ny; j++ {
		for i := 0; i < g.Nx; i++ {
			x, y := g.Ox+float64(i)*g.Hx-0.3, g.Oy+float64(j)*g.Hy+0.2
			r, th := math.Hypot(x, y), math.Atan2(y, x)
			s := j*g.Nx + i
			switch name {
			case "baby_skyrme":
				fr := math.Pi * math.Exp(-r*r/4)
				f[s], f[n+s], f[2*n+s] = math.Sin(fr)*math.Cos(th), math.Sin(fr)*math.Sin(th), math.Cos(fr)
			default:
				a := math.Tanh(r)
				f[s], f[n+s] = a*math.Cos(th), a*math.Sin(th)
				w := (1 - math.Exp(-r*r)) / (r*r + 1e-300)
				f[2*n+s], f[3*n+s] = -y*w+0.1*math.Sin(x), x*w+0.05*math.Cos(y)
			}
		}
	}
}

func grids() []kernels.Grid {
	mk := func(nx, ny int, h float64, per bool) kernels.Grid {
		return kernels.Grid{Nx: nx, Ny: ny, Hx: h, Hy: h, Ox: -float64(nx-1) * h / 2, Oy: -float64(ny-1) * h / 2, Periodic: per}
	}
	// 70 is not a multiple of the 32-site chunk: padded warps are exercised.
	// An odd row length (67) takes the tile fill's one-element path, the even
	// ones its pairs (cuda_flow.cu, fg_tile_body).
	return []kernels.Grid{mk(70, 45, 0.2, false), mk(64, 64, 0.25, true), mk(67, 40, 0.25, true)}
}

// termScale bounds the magnitude of the largest term a point gradient adds:
// the stencils amplify |phi| by at most 64/12/h^2 (second derivative) and
// 18/12/h (first); the built-in theories multiply a second derivative by up
// to two first derivatives. Rounding of reassociated sums and FMA moves each
// output by at most a few hundred u of that (the bound below: 256 u).
func termScale(g kernels.Grid, phiMax float64) float64 {
	h := math.Min(g.Hx, g.Hy)
	d1, d2 := 1.5*phiMax/h, 5.4*phiMax/(h*h)
	return d2 * (1 + d1*d1)
}

func maxAbs(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

func TestAgreesWithCPU(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	for _, th := range builtins(t) {
		p := newPair(t, b, th)
		for _, g := range grids() {
			t.Run(fmt.Sprintf("%s/%dx%d/periodic=%v", th.name, g.Nx, g.Ny, g.Periodic), func(t *testing.T) {
				agree(t, p, g)
			})
		}
		p.close()
	}
}

func agree(t *testing.T, p *pair, g kernels.Grid) {
	nc := p.unit.NComp
	n := nc * g.Sites()
	phi, vel, outG := p.mirror(t, n), p.mirror(t, n), p.mirror(t, n)
	outC := p.host(t, n)
	oc, _ := p.cp.Bind(outC)
	initial(p.name, g, phi.h)
	for i := range vel.h {
		vel.h[i] = math.Sin(0.37 * float64(i))
	}
	if err := phi.g.Upload(); err != nil {
		t.Fatal(err)
	}
	if err := vel.g.Upload(); err != nil {
		t.Fatal(err)
	}
	T := termScale(g, maxAbs(phi.h))
	tolG := 256 * u * T
	dens := p.host(t, g.Sites())
	db, _ := p.cp.Bind(dens)
	for _, form := range []kernels.Form{kernels.Continuum, kernels.Consistent} {
		ga := kernels.GradientArgs{Grid: g, Form: form, Penalty: 0.1, Params: p.params, Project: p.name == "baby_skyrme",
			Energy: true}
		ga.Phi, ga.Vel, ga.Out = phi.g, vel.g, outG.g
		rg, err := p.gp.Gradient(ga)
		if err != nil {
			t.Fatal(err)
		}
		ga.Phi, ga.Vel, ga.Out = phi.c, vel.c, oc
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
				t.Fatalf("%v gradient at %d: gpu %v cpu %v (|diff| %.3g > %.3g)", form, i, outG.h[i], outC[i], d, tolG)
			}
			worst = math.Max(worst, d)
		}
		// Sum of |e| over the energy's sites bounds the summation error.
		if _, err := p.cp.Density(g, p.params, phi.c, -1, db); err != nil {
			t.Fatal(err)
		}
		eabs := 0.0
		for _, v := range dens {
			eabs += math.Abs(v) * g.Hx * g.Hy
		}
		tolE := float64(g.Nx+g.Ny+256)*u*eabs + float64(g.Sites())*256*u*T*g.Hx*g.Hy*maxAbs(phi.h)
		if form == kernels.Consistent {
			tolE += float64(g.Sites()) * 256 * u * 0.1 * 64 * maxAbs(phi.h) * maxAbs(phi.h)
		}
		if d := math.Abs(rg.Energy - rc.Energy); !(d <= tolE) {
			t.Errorf("%v energy: gpu %v cpu %v (|diff| %.3g > %.3g)", form, rg.Energy, rc.Energy, d, tolE)
		}
		if d := math.Abs(rg.MaxGrad - rc.MaxGrad); !(d <= tolG) {
			t.Errorf("%v max|grad|: gpu %v cpu %v (|diff| %.3g > %.3g)", form, rg.MaxGrad, rc.MaxGrad, d, tolG)
		}
		tolP := float64(n)*(tolG*maxAbs(vel.h)) + float64(n+256)*u*maxAbs(vel.h)*maxAbs(outC)*float64(n)
		if d := math.Abs(rg.Power - rc.Power); !(d <= tolP) {
			t.Errorf("%v power: gpu %v cpu %v (|diff| %.3g > %.3g)", form, rg.Power, rc.Power, d, tolP)
		}
		t.Logf("%v: max site |diff| %.3g (bound %.3g); energy %.17g vs %.17g; max %.6g; power %.6g vs %.6g",
			form, worst, tolG, rg.Energy, rc.Energy, rg.MaxGrad, rg.Power, rc.Power)
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
			if d := math.Abs(dg.h[i] - dens[i]); !(d <= tolG*maxAbs(phi.h)) {
				t.Fatalf("density %d at %d: gpu %v cpu %v", k, i, dg.h[i], dens[i])
			}
			sabs += math.Abs(dens[i]) * g.Hx * g.Hy
		}
		tolI := float64(g.Nx+g.Ny+256)*u*sabs + float64(g.Sites())*tolG*maxAbs(phi.h)*g.Hx*g.Hy
		if d := math.Abs(ig - ic); !(d <= tolI) {
			t.Errorf("density %d integral: gpu %v cpu %v (|diff| %.3g > %.3g)", k, ig, ic, d, tolI)
		}
	}

	// Combine: the same expression per element, FMA aside.
	cg := p.mirror(t, n)
	terms := func(out, a, b, c kernels.Buffer) []kernels.Term {
		return []kernels.Term{{Coef: 0.5, X: a}, {Coef: -0.25, X: b}, {Coef: 2, X: c}}
	}
	if err := p.gp.Combine(cg.g, terms(cg.g, phi.g, vel.g, outG.g)...); err != nil {
		t.Fatal(err)
	}
	cg.g.Download()
	want := p.host(t, n)
	wb, _ := p.cp.Bind(want)
	// The same inputs on both: the GPU's gradient (outG.c binds its host copy).
	if err := p.cp.Combine(wb, terms(wb, phi.c, vel.c, outG.c)...); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		s := 0.5*math.Abs(phi.h[i]) + 0.25*math.Abs(vel.h[i]) + 2*math.Abs(outG.h[i])
		if d := math.Abs(cg.h[i] - want[i]); !(d <= 4*u*s) {
			t.Fatalf("combine at %d: gpu %v cpu %v", i, cg.h[i], want[i])
		}
	}

	// Constrain a perturbed field and the velocity.
	if p.unit.NComp == 3 {
		for i := range phi.h {
			phi.h[i] *= 1 + 0.01*math.Cos(float64(i))
		}
		phi.g.Upload()
		vel.g.Upload()
		vc := p.host(t, n)
		copy(vc, vel.h)
		pc := p.host(t, n)
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
		for i := range pc {
			if d := math.Abs(phi.h[i] - pc[i]); !(d <= 8*u) {
				t.Fatalf("constrain phi at %d: gpu %v cpu %v", i, phi.h[i], pc[i])
			}
			if d := math.Abs(vel.h[i] - vc[i]); !(d <= 16*u*(1+maxAbs(vc))) {
				t.Fatalf("constrain vel at %d: gpu %v cpu %v", i, vel.h[i], vc[i])
			}
		}
	}

	// FirstNonFinite: none, then two (the first must win).
	if k, err := p.gp.FirstNonFinite(phi.g); err != nil || k != -1 {
		t.Fatalf("FirstNonFinite on a finite field: %d, %v", k, err)
	}
	phi.h[n-3] = math.Inf(1)
	phi.h[n/2+1] = math.NaN()
	phi.g.Upload()
	kg, err := p.gp.FirstNonFinite(phi.g)
	kc, _ := p.cp.FirstNonFinite(phi.c)
	if err != nil || kg != kc || kg != n/2+1 {
		t.Fatalf("FirstNonFinite: gpu %d (%v), cpu %d, want %d", kg, err, kc, n/2+1)
	}
	// A NaN in the field makes max|grad| NaN on both.
	ga := kernels.GradientArgs{Grid: g, Form: kernels.Continuum, Params: p.params, Phi: phi.g, Out: outG.g}
	if r, err := p.gp.Gradient(ga); err != nil || !math.IsNaN(r.MaxGrad) {
		t.Fatalf("max|grad| with a NaN in the field: %v, %v", r.MaxGrad, err)
	}
}

// TestDeterministic: the reductions and the gradient are the same bits run
// to run and whatever the block size.
func TestDeterministic(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	for _, th := range builtins(t) {
		p := newPair(t, b, th)
		g := kernels.Grid{Nx: 300, Ny: 257, Hx: 0.1, Hy: 0.1, Ox: -15, Oy: -12.8}
		n := p.unit.NComp * g.Sites()
		phi, vel, out := p.mirror(t, n), p.mirror(t, n), p.mirror(t, n)
		initial(th.name, g, phi.h)
		for i := range vel.h {
			vel.h[i] = math.Cos(0.11 * float64(i))
		}
		phi.g.Upload()
		vel.g.Upload()
		for _, form := range []kernels.Form{kernels.Continuum, kernels.Consistent} {
			name := map[kernels.Form]string{kernels.Continuum: "fg_k_continuum", kernels.Consistent: "fg_k_consistent"}[form]
			ga := kernels.GradientArgs{Grid: g, Form: form, Penalty: 0.05, Params: p.params, Project: th.name == "baby_skyrme",
				Energy: true, Phi: phi.g, Vel: vel.g, Out: out.g}
			var first kernels.Reduction
			var firstOut []float64
			for run, bs := range []int{0, 0, 32, 64, 128, 256, 512, 1024} {
				if bs > 0 {
					if err := p.gp.SetBlockSize(name, bs); err != nil {
						t.Fatal(err)
					}
					if err := p.gp.SetBlockSize("fg_k_rows", bs); err != nil {
						t.Fatal(err)
					}
				}
				r, err := p.gp.Gradient(ga)
				if err != nil {
					if bs > 0 { // a block size the kernel cannot launch with its registers
						t.Logf("%s block %d: %v", name, bs, err)
						continue
					}
					t.Fatal(err)
				}
				out.g.Download()
				if run == 0 {
					first, firstOut = r, append([]float64(nil), out.h...)
					continue
				}
				if math.Float64bits(r.Energy) != math.Float64bits(first.Energy) ||
					math.Float64bits(r.MaxGrad) != math.Float64bits(first.MaxGrad) ||
					math.Float64bits(r.Power) != math.Float64bits(first.Power) {
					t.Errorf("%s %v run %d block %d: reduction %+v differs from %+v", th.name, form, run, bs, r, first)
				}
				for i := range firstOut {
					if math.Float64bits(out.h[i]) != math.Float64bits(firstOut[i]) {
						t.Fatalf("%s %v run %d block %d: gradient differs at %d", th.name, form, run, bs, i)
					}
				}
			}
			t.Logf("%s %v: energy %.17g max %.17g power %.17g identical over runs and block sizes", th.name, form, first.Energy, first.MaxGrad, first.Power)
		}
		p.close()
	}
}

// TestFlow100 runs 100 steps of explicit gradient flow (Combine, Constrain,
// Gradient) on both backends from the same field and compares.
func TestFlow100(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	for _, th := range builtins(t) {
		p := newPair(t, b, th)
		g := kernels.Grid{Nx: 96, Ny: 80, Hx: 0.2, Hy: 0.2, Ox: -9.5, Oy: -7.9}
		n := p.unit.NComp * g.Sites()
		phi, out := p.mirror(t, n), p.mirror(t, n)
		pc := p.host(t, n)
		oc := p.host(t, n)
		pcb, _ := p.cp.Bind(pc)
		ocb, _ := p.cp.Bind(oc)
		initial(th.name, g, phi.h)
		copy(pc, phi.h)
		phi.g.Upload()
		dt := 0.002
		var eg, ec float64
		for step := 0; step < 100; step++ {
			ga := kernels.GradientArgs{Grid: g, Form: kernels.Continuum, Params: p.params, Project: th.name == "baby_skyrme", Energy: true}
			ga.Phi, ga.Out = phi.g, out.g
			rg, err := p.gp.Gradient(ga)
			if err != nil {
				t.Fatal(err)
			}
			ga.Phi, ga.Out = pcb, ocb
			rc, _ := p.cp.Gradient(ga)
			eg, ec = rg.Energy, rc.Energy
			p.gp.Combine(phi.g, kernels.Term{Coef: 1, X: phi.g}, kernels.Term{Coef: -dt, X: out.g})
			p.cp.Combine(pcb, kernels.Term{Coef: 1, X: pcb}, kernels.Term{Coef: -dt, X: ocb})
			if th.name == "baby_skyrme" {
				p.gp.Constrain(g, phi.g, nil)
				p.cp.Constrain(g, pcb, nil)
			}
		}
		phi.g.Download()
		worst := 0.0
		for i := range pc {
			worst = math.Max(worst, math.Abs(phi.h[i]-pc[i]))
		}
		// Per step the update differs by dt * (gradient bound); the flow is
		// contracting at this dt, so 100 steps add at most 100 of those.
		bound := 100 * dt * 256 * u * termScale(g, 1.5)
		t.Logf("%s: after 100 steps max |phi_gpu - phi_cpu| = %.3g (bound %.3g); energy %.15g vs %.15g", th.name, worst, bound, eg, ec)
		if !(worst <= bound) {
			t.Errorf("%s: fields differ by %.3g after 100 steps (bound %.3g)", th.name, worst, bound)
		}
		if d := math.Abs(eg - ec); !(d <= 1e-9*math.Abs(ec)) {
			t.Errorf("%s: energies after 100 steps %v vs %v", th.name, eg, ec)
		}
		p.close()
	}
}

// TestDescribeAndCache checks the loaded kernels against their budgets
// (cuFuncGetAttribute) and times compilation cold and from the cache.
func TestDescribeAndCache(t *testing.T) {
	if _, err := New(Options{}); err != nil {
		t.Skipf("no usable GPU: %v", err)
	}
	dir := t.TempDir()
	b, err := New(Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, th := range builtins(t) {
		t0 := time.Now()
		p, err := b.CompileProgram(th.unit)
		if err != nil {
			t.Fatal(err)
		}
		cold := time.Since(t0)
		if p.Cached() {
			t.Errorf("%s: first compile in an empty cache reported cached", th.name)
		}
		for _, k := range p.Describe() {
			t.Logf("%s %-16s regs %3d (budget %3d) spill %d/%d local %d smem %5d block %4d blocks/SM %2d occupancy %.0f%%",
				th.name, k.Name, k.Registers, Budget(k.Name, th.name), k.SpillStores, k.SpillLoads, k.LocalBytes, k.SharedBytes,
				k.BlockSize, k.BlocksPerSM, 100*k.Occupancy)
			if k.Registers > Budget(k.Name, th.name) {
				t.Errorf("%s %s: %d registers on the device, budget %d", th.name, k.Name, k.Registers, Budget(k.Name, th.name))
			}
			if k.SpillStores+k.SpillLoads+k.LocalBytes != 0 {
				t.Errorf("%s %s: spills or local memory", th.name, k.Name)
			}
			if k.BlockSize%32 != 0 || k.Occupancy <= 0 {
				t.Errorf("%s %s: block %d occupancy %v", th.name, k.Name, k.BlockSize, k.Occupancy)
			}
		}
		p.Close()
		t0 = time.Now()
		p, err = b.CompileProgram(th.unit)
		if err != nil {
			t.Fatal(err)
		}
		warm := time.Since(t0)
		if !p.Cached() {
			t.Errorf("%s: second compile did not come from the cache", th.name)
		}
		p.Close()
		t.Logf("%s: compile+load cold %v, cached %v", th.name, cold, warm)
	}
}

func TestNoDeviceReportsWhy(t *testing.T) {
	_, err := New(Options{Device: 1 << 20})
	if err == nil {
		t.Fatal("device 1<<20 opened")
	}
	t.Logf("%v", err)
}
