package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/fieldgo/fieldgo/kernels"
)

// u32 is the unit roundoff of float32 storage.
const u32 = 0x1p-24

// f32 is x rounded to float32 (nearest even) and widened back.
func f32(x float64) float64 { return float64(float32(x)) }

// TestFloat32Storage holds a float32-storage program to its contract against
// the float64 program of the same unit on the same GPU: transfers round to
// nearest and widen exactly; from the same (float32-representable) field the
// gradient, energy, max|grad|, power, densities, combinations and the
// constraint are the float64 program's results up to float64 rounding
// (everything is computed in double) plus one float32 rounding of what is
// stored; the loaded kernels keep their float32 register budgets unspilled.
func TestFloat32Storage(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	for _, th := range builtins(t) {
		p64, err := b.CompileProgramAs(th.unit, Float64)
		if err != nil {
			t.Fatal(err)
		}
		p32, err := b.CompileProgramAs(th.unit, Float32)
		if err != nil {
			t.Fatal(err)
		}
		if p32.Precision() != Float32 || p64.Precision() != Float64 {
			t.Fatalf("precisions %v %v", p32.Precision(), p64.Precision())
		}
		for _, k := range p32.Describe() {
			bud := BudgetAs(k.Name, Float32, th.name)
			t.Logf("%s float32 %-16s regs %3d (budget %3d) spill %d local %d", th.name, k.Name, k.Registers, bud, k.SpillStores+k.SpillLoads, k.LocalBytes)
			if k.Registers > bud || k.SpillStores != 0 || k.SpillLoads != 0 || k.LocalBytes != 0 {
				t.Errorf("%s float32 %s: %d registers (budget %d), spills %d/%d, local %d", th.name, k.Name, k.Registers, bud, k.SpillStores, k.SpillLoads, k.LocalBytes)
			}
		}
		params := []float64{1, 1}
		if th.name == "abelian_higgs" {
			params = []float64{1}
		}
		for _, g := range grids() {
			t.Run(fmt.Sprintf("%s/%dx%d/periodic=%v", th.name, g.Nx, g.Ny, g.Periodic), func(t *testing.T) {
				float32Agree(t, b, p32, p64, th, params, g)
			})
		}
		p32.Close()
		p64.Close()
	}
}

func float32Agree(t *testing.T, b *Backend, p32, p64 *Program, th builtin, params []float64, g kernels.Grid) {
	var frees []func()
	defer func() {
		for _, f := range frees {
			f()
		}
	}()
	host := func(n int) []float64 {
		h, free, err := b.HostAlloc(n)
		if err != nil {
			t.Fatal(err)
		}
		frees = append(frees, free)
		return h
	}
	bind := func(p *Program, h []float64) kernels.Buffer {
		buf, err := p.Bind(h)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(buf.Release)
		return buf
	}
	nc := th.unit.NComp
	n := nc * g.Sites()

	// Transfers: Upload rounds to nearest, Download widens exactly; the
	// special values include a float32 subnormal, a tie and a value that
	// overflows to +Inf.
	x := host(n)
	initial(th.name, g, x)
	orig := append([]float64(nil), x...)
	special := []float64{1e-40, math.Copysign(0, -1), 1 + 0x1p-24, 1 + 3*0x1p-25, 3.4e38, 1e39, -7.25}
	copy(x, special)
	copy(orig, special)
	xb := bind(p32, x)
	if err := xb.Upload(); err != nil {
		t.Fatal(err)
	}
	clear(x)
	if err := xb.Download(); err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(f32(orig[i])) {
			t.Fatalf("round trip at %d: %v -> %v, want %v", i, orig[i], x[i], f32(orig[i]))
		}
	}
	da, err := p32.DeviceArray(xb)
	if err != nil || da.DType != "float32" || da.Len != n || da.Ptr == 0 {
		t.Fatalf("DeviceArray: %+v, %v", da, err)
	}

	// The same float32-representable field (and velocity) on both.
	phi := host(n)
	initial(th.name, g, phi)
	vel := host(n)
	for i := range phi {
		phi[i] = f32(phi[i])
		vel[i] = f32(math.Sin(0.37 * float64(i)))
	}
	phi32, vel32 := bind(p32, phi), bind(p32, vel)
	phi64, vel64 := bind(p64, phi), bind(p64, vel)
	for _, buf := range []kernels.Buffer{phi32, vel32, phi64, vel64} {
		if err := buf.Upload(); err != nil {
			t.Fatal(err)
		}
	}
	h32, h64 := host(n), host(n)
	o32, o64 := bind(p32, h32), bind(p64, h64)
	T := termScale(g, maxAbs(phi))
	tolG := 256 * u * T // float64 reassociation of the same double arithmetic
	for _, form := range []kernels.Form{kernels.Continuum, kernels.Consistent} {
		ga := kernels.GradientArgs{Grid: g, Form: form, Penalty: 0.1, Params: params, Project: th.name == "baby_skyrme", Energy: true}
		ga.Phi, ga.Vel, ga.Out = phi32, vel32, o32
		r32, err := p32.Gradient(ga)
		if err != nil {
			t.Fatal(err)
		}
		ga.Phi, ga.Vel, ga.Out = phi64, vel64, o64
		r64, err := p64.Gradient(ga)
		if err != nil {
			t.Fatal(err)
		}
		o32.Download()
		o64.Download()
		worst := 0.0
		for i := range h32 {
			d := math.Abs(h32[i] - h64[i])
			if !(d <= u32*math.Abs(h64[i])+tolG) {
				t.Fatalf("%v gradient at %d: float32 storage %v, float64 %v (|diff| %.3g)", form, i, h32[i], h64[i], d)
			}
			worst = math.Max(worst, d/math.Max(math.Abs(h64[i]), 1e-300))
		}
		// The reductions are float64 over the same double gradient: the
		// float64 bound of agree(), not float32's.
		tolE := float64(g.Sites()) * 256 * u * T * g.Hx * g.Hy * maxAbs(phi) * 4
		if d := math.Abs(r32.Energy - r64.Energy); !(d <= tolE) {
			t.Errorf("%v energy: float32 storage %.17g, float64 %.17g (|diff| %.3g > %.3g)", form, r32.Energy, r64.Energy, d, tolE)
		}
		if d := math.Abs(r32.MaxGrad - r64.MaxGrad); !(d <= tolG) {
			t.Errorf("%v max|grad|: %.17g vs %.17g", form, r32.MaxGrad, r64.MaxGrad)
		}
		tolP := float64(n) * tolG * maxAbs(vel) * 4
		if d := math.Abs(r32.Power - r64.Power); !(d <= tolP) {
			t.Errorf("%v power: %.17g vs %.17g (|diff| %.3g > %.3g)", form, r32.Power, r64.Power, d, tolP)
		}
		t.Logf("%v: gradient max relative |diff| %.3g (one float32 rounding: %.3g); energy %.17g vs %.17g", form, worst, u32, r32.Energy, r64.Energy)
	}

	// Densities: one float32 rounding of the float64 value; integrals float64.
	d32, d64 := host(g.Sites()), host(g.Sites())
	db32, db64 := bind(p32, d32), bind(p64, d64)
	for k := -1; k < th.unit.NDens; k++ {
		i32, err := p32.Density(g, params, phi32, k, db32)
		if err != nil {
			t.Fatal(err)
		}
		i64, _ := p64.Density(g, params, phi64, k, db64)
		db32.Download()
		db64.Download()
		sabs := 0.0
		for i := range d32 {
			if d := math.Abs(d32[i] - d64[i]); !(d <= u32*math.Abs(d64[i])+tolG*maxAbs(phi)) {
				t.Fatalf("density %d at %d: %v vs %v", k, i, d32[i], d64[i])
			}
			sabs += math.Abs(d64[i]) * g.Hx * g.Hy
		}
		tolI := float64(g.Nx+g.Ny+256)*u*sabs + float64(g.Sites())*tolG*maxAbs(phi)*g.Hx*g.Hy
		if d := math.Abs(i32 - i64); !(d <= tolI) {
			t.Errorf("density %d integral: %.17g vs %.17g (|diff| %.3g > %.3g)", k, i32, i64, d, tolI)
		}
	}

	// Combine: the double sum rounded once.
	c32h, c64h := host(n), host(n)
	c32, c64 := bind(p32, c32h), bind(p64, c64h)
	if err := p32.Combine(c32, kernels.Term{Coef: 0.5, X: phi32}, kernels.Term{Coef: -0.25, X: vel32}, kernels.Term{Coef: 2, X: o32}); err != nil {
		t.Fatal(err)
	}
	// o64 holds the float64 gradient: give the float64 program the float32 one.
	copy(h64, h32)
	o64.Upload()
	p64.Combine(c64, kernels.Term{Coef: 0.5, X: phi64}, kernels.Term{Coef: -0.25, X: vel64}, kernels.Term{Coef: 2, X: o64})
	c32.Download()
	c64.Download()
	for i := range c32h {
		s := 0.5*math.Abs(phi[i]) + 0.25*math.Abs(vel[i]) + 2*math.Abs(h32[i])
		if d := math.Abs(c32h[i] - c64h[i]); !(d <= u32*math.Abs(c64h[i])+4*u*s) {
			t.Fatalf("combine at %d: %v vs %v", i, c32h[i], c64h[i])
		}
	}

	// The constraint: normalised in double, rounded once.
	if nc == 3 {
		for i := range phi {
			phi[i] = f32(phi[i] * (1 + 0.01*math.Cos(float64(i))))
		}
		for _, buf := range []kernels.Buffer{phi32, phi64, vel32, vel64} {
			buf.Upload()
		}
		if err := p32.Constrain(g, phi32, vel32); err != nil {
			t.Fatal(err)
		}
		p64.Constrain(g, phi64, vel64)
		// Both programs mirror the same host memory: read one, then the other.
		phi32.Download()
		q32 := append([]float64(nil), phi...)
		phi64.Download()
		for i := range phi {
			if d := math.Abs(q32[i] - phi[i]); !(d <= u32*math.Abs(phi[i])+8*u) {
				t.Fatalf("constrain at %d: %v vs %v", i, q32[i], phi[i])
			}
		}
	}

	// FirstNonFinite sees a value that overflowed float32 on upload.
	phi[n/2] = 1e39
	phi32.Upload()
	if k, err := p32.FirstNonFinite(phi32); err != nil || k != n/2 {
		t.Fatalf("FirstNonFinite after an overflowing upload: %d, %v (want %d)", k, err, n/2)
	}
}

// TestFloat32FlowRepeats: the device flow in float32 storage gives the same
// bits run to run, and it moves the state in float32 (what it leaves is
// float32-representable).
func TestFloat32FlowRepeats(t *testing.T) {
	b := gpu(t)
	defer b.Close()
	for _, th := range builtins(t) {
		p, err := b.CompileProgramAs(th.unit, Float32)
		if err != nil {
			t.Fatal(err)
		}
		params := []float64{1, 1}
		if th.name == "abelian_higgs" {
			params = []float64{1}
		}
		g := kernels.Grid{Nx: 96, Ny: 80, Hx: 0.2, Hy: 0.2, Ox: -9.5, Oy: -7.9}
		n := th.unit.NComp * g.Sites()
		var results [2][]float64
		var recs [2]kernels.FlowResult
		for run := range results {
			h, free, err := b.HostAlloc(n)
			if err != nil {
				t.Fatal(err)
			}
			initial(th.name, g, h)
			phi, _ := p.Bind(h)
			phi.Upload()
			vel, _ := p.NewBuffer(n)
			var gs [4]kernels.Buffer
			for i := range gs {
				gs[i], _ = p.NewBuffer(n)
			}
			fl, err := p.NewFlow(kernels.FlowSpec{Grid: g, Form: kernels.Continuum, Params: params, UnitVector: th.name == "baby_skyrme",
				Dt: 0.02, Tol: 1e-300, Phi: phi, Vel: vel, G: gs})
			if err != nil {
				t.Fatal(err)
			}
			res, err := fl.Run(kernels.FlowState{PrevEnergy: math.Inf(1)}, 100, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Taken != 100 {
				t.Fatalf("%s: %d steps taken, want 100 (%+v)", th.name, res.Taken, res.Stop)
			}
			phi.Download()
			results[run] = append([]float64(nil), h...)
			recs[run] = res
			if run == 0 {
				t.Logf("%s: %s", th.name, fl.Describe())
			}
			fl.Close()
			for _, x := range append(gs[:], phi, vel) {
				x.Release()
			}
			free()
		}
		for i := range results[0] {
			if math.Float64bits(results[0][i]) != math.Float64bits(results[1][i]) {
				t.Fatalf("%s: float32 device flows differ at %d: %v vs %v", th.name, i, results[0][i], results[1][i])
			}
			if results[0][i] != f32(results[0][i]) {
				t.Fatalf("%s: value %v at %d is not float32-representable", th.name, results[0][i], i)
			}
		}
		for k := range recs[0].Records {
			if recs[0].Records[k] != recs[1].Records[k] {
				t.Fatalf("%s: step records differ at %d: %+v vs %+v", th.name, k, recs[0].Records[k], recs[1].Records[k])
			}
		}
		last := recs[0].Records[len(recs[0].Records)-1]
		t.Logf("%s: 100 float32 steps bit-identical twice; E=%.15g max|grad|=%.3g resets=%d", th.name, last.Energy, last.MaxGrad, recs[0].State.Resets)
		p.Close()
	}
}
