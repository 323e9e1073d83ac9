package cuda

import (
	"github.com/fieldgo/fieldgo/errs"
)

// Precision is the storage precision of a Program's buffers on the device:
// the element type (fg_store in cuda_kernels.cu) of the field, the velocity,
// the stage gradients and every other field-sized buffer. Arithmetic is
// float64 in both: values are loaded into double registers, the point
// functions, the RK4 combination and all reductions (energy, max|grad|,
// power) run in double, and results are rounded to the storage type once,
// when stored. Host memory (Bind) is always float64: a float32 buffer rounds
// to nearest on Upload and widens exactly on Download.
type Precision int

const (
	Float64 Precision = iota // the default: buffers of doubles
	Float32                  // buffers of floats: half the bytes every step moves
)

func (p Precision) String() string {
	if p == Float32 {
		return "float32"
	}
	return "float64"
}

// Bytes is the size of one stored value.
func (p Precision) Bytes() int {
	if p == Float32 {
		return 4
	}
	return 8
}

// Epsilon is the unit roundoff of the storage type: 2^-24 for float32,
// 2^-53 for float64.
func (p Precision) Epsilon() float64 {
	if p == Float32 {
		return 0x1p-24
	}
	return 0x1p-53
}

// ParsePrecision reads "float64" (or "") and "float32".
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "float64":
		return Float64, nil
	case "float32":
		return Float32, nil
	}
	return Float64, errs.New(errs.Parameter, "unknown precision %q: use \"float64\" or \"float32\"", s)
}

// DeviceArray is where a buffer lives on the device: for consumers that take
// device memory without a copy (__arrow_c_device_array__). Len values of
// DType ("float64" or "float32"), contiguous from Ptr; a field is C columns of
// nx*ny values, x fastest. Valid until the buffer is released; the Program's
// work is ordered on the device's legacy default stream, which a consumer
// must synchronise with (Sync) before reading.
type DeviceArray struct {
	Ptr    uint64
	Len    int
	DType  string
	Device int // device ordinal
}
