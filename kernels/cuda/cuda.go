// Package cuda is the NVIDIA GPU kernels.Backend. It reaches libcuda.so.1 and
// NVRTC through kernels/cuda/driver, which dlopens them at run time (nothing
// from CUDA is needed to build it) and is the only package with cgo; this
// one is pure Go. It compiles the
// point source and the templates of kernels/src to a CUBIN for the device's
// architecture (cached on disk), and runs every Program operation on device
// buffers with deterministic on-device reductions.
//
// When the libraries or a device are missing, New and Compile return
// errs.Backend saying why, so a caller can fall back to the CPU backend.
package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/diskcache"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
)

// Options configure the CUDA backend. The zero value is the default.
type Options struct {
	Device   int    // device ordinal
	CacheDir string // "": the cuda/ folder of the cache root (internal/diskcache)
}

// Backend compiles and runs kernels on one NVIDIA GPU.
type Backend struct {
	opt     Options
	dev     driver.Device
	ctx     driver.Context
	name    string
	arch    string // "sm_90"
	sms     int
	maxTPM  int // threads per multiprocessor
	smemOpt int // shared memory a block may opt in to (bytes)
	driver  int // cuDriverGetVersion
	release sync.Once
}

var libcuda struct {
	once sync.Once
	err  error
}

func loadDriver() error {
	libcuda.once.Do(func() {
		if err := driver.LoadCUDA("libcuda.so.1"); err != nil {
			libcuda.err = errs.New(errs.Backend, "no CUDA driver: %s", err)
			return
		}
		if rc := driver.Init(); rc != driver.Success {
			libcuda.err = errs.New(errs.Backend, "cuInit: %s", rc)
		}
	})
	return libcuda.err
}

// DriverVersion is the CUDA version the installed driver supports
// (cuDriverGetVersion: 13000 for 13.0), for bug reports; an error says why no
// driver could be used.
func DriverVersion() (int, error) {
	if err := loadDriver(); err != nil {
		return 0, err
	}
	v, rc := driver.DriverVersion()
	if err := check(rc, "cuDriverGetVersion"); err != nil {
		return 0, err
	}
	return v, nil
}

// check turns a driver result into an errs.Backend error.
func check(rc driver.Result, what string) error { return driver.Check(rc, what) }

// New opens device opt.Device: it loads the driver and NVRTC and retains the
// device's primary context.
func New(opt Options) (*Backend, error) {
	if err := loadDriver(); err != nil {
		return nil, err
	}
	if err := loadNVRTC(); err != nil {
		return nil, err
	}
	n, rc := driver.DeviceCount()
	if err := check(rc, "cuDeviceGetCount"); err != nil {
		return nil, err
	}
	if opt.Device < 0 || opt.Device >= n {
		return nil, errs.New(errs.Backend, "no CUDA device %d (%d present)", opt.Device, n)
	}
	b := &Backend{opt: opt}
	var err error
	b.dev, rc = driver.DeviceGet(opt.Device)
	if err = check(rc, "cuDeviceGet"); err != nil {
		return nil, err
	}
	b.name = b.dev.Name()
	attr := b.dev.Attribute
	b.arch = fmt.Sprintf("sm_%d%d", attr(driver.AttrComputeCapabilityMajor), attr(driver.AttrComputeCapabilityMinor))
	b.sms = attr(driver.AttrMultiprocessorCount)
	b.maxTPM = attr(driver.AttrMaxThreadsPerMultiprocessor)
	b.smemOpt = attr(driver.AttrMaxSharedMemoryPerBlockOptin)
	b.driver, _ = driver.DriverVersion()
	b.ctx, rc = b.dev.PrimaryCtxRetain()
	if err := check(rc, "cuDevicePrimaryCtxRetain"); err != nil {
		return nil, err
	}
	return b, nil
}

// Name is "cuda".
func (b *Backend) Name() string { return "cuda" }

// Ordinal is the device's ordinal (Options.Device).
func (b *Backend) Ordinal() int { return b.opt.Device }

// Device describes the GPU: name, architecture, multiprocessors, driver and
// NVRTC versions.
func (b *Backend) Device() string {
	return fmt.Sprintf("%s (%s, %d SMs, driver %d, NVRTC %d.%d at %s)", b.name, b.arch, b.sms, b.driver, nvrtc.major, nvrtc.minor, nvrtc.path)
}

// Arch is the device's architecture, for instance "sm_90".
func (b *Backend) Arch() string { return b.arch }

// Close releases the primary context. Programs compiled by b must be closed
// first.
func (b *Backend) Close() error {
	var err error
	b.release.Do(func() { err = check(b.dev.PrimaryCtxRelease(), "cuDevicePrimaryCtxRelease") })
	return err
}

// MemoryInUse is the device memory in use (total minus free, cuMemGetInfo):
// leak tests check that it returns to its starting value.
func (b *Backend) MemoryInUse() (int64, error) {
	free, total, err := b.memInfo()
	return total - free, err
}

// MemoryFree is the device memory free now (cuMemGetInfo): what a workload
// sizes its scratch by.
func (b *Backend) MemoryFree() (int64, error) {
	free, _, err := b.memInfo()
	return free, err
}

func (b *Backend) memInfo() (free, total int64, err error) {
	err = b.onDevice(func() error {
		var rc driver.Result
		free, total, rc = driver.MemGetInfo()
		return check(rc, "cuMemGetInfo")
	})
	return free, total, err
}

// onDevice runs f on a locked OS thread with b's context current: the one
// way Programs, their Flows and Modules reach the device. The driver's
// current context is per OS thread, and Go moves goroutines between threads
// unless they are locked.
func (b *Backend) onDevice(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := b.bind(); err != nil {
		return err
	}
	return f()
}

// bind makes b's context current on this OS thread; the caller holds the
// thread (runtime.LockOSThread) until its driver calls are done.
func (b *Backend) bind() error {
	return check(driver.CtxSetCurrent(b.ctx), "cuCtxSetCurrent")
}

// cacheDir is Options.CacheDir, else the cuda/ folder of the one cache root
// (internal/diskcache: $FIELDGO_CACHE or os.UserCacheDir()/fieldgo).
func (b *Backend) cacheDir() (string, error) {
	if b.opt.CacheDir != "" {
		return b.opt.CacheDir, nil
	}
	d, err := diskcache.Dir(diskcache.CUDA)
	if err != nil {
		return "", errs.Wrap(errs.Backend, err, "no cache directory (set FIELDGO_CACHE)")
	}
	return d, nil
}

// cacheKey hashes all that determines the CUBIN.
func (b *Backend) cacheKey(source string) string {
	return diskcache.Key(diskcache.CUDA, source, strings.Join(NVRTCOptions(b.arch), " "), b.arch,
		fmt.Sprintf("nvrtc %d.%d", nvrtc.major, nvrtc.minor), fmt.Sprintf("driver %d", b.driver))
}

// cubin returns the CUBIN and ptxas log for source, from the cache or NVRTC.
// fresh skips the cache (after a cached image failed to load).
func (b *Backend) cubin(source string, fresh bool) (image []byte, log string, cached bool, err error) {
	dir, err := b.cacheDir()
	if err != nil {
		return nil, "", false, err
	}
	key := b.cacheKey(source)
	path := filepath.Join(dir, key+".cubin")
	logPath := filepath.Join(dir, key+".log")
	if !fresh {
		if img, err := os.ReadFile(path); err == nil && len(img) > 0 {
			if lg, err := os.ReadFile(logPath); err == nil {
				return img, string(lg), true, nil
			}
		}
	}
	image, log, err = CompileCUBIN(source, b.arch)
	if err != nil {
		return nil, log, false, err
	}
	// The log first: a CUBIN on disk always has its log beside it. A cache
	// that cannot be written only costs the next process a compile.
	if os.MkdirAll(dir, 0o755) == nil && diskcache.WriteAtomic(logPath, []byte(log)) == nil {
		_ = diskcache.WriteAtomic(path, image)
	}
	return image, log, false, nil
}

// Compile builds u for the device (float64 storage) and loads it.
func (b *Backend) Compile(u kernels.Unit) (kernels.Program, error) {
	return b.CompileProgram(u)
}

// CompileStorage builds u with its buffers stored in precision ("float64" or
// "float32"; see Precision): what core asks of a backend for a simulation
// with a storage precision.
func (b *Backend) CompileStorage(u kernels.Unit, precision string) (kernels.Program, error) {
	prec, err := ParsePrecision(precision)
	if err != nil {
		return nil, err
	}
	return b.CompileProgramAs(u, prec)
}

// CompileProgram is Compile returning the concrete *Program (for Describe).
func (b *Backend) CompileProgram(u kernels.Unit) (*Program, error) {
	return b.CompileProgramAs(u, Float64)
}

// CompileProgramAs is CompileProgram with the buffers stored in prec.
func (b *Backend) CompileProgramAs(u kernels.Unit, prec Precision) (*Program, error) {
	if u.NComp <= 0 {
		return nil, errs.New(errs.Spec, "a theory needs at least one field component")
	}
	// A point source with z derivatives compiles the second translation
	// unit only (cuda_site3d.cu fills its z members on every grid); a planar
	// one the planar unit, and the second when a grid needs it (gridKernels).
	source, names := TranslationUnitAs(u, prec), KernelNames
	if u.ThreeD {
		source, names = TranslationUnitGridAs(u, prec), GridKernelNames
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := b.bind(); err != nil {
		return nil, err
	}
	image, log, cached, err := b.cubin(source, false)
	if err != nil {
		return nil, err
	}
	p, err := b.load(image, log, names)
	if err != nil && cached {
		// A cached image that will not load: compile afresh once.
		if image, log, _, err = b.cubin(source, true); err != nil {
			return nil, err
		}
		p, err = b.load(image, log, names)
	}
	if err != nil {
		return nil, err
	}
	p.unit = u
	p.prec = prec
	p.cached = cached
	p.key = b.cacheKey(source)
	p.dir, _ = b.cacheDir()
	if u.ThreeD {
		p.grid = &gridModule{mod: p.mod, k: p.k, log: p.log, cached: cached, shared: true}
	}
	return p, nil
}

// HostAlloc returns n zeroed doubles of pinned (page-locked) host memory,
// C memory that Bind on any backend accepts and that copies to and from the
// device at full PCIe speed, and the function that frees it.
func (b *Backend) HostAlloc(n int) ([]float64, func(), error) {
	if n <= 0 {
		return nil, nil, errs.New(errs.Shape, "HostAlloc needs a positive length, got %d", n)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := b.bind(); err != nil {
		return nil, nil, err
	}
	ptr, rc := driver.MemAllocHost(8 * n)
	if err := check(rc, "cuMemAllocHost"); err != nil {
		return nil, nil, err
	}
	s := unsafe.Slice((*float64)(ptr), n)
	clear(s)
	var once sync.Once
	free := func() {
		once.Do(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if b.bind() == nil {
				driver.MemFreeHost(ptr)
			}
		})
	}
	return s, free, nil
}
