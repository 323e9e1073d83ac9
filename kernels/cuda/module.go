package cuda

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
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
	mod    driver.Module
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
	fn   driver.Function
	name string
}

// DeviceBuffer is device memory of a Module.
type DeviceBuffer struct {
	m *Module
	d driver.DevicePtr
	n int // bytes
}

// Event is a point in the default stream's work, for timing.
type Event struct {
	m  *Module
	ev driver.Event
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
	mod, rc := driver.ModuleLoadData(image)
	if rc != driver.Success && cached {
		// A cached image that will not load: compile afresh once.
		if image, log, _, err = b.cubin(source, true); err != nil {
			return nil, err
		}
		cached = false
		mod, rc = driver.ModuleLoadData(image)
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
		fn, rc := m.mod.Function(name)
		if err := check(rc, "cuModuleGetFunction "+name); err != nil {
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
	in := KernelInfo{Name: f.name, Registers: f.fn.Attribute(driver.FuncNumRegs),
		LocalBytes: f.fn.Attribute(driver.FuncLocalSizeBytes), SharedBytes: f.fn.Attribute(driver.FuncSharedSizeBytes),
		SpillStores: r.SpillStores, SpillLoads: r.SpillLoads, DynShared: smem}
	if block <= 0 {
		if _, bs, rc := f.fn.MaxPotentialBlockSize(smem, 0); rc == driver.Success {
			block = bs / 32 * 32
		}
		if block < 32 {
			block = 32
		}
	}
	in.BlockSize = block
	nb := f.fn.MaxActiveBlocksPerMultiprocessor(block, smem)
	in.BlocksPerSM = nb
	if f.m.b.maxTPM > 0 {
		in.Occupancy = float64(nb*block) / float64(f.m.b.maxTPM)
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
		d, rc := driver.MemAlloc(sz)
		if err := check(rc, "cuMemAlloc"); err != nil {
			return err
		}
		if err := check(driver.MemsetD8(d, 0, sz), "cuMemsetD8"); err != nil {
			driver.MemFree(d)
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

// Addr is Ptr as a kernel parameter (a DevicePtr field of a parameter list).
func (d *DeviceBuffer) Addr() driver.DevicePtr { return d.d }

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
		return check(driver.MemcpyHtoD(d.d+driver.DevicePtr(off), unsafe.Pointer(unsafe.SliceData(src)), n), "cuMemcpyHtoD")
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
		return check(driver.MemcpyDtoH(unsafe.Pointer(unsafe.SliceData(dst)), d.d+driver.DevicePtr(off), n), "cuMemcpyDtoH")
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
		return check(driver.MemcpyDtoH(unsafe.Pointer(unsafe.SliceData(dst)), driver.DevicePtr(ptr), n), "cuMemcpyDtoH")
	})
}

// Memset sets n bytes from byte offset off to v.
func (d *DeviceBuffer) Memset(off, n int, v byte) error {
	return d.m.do(func() error {
		if err := d.span(off, n); err != nil {
			return err
		}
		return check(driver.MemsetD8(d.d+driver.DevicePtr(off), v, n), "cuMemsetD8")
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
	err := check(driver.MemFree(d.d), "cuMemFree")
	d.d = 0
	delete(d.m.bufs, d)
	return err
}

// Launch queues fn on a grid of blocks of block threads with sharedBytes of
// dynamic shared memory on the default stream. args points to the Go struct
// registered for the kernel (driver.Register: the kernel's argument block,
// or one field per parameter), whose layout the package's layout test holds
// to the CUDA compiler's; a launch with any other type is refused. Device
// addresses go in as driver.DevicePtr (DeviceBuffer.Ptr).
func (m *Module) Launch(fn *Function, grid, block [3]uint32, sharedBytes int, args any) error {
	if fn == nil || fn.m != m {
		return errs.New(errs.Backend, "function of another module handed to Launch")
	}
	for _, v := range append(grid[:], block[:]...) {
		if v == 0 {
			return errs.New(errs.Parameter, "launch of %s with an empty grid or block %v x %v", fn.name, grid, block)
		}
	}
	return m.do(func() error { return driver.Launch(fn.fn, grid, block, sharedBytes, driver.Stream{}, args) })
}

// Synchronize waits for all queued work; a kernel's fault shows here.
func (m *Module) Synchronize() error {
	return m.do(func() error { return check(driver.CtxSynchronize(), "cuCtxSynchronize") })
}

// NewEvent creates a timing event.
func (m *Module) NewEvent() (*Event, error) {
	e := &Event{m: m}
	err := m.do(func() error {
		var rc driver.Result
		e.ev, rc = driver.EventCreate(0)
		return check(rc, "cuEventCreate")
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Record marks the current end of the queued work.
func (e *Event) Record() error {
	return e.m.do(func() error { return check(e.ev.Record(driver.Stream{}), "cuEventRecord") })
}

// Synchronize waits until the work before the event's Record is done.
func (e *Event) Synchronize() error {
	return e.m.do(func() error { return check(e.ev.Synchronize(), "cuEventSynchronize") })
}

// Elapsed returns the device time from start to end in seconds (both
// recorded; it waits for end).
func Elapsed(start, end *Event) (float64, error) {
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	var ms float32
	err := end.m.do(func() error {
		var rc driver.Result
		ms, rc = driver.ElapsedTime(start.ev, end.ev)
		return check(rc, "cuEventElapsedTime")
	})
	return float64(ms) / 1e3, err
}

// Destroy releases the event.
func (e *Event) Destroy() {
	if e == nil || e.ev.Nil() {
		return
	}
	_ = e.m.do(func() error { e.ev.Destroy(); return nil })
	e.ev = driver.Event{}
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
	return check(m.mod.Unload(), "cuModuleUnload")
}

// SMs is the device's multiprocessor count; MaxThreadsPerSM its resident
// thread limit per multiprocessor.
func (b *Backend) SMs() int { return b.sms }

// MaxThreadsPerSM is the resident-thread limit of one multiprocessor.
func (b *Backend) MaxThreadsPerSM() int { return b.maxTPM }
