// Package gpuradiation runs core/radiation's retarded-time kernel on an
// NVIDIA GPU with kernels/src/radiation.cu (blocks of observers walking
// their samples in tiles, particles in order; see the source's header),
// through the generic module API of kernels/cuda. Device implements
// kernels.RadiationDevice.
package gpuradiation

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cuda"
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
	"github.com/fieldgo/fieldgo/kernels/src"
)

// Device is a CUDA GPU with the radiation module loaded. Runs are
// serialised.
type Device struct {
	b  *cuda.Backend
	m  *cuda.Module
	mu sync.Mutex
	// The last runs' observer schedules (HilbertOrder on the host: 10 ms at
	// 32768 observers, 0.13-0.26 s at 524288, for the same observers call
	// after call).
	orders orderCache
	// The cube's device block, kept from run to run instead of an allocation
	// and a clear of the benchmark's 640 MiB per call; and the pinned host
	// blocks the cubes come back into.
	out     *cuda.DeviceBuffer
	pinned  *pinnedPool
	scratch scratchPool
	// A run's inputs go to the device in one copy, from a page-locked
	// staging block into one device block, both kept from run to run:
	// a dozen pageable copies, each into a pooled buffer with its clearing
	// memset, cost more than the kernel on the benchmark's scene.
	stage   []byte
	unstage func()
	in      *cuda.DeviceBuffer
	// The arrays a kept job (RadiationJob.Kept) does not change from call
	// to call (knots, records, observers, their schedule) go in a block of
	// their own, uploaded again only when other slices come: they were
	// 0.3 ms of an on-device call of 4.7 ms on the benchmark's scene.
	// keptKey holds the slices uploaded (so their memory cannot be reused
	// for other values while they are the key).
	kept    *cuda.DeviceBuffer
	keptKey []input

	// BlockSize overrides the threads per block (0: DefaultBlock for the
	// tiled kernels; the occupancy API's choice, lowered to keep two blocks
	// per SM when there are few observers, for the comparison kernels).
	BlockSize int
	// Tile overrides the samples per tile of the tiled kernels (0:
	// DefaultTile, or SmallTile when the observers' blocks do not all fit on
	// the device at once with it). Block x tile is limited by the 48 KiB of
	// dynamic shared memory a block gets without opting in.
	Tile int
	// MaxGrid caps the tiled kernels' grid (0: the blocks that fit on the
	// device at once); blocks claim the work items beyond it as they finish.
	MaxGrid int
	// Unsorted keeps the observers in their given order instead of
	// HilbertOrder (the benchmark's comparison; the bits are the same).
	Unsorted bool
	// Variant selects the kernels: "" (the default: tiled), Tiled, Obs (one
	// thread per observer, the structure before the tiles), ColumnMajor
	// (the same reading column-major spline arrays) or Split (two phases:
	// the roots per (observer, particle), then the fields per (observer,
	// sample); every method, search and precision). Obs and ColumnMajor
	// exist for Newton float64 only (Obs: cold and reuse). For Split,
	// BlockSize is the solve's block and Tile the field's samples per block.
	Variant string
	// SplitScratch bounds the Split variant's scratch of roots (bytes; 0:
	// SplitScratchLimit): observers are processed in chunks that fit.
	SplitScratch int
	// LastSeconds is the device time of the last Run's kernel (events).
	LastSeconds float64
	// LastCopySeconds is the last Run's copy of the cube to the host (wall
	// time of the synchronous copies), LastCopyBytes its size.
	LastCopySeconds float64
	LastCopyBytes   int
	// LastLaunch describes the last Run's launch (grid, block, tile, shared
	// bytes), for the benchmark's log.
	LastLaunch string
	// LastTile is the last tiled Run's samples per tile (0 after other runs).
	LastTile int
	// LastSplit is the last Split Run's launch shapes (zero after other runs).
	LastSplit SplitLaunch
}

// Comparison kernels (Device.Variant): the suffix of their entry points.
const (
	Obs         = "_obs"
	ColumnMajor = "_cm"
	Split       = "_split"
	// Tiled selects the tiled kernels explicitly (the default in both
	// precisions).
	Tiled = "tiled"
	// Tret is the suffix of the tiled kernels that also write the retarded
	// times (those without it carry no per-sample test for them).
	Tret = "_tret"
)

// WalkBytes is fg_rad_walk<F>: a tiled walker's state between tiles (tau and
// the predictor, its interval and step), 16-byte aligned, in either precision
// at most 32 bytes.
const WalkBytes = 32

// particleRecords are the tiled kernels' fg_rad_particle<F> records: per
// particle its first knot's and last knot's times, its charge, and its knots'
// range off[p] .. off[p+1], 32 bytes each (the struct's layout in either
// precision: three F, two int32, zero padding).
func particleRecords[F float32 | float64](t, charge []F, off []int32) []byte {
	var z F
	fb := int(unsafe.Sizeof(z))
	out := make([]byte, 32*len(charge))
	for p := range charge {
		r := out[32*p:]
		a, b := off[p], off[p+1]
		for i, v := range []F{t[a], t[b-1], charge[p]} {
			if fb == 8 {
				binary.LittleEndian.PutUint64(r[8*i:], math.Float64bits(float64(v)))
			} else {
				binary.LittleEndian.PutUint32(r[4*i:], math.Float32bits(float32(v)))
			}
		}
		binary.LittleEndian.PutUint32(r[3*fb:], uint32(a))
		binary.LittleEndian.PutUint32(r[3*fb+4:], uint32(b))
	}
	return out
}

// DefaultBlock and DefaultTile are the tiled kernels' launch shape: 32
// observers per block (one warp: blocks spread evenly over the SMs when
// observers are few), 8 samples per tile (10 x 8 x 32 doubles of sums, 22
// KiB of shared memory per block in float64; each observer's 8 samples, 64
// bytes, are two whole sectors of the cube when written). Measured on the
// H200 (docs/performance/radiation.md): 32 x 8 was the fastest of 32/64/128
// observers x 2/4/8/16 samples, by 7% over 64 x 4, with 32768 observers.
//
// SmallTile is the tile when the work items' blocks are more than fit on the
// device at once with DefaultTile: shared memory allows 9 blocks of 32 x 8
// per SM in float64, registers 16 (under the 128-register cap of the float64
// tiled kernels), so with more items than that holds (and the grid loops),
// tiles of 4 keep more warps per SM resident. Measured on the H200: x1.16 /
// x1.23 at 131072 observers and
// x1.27 / x1.22 at 524288 (16 / 1024 knots per period); with 32768 observers,
// whose blocks all fit on the device at once, tiles of 8 stayed 6% faster at 16
// knots (tileFor decides by the work items the call has, segments included).
const (
	DefaultBlock = 32
	DefaultTile  = 8
	SmallTile    = 4
)

// tileFor is the tiled kernels' samples per tile for blocks of block
// observers and `blocks` work items (observer blocks x segments): DefaultTile
// while the items all fit at once, else the tile (DefaultTile or SmallTile)
// that keeps more blocks resident.
func tileFor(fn *cuda.Function, sms, block, blocks int) int {
	resident := func(tile int) int { return fn.DescribeAt(block, SharedBytes(block, tile)).BlocksPerSM * sms }
	if def := resident(DefaultTile); blocks <= def || resident(SmallTile) <= def {
		return DefaultTile
	}
	return SmallTile
}

// New loads the radiation kernels on b.
func New(b *cuda.Backend) (*Device, error) {
	m, err := b.LoadModule(src.RadiationCUDA)
	if err != nil {
		return nil, err
	}
	return &Device{b: b, m: m, pinned: newPinnedPool(b), scratch: scratchPool{free: map[int][]*cuda.DeviceBuffer{}}}, nil
}

// HostAllocator is the page-locked host memory the cubes come back into
// (kernels.HostMemory): the copy from the device runs at the link's
// speed, and Arrow, numpy and Python use the block where it lies.
func (d *Device) HostAllocator() kernels.Allocator { return d.pinned }

// SMs is the device's multiprocessor count.
func (d *Device) SMs() int { return d.b.SMs() }

// Module is the loaded module (for Describe).
func (d *Device) Module() *cuda.Module { return d.m }

func (d *Device) String() string { return "cuda: " + d.b.Device() }

// Close unloads the module and frees the idle pinned blocks (a cube still
// held keeps its own until it is released).
func (d *Device) Close() error {
	d.pinned.drain()
	d.mu.Lock()
	d.scratch.drain()
	d.out.Free()
	d.out = nil
	d.in.Free()
	d.in = nil
	d.kept.Free()
	d.kept, d.keptKey = nil, nil
	if d.unstage != nil {
		d.unstage()
	}
	d.stage, d.unstage = nil, nil
	d.mu.Unlock()
	return d.m.Close()
}

// args mirrors fg_rad_args<F> field for field, the C name in the c tag
// (natural alignment, in order; Go pads before C exactly when F is float64:
// the blank field). TestArgumentLayout holds it to the CUDA compiler's
// layout in both precisions (cuda.LayoutAsserts, NVRTC, no GPU).
type args[F float32 | float64] struct {
	T      uint64 `c:"t"`
	Y0     uint64 `c:"y0"`
	Y1     uint64 `c:"y1"`
	A1     uint64 `c:"a1"`
	A0     uint64 `c:"a0"`
	AY0    uint64 `c:"ay0"`
	AY1    uint64 `c:"ay1"`
	AA1    uint64 `c:"aa1"`
	AA0    uint64 `c:"aa0"`
	Off    uint64 `c:"off"`
	P      int32  `c:"P"`
	N      int32  `c:"n"`
	Charge uint64 `c:"charge"`
	OX     uint64 `c:"ox"`
	OY     uint64 `c:"oy"`
	OZ     uint64 `c:"oz"`
	R0     uint64 `c:"r0"`
	O      int32  `c:"O"`
	_      int32
	TP     uint64 `c:"tp"`
	S      int32  `c:"S"`
	C      F      `c:"c"`
	IC     F      `c:"ic"`
	NIters int32  `c:"n_iters"`
	NSubst int32  `c:"n_substeps"`
	Out    uint64 `c:"out"`
	Tret   uint64 `c:"tret"`
	Rec    uint64 `c:"rec"`
	Perm   uint64 `c:"perm"`
	WTau   uint64 `c:"w_tau"`
	WIdx   uint64 `c:"w_idx"`
	WWalk  uint64 `c:"w_walk"`
	Part   uint64 `c:"part"`
	Tile   int32  `c:"tile"`
	Seg    int32  `c:"seg"`
	O0     int32  `c:"o0"`
	OC     int32  `c:"oc"`
	Queue  uint64 `c:"queue"`
	TPSlot uint64 `c:"tp_slot"`
	Scale  uint64 `c:"scale"`
}

// launchBuffers are the device addresses and tile a launch's args take
// besides the uploaded arrays and the job's numbers.
type launchBuffers struct {
	off, out, tret, perm, wTau, wIdx, wWalk, part uint64
	queue, tpSlot, scale                          uint64
	tile, seg                                     int
}

// argsFor is fg_rad_args<F> for a launch over observer slots o0 .. o0+oc-1.
func argsFor[F float32 | float64](ar arrays, job *kernels.RadiationJob, lb launchBuffers, o0, oc int) *args[F] {
	opt := job.Kernel
	return &args[F]{T: ar.T, Y0: ar.Y0, Y1: ar.Y1, A1: ar.A1, A0: ar.A0, AY0: ar.AY0, AY1: ar.AY1, AA1: ar.AA1, AA0: ar.AA0, Off: lb.off,
		P: int32(job.P), N: int32(job.N), Charge: ar.Charge, OX: ar.OX, OY: ar.OY, OZ: ar.OZ, R0: ar.R0, O: int32(job.O),
		TP: ar.TP, S: int32(job.S), C: F(job.C), IC: 1 / F(job.C), NIters: int32(opt.NIters), NSubst: int32(opt.NSubsteps),
		Out: lb.out, Tret: lb.tret, Rec: ar.Rec, Perm: lb.perm, WTau: lb.wTau, WIdx: lb.wIdx, WWalk: lb.wWalk, Part: lb.part,
		Tile: int32(lb.tile), Seg: int32(lb.seg), O0: int32(o0), OC: int32(oc), Queue: lb.queue, TPSlot: lb.tpSlot, Scale: lb.scale}
}

// alloc hands out a run's device buffers from the Device's scratch pool and
// gives them back when the run ends: a call allocated and freed some twenty
// buffers (each cuMemAlloc with its clearing memset, each cuMemFree waiting
// for the device). A buffer from the pool is cleared like a fresh allocation
// (Module.Alloc clears), so no run can read what an earlier one left.
type alloc struct {
	m    *cuda.Module
	pool *scratchPool
	bufs []*cuda.DeviceBuffer
	err  error
}

// scratchPool keeps device buffers between runs (runs are serialised by
// Device.mu), by power-of-two size class, up to scratchPoolBytes in all.
type scratchPool struct {
	free  map[int][]*cuda.DeviceBuffer
	bytes int
}

const scratchPoolBytes = 1 << 30

func sizeClass(n int) int {
	c := 256
	for c < n {
		c <<= 1
	}
	return c
}

// get is a cleared buffer of at least n bytes.
func (a *alloc) get(n int) (*cuda.DeviceBuffer, error) {
	c := sizeClass(n)
	if l := a.pool.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		a.pool.free[c] = l[:len(l)-1]
		a.pool.bytes -= c
		if err := b.Memset(0, n, 0); err != nil {
			b.Free()
			return nil, err
		}
		return b, nil
	}
	return a.m.Alloc(c)
}

// inputs are a run's host arrays bound for the device, each at a 256-byte
// aligned offset of one block; addr receives its device address once
// Device.upload has copied them.
type inputs struct {
	parts []input
	size  int
}

type input struct {
	addr *uint64
	b    []byte
	off  int
}

// add queues host for the device; *addr becomes its address (0 when empty).
func add[T any](in *inputs, addr *uint64, host []T) {
	*addr = 0
	if len(host) == 0 {
		return
	}
	var z T
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(host))), len(host)*int(unsafe.Sizeof(z)))
	off := (in.size + 255) &^ 255
	in.parts = append(in.parts, input{addr, b, off})
	in.size = off + len(b)
}

// StageKeepBytes is the largest staging block kept page-locked between runs
// (the benchmark's inputs are 2.3 MB; sample times given per observer can
// be a GiB).
const StageKeepBytes = 64 << 20

// upload copies the queued inputs into the staging block and that block to
// the device block *dst in one copy (both grown to a power of two when too
// small), and sets their addresses. The caller holds d.mu; a run's kernels
// are done before the next run writes the blocks (Run waits for them).
func (d *Device) upload(in *inputs, dst **cuda.DeviceBuffer) error {
	if in.size == 0 {
		return nil
	}
	if len(d.stage) < in.size {
		if d.unstage != nil {
			d.unstage()
		}
		d.stage, d.unstage = nil, nil
		c := sizeClass(in.size)
		if f, free, err := d.b.HostAlloc(c / 8); err == nil {
			d.stage, d.unstage = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), c), free
		} else {
			d.stage = make([]byte, c) // page-locked memory refused: a pageable copy
		}
	}
	if *dst == nil || (*dst).Len() < in.size {
		(*dst).Free()
		var err error
		if *dst, err = d.m.Alloc(sizeClass(in.size)); err != nil {
			*dst = nil
			return err
		}
	}
	for _, p := range in.parts {
		copy(d.stage[p.off:], p.b)
	}
	err := cuda.Upload(*dst, 0, d.stage[:in.size])
	if len(d.stage) > StageKeepBytes { // per-observer sample times: not kept page-locked
		if d.unstage != nil {
			d.unstage()
		}
		d.stage, d.unstage = nil, nil
	}
	if err != nil {
		return err
	}
	for _, p := range in.parts {
		*p.addr = (*dst).Ptr() + uint64(p.off)
	}
	return nil
}

// uploadKept uploads st, a run's unchanging arrays, into the kept block,
// unless the last kept run uploaded the same slices (same memory, same
// lengths: the layout, so every offset, is the same too). kept: the job
// promises not to write them again; otherwise they are uploaded and not
// remembered.
func (d *Device) uploadKept(st *inputs, kept bool) error {
	if kept && d.kept != nil && sameSlices(d.keptKey, st.parts) {
		for _, p := range st.parts {
			*p.addr = d.kept.Ptr() + uint64(p.off)
		}
		return nil
	}
	d.keptKey = nil
	if err := d.upload(st, &d.kept); err != nil {
		return err
	}
	if kept {
		d.keptKey = st.parts
	}
	return nil
}

func sameSlices(a, b []input) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i].b) != len(b[i].b) || a[i].off != b[i].off ||
			(len(a[i].b) > 0 && unsafe.SliceData(a[i].b) != unsafe.SliceData(b[i].b)) {
			return false
		}
	}
	return true
}

// scratch is device memory the kernel writes before it reads (not uploaded).
func scratch(a *alloc, bytes int) uint64 {
	if a.err != nil || bytes == 0 {
		return 0
	}
	buf, err := a.get(bytes)
	if err != nil {
		a.err = err
		return 0
	}
	a.bufs = append(a.bufs, buf)
	return buf.Ptr()
}

func (a *alloc) free() {
	for _, b := range a.bufs {
		if a.pool.bytes+b.Len() <= scratchPoolBytes {
			a.pool.free[b.Len()] = append(a.pool.free[b.Len()], b)
			a.pool.bytes += b.Len()
			continue
		}
		b.Free()
	}
}

func (p *scratchPool) drain() {
	for _, l := range p.free {
		for _, b := range l {
			b.Free()
		}
	}
	p.free, p.bytes = map[int][]*cuda.DeviceBuffer{}, 0
}

type arrays struct {
	T, Y0, Y1, A1, A0, AY0, AY1, AA1, AA0, Charge, OX, OY, OZ, R0, TP, Rec uint64
	Times, Shift                                                           uint64
}

// SharedBytes is the tiled kernels' dynamic shared memory for a block of
// block threads (observers) and tiles of tile samples (radiation.cu's
// fg_rad_tiled): per observer and sample a slot of Slot doubles (the NComp
// sums and the shifted time, in either precision), and per observer its
// index.
func SharedBytes(block, tile int) int {
	return block*tile*Slot*8 + 4*block
}

// Slot is the doubles per (sample, observer) of the tiled kernels' shared
// memory: the sums (FG_RAD_SLOT2 double2) and the shifted time.
const Slot = kernels.RadiationComponents + 1

// ScratchLimit bounds the tiled kernels' walker scratch (bytes): the grid is
// lowered below the device's resident blocks when particles are so many
// that one walker per (thread, particle) would need more.
const ScratchLimit = 512 << 20

// stageArrays queues the job's arrays for the device: the knot times,
// observers, sample times and shifts (fg_rad_shift_* forms the shifted times
// from them); the interval records, or (columnMajor) the column-major spline
// arrays. The sample times go with dyn, the rest with st (a kept job's
// unchanging arrays).
func stageArrays[F float32 | float64](st, dyn *inputs, ar *arrays, x *kernels.RadiationArrays[F], columnMajor bool) {
	add(st, &ar.T, x.T)
	add(dyn, &ar.Charge, x.Charge) // float32's is converted per call
	add(st, &ar.OX, x.OX)
	add(st, &ar.OY, x.OY)
	add(st, &ar.OZ, x.OZ)
	add(st, &ar.R0, x.R0)
	add(dyn, &ar.Times, x.Times)
	add(st, &ar.Shift, x.Shift)
	if columnMajor {
		add(st, &ar.Y0, x.Y0)
		add(st, &ar.Y1, x.Y1)
		add(st, &ar.A1, x.A1)
		add(st, &ar.A0, x.A0)
		add(st, &ar.AY0, x.AY0)
		add(st, &ar.AY1, x.AY1)
		add(st, &ar.AA1, x.AA1)
		add(st, &ar.AA0, x.AA0)
	} else {
		add(st, &ar.Rec, x.Rec)
	}
}

// Effective is the entry-point suffix Device.Variant v selects: "" (the
// tiled kernels), Split, Obs or ColumnMajor. The default is the
// tiled kernels in both precisions: with the tiles running segments in
// parallel, float32 tiled is faster than split (on the H200: x1.28 / x1.07
// at 1024 / 16 knots per period; with one segment per tile, split was
// 1.23-1.30x faster). The bits are the same.
func Effective(v string) string {
	if v == Tiled {
		return ""
	}
	return v
}

// Run uploads the job, launches its kernel once (the Split variant: its
// two kernels once per chunk of observers), and copies the cube back.
func (d *Device) Run(job *kernels.RadiationJob) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	variant := Effective(d.Variant)
	name := EntryPoint(job.Kernel) + variant
	split := variant == Split
	tiled := variant == ""
	nOut, nTret := kernels.RadiationComponents*job.O*job.S, 0
	if job.Kernel.Retarded {
		nTret = job.P * job.O * job.S
	}
	if tiled && nTret > 0 {
		name += Tret
	}
	fn, err := d.m.Function(name)
	if err != nil {
		return err
	}
	var field *cuda.Function
	if split {
		if field, err = d.m.Function(SplitFieldKernel(job.Kernel.Precision)); err != nil {
			return err
		}
	}
	a := &alloc{m: d.m, pool: &d.scratch}
	defer a.free()
	ins, st := &inputs{}, &inputs{}
	var ar arrays
	fbytes := 8
	if job.F32 != nil {
		stageArrays(st, ins, &ar, job.F32, variant == ColumnMajor)
		fbytes = 4
	} else {
		stageArrays(st, ins, &ar, job.F64, variant == ColumnMajor)
	}
	prec := "f64"
	if job.F32 != nil {
		prec = "f32"
	}
	var off, scale uint64
	add(ins, &off, job.Off)
	if job.Scale != nil {
		if len(job.Scale) < (nOut+nTret)/max(1, job.O*job.S) {
			return errs.New(errs.Shape, "%d column factors for a cube of %d columns", len(job.Scale), (nOut+nTret)/max(1, job.O*job.S))
		}
		add(ins, &scale, job.Scale)
	}
	var block, tile, shared int
	seg := job.Segment // the caller resolves it (RadiationJob); every kernel takes it
	if seg < 1 || seg > job.S {
		return errs.New(errs.Parameter, "segment %d: a RadiationJob's is 1 .. S = %d", seg, job.S)
	}
	var grid uint32
	var perm, wTau, wIdx, wWalk, part, queue, tpSlot uint64
	var sp splitPlan
	if split {
		if sp, err = d.planSplit(fn, job, fbytes); err != nil {
			return err
		}
		block, tile, shared = sp.solveBlock, sp.tile, sp.shared
		if !d.Unsorted {
			add(st, &perm, d.orders.order(job.OX, job.OY, job.OZ, job.Kept))
		}
		w := sp.oc * job.S * job.P
		wTau, wIdx = scratch(a, w*fbytes), scratch(a, 4*w)
		if a.err != nil {
			return a.err
		}
	} else if tiled {
		block, tile = d.BlockSize, d.Tile
		if block <= 0 {
			block = DefaultBlock
		}
		if block%32 != 0 || block > 1024 {
			return errs.New(errs.Parameter, "block %d: want a multiple of 32 up to 1024", block)
		}
		items := (job.O + block - 1) / block * ((job.S + seg - 1) / seg)
		if tile <= 0 {
			tile = tileFor(fn, d.b.SMs(), block, items)
		}
		shared = SharedBytes(block, tile)
		if shared > 48<<10 {
			return errs.New(errs.Parameter, "block %d x tile %d needs %d bytes of shared memory, over 48 KiB", block, tile, shared)
		}
		in := fn.DescribeAt(block, shared)
		g := min(items, max(1, in.BlocksPerSM)*d.b.SMs())
		if d.MaxGrid > 0 {
			g = min(g, d.MaxGrid)
		}
		g = max(1, min(g, ScratchLimit/max(1, job.P*block*WalkBytes)))
		grid = uint32(g)
		if !d.Unsorted {
			add(st, &perm, d.orders.order(job.OX, job.OY, job.OZ, job.Kept))
		}
		tpSlot = scratch(a, job.O*job.S*fbytes)
		wWalk = scratch(a, job.P*g*block*WalkBytes)
		add(ins, &queue, []int32{0})
		if job.F32 != nil {
			add(ins, &part, particleRecords(job.F32.T, job.F32.Charge, job.Off))
		} else {
			add(ins, &part, particleRecords(job.F64.T, job.F64.Charge, job.Off))
		}
		if a.err != nil {
			return a.err
		}
	} else {
		block = d.BlockSize
		if block <= 0 {
			block = fn.Describe().BlockSize
			for block > 32 && (job.O+block-1)/block < 2*d.b.SMs() {
				block /= 2
			}
			block = max(32, block/32*32)
		}
		grid = uint32((job.O + block - 1) / block)
	}
	if err := d.uploadKept(st, job.Kept); err != nil {
		return err
	}
	if err := d.upload(ins, &d.in); err != nil {
		return err
	}
	// The shifted times on the device: slot-major through the schedule for
	// the tiled kernels, observer-major for the others.
	times := 0
	if job.F32 != nil {
		times = len(job.F32.Times)
	} else {
		times = len(job.F64.Times)
	}
	tstride := int32(0) // times shared by every observer, or a row each
	if times != job.S {
		tstride = int32(job.S)
	}
	shiftGrid := [3]uint32{uint32(min(max(1, (job.O*job.S+255)/256), 64*d.b.SMs())), 1, 1}
	if tiled {
		shift, err := d.m.Function("fg_rad_shift_slot_" + prec)
		if err != nil {
			return err
		}
		err = d.m.Launch(shift, shiftGrid, [3]uint32{256, 1, 1}, 0, &shiftSlotArgs{Times: driver.DevicePtr(ar.Times), Tstride: tstride,
			Shift: driver.DevicePtr(ar.Shift), Perm: driver.DevicePtr(perm), O: int32(job.O), S: int32(job.S), TP: driver.DevicePtr(tpSlot)})
		if err != nil {
			return err
		}
	} else {
		ar.TP = scratch(a, job.O*job.S*fbytes)
		if a.err != nil {
			return a.err
		}
		shift, err := d.m.Function("fg_rad_shift_obs_" + prec)
		if err != nil {
			return err
		}
		if err := d.m.Launch(shift, shiftGrid, [3]uint32{256, 1, 1}, 0, &shiftObsArgs{Times: driver.DevicePtr(ar.Times), Tstride: tstride,
			Shift: driver.DevicePtr(ar.Shift), O: int32(job.O), S: int32(job.S), TP: driver.DevicePtr(ar.TP)}); err != nil {
			return err
		}
	}
	// One block for the cube and its retarded times, kept for the next run;
	// a cube left on the device takes the kept block with it (or a new one)
	// and gives it back when it is released (keep), so calls that hand out
	// and release a cube each allocate, clear and free 8 x 10 x O x S bytes
	// no more than host calls do. Only the comparison kernels that add into
	// it need it cleared: the tiled and split kernels write every value.
	n := nOut + nTret
	if d.out == nil || d.out.Len() < 8*n {
		d.out.Free()
		if d.out, err = d.m.Alloc(8 * n); err != nil {
			d.out = nil
			return err
		}
	} else if variant == Obs || variant == ColumnMajor {
		if err := d.out.Memset(0, 8*n, 0); err != nil {
			return err
		}
	}
	out := d.out
	if job.OnDevice {
		d.out = nil
		defer func() {
			if job.DeviceOut == nil { // not handed out: an error on the way
				d.keep(out)
			}
		}()
	}
	tp := uint64(0)
	if nTret > 0 {
		tp = out.Ptr() + uint64(8*nOut)
	}
	lb := launchBuffers{off: off, out: out.Ptr(), tret: tp, perm: perm, wTau: wTau, wIdx: wIdx, wWalk: wWalk, part: part, queue: queue, tpSlot: tpSlot, tile: tile, seg: seg}
	if tiled {
		lb.scale = scale
	}
	argsAt := func(o0, oc int) any {
		if job.F32 != nil {
			return argsFor[float32](ar, job, lb, o0, oc)
		}
		return argsFor[float64](ar, job, lb, o0, oc)
	}
	d.LastSplit, d.LastTile = SplitLaunch{}, 0
	if tiled {
		d.LastTile = tile
	}
	if split {
		d.LastLaunch = sp.String()
		d.LastSplit = SplitLaunch{SolveBlock: sp.solveBlock, Tile: sp.tile, Shared: sp.shared, Chunk: sp.oc, Chunks: sp.chunks}
	} else {
		d.LastLaunch = fmt.Sprintf("grid %d x block %d, tile %d, %d B shared", grid, block, tile, shared)
		if seg < job.S {
			d.LastLaunch += fmt.Sprintf(", segments of %d samples", seg)
		}
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
	if split {
		for o0 := 0; o0 < job.O; o0 += sp.oc {
			oc := min(sp.oc, job.O-o0)
			raw := argsAt(o0, oc)
			g := uint32((job.P*oc + sp.solveBlock - 1) / sp.solveBlock)
			if err := d.m.Launch(fn, [3]uint32{g, 1, 1}, [3]uint32{uint32(sp.solveBlock), 1, 1}, 0, raw); err != nil {
				return err
			}
			g = uint32((oc + 31) / 32 * ((job.S + sp.tile - 1) / sp.tile))
			if err := d.m.Launch(field, [3]uint32{g, 1, 1}, [3]uint32{32, uint32(sp.tile), 1}, sp.shared, raw); err != nil {
				return err
			}
		}
	} else if err := d.m.Launch(fn, [3]uint32{grid, 1, 1}, [3]uint32{uint32(block), 1, 1}, shared, argsAt(0, job.O)); err != nil {
		return err
	}
	end.Record()
	// float32's units: the tiled kernels scale the field columns as they
	// write them (a pass of its own over the benchmark's 671 MB cube took
	// 0.34 ms); the retarded times, and the other kernels' cubes, here.
	if job.Scale != nil {
		unscale, err := d.m.Function("fg_rad_unscale")
		if err != nil {
			return err
		}
		first, ptr, f := 0, out.Ptr(), scale
		if tiled {
			first = kernels.RadiationComponents
			ptr, f = out.Ptr()+uint64(8*nOut), scale+uint64(8*first)
		}
		if cols := n/(job.O*job.S) - first; cols > 0 {
			g := [3]uint32{uint32(min(max(1, (job.O*job.S+255)/256), 4*d.b.SMs())), uint32(cols), 1}
			if err := d.m.Launch(unscale, g, [3]uint32{256, 1, 1}, 0, &unscaleArgs{Out: driver.DevicePtr(ptr), N: int64(job.O * job.S), F: driver.DevicePtr(f)}); err != nil {
				return err
			}
		}
	}
	if d.LastSeconds, err = cuda.Elapsed(start, end); err != nil {
		return err
	}
	if job.OnDevice {
		// Settled before it is handed out: a consumer may read it on any
		// stream.
		if err := d.m.Synchronize(); err != nil {
			return err
		}
		job.DeviceOut = &kernels.DeviceBlock{Ptr: out.Ptr(), Bytes: 8 * n, Device: d.b.Ordinal(), Free: func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.keep(out)
		}}
		return nil
	}
	t0 := time.Now()
	if err := cuda.Download(job.Out, out, 0); err != nil {
		return err
	}
	if nTret > 0 {
		if err := cuda.Download(job.Tret, out, 8*nOut); err != nil {
			return err
		}
	}
	d.LastCopySeconds, d.LastCopyBytes = time.Since(t0).Seconds(), 8*n
	return nil
}

// keep makes b the kept cube block when it is larger than the one kept (the
// smaller of the two is freed); the caller holds d.mu.
func (d *Device) keep(b *cuda.DeviceBuffer) {
	if d.out == nil || d.out.Len() < b.Len() {
		d.out, b = b, d.out
	}
	b.Free()
}

var _ kernels.RadiationDevice = (*Device)(nil)
