package cuda

import (
	"math"
	"strings"
	"sync"
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
)

// KernelInfo is one loaded kernel's resources and launch shape.
type KernelInfo struct {
	Name        string
	Registers   int     // per thread (cuFuncGetAttribute)
	SpillStores int     // bytes, from ptxas -v
	SpillLoads  int     // bytes, from ptxas -v
	LocalBytes  int     // local memory per thread (cuFuncGetAttribute)
	SharedBytes int     // static shared memory per block
	BlockSize   int     // threads per block used for launches
	BlocksPerSM int     // resident blocks per multiprocessor at BlockSize
	Occupancy   float64 // resident threads / max threads per multiprocessor
	Budget      int     // register budget (Budget), 0 if none
	// fg_k_tile only: the block is BlockSize/BlockY x BlockY threads, each
	// taking TileRows rows; DynShared bytes of dynamic shared memory (the
	// tile with its halo). Chosen per size class by the autotune.
	BlockY    int
	TileRows  int
	DynShared int
}

type kernel struct {
	fn     driver.Function
	info   KernelInfo
	maxDyn int // dynamic shared memory a launch may take (bytes)
}

// ConsistentMaxComponents is FG_CONSISTENT_MAX_NCOMP of cuda_ops.cu: the
// largest theory whose fused consistent-form kernel fits registers unspilled.
const ConsistentMaxComponents = 8

// Program is a Unit compiled and loaded on the device. Its operations run
// in order on the device's default stream; those returning a reduction or an
// index wait for it, Combine and Constrain return once launched (any later
// operation or Download sees their results).
type Program struct {
	b      *Backend
	mod    driver.Module
	k      map[string]*kernel
	names  []string // the kernels of mod, in source order (KernelNames or GridKernelNames)
	unit   kernels.Unit
	prec   Precision // storage precision of every buffer (fg_store)
	cached bool      // the CUBIN came from the disk cache
	log    string
	key    string // the CUBIN's cache key
	dir    string // the cache directory ("" if none)

	// The kernels of lines, 3D lattices and boundaries set per axis
	// (TranslationUnitGridAs): loaded the first time such a grid runs, or
	// at Compile for a unit with z derivatives (then they are mod and k).
	grid *gridModule

	// Test hooks (flow_fallback_gpu_test.go): a Flow built while set takes
	// the fallback path as if fg_k_stages234 (noFused234) or also
	// fg_k_tile_up (noFusedUpdate) could not launch.
	noFused234, noFusedUpdate bool

	tiles      map[string]tileShape // tuned tile shape per size class
	tilesRead  bool
	tuneReport []string

	mu         sync.Mutex
	params     devScratch // FG_NPARAMS doubles
	lastParams []float64
	part       devScratch // chunk partials
	dotPart    devScratch // Dot's partials, one per FG_DOT_CHUNK
	shifted    devScratch // Gradient's Phi + Shift for the consistent form
	rows       devScratch // row partials
	stage      devScratch // float32 storage: float64 staging of Upload/Download
	res        driver.DevicePtr
	hostRes    unsafe.Pointer // pinned: 3 doubles + one index
	closed     bool
}

type devScratch struct {
	d driver.DevicePtr
	n int // bytes
}

func (s *devScratch) ensure(n int) error {
	if s.n >= n {
		return nil
	}
	if s.d != 0 {
		driver.MemFree(s.d)
		s.d, s.n = 0, 0
	}
	d, rc := driver.MemAlloc(n)
	if err := check(rc, "cuMemAlloc"); err != nil {
		return err
	}
	s.d = d
	s.n = n
	return nil
}

func (s *devScratch) free() {
	if s.d != 0 {
		driver.MemFree(s.d)
	}
	s.d, s.n = 0, 0
}

// gridModule is the second translation unit's module (TranslationUnitGridAs).
type gridModule struct {
	mod    driver.Module
	k      map[string]*kernel
	log    string
	cached bool
	shared bool       // it is the Program's own module (a unit with z derivatives)
	work   devScratch // the consistent form's partials (gridConsistent)
}

func (b *Backend) load(image []byte, log string, names []string) (*Program, error) {
	p := &Program{b: b, log: log, names: names}
	var err error
	if p.mod, p.k, err = b.loadModule(image, log, names); err != nil {
		return nil, err
	}
	var rc driver.Result
	p.res, rc = driver.MemAlloc(32)
	if err := check(rc, "cuMemAlloc"); err != nil {
		p.mod.Unload()
		return nil, err
	}
	p.hostRes, rc = driver.MemAllocHost(32)
	if err := check(rc, "cuMemAllocHost"); err != nil {
		driver.MemFree(p.res)
		p.mod.Unload()
		return nil, err
	}
	return p, nil
}

// loadModule loads image and looks up the kernels names with their
// resources and launch shapes.
func (b *Backend) loadModule(image []byte, log string, names []string) (driver.Module, map[string]*kernel, error) {
	ks := map[string]*kernel{}
	mod, rc := driver.ModuleLoadData(image)
	if err := check(rc, "cuModuleLoadData"); err != nil {
		return mod, nil, err
	}
	ptx := ParsePtxasLog(log)
	for _, name := range names {
		fn, rc := mod.Function(name)
		if err := check(rc, "cuModuleGetFunction "+name); err != nil {
			mod.Unload()
			return mod, nil, err
		}
		attr := fn.Attribute
		in := KernelInfo{Name: name, Registers: attr(driver.FuncNumRegs),
			LocalBytes: attr(driver.FuncLocalSizeBytes), SharedBytes: attr(driver.FuncSharedSizeBytes),
			SpillStores: ptx[name].SpillStores, SpillLoads: ptx[name].SpillLoads}
		if name == "fg_k_decide" || strings.HasSuffix(name, "_final") {
			in.BlockSize = finalThreads // part of the reduction order
		} else {
			_, block, rc := fn.MaxPotentialBlockSize(0, 0)
			if err := check(rc, "cuOccupancyMaxPotentialBlockSize "+name); err != nil {
				mod.Unload()
				return mod, nil, err
			}
			// Whole warps: a warp must be one reduction chunk.
			in.BlockSize = block / 32 * 32
			if in.BlockSize < 32 {
				in.BlockSize = 32
			}
		}
		smem, maxDyn := 0, maxDynShared
		if name == "fg_k_tile" || name == "fg_k_tile_up" || name == "fg_k_stages234" {
			// Until tuned: the default shape (the occupancy API's block size
			// is one of the autotune's candidates, tune.go).
			sh := defaultTile
			in.BlockSize, in.BlockY, in.TileRows = 32*sh.BY, sh.BY, sh.RPT
		}
		if name == "fg_k_stages234" && b.smemOpt > maxDynShared {
			// Its three planes (tileSmem) take tall tiles past the 48 KB a
			// kernel gets without opting in.
			if opt := b.smemOpt - in.SharedBytes; fn.SetAttribute(driver.FuncMaxDynamicSharedMemory, opt) == driver.Success {
				maxDyn = opt
			}
		}
		nb := fn.MaxActiveBlocksPerMultiprocessor(in.BlockSize, smem)
		in.BlocksPerSM = nb
		if b.maxTPM > 0 {
			in.Occupancy = float64(nb*in.BlockSize) / float64(b.maxTPM)
		}
		ks[name] = &kernel{fn: fn, info: in, maxDyn: maxDyn}
	}
	return mod, ks, nil
}

// Describe lists every kernel's registers, spills, shared memory, block size
// and occupancy, in KernelNames order (GridKernelNames for a unit with z
// derivatives); once a planar unit has run a line, a 3D lattice or
// boundaries per axis, the site kernels of those grids (fg_k_nd_*) follow.
func (p *Program) Describe() []KernelInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]KernelInfo, 0, len(p.names))
	for _, name := range p.names {
		in := p.k[name].info
		in.Budget = BudgetAs(name, p.prec)
		out = append(out, in)
	}
	if gm := p.grid; gm != nil && !gm.shared {
		for _, name := range GridKernelNames {
			if strings.HasPrefix(name, "fg_k_nd_") {
				in := gm.k[name].info
				in.Budget = BudgetAs(name, p.prec)
				out = append(out, in)
			}
		}
	}
	return out
}

// Precision is the storage precision of the program's buffers.
func (p *Program) Precision() Precision { return p.prec }

// StoragePrecision is Precision's name ("float64" or "float32"), for callers
// that do not import this package (core, pybind).
func (p *Program) StoragePrecision() string { return p.prec.String() }

// Cached reports whether the CUBIN came from the disk cache.
func (p *Program) Cached() bool { return p.cached }

// Log is NVRTC's log for the program (ptxas's resource report included).
func (p *Program) Log() string { return p.log }

// SetBlockSize overrides the block size of a site kernel (for tests and
// autotuning); it must be a positive multiple of 32 the kernel can launch.
func (p *Program) SetBlockSize(name string, block int) error {
	k, ok := p.k[name]
	if !ok || name == "fg_k_final" {
		return errs.New(errs.Parameter, "no tunable kernel %q", name)
	}
	if block <= 0 || block%32 != 0 || block > 1024 {
		return errs.New(errs.Parameter, "block size %d is not a multiple of 32 in [32, 1024]", block)
	}
	p.mu.Lock()
	k.info.BlockSize = block
	p.mu.Unlock()
	return nil
}

// buffer is device memory, optionally mirroring bound host memory: n
// values of the program's storage precision on the device, n float64 on the
// host.
type buffer struct {
	p      *Program
	d      driver.DevicePtr
	n      int
	host   unsafe.Pointer // bound host memory, or nil
	pinned bool           // host registered with the driver (page-locked)
}

func (b *buffer) Len() int { return b.n }

// Upload copies the bound host values to the device; with float32 storage
// they go through the program's float64 staging buffer and are rounded to
// nearest on the device (fg_k_narrow).
func (b *buffer) Upload() error {
	if b.host == nil || b.n == 0 {
		return nil
	}
	if b.d == 0 {
		return errs.New(errs.Released, "buffer has been released")
	}
	if b.p.prec == Float64 {
		return b.p.b.onDevice(func() error {
			return check(driver.MemcpyHtoD(b.d, b.host, 8*b.n), "cuMemcpyHtoD")
		})
	}
	return b.p.convert(b, true)
}

// Download copies the device values to the bound host memory; float32
// values are widened exactly on the device (fg_k_widen) first.
func (b *buffer) Download() error {
	if b.host == nil || b.n == 0 {
		return nil
	}
	if b.d == 0 {
		return errs.New(errs.Released, "buffer has been released")
	}
	if b.p.prec == Float64 {
		return b.p.b.onDevice(func() error {
			return check(driver.MemcpyDtoH(b.host, b.d, 8*b.n), "cuMemcpyDtoH")
		})
	}
	return b.p.convert(b, false)
}

// convert moves a float32 buffer's values between its float64 host memory
// and the device through the staging buffer: up rounds (host -> stage ->
// fg_k_narrow), down widens (fg_k_widen -> stage -> host). The copies are
// synchronous and ordered with the kernels on the default stream.
func (p *Program) convert(b *buffer, up bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errs.New(errs.Released, "the program has been closed")
	}
	return p.b.onDevice(func() error {
		if err := p.stage.ensure(8 * b.n); err != nil {
			return err
		}
		a := convertArgs{Len: int64(b.n), In: uint64(b.d), Out: uint64(p.stage.d)}
		name := "fg_k_widen"
		if up {
			name = "fg_k_narrow"
			if err := check(driver.MemcpyHtoD(p.stage.d, b.host, 8*b.n), "cuMemcpyHtoD"); err != nil {
				return err
			}
			a.In, a.Out = uint64(p.stage.d), uint64(b.d)
		}
		bs := p.k[name].info.BlockSize
		if err := p.launch(name, min((b.n+bs-1)/bs, 1<<20), &a); err != nil {
			return err
		}
		if up {
			return nil
		}
		return check(driver.MemcpyDtoH(b.host, p.stage.d, 8*b.n), "cuMemcpyDtoH")
	})
}

// DeviceArray says where b (a buffer of this program) lives on the device
// and in which element type: the current state of a simulation's field is
// its field buffer's DeviceArray (core.Simulation.FieldBuffer) once any
// Advance has returned. The pointer stays valid until b is released.
func (p *Program) DeviceArray(b kernels.Buffer) (DeviceArray, error) {
	cb, err := p.buf(b)
	if err != nil {
		return DeviceArray{}, err
	}
	if cb == nil {
		return DeviceArray{}, errs.New(errs.Shape, "DeviceArray needs a buffer")
	}
	return DeviceArray{Ptr: uint64(cb.d), Len: cb.n, DType: p.prec.String(), Device: p.b.opt.Device}, nil
}

// Sync waits for all work queued on the device (before a consumer reads a
// DeviceArray on another stream).
func (p *Program) Sync() error {
	return p.b.onDevice(func() error { return check(driver.CtxSynchronize(), "cuCtxSynchronize") })
}

func (b *buffer) Release() {
	if b.d == 0 {
		return
	}
	_ = b.p.b.onDevice(func() error {
		driver.MemFree(b.d)
		if b.pinned {
			driver.MemHostUnregister(b.host)
		}
		return nil
	})
	b.d, b.host = 0, nil
}

func (p *Program) alloc(n int) (*buffer, error) {
	b := &buffer{p: p, n: n}
	sz := p.prec.Bytes() * n
	if sz < 8 {
		sz = 8
	}
	var rc driver.Result
	b.d, rc = driver.MemAlloc(sz)
	if err := check(rc, "cuMemAlloc"); err != nil {
		return nil, err
	}
	if err := check(driver.MemsetD8(b.d, 0, sz), "cuMemsetD8"); err != nil {
		driver.MemFree(b.d)
		return nil, err
	}
	return b, nil
}

// NewBuffer allocates n zeroed values of device memory in the program's
// storage precision.
func (p *Program) NewBuffer(n int) (kernels.Buffer, error) {
	if n < 0 {
		return nil, errs.New(errs.Shape, "negative buffer length %d", n)
	}
	var b *buffer
	err := p.b.onDevice(func() (err error) { b, err = p.alloc(n); return })
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Bind allocates device memory mirroring host (C memory that outlives the
// buffer). The host pages are registered with the driver (page-locked) so
// Upload and Download run at full PCIe speed; where registration fails the
// copies go through the driver's staging buffers instead. Bind does not
// copy: call Upload.
func (p *Program) Bind(host []float64) (kernels.Buffer, error) {
	if len(host) == 0 {
		return nil, errs.New(errs.Shape, "cannot bind an empty buffer")
	}
	var b *buffer
	err := p.b.onDevice(func() (err error) {
		if b, err = p.alloc(len(host)); err != nil {
			return err
		}
		b.host = unsafe.Pointer(unsafe.SliceData(host))
		b.pinned = driver.MemHostRegister(b.host, 8*len(host), 0) == driver.Success
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (p *Program) buf(b kernels.Buffer) (*buffer, error) {
	if b == nil {
		return nil, nil
	}
	cb, ok := b.(*buffer)
	if !ok || cb.p != p {
		return nil, errs.New(errs.Backend, "buffer of another program or backend handed to a CUDA program")
	}
	if cb.d == 0 {
		return nil, errs.New(errs.Released, "buffer has been released")
	}
	return cb, nil
}

func (p *Program) checkField(name string, b *buffer, g kernels.Grid) error {
	if b == nil {
		return errs.New(errs.Shape, "%s buffer missing", name)
	}
	if want := p.unit.NComp * g.Sites(); b.n != want {
		return errs.New(errs.Shape, "%s buffer has %d values, want %d (%d components of %d x %d)", name, b.n, want, p.unit.NComp, g.Nx, g.Ny)
	}
	return nil
}

// field resolves a buffer that must hold a whole field on g; a nil buffer is
// allowed only when optional (then it returns nil).
func (p *Program) field(name string, b kernels.Buffer, g kernels.Grid, optional bool) (*buffer, error) {
	cb, err := p.buf(b)
	if err != nil || (cb == nil && optional) {
		return cb, err
	}
	return cb, p.checkField(name, cb, g)
}

// gridOf is g as the site kernels read it.
func gridOf(g kernels.Grid) gridArgs {
	return gridArgs{Nx: int64(g.Nx), Ny: int64(g.Ny), N: int64(g.Sites()), Nchunk: int64((g.Nx + chunk - 1) / chunk),
		Periodic: flag(g.Periodic), Hx: g.Hx, Hy: g.Hy, Ox: g.Ox, Oy: g.Oy}
}

// prepare checks g and params for a launch, uploads the parameters if they
// changed (to p.params) and sizes the reduction scratch (p.part, p.rows).
// Called with the context current and p.mu held.
func (p *Program) prepare(g kernels.Grid, params []float64) (gridArgs, error) {
	if p.closed {
		return gridArgs{}, errs.New(errs.Released, "the program has been closed")
	}
	if err := p.unit.CheckLaunch(g, params); err != nil {
		return gridArgs{}, err
	}
	// The site kernels index with 32-bit integers.
	if int64(p.unit.NComp)*int64(g.Sites()) >= 1<<31 {
		if !g.Planar() {
			return gridArgs{}, errs.New(errs.Lattice, "%d sites of %d components is 2^31 values or more, beyond the CUDA kernels' 32-bit indexing", g.Sites(), p.unit.NComp)
		}
		return gridArgs{}, errs.New(errs.Lattice, "%d x %d sites of %d components is 2^31 values or more, beyond the CUDA kernels' 32-bit indexing", g.Nx, g.Ny, p.unit.NComp)
	}
	a := gridOf(g)
	if err := p.params.ensure(8 * (len(params) + 1)); err != nil {
		return a, err
	}
	if !equal(params, p.lastParams) && len(params) > 0 {
		if err := check(driver.MemcpyHtoD(p.params.d, unsafe.Pointer(&params[0]), 8*len(params)), "cuMemcpyHtoD params"); err != nil {
			return a, err
		}
		p.lastParams = append(p.lastParams[:0], params...)
	}
	// Lines() is Ny on a planar grid: one row partial per line along x.
	if err := p.part.ensure(8 * 3 * g.Lines() * int(a.Nchunk)); err != nil {
		return a, err
	}
	return a, p.rows.ensure(8 * 3 * g.Lines())
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// launch queues kernel name on the default stream: grid blocks of the
// kernel's block size, its argument block a.
func (p *Program) launch(name string, grid int, a any) error {
	k := p.k[name]
	if grid < 1 {
		grid = 1
	}
	if grid > math.MaxInt32 {
		return errs.New(errs.Lattice, "lattice too large for one launch of %s", name)
	}
	return launchArgs(k, grid, k.info.BlockSize, 1, 0, driver.Stream{}, a)
}

// launchArgs launches a field-engine kernel k on stream st (the zero Stream:
// the default stream), grid blocks of bx x by threads, smem bytes of dynamic
// shared memory, and a, a pointer to the kernel's argument block (args.go),
// through driver.Launch, which refuses any type but the registered one.
func launchArgs(k *kernel, grid, bx, by, smem int, st driver.Stream, a any) error {
	return driver.Launch(k.fn, [3]uint32{uint32(grid), 1, 1}, [3]uint32{uint32(bx), uint32(by), 1}, smem, st, a)
}

// siteGrid is the number of blocks covering the chunk-padded rows.
func (p *Program) siteGrid(name string, g gridArgs) int {
	threads := int(g.Ny) * int(g.Nchunk) * chunk
	bs := p.k[name].info.BlockSize
	return (threads + bs - 1) / bs
}

// reduce runs levels 2 and 3 of the reduction on the chunk partials in
// p.part and returns energy, max and power.
func (p *Program) reduce(g gridArgs) (e, m, pw float64, err error) {
	bs := p.k["fg_k_rows"].info.BlockSize
	r := rowsArgs{Ny: g.Ny, Nchunk: g.Nchunk, Part: uint64(p.part.d), Out: uint64(p.rows.d)}
	if err = p.launch("fg_k_rows", (int(g.Ny)*32+bs-1)/bs, &r); err != nil {
		return
	}
	f := finalArgs{Ny: g.Ny, Rows: uint64(p.rows.d), Out: uint64(p.res)}
	if err = p.launch("fg_k_final", 1, &f); err != nil {
		return
	}
	if err = check(driver.MemcpyDtoH(p.hostRes, p.res, 24), "cuMemcpyDtoH reduction"); err != nil {
		return
	}
	h := unsafe.Slice((*float64)(p.hostRes), 3)
	return h[0], h[1], h[2], nil
}

// Gradient evaluates the gradient of ga.Phi into ga.Out with one fused kernel
// and reduces on the device.
func (p *Program) Gradient(ga kernels.GradientArgs) (kernels.Reduction, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var r kernels.Reduction
	err := p.b.onDevice(func() error {
		grid, err := p.prepare(ga.Grid, ga.Params)
		if err != nil {
			return err
		}
		phi, err := p.field("field", ga.Phi, ga.Grid, false)
		if err != nil {
			return err
		}
		out, err := p.field("gradient", ga.Out, ga.Grid, false)
		if err != nil {
			return err
		}
		vel, err := p.field("velocity", ga.Vel, ga.Grid, true)
		if err != nil {
			return err
		}
		var velD uint64
		if vel != nil {
			velD = uint64(vel.d)
		}
		if len(ga.Shift) > 2 {
			return errs.New(errs.Internal, "Gradient takes at most 2 shift terms, got %d", len(ga.Shift))
		}
		shift := make([]*buffer, len(ga.Shift))
		for t, term := range ga.Shift {
			x, err := p.buf(term.X)
			if err != nil {
				return err
			}
			if x == nil || x.n != phi.n {
				return errs.New(errs.Shape, "Gradient shift term %d does not match the field's length %d", t, phi.n)
			}
			shift[t] = x
		}
		if p.onGrid(ga.Grid) {
			r, err = p.gridGradient(ga, phi, out, vel)
			return err
		}
		switch {
		case ga.Form == kernels.Continuum && !p.anyTile("fg_k_tile"):
			// No tile of this unit's components fits the shared memory a
			// launch may take (more than 14 float64 components: a kinetic
			// unit of five fields has 20): the untiled kernel, its stencil
			// through L1/L2, after Phi + Shift is formed as Combine would.
			a := &gradientArgs{Grid: grid, Params: uint64(p.params.d), Phi: uint64(phi.d), Vel: velD, Out: uint64(out.d),
				Part: uint64(p.part.d), Project: flag(ga.Project), WantEnergy: flag(ga.Energy)}
			if len(shift) > 0 {
				if err := p.shifted.ensure(p.prec.Bytes() * phi.n); err != nil {
					return err
				}
				if err := p.combine(p.shifted.d, phi.n, append([]kernels.Term{{Coef: 1, X: ga.Phi}}, ga.Shift...)); err != nil {
					return err
				}
				a.Phi = uint64(p.shifted.d)
			}
			if err := p.launch("fg_k_continuum", p.siteGrid("fg_k_continuum", grid), a); err != nil {
				return err
			}
		case ga.Form == kernels.Continuum:
			// The tiled kernel: the same site arithmetic and chunk partials
			// as fg_k_continuum, its stencil read from shared memory. Its
			// loader forms Phi + Shift in registers, as Combine would.
			a := &tileArgs{Grid: grid, Params: uint64(p.params.d), Project: flag(ga.Project), Nterms: 1,
				WantEnergy: flag(ga.Energy), Out: uint64(out.d), Vel: velD, Part: uint64(p.part.d)}
			a.Coef[0], a.Terms[0] = 1, uint64(phi.d)
			for t, x := range shift {
				a.Coef[t+1], a.Terms[t+1] = ga.Shift[t].Coef, uint64(x.d)
				a.Nterms++
			}
			sh, err := p.tileFor(a, ga.Grid)
			if err != nil {
				return err
			}
			if err := p.launchTileOf("fg_k_tile", a, sh, driver.Stream{}); err != nil {
				return err
			}
		case ga.Form == kernels.Consistent:
			a := &gradientArgs{Grid: grid, Params: uint64(p.params.d), Phi: uint64(phi.d), Vel: velD, Out: uint64(out.d),
				Part: uint64(p.part.d), Project: flag(ga.Project), WantEnergy: flag(ga.Energy), Penalty: ga.Penalty}
			if len(shift) > 0 {
				// fg_k_consistent reads one field: form Phi + Shift first.
				if err := p.shifted.ensure(p.prec.Bytes() * phi.n); err != nil {
					return err
				}
				if err := p.combine(p.shifted.d, phi.n, append([]kernels.Term{{Coef: 1, X: ga.Phi}}, ga.Shift...)); err != nil {
					return err
				}
				a.Phi = uint64(p.shifted.d)
			}
			if p.unit.NComp > ConsistentMaxComponents {
				return errs.New(errs.Backend, "the consistent gradient form runs on CUDA for up to %d components "+
					"(this theory has %d: one thread cannot hold its neighbours' partials without spilling); "+
					"use the continuum form (the default) or the CPU backend", ConsistentMaxComponents, p.unit.NComp)
			}
			if err := p.launch("fg_k_consistent", p.siteGrid("fg_k_consistent", grid), a); err != nil {
				return err
			}
		default:
			return errs.New(errs.Parameter, "unknown gradient form %d", ga.Form)
		}
		e, m, pw, err := p.reduce(grid)
		if err != nil {
			return err
		}
		if ga.Energy {
			r.Energy = e
		}
		r.MaxGrad = m
		if vel != nil {
			r.Power = pw
		}
		return nil
	})
	return r, err
}

// Combine sets out = sum of the terms elementwise, left to right.
func (p *Program) Combine(out kernels.Buffer, terms ...kernels.Term) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errs.New(errs.Released, "the program has been closed")
	}
	o, err := p.buf(out)
	if err != nil || o == nil {
		return errs.New(errs.Shape, "Combine needs an output buffer")
	}
	return p.b.onDevice(func() error { return p.combine(o.d, o.n, terms) })
}

// combine sets the n values at out to the sum of the terms with
// fg_k_combine (p.mu held, context current).
func (p *Program) combine(out driver.DevicePtr, n int, terms []kernels.Term) error {
	if len(terms) > maxTerms {
		return errs.New(errs.Internal, "Combine takes at most %d terms, got %d", maxTerms, len(terms))
	}
	a := &combineArgs{Len: int64(n), Nterms: int32(len(terms)), Out: uint64(out)}
	for t, term := range terms {
		x, err := p.buf(term.X)
		if err != nil {
			return err
		}
		if x == nil || x.n != n {
			return errs.New(errs.Shape, "Combine term %d does not match the output length %d", t, n)
		}
		a.Coef[t] = term.Coef
		a.Terms[t] = uint64(x.d)
	}
	if n == 0 {
		return nil
	}
	bs := p.k["fg_k_combine"].info.BlockSize
	return p.launch("fg_k_combine", (n+bs-1)/bs, a)
}

// Constrain normalises phi and projects vel at the sites that are not held.
func (p *Program) Constrain(g kernels.Grid, phi, vel kernels.Buffer) error {
	return p.siteKernel("fg_k_constrain", g, phi, vel, "velocity", true, func(grid gridArgs, phi, vel uint64) any {
		return &constrainArgs{Grid: grid, Phi: phi, Vel: vel}
	})
}

// Project removes from x its part along phi/|phi| at the sites that are not
// held (fg_k_project).
func (p *Program) Project(g kernels.Grid, phi, x kernels.Buffer) error {
	return p.siteKernel("fg_k_project", g, phi, x, "projected", false, func(grid gridArgs, phi, x uint64) any {
		return &projectArgs{Grid: grid, Phi: phi, X: x}
	})
}

// siteKernel launches a one-thread-per-site kernel over the field phi and a
// second field (may be nil when optional: then 0), its argument block made
// by args.
func (p *Program) siteKernel(name string, g kernels.Grid, phi, second kernels.Buffer, what string, optional bool,
	args func(grid gridArgs, phi, second uint64) any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.onDevice(func() error {
		grid, err := p.prepare(g, make([]float64, p.unit.NParams))
		if err != nil {
			return err
		}
		f, err := p.field("field", phi, g, false)
		if err != nil {
			return err
		}
		v, err := p.field(what, second, g, optional)
		if err != nil {
			return err
		}
		var vd uint64
		if v != nil {
			vd = uint64(v.d)
		}
		if p.onGrid(g) {
			return p.gridSite("fg_k_nd_"+strings.TrimPrefix(name, "fg_k_"), g, uint64(f.d), vd)
		}
		bs := p.k[name].info.BlockSize
		return p.launch(name, (g.Sites()+bs-1)/bs, args(grid, uint64(f.d), vd))
	})
}

// Density writes density k (k < 0: the energy density) into out (nil: not
// written) and returns its integral.
func (p *Program) Density(g kernels.Grid, params []float64, phi kernels.Buffer, k int, out kernels.Buffer) (float64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var sum float64
	err := p.b.onDevice(func() error {
		grid, err := p.prepare(g, params)
		if err != nil {
			return err
		}
		if k >= p.unit.NDens {
			return errs.New(errs.Parameter, "density %d out of range: the theory declares %d", k, p.unit.NDens)
		}
		f, err := p.field("field", phi, g, false)
		if err != nil {
			return err
		}
		a := &densityArgs{Grid: grid, Params: uint64(p.params.d), Phi: uint64(f.d), Part: uint64(p.part.d)}
		o, err := p.buf(out)
		if err != nil {
			return err
		}
		if o != nil {
			if o.n != g.Sites() {
				return errs.New(errs.Shape, "density buffer has %d values, want %d", o.n, g.Sites())
			}
			a.Out = uint64(o.d)
		}
		if k < 0 {
			k = -1
		}
		if p.onGrid(g) {
			sum, err = p.gridDensity(g, f, a.Out, k)
			return err
		}
		a.Density = int32(k)
		if err := p.launch("fg_k_density", p.siteGrid("fg_k_density", grid), a); err != nil {
			return err
		}
		sum, _, _, err = p.reduce(grid)
		return err
	})
	return sum, err
}

// FirstNonFinite returns the index of the first NaN or Inf in b, or -1.
func (p *Program) FirstNonFinite(b kernels.Buffer) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cb, err := p.buf(b)
	if err != nil || cb == nil {
		return -1, errs.New(errs.Shape, "FirstNonFinite needs a buffer")
	}
	idx := -1
	err = p.b.onDevice(func() error {
		slot := p.res + 24
		if err := check(driver.MemsetD8(slot, 0xff, 8), "cuMemsetD8"); err != nil {
			return err
		}
		if cb.n > 0 {
			a := &nonfiniteArgs{Len: int64(cb.n), X: uint64(cb.d), Out: uint64(slot)}
			bs := p.k["fg_k_nonfinite"].info.BlockSize
			if err := p.launch("fg_k_nonfinite", (cb.n+bs-1)/bs, a); err != nil {
				return err
			}
		}
		hp := unsafe.Add(p.hostRes, 24)
		if err := check(driver.MemcpyDtoH(hp, slot, 8), "cuMemcpyDtoH"); err != nil {
			return err
		}
		if v := *(*uint64)(hp); v != math.MaxUint64 {
			idx = int(v)
		}
		return nil
	})
	return idx, err
}

// Dot reduces on the device (fg_k_dot, fg_k_dot_final) and waits for the sum.
func (p *Program) Dot(a, b kernels.Buffer) (float64, error) {
	return p.fold("Dot", "fg_k_dot", a, b)
}

// MaxAbs reduces on the device (fg_k_maxabs, fg_k_maxabs_final).
func (p *Program) MaxAbs(b kernels.Buffer) (float64, error) {
	return p.fold("MaxAbs", "fg_k_maxabs", b, b)
}

// fold runs a chunk reduction (kernel, then kernel_final) over a and b.
func (p *Program) fold(op, kernel string, a, b kernels.Buffer) (float64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, errs.New(errs.Released, "the program has been closed")
	}
	x, err := p.buf(a)
	if err != nil || x == nil {
		return 0, errs.New(errs.Shape, "%s needs a buffer", op)
	}
	y, err := p.buf(b)
	if err != nil || y == nil {
		return 0, errs.New(errs.Shape, "%s needs a buffer", op)
	}
	if x.n != y.n {
		return 0, errs.New(errs.Shape, "%s of buffers of %d and %d values", op, x.n, y.n)
	}
	var res float64
	err = p.b.onDevice(func() error {
		nchunk := (x.n + dotChunk - 1) / dotChunk
		if nchunk == 0 {
			return nil
		}
		if err := p.dotPart.ensure(8 * nchunk); err != nil {
			return err
		}
		a := &dotArgs{Len: int64(x.n), X: uint64(x.d), Y: uint64(y.d), Part: uint64(p.dotPart.d), Out: uint64(p.res)}
		bs := p.k[kernel].info.BlockSize
		if err := p.launch(kernel, (32*nchunk+bs-1)/bs, a); err != nil {
			return err
		}
		if err := p.launch(kernel+"_final", 1, a); err != nil {
			return err
		}
		if err := check(driver.MemcpyDtoH(p.hostRes, p.res, 8), "cuMemcpyDtoH "+op); err != nil {
			return err
		}
		res = *(*float64)(p.hostRes)
		return nil
	})
	return res, err
}

// FillRandom fills b on the device (fg_k_random).
func (p *Program) FillRandom(b kernels.Buffer, seed uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errs.New(errs.Released, "the program has been closed")
	}
	x, err := p.buf(b)
	if err != nil || x == nil {
		return errs.New(errs.Shape, "FillRandom needs a buffer")
	}
	if x.n == 0 {
		return nil
	}
	return p.b.onDevice(func() error {
		a := &randomArgs{Len: int64(x.n), Out: uint64(x.d), Seed: seed}
		bs := p.k["fg_k_random"].info.BlockSize
		return p.launch("fg_k_random", min((x.n+bs-1)/bs, 1<<20), a)
	})
}

// Close unloads the module and frees the program's scratch memory. Buffers
// must be released by their owners.
func (p *Program) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return p.b.onDevice(func() error {
		p.params.free()
		p.part.free()
		p.dotPart.free()
		p.shifted.free()
		p.rows.free()
		p.stage.free()
		if p.grid != nil {
			p.grid.work.free()
			if !p.grid.shared {
				p.grid.mod.Unload()
			}
		}
		driver.MemFree(p.res)
		driver.MemFreeHost(p.hostRes)
		return check(p.mod.Unload(), "cuModuleUnload")
	})
}
