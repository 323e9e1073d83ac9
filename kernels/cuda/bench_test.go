package cuda

import (
	"fmt"
	"testing"

	"github.com/fieldgo/fieldgo/kernels"
)

// BenchmarkGradient times one gradient evaluation with its reductions
// (energy, max, power): the fused kernel, the two reduction kernels and the
// 24-byte read-back. GB/s counts the bytes the evaluation must move: the
// field read once and the gradient written once.
func BenchmarkGradient(bm *testing.B) {
	b := gpu(bm)
	defer b.Close()
	for _, th := range builtins(bm) {
		p := newPair(bm, b, th)
		for _, form := range []kernels.Form{kernels.Continuum, kernels.Consistent} {
			for _, nx := range []int{256, 512, 1024, 2048} {
				bm.Run(fmt.Sprintf("%s/%v/%d", th.name, form, nx), func(bm *testing.B) {
					h := 20.0 / float64(nx)
					g := kernels.Grid{Nx: nx, Ny: nx, Hx: h, Hy: h, Ox: -10, Oy: -10}
					n := p.unit.NComp * g.Sites()
					phiH := p.host(bm, n)
					initial(th.name, g, phiH)
					phi, _ := p.gp.Bind(phiH)
					phi.Upload()
					out, _ := p.gp.NewBuffer(n)
					defer phi.Release()
					defer out.Release()
					ga := kernels.GradientArgs{Grid: g, Form: form, Penalty: 0.1, Params: p.params,
						Project: th.name == "baby_skyrme", Energy: true, Phi: phi, Out: out}
					timeGradient(bm, p.gp, ga, n)
				})
			}
		}
		p.close()
	}
}

// BenchmarkCombine times out = a + c1*b + c2*c (an RK stage): 4 streams.
func BenchmarkCombine(bm *testing.B) {
	b := gpu(bm)
	defer b.Close()
	th := builtins(bm)[0]
	p := newPair(bm, b, th)
	defer p.close()
	for _, nx := range []int{1024, 2048} {
		bm.Run(fmt.Sprint(nx), func(bm *testing.B) {
			n := 3 * nx * nx
			var bufs [4]kernels.Buffer
			for i := range bufs {
				bufs[i], _ = p.gp.NewBuffer(n)
				defer bufs[i].Release()
			}
			bm.ResetTimer()
			for i := 0; i < bm.N; i++ {
				if err := p.gp.Combine(bufs[0], kernels.Term{Coef: 1, X: bufs[1]}, kernels.Term{Coef: 0.5, X: bufs[2]},
					kernels.Term{Coef: 0.25, X: bufs[3]}); err != nil {
					bm.Fatal(err)
				}
			}
			// Wait for the last launch: FirstNonFinite reads back.
			p.gp.FirstNonFinite(bufs[0])
			sec := bm.Elapsed().Seconds() / float64(bm.N)
			bm.ReportMetric(sec*1e3, "ms/op")
			bm.ReportMetric(float64(4*8*n)/sec/1e9, "GB/s")
		})
	}
}

// BenchmarkGridGradient times one continuum gradient evaluation with its
// reductions on a periodic 3D lattice of 64^3, 128^3 and 256^3 sites (the
// grid unit's per-site kernel fg_k_nd_continuum, cuda_site3d.cu), for a
// one-component theory with z derivatives (phi4_3d), a four-component one
// (sigma4_3d) and a planar three-component one (baby_skyrme). GB/s counts
// the field read once and the gradient written once.
func BenchmarkGridGradient(bm *testing.B) {
	b := gpu(bm)
	defer b.Close()
	for _, th := range gridBuiltins(bm)[:3] {
		p := newGridPair(bm, b, th)
		for _, n := range []int{64, 128, 256} {
			bm.Run(fmt.Sprintf("%s/%d^3", th.name, n), func(bm *testing.B) {
				h := 10.0 / float64(n)
				g := kernels.Grid{Dims: 3, Nx: n, Ny: n, Nz: n, Hx: h, Hy: h, Hz: h, Ox: -5, Oy: -5, Oz: -5, Periodic: true}
				nv := p.unit.NComp * g.Sites()
				phiH := p.host(bm, nv)
				gridInitial(th.name, p.unit.NComp, g, phiH)
				phi, _ := p.gp.Bind(phiH)
				phi.Upload()
				out, _ := p.gp.NewBuffer(nv)
				defer phi.Release()
				defer out.Release()
				ga := kernels.GradientArgs{Grid: g, Form: kernels.Continuum, Params: p.params,
					Project: unitVector(th.name), Energy: true, Phi: phi, Out: out}
				timeGradient(bm, p.gp, ga, nv)
			})
		}
		p.close()
	}
}

// timeGradient times ga's gradient evaluation after one untimed call and
// reports ms/eval, GB/s (the field of values float64s read once and the
// gradient written once) and Msite/s.
func timeGradient(bm *testing.B, gp kernels.Program, ga kernels.GradientArgs, values int) {
	if _, err := gp.Gradient(ga); err != nil {
		bm.Fatal(err)
	}
	bm.ResetTimer()
	for i := 0; i < bm.N; i++ {
		if _, err := gp.Gradient(ga); err != nil {
			bm.Fatal(err)
		}
	}
	sec := bm.Elapsed().Seconds() / float64(bm.N)
	bm.ReportMetric(sec*1e3, "ms/eval")
	bm.ReportMetric(float64(2*8*values)/sec/1e9, "GB/s")
	bm.ReportMetric(float64(ga.Grid.Sites())/sec/1e6, "Msite/s")
}
