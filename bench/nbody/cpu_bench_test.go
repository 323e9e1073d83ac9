package nbody

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/fieldgo/fieldgo/core/nbody"
)

// BenchmarkCPUAccelerations times one evaluation of all N accelerations
// (no potentials) with Plummer softening 0.01, and reports interactions/s
// (N^2 per evaluation: the masked self terms are computed too) and GFLOP/s
// by the GPU convention (20 flops per interaction in float32, 30 in float64).
//
//	go test -run '^$' -bench CPUAccelerations -benchtime 3x ./bench/nbody
func BenchmarkCPUAccelerations(b *testing.B) {
	for _, prec := range []nbody.Precision{nbody.Float64, nbody.Float32} {
		for _, n := range []int{1024, 4096, 16384} {
			b.Run(fmt.Sprintf("%v/N=%d", prec, n), func(b *testing.B) {
				bodies, err := nbody.Plummer(n, 1, false)
				if err != nil {
					b.Fatal(err)
				}
				ax, ay, az := make([]float64, n), make([]float64, n), make([]float64, n)
				s := nbody.Solver{Softening: 0.01, Precision: prec}
				if err := s.Accelerations(bodies.X, bodies.Y, bodies.Z, bodies.M, ax, ay, az, nil); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					_ = s.Accelerations(bodies.X, bodies.Y, bodies.Z, bodies.M, ax, ay, az, nil)
				}
				sec := b.Elapsed().Seconds() / float64(b.N)
				rate := nbody.Interactions(n) / sec
				flops := 30.0
				if prec == nbody.Float32 {
					flops = 20
				}
				b.ReportMetric(rate, "interactions/s")
				b.ReportMetric(rate*flops/1e9, "GFLOP/s")
				b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "threads")
			})
		}
	}
}
