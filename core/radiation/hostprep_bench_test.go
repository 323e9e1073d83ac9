package radiation_test

import (
	"testing"

	"github.com/fieldgo/fieldgo/core/radiation"
	"github.com/fieldgo/fieldgo/internal/radscene"
	"github.com/fieldgo/fieldgo/kernels"
)

// nullDevice takes a job and does nothing: what Fields costs the host
// before and after a device's run.
type nullDevice struct{}

func (nullDevice) String() string { return "null" }
func (nullDevice) Run(job *kernels.RadiationJob) error {
	if job.OnDevice {
		job.DeviceOut = &kernels.DeviceBlock{}
	}
	return nil
}

// BenchmarkFieldsHostSide: Fields' host-side preparation of a device call
// on the GPU benchmark's scene (32768 observers x 256 times x 16 particles,
// 16 knots per period), the cube left on the device: from scratch, and
// repeated with a Prepared (the knots and observer arrays kept).
func BenchmarkFieldsHostSide(b *testing.B) {
	sc := radscene.New(b, radscene.Size{O: 32768, S: 256, P: 16, KPP: 16})
	defer sc.Release()
	for _, prec := range []radiation.Precision{radiation.Float64, radiation.Float32} {
		for _, kept := range []bool{false, true} {
			name := prec.String()
			if kept {
				name += "/prepared"
			}
			b.Run(name, func(b *testing.B) {
				opt := radiation.DefaultOptions()
				opt.Precision, opt.Device, opt.OnDevice = prec, nullDevice{}, true
				if kept {
					opt.Prepared = &radiation.Prepared{}
				}
				for i := 0; i < b.N; i++ {
					c, err := radiation.Fields(sc.Src, sc.Obs, sc.Times, sc.S, opt)
					if err != nil {
						b.Fatal(err)
					}
					c.Release()
				}
			})
		}
	}
}
