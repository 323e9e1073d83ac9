package cpubench

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/fieldgo/fieldgo/core"
)

// bytesPerSiteStep is the least memory traffic of one arrested-Newton step of
// the continuum form per site, in doubles per component, each array touched
// once per kernel: 4 gradients x (read phi, write g) + the stage-1 velocity
// read (9), 3 stage combinations (11), the field and velocity updates (12),
// the constraint (4): 36 doubles per component.
func bytesPerSiteStep(ncomp int) float64 { return 36 * 8 * float64(ncomp) }

// BenchmarkBabySkyrmeStep relaxes the charge-1 skyrmion (default form: continuum,
// power arrest; dt = h/4, since h/2 diverges at 1024^2) and reports site-updates/s (sites x steps / s) next to
// the roofline BenchmarkCopy's bandwidth allows.
func BenchmarkBabySkyrmeStep(b *testing.B) {
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			h := 20.0 / float64(n-1)
			s := newSim(b, theory(b, babySkyrmeSpec, "baby_skyrme.c"), n, h, []float64{1, 1}, core.Options{})
			if err := s.Fill(hedgehog); err != nil {
				b.Fatal(err)
			}
			if err := s.Start(core.FlowConfig{Dt: h / 4, Tol: 1e-300, MaxSteps: 1 << 30, CheckEvery: 1 << 30}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Advance(2, 0); err != nil { // warm up caches and pages
				b.Fatal(err)
			}
			b.ResetTimer()
			if _, err := s.Advance(b.N, 0); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(n*n)*float64(b.N)/sec, "site-updates/s")
			b.ReportMetric(float64(n*n)*float64(b.N)*bytesPerSiteStep(3)/sec/1e9, "GB/s-min-traffic")
		})
	}
}

// BenchmarkCopy measures the memory bandwidth roofline: copying 256 MiB
// (beyond any cache), counting bytes read plus written.
func BenchmarkCopy(b *testing.B) {
	const n = 32 << 20 // float64s: 256 MiB per array
	src := make([]float64, n)
	dst := make([]float64, n)
	for i := range src {
		src[i] = float64(i)
	}
	copy(dst, src)
	b.SetBytes(int64(2 * n * int(unsafe.Sizeof(src[0]))))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(dst, src)
	}
	b.StopTimer()
	bw := float64(2*n*8) * float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(bw/1e9, "GB/s")
	b.ReportMetric(bw/bytesPerSiteStep(3), "roofline-site-updates/s")
}
