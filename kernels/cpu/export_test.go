package cpu

import (
	"unsafe"

	"github.com/fieldgo/fieldgo/kernels"
)

// bufferSlice exposes a CPU buffer's memory to the tests.
func BufferSlice(b kernels.Buffer) []float64 {
	cb := b.(*buffer)
	return unsafe.Slice((*float64)(unsafe.Pointer(cb.ptr)), cb.n)
}
