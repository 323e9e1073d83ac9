package radiation

import (
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fieldgo/fieldgo/errs"
)

// Device runs the radiation kernel elsewhere (a GPU): core does not import
// a backend; kernels/cuda/gpuradiation implements Device with
// kernels/src/radiation.cu and the caller hands it in through
// Options.Device.
type Device interface {
	String() string
	// Run computes job.Out (and job.Tret) from the job's arrays.
	Run(job *DeviceJob) error
}

// DeviceArrays are the kernel's inputs in its precision F: knot times T and
// widths H (N each); Rec, the interval-major records the kernels read
// (RecordLen values per knot, kernels/src/radiation.cu's header); the same
// numbers column-major, per interval the state coefficients Y0, Y1, A1, A0
// (8 columns of N; Y0 = z[i]/(6h), Y1 = z[i+1]/(6h)) and the
// acceleration's AY0, AY1, AA1, AA0 (4 columns of N); Charge (P);
// observers OX, OY, OZ and R0 = |x_obs| (O each).
//
// The shifted sample times t_obs - |x_obs|/c are the device's to form (O x
// S of them: 64 MiB for the benchmark's 32768 observers, which the host
// took 0.1-0.3 s to build and lay out): from Times, the sample times (S
// shared by every observer, or O x S observer-major), and Shift = |x_obs|/c
// (O), both float64 in the kernel's units, as F(Times[s] - Shift[o]): the
// CPU kernel's "shifted in float64, then rounded", bit for bit.
type DeviceArrays[F float] struct {
	T, H, Rec                          []F
	Y0, Y1, A1, A0, AY0, AY1, AA1, AA0 []F
	Charge                             []F
	OX, OY, OZ, R0                     []F
	Times, Shift                       []float64
}

// DeviceJob is one Fields call for a Device. Exactly one of F64, F32 is set
// (Options.Precision). Out is the cube's NComp columns of O*S (the device
// writes every value: for each sample the particles' sums, added in order
// p = 0, 1, ..., as the CPU kernel adds them), Tret its P retarded-time
// columns or nil; both are float64 whatever the precision, and the device
// writes every value of both (Fields does not clear them). Scale, when not
// nil, is a factor per column (NComp, then the P retarded times) the device
// multiplies the cube by before it comes back, NaN left as it is: the
// float32 mode's units (powers of two, so the bits are the host's
// multiplication's). OX, OY, OZ are the observers in float64 (for the
// device's observer schedule).
type DeviceJob struct {
	Options Options // Segment resolved (1 .. S: AutoSegment's when it was 0)
	N, P    int     // knots in all, particles
	Off     []int32 // P+1 knot offsets
	O, S    int
	C       float64
	F64     *DeviceArrays[float64]
	F32     *DeviceArrays[float32]
	Out     []float64 // nil when Options.OnDevice
	Tret    []float64
	// DeviceOut is the cube the Device left in its memory when
	// Options.OnDevice: NComp columns and, when Retarded, P more.
	DeviceOut *DeviceBuffer
	Scale     []float64
	// Observer positions in float64 (O each).
	OX, OY, OZ []float64
}

// HostMemory is implemented by a Device that copies into host memory of its
// own faster than into any other (a GPU's page-locked memory: the driver
// copies pageable memory through a staging buffer at a fraction of the
// link's speed). Fields takes the cube's block from its allocator.
type HostMemory interface {
	HostAllocator() memory.Allocator
}

// Kernel is the entry point of kernels/src/radiation.cu for the options:
// fg_rad_<newton|rk4>_<cold|warm|reuse>_<f64|f32>. Cold search ignores
// CoefReuse (as on the CPU).
func (o Options) Kernel() string {
	s := "warm"
	switch {
	case o.Search == Cold:
		s = "cold"
	case o.CoefReuse:
		s = "reuse"
	}
	p := "f64"
	if o.Precision == Float32 {
		p = "f32"
	}
	return "fg_rad_" + o.Method.String() + "_" + s + "_" + p
}

func deviceArrays[F float](k *knots[F], src Source, obs Observers, times []float64) *DeviceArrays[F] {
	a := &DeviceArrays[F]{T: k.t, H: k.h, Rec: k.rec, Y0: k.y0, Y1: k.y1, A1: k.a1, A0: k.a0, AY0: k.ay0, AY1: k.ay1, AA1: k.aa1, AA0: k.aa0,
		Charge: convert[F](src.Charge), Times: times}
	o := len(obs.X)
	a.OX, a.OY, a.OZ, a.R0 = make([]F, o), make([]F, o), make([]F, o), make([]F, o)
	a.Shift = make([]float64, o)
	for i := 0; i < o; i++ {
		x, y, z := obs.X[i], obs.Y[i], obs.Z[i]
		r0 := math.Sqrt(x*x + y*y + z*z)
		a.OX[i], a.OY[i], a.OZ[i], a.R0[i] = F(x), F(y), F(z), F(r0)
		a.Shift[i] = r0 / src.C // as the CPU kernel's t - r0/src.C
	}
	return a
}

// fieldsOnDevice is Fields' device path: the same knots (narrowed the same
// way in float32) as the CPU kernel, and the numbers its shifted times are
// made of, handed to the device; scale is the factor per column the device
// takes the cube back to the given units with (nil: none).
func fieldsOnDevice[F float](k *knots[F], src Source, obs Observers, times []float64, cube *Cube, opt *Options, scale []float64) error {
	if err := checkKnots(k); err != nil {
		return err
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
	job := &DeviceJob{Options: *opt, N: k.n, P: P, O: o, S: S, C: src.C, Scale: scale, OX: obs.X, OY: obs.Y, OZ: obs.Z}
	job.Off = make([]int32, len(k.off))
	for i, v := range k.off {
		job.Off[i] = int32(v)
	}
	switch a := any(deviceArrays(k, src, obs, times)).(type) {
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
