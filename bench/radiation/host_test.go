package radbench

import (
	"fmt"
	"testing"

	"github.com/fieldgo/fieldgo/core/radiation"
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
				b.Setenv("FIELDGO_RAD_O", fmt.Sprint(o))
				b.Setenv("FIELDGO_RAD_S", "256")
				b.Setenv("FIELDGO_RAD_P", "16")
				b.Setenv("FIELDGO_RAD_KPP", "16")
				sc := newScene(b)
				defer sc.release()
				opt := radiation.DefaultOptions()
				opt.Precision, opt.Device = prec, hostOnly{}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					c, err := radiation.Fields(sc.src, sc.obs, sc.times, sc.S, opt)
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
