package radiation

import (
	"math"
	"unsafe"

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
// observers OX, OY, OZ and R0 = |x_obs| (O each); TP the shifted sample
// times t_obs - |x_obs|/c (O x S, observer-major).
type DeviceArrays[F float] struct {
	T, H, Rec                          []F
	Y0, Y1, A1, A0, AY0, AY1, AA1, AA0 []F
	Charge                             []F
	OX, OY, OZ, R0                     []F
	TP                                 []F
}

// DeviceJob is one Fields call for a Device. Exactly one of F64, F32 is set
// (Options.Precision). Out is the cube's NComp columns of O*S (the device
// writes every value: for each sample the particles' sums, added in order
// p = 0, 1, ..., as the CPU kernel adds them), Tret its P retarded-time
// columns or nil; both are float64 whatever the precision. OX, OY, OZ are
// the observers in float64 (for the device's observer schedule).
type DeviceJob struct {
	Options Options // Segment resolved (1 .. S: AutoSegment's when it was 0)
	N, P    int     // knots in all, particles
	Off     []int32 // P+1 knot offsets
	O, S    int
	C       float64
	F64     *DeviceArrays[float64]
	F32     *DeviceArrays[float32]
	Out     []float64
	Tret    []float64
	// Observer positions in float64 (O each).
	OX, OY, OZ []float64
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

func deviceArrays[F float](k *knots[F], src Source, obs Observers, times []float64, S int) *DeviceArrays[F] {
	a := &DeviceArrays[F]{T: k.t, H: k.h, Rec: k.rec, Y0: k.y0, Y1: k.y1, A1: k.a1, A0: k.a0, AY0: k.ay0, AY1: k.ay1, AA1: k.aa1, AA0: k.aa0,
		Charge: convert[F](src.Charge)}
	o := len(obs.X)
	a.OX, a.OY, a.OZ, a.R0 = make([]F, o), make([]F, o), make([]F, o), make([]F, o)
	a.TP = make([]F, o*S)
	for i := 0; i < o; i++ {
		x, y, z := obs.X[i], obs.Y[i], obs.Z[i]
		r0 := math.Sqrt(x*x + y*y + z*z)
		a.OX[i], a.OY[i], a.OZ[i], a.R0[i] = F(x), F(y), F(z), F(r0)
		row := times
		if len(times) != S {
			row = times[i*S : (i+1)*S]
		}
		for s, t := range row {
			a.TP[i*S+s] = F(t - r0/src.C) // as the CPU kernel: shifted in float64, then rounded
		}
	}
	return a
}

// fieldsOnDevice is Fields' device path: the same knots (narrowed the same
// way in float32) and shifted times as the CPU kernel, computed here and
// handed to the device.
func fieldsOnDevice[F float](k *knots[F], src Source, obs Observers, times []float64, cube *Cube, opt *Options) error {
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
	job := &DeviceJob{Options: *opt, N: k.n, P: P, O: o, S: S, C: src.C, OX: obs.X, OY: obs.Y, OZ: obs.Z}
	job.Off = make([]int32, len(k.off))
	for i, v := range k.off {
		job.Off[i] = int32(v)
	}
	switch a := any(deviceArrays(k, src, obs, times, S)).(type) {
	case *DeviceArrays[float64]:
		job.F64 = a
	case *DeviceArrays[float32]:
		job.F32 = a
	}
	base := unsafe.SliceData(cube.Data[0])
	job.Out = unsafe.Slice(base, NComp*o*S)
	if opt.Retarded {
		job.Tret = unsafe.Slice(unsafe.SliceData(cube.Data[NComp]), P*o*S)
	}
	if err := opt.Device.Run(job); err != nil {
		return err
	}
	if opt.Cancel != nil && opt.Cancel.Load() {
		return errs.New(errs.Cancelled, "radiation fields cancelled")
	}
	return nil
}
