package radbench

import (
	"fmt"
	"testing"

	"github.com/fieldgo/fieldgo/core/radiation"
	"github.com/fieldgo/fieldgo/internal/radscene"
)

// hostOnly is a Device that computes nothing: Fields with it costs what a
// GPU run costs the host besides the device's work (the knots, the
// observers' arrays, the cube's block), without a GPU.
type hostOnly struct{}

func (hostOnly) String() string                     { return "host only" }
func (hostOnly) Run(job *radiation.DeviceJob) error { return nil }

// BenchmarkHostPreparation: the host's side of a device run of the API
// benchmark's scene (bench/api run.py radiation: 256 samples, 16 particles,
// 16 knots per period) at 32768 and 524288 observers, both precisions; the
// observer schedule's share is gpuradiation's BenchmarkObserverOrder
// (docs/performance/radiation.md).
func BenchmarkHostPreparation(b *testing.B) {
	for _, o := range []int{32768, 524288} {
		for _, prec := range []radiation.Precision{radiation.Float64, radiation.Float32} {
			b.Run(fmt.Sprintf("O=%d/%v", o, prec), func(b *testing.B) {
				sc := radscene.New(b, radscene.Size{O: o, S: 256, P: 16, KPP: 16})
				defer sc.Release()
				opt := radiation.DefaultOptions()
				opt.Precision, opt.Device = prec, hostOnly{}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					c, err := radiation.Fields(sc.Src, sc.Obs, sc.Times, sc.S, opt)
					if err != nil {
						b.Fatal(err)
					}
					c.Release()
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/call")
			})
		}
	}
}
