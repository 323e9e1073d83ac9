package kernels

// The radiation contract: core/radiation computes retarded-time
// Liénard–Wiechert fields on the CPU and hands the same work to a
// RadiationDevice, which kernels/cuda/gpuradiation implements with
// kernels/src/radiation.cu. The physics side says what it wants
// (RadiationKernel: method, search, precision, retarded times) and lays out
// the numbers (RadiationArrays); the device side picks its entry points and
// launch shapes.

// RadiationMethod is how the retarded time is advanced from sample to sample.
type RadiationMethod int

const (
	RadiationNewton RadiationMethod = iota // NIters Newton corrections from a warm start
	RadiationRK4                           // RK4 on dtau/dt_obs with NSubsteps per sample
)

func (m RadiationMethod) String() string {
	if m == RadiationRK4 {
		return "rk4"
	}
	return "newton"
}

// RadiationSearch is how a spline evaluation finds its interval.
type RadiationSearch int

const (
	WarmSearch RadiationSearch = iota // from the previous interval: gallop and bisect
	ColdSearch                        // binary search from scratch every time (the naive kernel)
)

func (s RadiationSearch) String() string {
	if s == ColdSearch {
		return "cold"
	}
	return "warm"
}

// RadiationComponents are the cube's field components, in order: Ex, Ey, Ez,
// Bx, By, Bz, phi, Ax, Ay, Az.
const RadiationComponents = 10

// RadiationKernel is the kernel a radiation job asks for.
type RadiationKernel struct {
	Method    RadiationMethod
	NIters    int // Newton corrections per sample (0: the predictor alone)
	NSubsteps int // RK4 steps per sample interval (>= 1)
	Search    RadiationSearch
	CoefReuse bool // keep the interval's coefficients while tau stays inside (warm search only; cold ignores it)
	Precision Precision
	Retarded  bool // also write each particle's retarded lab time
}

// Interval records: the knots' splines, interval-major, RadiationRecordLen
// values per knot interval i (knots i and i+1) in the kernel's precision, the
// layout both the CPU kernel (core/radiation) and the CUDA kernel
// (FG_RAD_REC, FG_RAD_REC_ACCEL in kernels/src/radiation.cu) read: one
// record is a few whole cache lines instead of one value from each of 52
// columns.
//
//	[0] t[i]  [1] t[i+1]  [2], [3] unused (0)
//	[4+d] y0[d][i]  [12+d] y1[d][i]  [20+d] a1[d][i]  [28+d] a0[d][i]   d < 8 (t, x, y, z, ut, ux, uy, uz)
//	[36] .. [47] unused (0)
//	[48+d] ay0[d][i]  [52+d] ay1[d][i]  [56+d] aa1[d][i]  [60+d] aa0[d][i]   d < 4 (at, ax, ay, az)
//
// with the cubic on interval i (width h = h[i+1], dt1 = tau - t[i],
// dt2 = t[i+1] - tau) evaluated as S = (a1 + y1 dt1^2) dt1 + (a0 + y0 dt2^3):
// y0 = z[i]/(6h), y1 = z[i+1]/(6h), a1 = c1 - c2, a0 = c2 h of the natural
// cubic spline's second derivatives z and coefficients c1, c2 (aa1, aa0: the
// acceleration's a1, a0). A particle's last knot has no interval: its
// coefficients are zeros (the last knot of all has t[i+1] = 0 too), and no
// search returns it.
const (
	RadiationRecordLen   = 64
	RadiationRecordAccel = 48 // where the acceleration's 16 values start
)

// RadiationArrays are a job's inputs in the kernel's precision F: knot times
// T and widths H (N each); Rec, the interval records (N of
// RadiationRecordLen); the same numbers column-major, per interval the state
// coefficients Y0, Y1, A1, A0 (8 columns of N) and the acceleration's AY0,
// AY1, AA1, AA0 (4 columns of N); Charge (P); observers OX, OY, OZ and
// R0 = |x_obs| (O each).
//
// The shifted sample times t_obs - |x_obs|/c are the device's to form (O x
// S of them: 64 MiB for the benchmark's 32768 observers, which the host
// took 0.1-0.3 s to build and lay out): from Times, the sample times (S
// shared by every observer, or O x S observer-major), and Shift = |x_obs|/c
// (O), both float64 in the kernel's units, as F(Times[s] - Shift[o]): the
// CPU kernel's "shifted in float64, then rounded", bit for bit.
type RadiationArrays[F ~float32 | ~float64] struct {
	T, H, Rec                          []F
	Y0, Y1, A1, A0, AY0, AY1, AA1, AA0 []F
	Charge                             []F
	OX, OY, OZ, R0                     []F
	Times, Shift                       []float64
}

// RadiationJob is one cube for a RadiationDevice. Exactly one of F64, F32 is
// set (Kernel.Precision). Out is the cube's RadiationComponents columns of
// O*S (the device writes every value: for each sample the particles' sums,
// added in order p = 0, 1, ..., as the CPU kernel adds them), Tret its P
// retarded-time columns or nil; both are float64 whatever the precision, and
// the device writes every value of both (they are not cleared first).
// Scale, when not nil, is a factor per column (RadiationComponents, then the
// P retarded times) the device multiplies the cube by before it comes back,
// NaN left as it is: the float32 mode's units (powers of two, so the bits
// are the host's multiplication's).
type RadiationJob struct {
	Kernel RadiationKernel
	// Segment is the samples per walk, 1 .. S: a walk's first sample is
	// solved from scratch, the others by Kernel.Method from the previous
	// sample's root.
	Segment int
	// OnDevice leaves the cube in the device's memory (DeviceOut) instead of
	// writing Out and Tret.
	OnDevice bool
	N, P     int     // knots in all, particles
	Off      []int32 // P+1 knot offsets
	O, S     int     // observers, samples per observer
	C        float64 // the speed of light in the kernel's units
	F64      *RadiationArrays[float64]
	F32      *RadiationArrays[float32]
	Out      []float64 // nil when OnDevice
	Tret     []float64
	// DeviceOut is the cube the device left in its memory when OnDevice:
	// RadiationComponents columns and, when Kernel.Retarded, P more.
	DeviceOut *DeviceBlock
	Scale     []float64
	// Observer positions in float64 (O each), for the device's observer
	// schedule.
	OX, OY, OZ []float64
	// Kept says that the arrays of F64 or F32 other than Times, and OX, OY,
	// OZ, are never written again (a radiation.Prepared's): a device may
	// keep what it uploaded of them, and use it again while the same slices
	// come back.
	Kept bool
}

// RadiationDevice runs a radiation job elsewhere (a GPU).
type RadiationDevice interface {
	String() string
	// Run computes job.Out and job.Tret (or job.DeviceOut) from the job's
	// arrays.
	Run(job *RadiationJob) error
}

// DeviceBlock is memory a device keeps: Bytes from device address Ptr on the
// device of ordinal Device, settled (no work pending) when handed out. Free
// releases it.
type DeviceBlock struct {
	Ptr    uint64
	Bytes  int
	Device int
	Free   func()
}

// HostMemory is implemented by a device that copies into host memory of its
// own faster than into any other (a GPU's page-locked memory: the driver
// copies pageable memory through a staging buffer at a fraction of the
// link's speed). The caller allocates the blocks the device writes into from
// HostAllocator.
type HostMemory interface {
	HostAllocator() Allocator
}

// Allocator hands out host memory: the methods of arrow-go's
// memory.Allocator, so that either interface holds the other's values.
type Allocator interface {
	Allocate(size int) []byte
	Reallocate(size int, b []byte) []byte
	Free(b []byte)
}
