package kernels

import "github.com/fieldgo/fieldgo/errs"

// Precision is a floating-point type a kernel works in, one for every
// workload: the storage type of a field program's buffers (kernels/cuda), the
// type N-body's pairwise sums are computed in, the type of the radiation
// kernel's arithmetic. What each workload computes in that type is its own to
// say (a float32 field program still does its arithmetic in float64).
type Precision int

const (
	Float64 Precision = iota // the default
	Float32
)

// String is the precision's name, the one users write: "float64" or
// "float32".
func (p Precision) String() string {
	if p == Float32 {
		return "float32"
	}
	return "float64"
}

// Bytes is the size of one value.
func (p Precision) Bytes() int {
	if p == Float32 {
		return 4
	}
	return 8
}

// UnitRoundoff is u of the precision: 2^-53 or 2^-24.
func (p Precision) UnitRoundoff() float64 {
	if p == Float32 {
		return 0x1p-24
	}
	return 0x1p-53
}

// ParsePrecision reads a precision's name: "float64" (or "") and "float32".
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "float64":
		return Float64, nil
	case "float32":
		return Float32, nil
	}
	return Float64, errs.New(errs.Parameter, "unknown precision %q: use \"float64\" or \"float32\"", s)
}
