package cuda

import "github.com/fieldgo/fieldgo/kernels"

// Precision is the storage precision of a Program's buffers on the device
// (kernels.Precision, the one precision type of every workload): the element
// type (fg_store in cuda_site.cu) of the field, the velocity, the stage
// gradients and every other field-sized buffer. Arithmetic is float64 in
// both: values are loaded into double registers, the point functions, the RK4
// combination and all reductions (energy, max|grad|, power) run in double,
// and results are rounded to the storage type once, when stored. Host memory
// (Bind) is always float64: a float32 buffer rounds to nearest on Upload and
// widens exactly on Download.
type Precision = kernels.Precision

const (
	Float64 = kernels.Float64 // the default: buffers of doubles
	Float32 = kernels.Float32 // buffers of floats: half the bytes every step moves
)

// ParsePrecision reads "float64" (or "") and "float32".
func ParsePrecision(s string) (Precision, error) { return kernels.ParsePrecision(s) }

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
