package cuda

/*
#include <stdlib.h>
#include <string.h>
#include "api.h"
*/
import "C"

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
)

// Module is a standalone CUDA translation unit compiled by NVRTC (through the
// same CUBIN disk cache as Programs, keyed the same way) and loaded on the
// device: the generic API for packages that bring their own kernels
// (kernels/src/nbody.cu, radiation.cu). It owns no memory of its own beyond
// the module; buffers from Alloc are freed by Free or Close.
//
// Every operation runs on the device's default stream, in order: a Launch
// returns once queued, a Download waits for the work before it, Synchronize
// waits for all of it. A Module is safe for concurrent use (its calls are
// serialised).
type Module struct {
	b      *Backend
	mod    C.CUmodule
	log    string
	cached bool
	ptx    map[string]Resources

	mu     sync.Mutex
	funcs  map[string]*Function
	bufs   map[*DeviceBuffer]struct{}
	closed bool
}

// Function is one kernel entry point of a Module.
type Function struct {
	m    *Module
	fn   C.CUfunction
	name string
}

// DeviceBuffer is device memory of a Module.
type DeviceBuffer struct {
	m *Module
	d C.CUdeviceptr
	n int // bytes
}

// Event is a point in the default stream's work, for timing.
type Event struct {
	m  *Module
	ev C.CUevent
}

// ModuleOption changes how LoadModule builds a module.
type ModuleOption func(*moduleConfig)

type moduleConfig struct{ fresh bool }

// FreshCompile skips the CUBIN cache (the result is still written to it):
// for measuring the compile time.
func FreshCompile() ModuleOption { return func(c *moduleConfig) { c.fresh = true } }

// LoadModule compiles source (CUDA C++ with extern "C" entry points) with the
// backend's NVRTC options, or takes its CUBIN from the cache, and loads it.
func (b *Backend) LoadModule(source string, opts ...ModuleOption) (*Module, error) {
	var cfg moduleConfig
	for _, o := range opts {
		o(&cfg)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := b.bind(); err != nil {
		return nil, err
	}
	image, log, cached, err := b.cubin(source, cfg.fresh)
	if err != nil {
		return nil, err
	}
	var mod C.CUmodule
	rc := C.fg_cuModuleLoadData(&mod, unsafe.Pointer(&image[0]))
	if rc != C.CUDA_SUCCESS && cached {
		// A cached image that will not load: compile afresh once.
		if image, log, _, err = b.cubin(source, true); err != nil {
			return nil, err
		}
		cached = false
		rc = C.fg_cuModuleLoadData(&mod, unsafe.Pointer(&image[0]))
	}
	if err := check(rc, "cuModuleLoadData"); err != nil {
		return nil, err
	}
	return &Module{b: b, mod: mod, log: log, cached: cached, ptx: ParsePtxasLog(log),
		funcs: map[string]*Function{}, bufs: map[*DeviceBuffer]struct{}{}}, nil
}

// Backend is the backend the module was loaded on.
func (m *Module) Backend() *Backend { return m.b }

// Cached reports whether the CUBIN came from the disk cache.
func (m *Module) Cached() bool { return m.cached }

// Log is NVRTC's log (ptxas's resource report included).
func (m *Module) Log() string { return m.log }

// do runs f with the module's lock held, on the device (Backend.onDevice).
func (m *Module) do(f func() error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errs.New(errs.Released, "the CUDA module has been closed")
	}
	return m.b.onDevice(f)
}

// Function returns the entry point name (an extern "C" __global__ function).
func (m *Module) Function(name string) (*Function, error) {
	var out *Function
	err := m.do(func() error {
		if f, ok := m.funcs[name]; ok {
			out = f
			return nil
		}
		cn := C.CString(name)
		defer C.free(unsafe.Pointer(cn))
		var fn C.CUfunction
		if err := check(C.fg_cuModuleGetFunction(&fn, m.mod, cn), "cuModuleGetFunction "+name); err != nil {
			return err
		}
		out = &Function{m: m, fn: fn, name: name}
		m.funcs[name] = out
		return nil
	})
	return out, err
}

// Name is the entry point's name.
func (f *Function) Name() string { return f.name }

func (f *Function) attr(a C.int) int {
	var v C.int
	C.fg_cuFuncGetAttribute(&v, a, f.fn)
	return int(v)
}

// Describe returns the kernel's registers and local memory
// (cuFuncGetAttribute), spills (ptxas log), static shared memory, and the
// occupancy at the block size the occupancy API suggests (whole warps).
func (f *Function) Describe() KernelInfo {
	var in KernelInfo
	_ = f.m.do(func() error {
		in = f.describe(0, 0)
		return nil
	})
	return in
}

// DescribeAt is Describe at a given block size and dynamic shared memory.
func (f *Function) DescribeAt(blockThreads, dynShared int) KernelInfo {
	var in KernelInfo
	_ = f.m.do(func() error {
		in = f.describe(blockThreads, dynShared)
		return nil
	})
	return in
}

func (f *Function) describe(block, smem int) KernelInfo {
	r := f.m.ptx[f.name]
	in := KernelInfo{Name: f.name, Registers: f.attr(C.CU_FUNC_ATTRIBUTE_NUM_REGS),
		LocalBytes: f.attr(C.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES), SharedBytes: f.attr(C.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
		SpillStores: r.SpillStores, SpillLoads: r.SpillLoads, DynShared: smem}
	if block <= 0 {
		var minGrid, bs C.int
		if C.fg_cuOccupancyMaxPotentialBlockSize(&minGrid, &bs, f.fn, C.size_t(smem), 0) == C.CUDA_SUCCESS {
			block = int(bs) / 32 * 32
		}
		if block < 32 {
			block = 32
		}
	}
	in.BlockSize = block
	var nb C.int
	C.fg_cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, f.fn, C.int(block), C.size_t(smem))
	in.BlocksPerSM = int(nb)
	if f.m.b.maxTPM > 0 {
		in.Occupancy = float64(int(nb)*block) / float64(f.m.b.maxTPM)
	}
	return in
}

// Alloc returns bytes of zeroed device memory.
func (m *Module) Alloc(bytes int) (*DeviceBuffer, error) {
	if bytes < 0 {
		return nil, errs.New(errs.Shape, "negative allocation of %d bytes", bytes)
	}
	var buf *DeviceBuffer
	err := m.do(func() error {
		sz := max(bytes, 8)
		var d C.CUdeviceptr
		if err := check(C.fg_cuMemAlloc(&d, C.size_t(sz)), "cuMemAlloc"); err != nil {
			return err
		}
		if err := check(C.fg_cuMemsetD8(d, 0, C.size_t(sz)), "cuMemsetD8"); err != nil {
			C.fg_cuMemFree(d)
			return err
		}
		buf = &DeviceBuffer{m: m, d: d, n: bytes}
		m.bufs[buf] = struct{}{}
		return nil
	})
	return buf, err
}

// Len is the buffer's size in bytes.
func (d *DeviceBuffer) Len() int { return d.n }

// Ptr is the device address (0 once freed).
func (d *DeviceBuffer) Ptr() uint64 { return uint64(d.d) }

func (d *DeviceBuffer) span(off, n int) error {
	if d.d == 0 {
		return errs.New(errs.Released, "device buffer has been freed")
	}
	if off < 0 || n < 0 || off+n > d.n {
		return errs.New(errs.Shape, "%d bytes at offset %d do not fit a device buffer of %d bytes", n, off, d.n)
	}
	return nil
}

// Upload copies len(src) values to the buffer at byte offset off.
func Upload[T any](d *DeviceBuffer, off int, src []T) error {
	var z T
	n := len(src) * int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return d.m.do(func() error {
		if err := d.span(off, n); err != nil {
			return err
		}
		return check(C.fg_cuMemcpyHtoD(d.d+C.CUdeviceptr(off), unsafe.Pointer(unsafe.SliceData(src)), C.size_t(n)), "cuMemcpyHtoD")
	})
}

// Download copies len(dst) values from the buffer at byte offset off, after
// the work queued before it.
func Download[T any](dst []T, d *DeviceBuffer, off int) error {
	var z T
	n := len(dst) * int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return d.m.do(func() error {
		if err := d.span(off, n); err != nil {
			return err
		}
		return check(C.fg_cuMemcpyDtoH(unsafe.Pointer(unsafe.SliceData(dst)), d.d+C.CUdeviceptr(off), C.size_t(n)), "cuMemcpyDtoH")
	})
}

// DownloadFrom copies len(dst) values from device address ptr of m's
// context (memory handed out by address, such as a cube left on the
// device), after the work queued before it.
func DownloadFrom[T any](dst []T, m *Module, ptr uint64) error {
	var z T
	n := len(dst) * int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return m.do(func() error {
		return check(C.fg_cuMemcpyDtoH(unsafe.Pointer(unsafe.SliceData(dst)), C.CUdeviceptr(ptr), C.size_t(n)), "cuMemcpyDtoH")
	})
}

// Memset sets n bytes from byte offset off to v.
func (d *DeviceBuffer) Memset(off, n int, v byte) error {
	return d.m.do(func() error {
		if err := d.span(off, n); err != nil {
			return err
		}
		return check(C.fg_cuMemsetD8(d.d+C.CUdeviceptr(off), C.uchar(v), C.size_t(n)), "cuMemsetD8")
	})
}

// Free releases the buffer; freeing twice is a no-op.
func (d *DeviceBuffer) Free() error {
	if d == nil {
		return nil
	}
	d.m.mu.Lock()
	closed := d.m.closed
	d.m.mu.Unlock()
	if closed || d.d == 0 {
		return nil
	}
	return d.m.do(func() error { return d.free() })
}

func (d *DeviceBuffer) free() error {
	if d.d == 0 {
		return nil
	}
	err := check(C.fg_cuMemFree(d.d), "cuMemFree")
	d.d = 0
	delete(d.m.bufs, d)
	return err
}

// Launch queues fn on a grid of blocks. Each argument is one kernel parameter,
// passed by value: *DeviceBuffer (its device address, nil for NULL), int32,
// int64, uint32, uint64, float32, float64, or []byte holding a struct laid
// out as the kernel declares it (alignment 8 assumed for a struct; the
// caller mirrors the C layout).
func (m *Module) Launch(fn *Function, grid, block [3]uint32, sharedBytes int, args ...any) error {
	if fn == nil || fn.m != m {
		return errs.New(errs.Backend, "function of another module handed to Launch")
	}
	for _, v := range append(grid[:], block[:]...) {
		if v == 0 {
			return errs.New(errs.Parameter, "launch of %s with an empty grid or block %v x %v", fn.name, grid, block)
		}
	}
	// Pack the values into one block of C memory (8-byte slots, structs
	// rounded up), and point the parameter array into it.
	var vals []byte
	offs := make([]int, len(args))
	put := func(i int, b []byte) {
		offs[i] = len(vals)
		vals = append(vals, b...)
		for len(vals)%8 != 0 {
			vals = append(vals, 0)
		}
	}
	le := binary.LittleEndian
	for i, a := range args {
		var b [8]byte
		switch v := a.(type) {
		case *DeviceBuffer:
			if v != nil {
				if v.d == 0 {
					return errs.New(errs.Released, "argument %d of %s: device buffer has been freed", i, fn.name)
				}
				le.PutUint64(b[:], uint64(v.d))
			}
			put(i, b[:8])
		case int32:
			le.PutUint32(b[:], uint32(v))
			put(i, b[:4])
		case uint32:
			le.PutUint32(b[:], v)
			put(i, b[:4])
		case int64:
			le.PutUint64(b[:], uint64(v))
			put(i, b[:8])
		case uint64:
			le.PutUint64(b[:], v)
			put(i, b[:8])
		case float32:
			le.PutUint32(b[:], math.Float32bits(v))
			put(i, b[:4])
		case float64:
			le.PutUint64(b[:], math.Float64bits(v))
			put(i, b[:8])
		case []byte:
			if len(v) == 0 {
				return errs.New(errs.Parameter, "argument %d of %s: empty struct", i, fn.name)
			}
			put(i, v)
		default:
			return errs.New(errs.Parameter, "argument %d of %s: unsupported type %T", i, fn.name, a)
		}
	}
	return m.do(func() error {
		n := len(args)
		cvals := C.malloc(C.size_t(max(len(vals), 8)))
		defer C.free(cvals)
		if len(vals) > 0 {
			C.memcpy(cvals, unsafe.Pointer(&vals[0]), C.size_t(len(vals)))
		}
		cparams := C.malloc(C.size_t(max(n, 1)) * C.size_t(unsafe.Sizeof(uintptr(0))))
		defer C.free(cparams)
		ps := unsafe.Slice((*unsafe.Pointer)(cparams), max(n, 1))
		for i := range n {
			ps[i] = unsafe.Add(cvals, offs[i])
		}
		return check(C.fg_cuLaunch3(fn.fn, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
			C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.uint(sharedBytes), nil, (*unsafe.Pointer)(cparams)),
			"launch "+fn.name)
	})
}

// Synchronize waits for all queued work; a kernel's fault shows here.
func (m *Module) Synchronize() error {
	return m.do(func() error { return check(C.fg_cuCtxSynchronize(), "cuCtxSynchronize") })
}

// NewEvent creates a timing event.
func (m *Module) NewEvent() (*Event, error) {
	e := &Event{m: m}
	err := m.do(func() error { return check(C.fg_cuEventCreate(&e.ev, 0), "cuEventCreate") })
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Record marks the current end of the queued work.
func (e *Event) Record() error {
	return e.m.do(func() error { return check(C.fg_cuEventRecord(e.ev, nil), "cuEventRecord") })
}

// Synchronize waits until the work before the event's Record is done.
func (e *Event) Synchronize() error {
	return e.m.do(func() error { return check(C.fg_cuEventSynchronize(e.ev), "cuEventSynchronize") })
}

// Elapsed returns the device time from start to end in seconds (both
// recorded; it waits for end).
func Elapsed(start, end *Event) (float64, error) {
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	var ms C.float
	err := end.m.do(func() error { return check(C.fg_cuEventElapsedTime(&ms, start.ev, end.ev), "cuEventElapsedTime") })
	return float64(ms) / 1e3, err
}

// Destroy releases the event.
func (e *Event) Destroy() {
	if e == nil || e.ev == nil {
		return
	}
	_ = e.m.do(func() error { C.fg_cuEventDestroy(e.ev); return nil })
	e.ev = nil
}

// Close frees the module's buffers and unloads it.
func (m *Module) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := m.b.bind(); err != nil {
		return err
	}
	for d := range m.bufs {
		d.free()
	}
	m.closed = true
	return check(C.fg_cuModuleUnload(m.mod), "cuModuleUnload")
}

// SMs is the device's multiprocessor count; MaxThreadsPerSM its resident
// thread limit per multiprocessor.
func (b *Backend) SMs() int { return b.sms }

// MaxThreadsPerSM is the resident-thread limit of one multiprocessor.
func (b *Backend) MaxThreadsPerSM() int { return b.maxTPM }
