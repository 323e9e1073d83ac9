// Package driver is fieldgo's thin CUDA driver and NVRTC layer: the one
// package under kernels/cuda with cgo. It dlopens libcuda.so.1 and NVRTC at
// run time (api.c; nothing from CUDA is needed to build it) and wraps the
// calls the backends use, one Go function per driver call, with typed
// handles (Device, Context, Module, Function, DevicePtr, Stream, Event,
// Graph, GraphExec) and no C type in its API: library loading, devices and
// their attributes, the primary context, modules, function attributes and
// occupancy, memory (device, pinned host, copies, memset), streams, events,
// graphs (capture, instantiate, launch), NVRTC compiles, and Launch, the one
// way a kernel is launched.
//
// Calls return a Result (the CUresult); Check turns one into an errs.Backend
// error naming the call. The caller makes a context current on its OS
// thread (CtxSetCurrent with the thread locked) before any call that needs
// one; this package keeps no state but the loaded libraries.
package driver

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "api.h"
*/
import "C"

import (
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
)

// Result is a CUDA driver result (CUresult); Success is 0.
type Result int

// Success is CUDA_SUCCESS; NotReady is CUDA_ERROR_NOT_READY (EventQuery).
const (
	Success  Result = C.CUDA_SUCCESS
	NotReady Result = C.CUDA_ERROR_NOT_READY
)

// String is the driver's name for r (cuGetErrorString).
func (r Result) String() string { return C.GoString(C.fg_cuErrorString(C.CUresult(r))) }

// Check turns r into an errs.Backend error naming the call what ("what:
// message (CUDA error n)"), nil for Success.
func Check(r Result, what string) error {
	if r == Success {
		return nil
	}
	return errs.New(errs.Backend, "%s: %s (CUDA error %d)", what, r.String(), int(r))
}

// Typed handles. The zero value of each is no object (the zero Stream is
// the default stream); handles compare with ==.
type (
	Device    int32  // CUdevice
	DevicePtr uint64 // CUdeviceptr
	Context   struct{ h C.CUcontext }
	Module    struct{ h C.CUmodule }
	Stream    struct{ h C.CUstream }
	Event     struct{ h C.CUevent }
	Graph     struct{ h C.CUgraph }
	GraphExec struct{ h C.CUgraphExec }
)

// Nil reports whether the handle is the zero value.
func (c Context) Nil() bool   { return c.h == nil }
func (m Module) Nil() bool    { return m.h == nil }
func (s Stream) Nil() bool    { return s.h == nil }
func (e Event) Nil() bool     { return e.h == nil }
func (g Graph) Nil() bool     { return g.h == nil }
func (e GraphExec) Nil() bool { return e.h == nil }

// Function is a kernel entry point of a loaded Module: its handle, name and
// the argument type registered for the name when it was looked up (Launch
// checks against it; registration happens at package initialisation).
type Function struct {
	h    C.CUfunction
	name string
	at   *ArgType
}

// Name is the entry point's name.
func (f Function) Name() string { return f.name }

// Valid reports whether f names a loaded kernel.
func (f Function) Valid() bool { return f.h != nil }

// DeviceAttr is a CUdevice_attribute; FuncAttr a CUfunction_attribute.
type (
	DeviceAttr int
	FuncAttr   int
)

// The attributes the backends read.
const (
	AttrMultiprocessorCount          DeviceAttr = C.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	AttrMaxThreadsPerMultiprocessor  DeviceAttr = C.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
	AttrComputeCapabilityMajor       DeviceAttr = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	AttrComputeCapabilityMinor       DeviceAttr = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
	AttrMaxSharedMemoryPerBlockOptin DeviceAttr = C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN

	FuncMaxThreadsPerBlock     FuncAttr = C.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	FuncSharedSizeBytes        FuncAttr = C.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
	FuncLocalSizeBytes         FuncAttr = C.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
	FuncNumRegs                FuncAttr = C.CU_FUNC_ATTRIBUTE_NUM_REGS
	FuncMaxDynamicSharedMemory FuncAttr = C.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
)

// EventDisableTiming is CU_EVENT_DISABLE_TIMING (EventCreate's flags).
const EventDisableTiming = C.CU_EVENT_DISABLE_TIMING

func cstr(s string) (*C.char, func()) {
	p := C.CString(s)
	return p, func() { C.free(unsafe.Pointer(p)) }
}

// LoadCUDA dlopens the driver library at path ("libcuda.so.1") and resolves
// its symbols; the error is the loader's message.
func LoadCUDA(path string) error {
	var buf [512]C.char
	cp, free := cstr(path)
	defer free()
	if C.fg_cuda_load(cp, &buf[0], C.int(len(buf))) != 0 {
		return loadError(C.GoString(&buf[0]))
	}
	return nil
}

// LoadNVRTC dlopens NVRTC at path (a soname or a file) and resolves its
// symbols; the error is the loader's message.
func LoadNVRTC(path string) error {
	var buf [512]C.char
	cp, free := cstr(path)
	defer free()
	if C.fg_nvrtc_load(cp, &buf[0], C.int(len(buf))) != 0 {
		return loadError(C.GoString(&buf[0]))
	}
	return nil
}

// loadError is a loader's message as an error (the caller words the errs
// error around it).
type loadError string

func (e loadError) Error() string { return string(e) }

// Preload dlopens the library at path so that a later lookup of its soname
// finds it loaded; it reports whether it loaded.
func Preload(path string) bool {
	cp, free := cstr(path)
	defer free()
	return C.fg_preload(cp) == 0
}

// Init is cuInit(0).
func Init() Result { return Result(C.fg_cuInit(0)) }

// DriverVersion is cuDriverGetVersion (13000 for 13.0).
func DriverVersion() (int, Result) {
	var v C.int
	r := C.fg_cuDriverGetVersion(&v)
	return int(v), Result(r)
}

// DeviceCount is cuDeviceGetCount.
func DeviceCount() (int, Result) {
	var n C.int
	r := C.fg_cuDeviceGetCount(&n)
	return int(n), Result(r)
}

// DeviceGet is cuDeviceGet.
func DeviceGet(ordinal int) (Device, Result) {
	var d C.CUdevice
	r := C.fg_cuDeviceGet(&d, C.int(ordinal))
	return Device(d), Result(r)
}

// Name is the device's name (cuDeviceGetName).
func (d Device) Name() string {
	var name [256]C.char
	C.fg_cuDeviceGetName(&name[0], C.int(len(name)), C.CUdevice(d))
	return C.GoString(&name[0])
}

// Attribute is cuDeviceGetAttribute (0 where the call fails).
func (d Device) Attribute(a DeviceAttr) int {
	var v C.int
	C.fg_cuDeviceGetAttribute(&v, C.int(a), C.CUdevice(d))
	return int(v)
}

// PrimaryCtxRetain is cuDevicePrimaryCtxRetain.
func (d Device) PrimaryCtxRetain() (Context, Result) {
	var c C.CUcontext
	r := C.fg_cuDevicePrimaryCtxRetain(&c, C.CUdevice(d))
	return Context{c}, Result(r)
}

// PrimaryCtxRelease is cuDevicePrimaryCtxRelease.
func (d Device) PrimaryCtxRelease() Result {
	return Result(C.fg_cuDevicePrimaryCtxRelease(C.CUdevice(d)))
}

// CtxSetCurrent is cuCtxSetCurrent: c becomes current on this OS thread.
func CtxSetCurrent(c Context) Result { return Result(C.fg_cuCtxSetCurrent(c.h)) }

// CtxSynchronize is cuCtxSynchronize.
func CtxSynchronize() Result { return Result(C.fg_cuCtxSynchronize()) }

// MemGetInfo is cuMemGetInfo: free and total device memory in bytes.
func MemGetInfo() (free, total int64, r Result) {
	var f, t C.size_t
	r = Result(C.fg_cuMemGetInfo(&f, &t))
	return int64(f), int64(t), r
}

// ModuleLoadData is cuModuleLoadData of a CUBIN image.
func ModuleLoadData(image []byte) (Module, Result) {
	if len(image) == 0 {
		return Module{}, Result(1) // CUDA_ERROR_INVALID_VALUE
	}
	var m C.CUmodule
	r := C.fg_cuModuleLoadData(&m, unsafe.Pointer(&image[0]))
	return Module{m}, Result(r)
}

// Unload is cuModuleUnload.
func (m Module) Unload() Result { return Result(C.fg_cuModuleUnload(m.h)) }

// Function is cuModuleGetFunction.
func (m Module) Function(name string) (Function, Result) {
	cn, free := cstr(name)
	defer free()
	var fn C.CUfunction
	r := C.fg_cuModuleGetFunction(&fn, m.h, cn)
	if r != C.CUDA_SUCCESS {
		return Function{}, Result(r)
	}
	at, _ := lookup(name)
	return Function{h: fn, name: name, at: at}, Success
}

// Attribute is cuFuncGetAttribute (0 where the call fails).
func (f Function) Attribute(a FuncAttr) int {
	var v C.int
	C.fg_cuFuncGetAttribute(&v, C.int(a), f.h)
	return int(v)
}

// SetAttribute is cuFuncSetAttribute.
func (f Function) SetAttribute(a FuncAttr, v int) Result {
	return Result(C.fg_cuFuncSetAttribute(f.h, C.int(a), C.int(v)))
}

// MaxPotentialBlockSize is cuOccupancyMaxPotentialBlockSize with smem bytes
// of dynamic shared memory for every block size and a block limit (0: none).
func (f Function) MaxPotentialBlockSize(smem, limit int) (minGrid, block int, r Result) {
	var g, b C.int
	r = Result(C.fg_cuOccupancyMaxPotentialBlockSize(&g, &b, f.h, C.size_t(smem), C.int(limit)))
	return int(g), int(b), r
}

// MaxActiveBlocksPerMultiprocessor is
// cuOccupancyMaxActiveBlocksPerMultiprocessor (0 where the call fails).
func (f Function) MaxActiveBlocksPerMultiprocessor(block, smem int) int {
	var nb C.int
	C.fg_cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, f.h, C.int(block), C.size_t(smem))
	return int(nb)
}

// MemAlloc is cuMemAlloc.
func MemAlloc(bytes int) (DevicePtr, Result) {
	var d C.CUdeviceptr
	r := C.fg_cuMemAlloc(&d, C.size_t(bytes))
	return DevicePtr(d), Result(r)
}

// MemFree is cuMemFree.
func MemFree(p DevicePtr) Result { return Result(C.fg_cuMemFree(C.CUdeviceptr(p))) }

// MemsetD8 is cuMemsetD8: n bytes from p set to v.
func MemsetD8(p DevicePtr, v byte, n int) Result {
	return Result(C.fg_cuMemsetD8(C.CUdeviceptr(p), C.uchar(v), C.size_t(n)))
}

// MemAllocHost is cuMemAllocHost: pinned host memory (C memory).
func MemAllocHost(bytes int) (unsafe.Pointer, Result) {
	var p unsafe.Pointer
	r := C.fg_cuMemAllocHost(&p, C.size_t(bytes))
	return p, Result(r)
}

// MemFreeHost is cuMemFreeHost.
func MemFreeHost(p unsafe.Pointer) Result { return Result(C.fg_cuMemFreeHost(p)) }

// MemHostRegister is cuMemHostRegister (page-locks host memory the caller
// owns, C memory outliving the registration).
func MemHostRegister(p unsafe.Pointer, bytes int, flags uint) Result {
	return Result(C.fg_cuMemHostRegister(p, C.size_t(bytes), C.uint(flags)))
}

// MemHostUnregister is cuMemHostUnregister.
func MemHostUnregister(p unsafe.Pointer) Result { return Result(C.fg_cuMemHostUnregister(p)) }

// MemcpyHtoD is cuMemcpyHtoD of n bytes.
func MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, n int) Result {
	return Result(C.fg_cuMemcpyHtoD(C.CUdeviceptr(dst), src, C.size_t(n)))
}

// MemcpyDtoH is cuMemcpyDtoH of n bytes.
func MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, n int) Result {
	return Result(C.fg_cuMemcpyDtoH(dst, C.CUdeviceptr(src), C.size_t(n)))
}

// MemcpyHtoDAsync is cuMemcpyHtoDAsync of n bytes on s (src pinned).
func MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n int, s Stream) Result {
	return Result(C.fg_cuMemcpyHtoDAsync(C.CUdeviceptr(dst), src, C.size_t(n), s.h))
}

// MemcpyDtoHAsync is cuMemcpyDtoHAsync of n bytes on s (dst pinned).
func MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n int, s Stream) Result {
	return Result(C.fg_cuMemcpyDtoHAsync(dst, C.CUdeviceptr(src), C.size_t(n), s.h))
}

// MemcpyDtoDAsync is cuMemcpyDtoDAsync of n bytes on s.
func MemcpyDtoDAsync(dst, src DevicePtr, n int, s Stream) Result {
	return Result(C.fg_cuMemcpyDtoDAsync(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), s.h))
}

// StreamCreate is cuStreamCreate (flags 0: a blocking stream, ordered with
// the default stream).
func StreamCreate(flags uint) (Stream, Result) {
	var s C.CUstream
	r := C.fg_cuStreamCreate(&s, C.uint(flags))
	return Stream{s}, Result(r)
}

// Destroy is cuStreamDestroy.
func (s Stream) Destroy() Result { return Result(C.fg_cuStreamDestroy(s.h)) }

// Synchronize is cuStreamSynchronize.
func (s Stream) Synchronize() Result { return Result(C.fg_cuStreamSynchronize(s.h)) }

// EventCreate is cuEventCreate.
func EventCreate(flags uint) (Event, Result) {
	var e C.CUevent
	r := C.fg_cuEventCreate(&e, C.uint(flags))
	return Event{e}, Result(r)
}

// Destroy is cuEventDestroy.
func (e Event) Destroy() Result { return Result(C.fg_cuEventDestroy(e.h)) }

// Record is cuEventRecord on s.
func (e Event) Record(s Stream) Result { return Result(C.fg_cuEventRecord(e.h, s.h)) }

// Synchronize is cuEventSynchronize.
func (e Event) Synchronize() Result { return Result(C.fg_cuEventSynchronize(e.h)) }

// Query is cuEventQuery (NotReady while work before it runs).
func (e Event) Query() Result { return Result(C.fg_cuEventQuery(e.h)) }

// ElapsedTime is cuEventElapsedTime from a to b in milliseconds.
func ElapsedTime(a, b Event) (float32, Result) {
	var ms C.float
	r := C.fg_cuEventElapsedTime(&ms, a.h, b.h)
	return float32(ms), Result(r)
}

// GraphsAvailable reports whether the driver has the graph calls.
func GraphsAvailable() bool { return C.fg_cuGraphsAvailable() != 0 }

// BeginCapture is cuStreamBeginCapture in relaxed mode (other threads' driver
// calls, which the Go runtime may run, do not invalidate the capture).
func (s Stream) BeginCapture() Result { return Result(C.fg_cuStreamBeginCapture(s.h)) }

// EndCapture is cuStreamEndCapture: the graph captured (0 if none).
func (s Stream) EndCapture() (Graph, Result) {
	var g C.CUgraph
	r := C.fg_cuStreamEndCapture(s.h, &g)
	return Graph{g}, Result(r)
}

// Instantiate is cuGraphInstantiateWithFlags(0).
func (g Graph) Instantiate() (GraphExec, Result) {
	var e C.CUgraphExec
	r := C.fg_cuGraphInstantiate(&e, g.h)
	return GraphExec{e}, Result(r)
}

// Destroy is cuGraphDestroy.
func (g Graph) Destroy() Result { return Result(C.fg_cuGraphDestroy(g.h)) }

// Launch is cuGraphLaunch on s.
func (e GraphExec) Launch(s Stream) Result { return Result(C.fg_cuGraphLaunch(e.h, s.h)) }

// Destroy is cuGraphExecDestroy.
func (e GraphExec) Destroy() Result { return Result(C.fg_cuGraphExecDestroy(e.h)) }
