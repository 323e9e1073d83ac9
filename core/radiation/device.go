package radiation

import (
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// Device runs the radiation kernel elsewhere (a GPU): the contract
// kernels.RadiationDevice, which the kernels own (radiation does not import a
// backend). kernels/cuda/gpuradiation implements it with
// kernels/src/radiation.cu and the caller hands it in through
// Options.Device.
type Device = kernels.RadiationDevice

// DeviceJob is one Fields call for a Device (kernels.RadiationJob): the
// knots of the CPU kernel (DeviceArrays), the observers, the sample times and
// where the cube goes.
type DeviceJob = kernels.RadiationJob

// DeviceArrays are a DeviceJob's inputs in the kernel's precision F
// (kernels.RadiationArrays; Rec is knots' rec, the interval records).
type DeviceArrays[F float] = kernels.RadiationArrays[F]

// Kernel is the kernel the options ask a Device for.
func (o Options) Kernel() kernels.RadiationKernel {
	return kernels.RadiationKernel{Method: o.Method, NIters: o.NIters, NSubsteps: o.NSubsteps, Search: o.Search,
		CoefReuse: o.CoefReuse, Precision: o.Precision, Retarded: o.Retarded}
}

func deviceArrays[F float](k *knots[F], src Source, oa *observerArrays[F], times []float64) *DeviceArrays[F] {
	return &DeviceArrays[F]{T: k.t, H: k.h, Rec: k.rec, Y0: k.y0, Y1: k.y1, A1: k.a1, A0: k.a0, AY0: k.ay0, AY1: k.ay1, AA1: k.aa1, AA0: k.aa0,
		Charge: convert[F](src.Charge), Times: times, OX: oa.OX, OY: oa.OY, OZ: oa.OZ, R0: oa.R0, Shift: oa.Shift}
}

// fieldsOnDevice is Fields' device path: the same knots (narrowed the same
// way in float32) as the CPU kernel, the observers' arrays, and the numbers
// its shifted times are made of, handed to the device; scale is the factor per column the device
// takes the cube back to the given units with (nil: none).
func fieldsOnDevice[F float](k *knots[F], src Source, oa *observerArrays[F], times []float64, cube *Cube, opt *Options, scale []float64) error {
	if k.collide != nil {
		return k.collide
	}
	if opt.Cancel != nil && opt.Cancel.Load() {
		return errs.New(errs.Cancelled, "radiation fields cancelled")
	}
	o, S, P := cube.O, cube.S, cube.P
	if o*S == 0 {
		return nil
	}
	if int64(k.n) >= 1<<31 || int64(P)*int64(o)*int64(S) >= 1<<62 {
		return errs.New(errs.Shape, "%d knots: the CUDA kernel indexes knots with 32-bit integers", k.n)
	}
	job := &DeviceJob{Kernel: opt.Kernel(), Segment: opt.Segment, OnDevice: opt.OnDevice, N: k.n, P: P, O: o, S: S, C: src.C, Scale: scale, OX: oa.X, OY: oa.Y, OZ: oa.Z,
		Kept: opt.Prepared != nil}
	job.Off = make([]int32, len(k.off))
	for i, v := range k.off {
		job.Off[i] = int32(v)
	}
	switch a := any(deviceArrays(k, src, oa, times)).(type) {
	case *DeviceArrays[float64]:
		job.F64 = a
	case *DeviceArrays[float32]:
		job.F32 = a
	}
	if !opt.OnDevice {
		base := unsafe.SliceData(cube.Data[0])
		job.Out = unsafe.Slice(base, NComp*o*S)
		if opt.Retarded {
			job.Tret = unsafe.Slice(unsafe.SliceData(cube.Data[NComp]), P*o*S)
		}
	}
	if err := opt.Device.Run(job); err != nil {
		return err
	}
	if opt.OnDevice {
		if job.DeviceOut == nil {
			return errs.New(errs.Backend, "%v cannot leave the cube in its memory", opt.Device)
		}
		cube.Device = job.DeviceOut
	}
	if opt.Cancel != nil && opt.Cancel.Load() {
		return errs.New(errs.Cancelled, "radiation fields cancelled")
	}
	return nil
}
