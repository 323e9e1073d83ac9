// Package gpuradiation runs core/radiation's retarded-time kernel on an
// NVIDIA GPU with kernels/src/radiation.cu (one thread per observer), through
// the generic module API of kernels/cuda. Device implements
// radiation.Device.
package gpuradiation

import (
	"sync"
	"unsafe"

	"github.com/fieldgo/fieldgo/core/radiation"
	"github.com/fieldgo/fieldgo/kernels/cuda"
	"github.com/fieldgo/fieldgo/kernels/src"
)

// Device is a CUDA GPU with the radiation module loaded. Runs are
// serialised.
type Device struct {
	b  *cuda.Backend
	m  *cuda.Module
	mu sync.Mutex

	// BlockSize overrides the threads per block (0: the occupancy API's
	// choice, lowered to keep two blocks per SM when there are few
	// observers).
	BlockSize int
	// LastSeconds is the device time of the last Run's kernel (events).
	LastSeconds float64
	// ColumnMajor runs the "_cm" kernel reading the column-major spline
	// arrays instead of the interval records (the benchmark's comparison;
	// Newton float64 only).
	ColumnMajor bool
}

// New loads the radiation kernels on b.
func New(b *cuda.Backend) (*Device, error) {
	m, err := b.LoadModule(src.RadiationCUDA)
	if err != nil {
		return nil, err
	}
	return &Device{b: b, m: m}, nil
}

// Module is the loaded module (for Describe).
func (d *Device) Module() *cuda.Module { return d.m }

func (d *Device) String() string { return "cuda: " + d.b.Device() }

// Close unloads the module.
func (d *Device) Close() error { return d.m.Close() }

// args64 and args32 mirror fg_rad_args<double> and fg_rad_args<float>
// (x86-64 and CUDA lay a struct out alike: natural alignment, in order).
type args64 struct {
	T, H, Z, C1, C2, AZ, AC1, AC2, Off uint64
	P, N                               int32
	Charge, OX, OY, OZ, R0             uint64
	O, _                               int32
	TP                                 uint64
	S, _                               int32
	C                                  float64
	NIters, NSubsteps                  int32
	Out, Tret, Rec                     uint64
}

type args32 struct {
	T, H, Z, C1, C2, AZ, AC1, AC2, Off uint64
	P, N                               int32
	Charge, OX, OY, OZ, R0             uint64
	O, _                               int32
	TP                                 uint64
	S                                  int32
	C                                  float32
	NIters, NSubsteps                  int32
	Out, Tret, Rec                     uint64
}

// ArgsBytes are the struct sizes the kernel expects (checked by a test
// against offsetof in the CUDA source's layout rules).
var ArgsBytes = [2]int{int(unsafe.Sizeof(args64{})), int(unsafe.Sizeof(args32{}))}

func bytesOf[T any](v *T) []byte {
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))...)
}

type alloc struct {
	m    *cuda.Module
	bufs []*cuda.DeviceBuffer
	err  error
}

func put[T any](a *alloc, host []T) uint64 {
	if a.err != nil || len(host) == 0 {
		return 0
	}
	var z T
	buf, err := a.m.Alloc(len(host) * int(unsafe.Sizeof(z)))
	if err != nil {
		a.err = err
		return 0
	}
	a.bufs = append(a.bufs, buf)
	if err := cuda.Upload(buf, 0, host); err != nil {
		a.err = err
	}
	return buf.Ptr()
}

func (a *alloc) free() {
	for _, b := range a.bufs {
		b.Free()
	}
}

type arrays struct {
	T, H, Z, C1, C2, AZ, AC1, AC2, Charge, OX, OY, OZ, R0, TP, Rec uint64
}

// RecordLen is the values per knot interval of the interval-major layout
// (FG_RAD_REC in radiation.cu); RecordAccel is where the acceleration's 16
// start.
const (
	RecordLen   = 64
	RecordAccel = 48
)

// Records lays the column-major spline arrays of n knots out interval-major,
// one RecordLen-value record per knot i (radiation.cu's header gives the
// offsets): t[i], t[i+1], h[i+1], then z[d][i], z[d][i+1], c1[d][i],
// c2[d][i] of the 8 state columns, and from RecordAccel the same of the 4
// acceleration columns. The last knot's record has no next knot (zeros); no
// search returns it.
func Records[F float32 | float64](x *radiation.DeviceArrays[F], n int) []F {
	r := make([]F, n*RecordLen)
	for i := 0; i < n; i++ {
		v := r[i*RecordLen : (i+1)*RecordLen]
		v[0] = x.T[i]
		next := i+1 < n
		if next {
			v[1], v[2] = x.T[i+1], x.H[i+1]
		}
		for d := 0; d < 8; d++ {
			j := d*n + i
			v[4+d], v[20+d], v[28+d] = x.Z[j], x.C1[j], x.C2[j]
			if next {
				v[12+d] = x.Z[j+1]
			}
		}
		for d := 0; d < 4; d++ {
			j := d*n + i
			v[RecordAccel+d], v[RecordAccel+8+d], v[RecordAccel+12+d] = x.AZ[j], x.AC1[j], x.AC2[j]
			if next {
				v[RecordAccel+4+d] = x.AZ[j+1]
			}
		}
	}
	return r
}

// upload puts the job's arrays on the device: the knot times, observers and
// shifted times always; the interval records, or (columnMajor) the
// column-major spline arrays.
func upload[F float32 | float64](a *alloc, x *radiation.DeviceArrays[F], n int, columnMajor bool) arrays {
	ar := arrays{T: put(a, x.T), Charge: put(a, x.Charge), OX: put(a, x.OX), OY: put(a, x.OY), OZ: put(a, x.OZ), R0: put(a, x.R0), TP: put(a, x.TP)}
	if columnMajor {
		ar.H, ar.Z, ar.C1, ar.C2, ar.AZ, ar.AC1, ar.AC2 = put(a, x.H), put(a, x.Z), put(a, x.C1), put(a, x.C2), put(a, x.AZ), put(a, x.AC1), put(a, x.AC2)
	} else {
		ar.Rec = put(a, Records(x, n))
	}
	return ar
}

// Run uploads the job, launches its kernel once over all observers, and
// copies the cube back.
func (d *Device) Run(job *radiation.DeviceJob) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	name := job.Options.Kernel()
	if d.ColumnMajor {
		name += "_cm"
	}
	fn, err := d.m.Function(name)
	if err != nil {
		return err
	}
	a := &alloc{m: d.m}
	defer a.free()
	var ar arrays
	if job.F32 != nil {
		ar = upload(a, job.F32, job.N, d.ColumnMajor)
	} else {
		ar = upload(a, job.F64, job.N, d.ColumnMajor)
	}
	off := put(a, job.Off)
	if a.err != nil {
		return a.err
	}
	out, err := d.m.Alloc(8 * len(job.Out))
	if err != nil {
		return err
	}
	defer out.Free()
	var tret *cuda.DeviceBuffer
	if job.Tret != nil {
		if tret, err = d.m.Alloc(8 * len(job.Tret)); err != nil {
			return err
		}
		defer tret.Free()
	}
	tp := uint64(0)
	if tret != nil {
		tp = tret.Ptr()
	}
	opt := job.Options
	var raw []byte
	if job.F32 != nil {
		raw = bytesOf(&args32{T: ar.T, H: ar.H, Z: ar.Z, C1: ar.C1, C2: ar.C2, AZ: ar.AZ, AC1: ar.AC1, AC2: ar.AC2, Off: off,
			P: int32(job.P), N: int32(job.N), Charge: ar.Charge, OX: ar.OX, OY: ar.OY, OZ: ar.OZ, R0: ar.R0, O: int32(job.O),
			TP: ar.TP, S: int32(job.S), C: float32(job.C), NIters: int32(opt.NIters), NSubsteps: int32(opt.NSubsteps),
			Out: out.Ptr(), Tret: tp, Rec: ar.Rec})
	} else {
		raw = bytesOf(&args64{T: ar.T, H: ar.H, Z: ar.Z, C1: ar.C1, C2: ar.C2, AZ: ar.AZ, AC1: ar.AC1, AC2: ar.AC2, Off: off,
			P: int32(job.P), N: int32(job.N), Charge: ar.Charge, OX: ar.OX, OY: ar.OY, OZ: ar.OZ, R0: ar.R0, O: int32(job.O),
			TP: ar.TP, S: int32(job.S), C: job.C, NIters: int32(opt.NIters), NSubsteps: int32(opt.NSubsteps),
			Out: out.Ptr(), Tret: tp, Rec: ar.Rec})
	}
	block := d.BlockSize
	if block <= 0 {
		block = fn.Describe().BlockSize
		for block > 32 && (job.O+block-1)/block < 2*d.b.SMs() {
			block /= 2
		}
		block = max(32, block/32*32)
	}
	start, err := d.m.NewEvent()
	if err != nil {
		return err
	}
	defer start.Destroy()
	end, err := d.m.NewEvent()
	if err != nil {
		return err
	}
	defer end.Destroy()
	start.Record()
	grid := uint32((job.O + block - 1) / block)
	if err := d.m.Launch(fn, [3]uint32{grid, 1, 1}, [3]uint32{uint32(block), 1, 1}, 0, raw); err != nil {
		return err
	}
	end.Record()
	if d.LastSeconds, err = cuda.Elapsed(start, end); err != nil {
		return err
	}
	if err := cuda.Download(job.Out, out, 0); err != nil {
		return err
	}
	if tret != nil {
		return cuda.Download(job.Tret, tret, 0)
	}
	return nil
}

var _ radiation.Device = (*Device)(nil)
