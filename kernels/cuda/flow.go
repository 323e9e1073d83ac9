package cuda

/*
#include <stdlib.h>
#include <string.h>
#include "api.h"
#include "cuda_args.h"
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// flowRing is the number of step records the device keeps between host
// polls; a Run polls at least every flowRing steps.
const flowRing = 1024

// defaultPoll is the steps between host polls when the caller leaves it to
// the flow.
const defaultPoll = 64

// Flow is an arrested Newton flow on the device (kernels.Flow). One step is
// six kernels on the flow's own stream (see cuda_kernels.cu, "The
// shared-memory tiled stencil and the arrested Newton flow", and fg_fold):
// fg_k_tile stage 1, fg_k_rows, fg_k_decide (the reduction's last
// levels and the arrest decision), stages 2 and 3, and stage 4 with the RK4
// update fused (fg_k_tile_up), which writes phi' and v' into a second pair of
// buffers: steps alternate between the spec's Phi/Vel and the flow's own pair
// (ping-pong), and a run that ends on the second pair copies it back. Two
// steps (one from each pair) are captured into one CUDA graph, single steps
// into their own; Run launches graphs and reads the control block and the
// record ring back asynchronously every pollEvery steps, double-buffered, so
// the stream never waits for the host. FIELDGO_FLOW_FOLD=1 folds fg_k_rows
// and fg_k_decide into stage 1 (last-block-done; measured slower, so off);
// FIELDGO_FLOW_FUSE=0 selects the phase-2 step (separate fg_k_update).
type Flow struct {
	p      *Program
	spec   kernels.FlowSpec
	shape  tileShape // of every stage's tile launch
	stream C.CUstream
	graphs []C.CUgraph
	single [2]C.CUgraphExec // one step from parity 0 / 1
	pair   C.CUgraphExec    // two steps from parity 0
	why    string           // why there is no graph, "" if there is one

	fuse, fold         bool
	fuse234            bool // stages 2-4 in one kernel (fg_k_stages234)
	fieldBytes         int
	phiD, velD         C.CUdeviceptr // the spec's Phi and Vel
	params, part, rows devScratch
	phi2, vel2, cnt    devScratch
	ctl                C.CUdeviceptr  // fg_flowctl followed by the ring
	snap               unsafe.Pointer // pinned: 2 snapshots of ctl+ring, then one upload slot
	ev                 [2]C.CUevent

	steps  [2][]flowLaunch    // one step from parity 0 (spec buffers) / 1 (own pair)
	diag   [2][5][]flowLaunch // fuse: launches that store stage k's gradient again, to name a non-finite site
	closed bool
}

type flowLaunch struct {
	name   string
	grid   int
	bx, by int
	smem   int
	args   *C.fg_cargs // C memory
}

func snapBytes() int { return int(C.sizeof_fg_flowctl) + flowRing*int(C.sizeof_fg_flowrec) }

// NewFlow implements kernels.Stepper for the continuum gradient form.
func (p *Program) NewFlow(spec kernels.FlowSpec) (kernels.Flow, error) {
	if spec.Form != kernels.Continuum {
		return nil, errs.New(errs.Backend, "the device flow fuses the continuum gradient only; the %v form steps on the host", spec.Form)
	}
	if !(spec.Dt > 0) || math.IsInf(spec.Dt, 0) || math.IsNaN(spec.Tol) {
		return nil, errs.New(errs.Parameter, "bad flow settings dt=%v tol=%v", spec.Dt, spec.Tol)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f := &Flow{p: p, spec: spec}
	f.spec.Params = append([]float64(nil), spec.Params...)
	err := p.withCtx(func() error { return f.build() })
	if err != nil {
		_ = p.withCtx(func() error { f.free(); return nil })
		return nil, err
	}
	return f, nil
}

func (f *Flow) build() error {
	p, spec, g := f.p, f.spec, f.spec.Grid
	a0, err := p.args(g, spec.Params) // validates the grid and parameters
	if err != nil {
		return err
	}
	bufs := []kernels.Buffer{spec.Phi, spec.Vel, spec.G[0], spec.G[1], spec.G[2], spec.G[3]}
	names := []string{"field", "velocity", "gradient 1", "gradient 2", "gradient 3", "gradient 4"}
	var d [6]C.fg_dptr
	for i, b := range bufs {
		cb, err := p.buf(b)
		if err != nil {
			return err
		}
		if err := p.checkField(names[i], cb, g); err != nil {
			return err
		}
		d[i] = C.fg_dptr(cb.d)
	}
	phi, vel, g0, g1, g2, g3 := d[0], d[1], d[2], d[3], d[4], d[5]
	// Own parameters and scratch: the Program's are shared with its other
	// operations and may move; a graph keeps the pointers it captured.
	if err := f.params.ensure(8 * (len(spec.Params) + 1)); err != nil {
		return err
	}
	if len(spec.Params) > 0 {
		if err := check(C.fg_cuMemcpyHtoD(f.params.d, unsafe.Pointer(&spec.Params[0]), C.size_t(8*len(spec.Params))), "cuMemcpyHtoD params"); err != nil {
			return err
		}
	}
	if err := f.part.ensure(8 * 3 * g.Ny * int(a0.nchunk)); err != nil {
		return err
	}
	if err := f.rows.ensure(8 * 3 * g.Ny); err != nil {
		return err
	}
	if err := check(C.fg_cuMemAlloc(&f.ctl, C.size_t(snapBytes())), "cuMemAlloc flow control"); err != nil {
		return err
	}
	if err := check(C.fg_cuMemsetD8(f.ctl, 0, C.size_t(snapBytes())), "cuMemsetD8"); err != nil {
		return err
	}
	if err := check(C.fg_cuMemAllocHost(&f.snap, C.size_t(3*snapBytes())), "cuMemAllocHost"); err != nil {
		return err
	}
	for i := range f.ev {
		if err := check(C.fg_cuEventCreate(&f.ev[i], C.CU_EVENT_DISABLE_TIMING), "cuEventCreate"); err != nil {
			return err
		}
	}
	// A blocking stream: ordered with the default stream the Program's
	// other operations use.
	if err := check(C.fg_cuStreamCreate(&f.stream, 0), "cuStreamCreate"); err != nil {
		return err
	}

	f.fuse = os.Getenv("FIELDGO_FLOW_FUSE") != "0"
	// Off by default: measured slower than fg_k_rows + fg_k_decide at every
	// size on the H200 (docs/performance/gpu.md).
	f.fold = os.Getenv("FIELDGO_FLOW_FOLD") == "1"
	f.fieldBytes = p.prec.Bytes() * p.unit.NComp * g.Sites()
	f.phiD, f.velD = C.CUdeviceptr(phi), C.CUdeviceptr(vel)

	base := *a0
	base.params = C.fg_dptr(f.params.d)
	base.part = C.fg_dptr(f.part.d)
	base.ctl = C.fg_dptr(f.ctl)
	base.ring = C.fg_dptr(f.ctl) + C.fg_dptr(C.sizeof_fg_flowctl)
	base.ringcap = flowRing
	base.tol = C.double(spec.Tol)
	base.dt = C.double(spec.Dt)
	if spec.EnergyArrest {
		base.energy_arrest = 1
	}
	uv := 0
	if spec.UnitVector {
		uv = 1
	}
	dt := spec.Dt

	s1 := base
	s1.stage, s1.nterms, s1.coef[0], s1.terms[0] = 1, 1, 1, phi
	s1.phi, s1.vel, s1.out, s1.want_energy, s1.project = phi, vel, g0, 1, C.int(uv)
	// The host loop's coefficients (core/flow.go), the velocity's multiplied
	// on the device by the arrest decision kv in {0, 1}.
	stage := func(k int, cur, cvel C.fg_dptr, terms []C.fg_dptr, coefs []float64, out C.fg_dptr) C.fg_cargs {
		a := base
		a.stage, a.nterms, a.out, a.project = C.int(k), C.int(len(terms)), out, C.int(uv)
		a.phi = cur // unused by the tile kernel beyond its terms
		for t := range terms {
			a.terms[t], a.coef[t] = terms[t], C.double(coefs[t])
		}
		return a
	}
	h := dt * dt / 6
	stages := func(cur, cvel, nxt, nvel C.fg_dptr) (s2, s3, s4, fz C.fg_cargs) {
		s2 = stage(2, cur, cvel, []C.fg_dptr{cur, cvel}, []float64{1, dt / 2}, g1)
		s3 = stage(3, cur, cvel, []C.fg_dptr{cur, cvel, g0}, []float64{1, dt / 2, -dt * dt / 4}, g2)
		s4 = stage(4, cur, cvel, []C.fg_dptr{cur, cvel, g1}, []float64{1, dt, -dt * dt / 2}, g3)
		fz = s4
		fz.out = 0
		fz.terms[3], fz.terms[4], fz.terms[5], fz.terms[6] = g0, g2, nxt, nvel
		fz.coef[3], fz.coef[4], fz.coef[5] = C.double(-h), C.double(-dt/6), C.double(-dt/3)
		return
	}
	// fg_k_stages234's arguments (cuda_kernels.cu): the three trials'
	// coefficients and the update's.
	fused234 := func(cur, cvel, nxt, nvel C.fg_dptr) C.fg_cargs {
		a := base
		a.stage, a.nterms, a.out, a.project = 2, 3, 0, C.int(uv)
		a.phi = cur
		a.terms[0], a.terms[1], a.terms[2], a.terms[5], a.terms[6] = cur, cvel, g0, nxt, nvel
		a.coef[0], a.coef[1], a.coef[2], a.coef[3] = C.double(dt/2), C.double(-dt*dt/4), C.double(dt), C.double(-dt*dt/2)
		a.coef[4], a.coef[5], a.coef[6], a.coef[7] = C.double(-h), C.double(-dt/6), C.double(-dt/3), 1
		return a
	}
	// The fused stage 4 holds more registers than fg_k_tile for some
	// theories: it needs a launchable shape.
	f.fuse = f.fuse && p.anyTile("fg_k_tile_up")
	// Stages 2-4 in one kernel (x1.08-1.29 per step on the H200, docs/performance/gpu.md);
	// FIELDGO_FLOW_FUSE234=0 keeps three kernels, for A/B runs.
	f.fuse234 = f.fuse && !f.fold && os.Getenv("FIELDGO_FLOW_FUSE234") != "0" && p.anyTile("fg_k_stages234")
	if f.fuse {
		if err := f.phi2.ensure(f.fieldBytes); err != nil {
			return err
		}
		if err := f.vel2.ensure(f.fieldBytes); err != nil {
			return err
		}
	}
	// The tile shape, tuned (or read from the cache) on the step's tile
	// launches together (four; two with stages 2-4 in one kernel): the one-term copy of stage 1, the trial fields' two
	// and three terms and the fused update load different streams and hold
	// different registers, and the shape stage 1 alone likes can be the
	// slowest for the step (docs/performance/gpu.md). The tuning
	// launches write the flow's scratch (gradients, partials, the second
	// buffer pair) and never its control block.
	{
		nxt, nvel := C.fg_dptr(f.phi2.d), C.fg_dptr(f.vel2.d)
		var ls []tileLaunch
		if f.fuse234 {
			ls = []tileLaunch{{"fg_k_tile", s1}, {"fg_k_stages234", fused234(phi, vel, nxt, nvel)}}
		} else {
			s2, s3, s4, fz := stages(phi, vel, nxt, nvel)
			last := tileLaunch{"fg_k_tile", s4}
			if f.fuse {
				last = tileLaunch{"fg_k_tile_up", fz}
			}
			ls = []tileLaunch{{"fg_k_tile", s1}, {"fg_k_tile", s2}, {"fg_k_tile", s3}, last}
		}
		if f.shape, err = p.tuned(sizeClass(g), ls); err != nil {
			return err
		}
		p.setTileInfo("fg_k_tile", f.shape)
		if f.fuse234 {
			p.setTileInfo("fg_k_stages234", f.shape)
		} else if f.fuse {
			p.setTileInfo("fg_k_tile_up", f.shape)
		}
	}
	ty := f.shape.BY * f.shape.RPT
	nband := (g.Ny + ty - 1) / ty
	if f.fold {
		if err := f.cnt.ensure(4 * (nband + 1)); err != nil {
			return err
		}
		if err := check(C.fg_cuMemsetD8(f.cnt.d, 0, C.size_t(4*(nband+1))), "cuMemsetD8"); err != nil {
			return err
		}
	}
	tile := func(a C.fg_cargs) flowLaunch {
		a.rpt = C.int(f.shape.RPT)
		return flowLaunch{name: "fg_k_tile", grid: int(a.nchunk) * nband, bx: 32, by: f.shape.BY,
			smem: f.shape.smem(p.unit.NComp), args: cargs(a)}
	}
	one := func(name string, a C.fg_cargs, threads int) flowLaunch {
		bs := p.k[name].info.BlockSize
		return flowLaunch{name: name, grid: (threads + bs - 1) / bs, bx: bs, by: 1, args: cargs(a)}
	}
	for par := 0; par < 2; par++ {
		if par == 1 && !f.fuse {
			break
		}
		cur, cvel, nxt, nvel := phi, vel, C.fg_dptr(f.phi2.d), C.fg_dptr(f.vel2.d)
		if par == 1 {
			cur, cvel, nxt, nvel = nxt, nvel, cur, cvel
		}
		a1 := s1
		a1.terms[0], a1.phi, a1.vel = cur, cur, cvel
		var st []flowLaunch
		if f.fold {
			a1.fold, a1.cnt, a1.rows = 1, C.fg_dptr(f.cnt.d), C.fg_dptr(f.rows.d)
			st = append(st, tile(a1))
		} else {
			rows := base
			rows.stage, rows.out = 1, C.fg_dptr(f.rows.d)
			decide := base
			decide.stage, decide.part = 1, C.fg_dptr(f.rows.d)
			st = append(st, tile(a1), one("fg_k_rows", rows, g.Ny*32),
				flowLaunch{name: "fg_k_decide", grid: 1, bx: C.FG_FINAL_THREADS, by: 1, args: cargs(decide)})
		}
		s2, s3, s4, fz := stages(cur, cvel, nxt, nvel)
		switch {
		case f.fuse234:
			l := tile(fused234(cur, cvel, nxt, nvel))
			l.name, l.smem = "fg_k_stages234", p.tileSmem("fg_k_stages234", f.shape)
			st = append(st, l)
			// g1 and g2 stay in shared memory: store them again (same bits).
			t2 := tile(s2)
			f.diag[par][2] = []flowLaunch{t2}
			f.diag[par][3] = []flowLaunch{tile(s3)}
			f.diag[par][4] = []flowLaunch{t2, tile(s4)}
		case f.fuse:
			st = append(st, tile(s2), tile(s3))
			l := tile(fz)
			l.name = "fg_k_tile_up"
			st = append(st, l)
			f.diag[par][4] = []flowLaunch{tile(s4)}
		default:
			st = append(st, tile(s2), tile(s3))
			up := base
			up.stage, up.phi, up.vel, up.project = 5, phi, vel, C.int(uv)
			up.terms[0], up.terms[1], up.terms[2], up.terms[3] = g0, g1, g2, g3
			up.coef[0], up.coef[1], up.coef[2] = C.double(-h), C.double(-dt/6), C.double(-dt/3)
			st = append(st, tile(s4), one("fg_k_update", up, g.Sites()))
		}
		f.steps[par] = st
	}
	if !f.fuse {
		f.steps[1] = f.steps[0]
	}

	// Capture the steps into graphs; without graphs, launch one by one.
	if C.fg_cuGraphsAvailable() == 0 {
		f.why = "the driver has no CUDA graph API"
		return nil
	}
	var err2 error
	if f.single[0], err2 = f.capture(f.steps[0]); err2 == nil {
		if f.single[1], err2 = f.capture(f.steps[1]); err2 == nil {
			f.pair, err2 = f.capture(append(append([]flowLaunch(nil), f.steps[0]...), f.steps[1]...))
		}
	}
	if err2 != nil {
		f.why = err2.Error()
		f.freeGraphs()
	}
	return nil
}

// capture records launches on the flow's stream into an instantiated graph.
func (f *Flow) capture(ls []flowLaunch) (C.CUgraphExec, error) {
	if err := check(C.fg_cuStreamBeginCapture(f.stream), "cuStreamBeginCapture"); err != nil {
		return nil, err
	}
	lerr := f.launchList(ls)
	var graph C.CUgraph
	cerr := check(C.fg_cuStreamEndCapture(f.stream, &graph), "cuStreamEndCapture")
	if lerr != nil || cerr != nil {
		if graph != nil {
			C.fg_cuGraphDestroy(graph)
		}
		if lerr != nil {
			return nil, lerr
		}
		return nil, cerr
	}
	f.graphs = append(f.graphs, graph)
	var exec C.CUgraphExec
	if err := check(C.fg_cuGraphInstantiate(&exec, graph), "cuGraphInstantiate"); err != nil {
		return nil, err
	}
	return exec, nil
}

func (f *Flow) freeGraphs() {
	for i := range f.single {
		if f.single[i] != nil {
			C.fg_cuGraphExecDestroy(f.single[i])
			f.single[i] = nil
		}
	}
	if f.pair != nil {
		C.fg_cuGraphExecDestroy(f.pair)
		f.pair = nil
	}
	for _, g := range f.graphs {
		C.fg_cuGraphDestroy(g)
	}
	f.graphs = nil
}

// cargs copies a into C memory (freed with the flow).
func cargs(a C.fg_cargs) *C.fg_cargs {
	m := (*C.fg_cargs)(C.malloc(C.size_t(C.sizeof_fg_cargs)))
	*m = a
	return m
}

func (f *Flow) launchList(ls []flowLaunch) error {
	for _, l := range ls {
		k := f.p.k[l.name]
		if err := check(C.fg_cuLaunch(k.fn, C.uint(l.grid), C.uint(l.bx), C.uint(l.by), C.uint(l.smem), f.stream, unsafe.Pointer(l.args)), "launch "+l.name); err != nil {
			return err
		}
	}
	return nil
}

// parity is which buffer pair step i of a run (from 0) reads: runs start on
// the spec's buffers, and with the fused update every step flips the pair.
func (f *Flow) parity(i int) int {
	if f.fuse {
		return i & 1
	}
	return 0
}

// launch enqueues steps from..from+k-1 of a run: a single step to reach
// parity 0, then pairs, then a single step.
func (f *Flow) launch(from, k int) error {
	for k > 0 {
		par := f.parity(from)
		var err error
		switch {
		case f.pair == nil:
			err = f.launchList(f.steps[par])
			from, k = from+1, k-1
		case par == 0 && k >= 2:
			err = check(C.fg_cuGraphLaunch(f.pair, f.stream), "cuGraphLaunch")
			from, k = from+2, k-2
		default:
			err = check(C.fg_cuGraphLaunch(f.single[par], f.stream), "cuGraphLaunch")
			from, k = from+1, k-1
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Describe says how the flow runs.
func (f *Flow) Describe() string {
	mode := "CUDA graphs of 2 steps"
	if f.pair == nil {
		mode = "plain launches (" + f.why + ")"
	}
	var how []string
	if f.fold {
		how = append(how, "stage 1 reduces and decides")
	}
	if f.fuse234 {
		how = append(how, "stages 2-4 in one kernel")
	}
	if f.fuse {
		how = append(how, "stage 4 fuses the update (ping-pong buffers)")
	}
	return fmt.Sprintf("device ANF: %d kernels per step (%s), %s; tile 32x%d sites (block 32x%d, %d rows per thread); %s storage", len(f.steps[0]),
		joinStrings(how, ", "), mode, f.shape.BY*f.shape.RPT, f.shape.BY, f.shape.RPT, f.p.prec)
}

// Graphed reports whether the steps run as CUDA graphs.
func (f *Flow) Graphed() bool { return f.pair != nil }

// Run implements kernels.Flow.
func (f *Flow) Run(st kernels.FlowState, maxSteps, pollEvery int, cancel *atomic.Bool) (kernels.FlowResult, error) {
	var res kernels.FlowResult
	res.State = st
	if f.closed {
		return res, errs.New(errs.Released, "the flow has been closed")
	}
	if maxSteps <= 0 {
		return res, nil
	}
	if pollEvery <= 0 {
		pollEvery = defaultPoll
	}
	if pollEvery > flowRing {
		pollEvery = flowRing
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := f.p.b.bind(); err != nil {
		return res, err
	}
	sb := snapBytes()
	up := (*C.fg_flowctl)(unsafe.Add(f.snap, 2*sb))
	C.memset(unsafe.Pointer(up), 0, C.sizeof_fg_flowctl)
	up.step, up.resets = C.longlong(st.Step), C.longlong(st.Resets)
	up.kv, up.prev_energy = 1, C.double(st.PrevEnergy)
	if err := check(C.fg_cuMemcpyHtoDAsync(f.ctl, unsafe.Pointer(up), C.size_t(C.sizeof_fg_flowctl), f.stream), "cuMemcpyHtoDAsync"); err != nil {
		return res, err
	}
	var queue []int // snapshot slots in flight, oldest first
	launched, slot := 0, 0
	var seen int64
	halt := false
	var last *C.fg_flowctl
	for {
		for len(queue) < 2 && launched < maxSteps && !halt {
			k := min(pollEvery, maxSteps-launched)
			if err := f.launch(launched, k); err != nil {
				C.fg_cuStreamSynchronize(f.stream)
				return res, err
			}
			launched += k
			dst := unsafe.Add(f.snap, slot*sb)
			if err := check(C.fg_cuMemcpyDtoHAsync(dst, f.ctl, C.size_t(sb), f.stream), "cuMemcpyDtoHAsync"); err != nil {
				C.fg_cuStreamSynchronize(f.stream)
				return res, err
			}
			if err := check(C.fg_cuEventRecord(f.ev[slot], f.stream), "cuEventRecord"); err != nil {
				C.fg_cuStreamSynchronize(f.stream)
				return res, err
			}
			queue = append(queue, slot)
			slot ^= 1
		}
		if len(queue) == 0 {
			break
		}
		s := queue[0]
		queue = queue[1:]
		if err := check(C.fg_cuEventSynchronize(f.ev[s]), "cuEventSynchronize"); err != nil {
			C.fg_cuStreamSynchronize(f.stream)
			return res, err
		}
		c := (*C.fg_flowctl)(unsafe.Add(f.snap, s*sb))
		ring := unsafe.Slice((*C.fg_flowrec)(unsafe.Add(unsafe.Pointer(c), C.sizeof_fg_flowctl)), flowRing)
		for r := seen; r < int64(c.nrec); r++ {
			rec := ring[r%flowRing]
			res.Records = append(res.Records, kernels.FlowRecord{Step: int(rec.step), Resets: int(rec.resets),
				Energy: float64(rec.energy), MaxGrad: float64(rec.max_grad)})
		}
		seen = int64(c.nrec)
		cp := *c
		last = &cp
		if c.stop != 0 || c.nonfinite != 0 {
			halt = true
		}
		if cancel != nil && cancel.Load() && launched < maxSteps {
			halt, res.Cancelled = true, true
		}
	}
	c := last
	if c.pending != 0 && c.nonfinite == 0 && c.stop == 0 {
		// The last step decided was taken; its commit is the host's.
		c.step++
		c.taken++
		if c.arrest != 0 {
			c.resets++
		}
		c.prev_energy = c.energy1
	}
	if f.fuse {
		par := int(c.taken) & 1 // the pair holding the state
		if c.nonfinite >= 2 && c.nonfinite <= 4 && len(f.diag[par][c.nonfinite]) > 0 {
			// The stage stored no gradient: recompute it (same bits) so the
			// caller can name the site.
			if err := f.launchList(f.diag[par][c.nonfinite]); err != nil {
				C.fg_cuStreamSynchronize(f.stream)
				return res, err
			}
		}
		if par == 1 {
			for _, cp := range [][2]C.CUdeviceptr{{f.phiD, f.phi2.d}, {f.velD, f.vel2.d}} {
				if err := check(C.fg_cuMemcpyDtoDAsync(cp[0], cp[1], C.size_t(f.fieldBytes), f.stream), "cuMemcpyDtoDAsync"); err != nil {
					C.fg_cuStreamSynchronize(f.stream)
					return res, err
				}
			}
		}
	}
	if err := check(C.fg_cuStreamSynchronize(f.stream), "cuStreamSynchronize"); err != nil {
		return res, err
	}
	res.State = kernels.FlowState{Step: int(c.step), Resets: int(c.resets), PrevEnergy: float64(c.prev_energy)}
	res.Taken = int(c.taken)
	switch {
	case c.stop == C.FG_STOP_CONVERGED:
		res.Stop = kernels.FlowConverged
	case c.stop == C.FG_STOP_NONFINITE:
		res.Stop, res.Stage = kernels.FlowNonFinite, 1
	case c.nonfinite != 0:
		res.Stop, res.Stage = kernels.FlowNonFinite, int(c.nonfinite)
	}
	if res.Stop != kernels.FlowRunning {
		res.Cancelled = false
	}
	return res, nil
}

// Close frees the flow's graph, stream and scratch (not the spec's buffers).
func (f *Flow) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	return f.p.withCtx(func() error { f.free(); return nil })
}

func (f *Flow) free() {
	if f.stream != nil {
		C.fg_cuStreamSynchronize(f.stream)
	}
	f.freeGraphs()
	if f.stream != nil {
		C.fg_cuStreamDestroy(f.stream)
		f.stream = nil
	}
	for i := range f.ev {
		if f.ev[i] != nil {
			C.fg_cuEventDestroy(f.ev[i])
			f.ev[i] = nil
		}
	}
	f.params.free()
	f.part.free()
	f.rows.free()
	f.phi2.free()
	f.vel2.free()
	f.cnt.free()
	if f.ctl != 0 {
		C.fg_cuMemFree(f.ctl)
		f.ctl = 0
	}
	if f.snap != nil {
		C.fg_cuMemFreeHost(f.snap)
		f.snap = nil
	}
	seen := map[*C.fg_cargs]bool{}
	all := [][]flowLaunch{f.steps[0], f.steps[1]}
	for par := range f.diag {
		all = append(all, f.diag[par][:]...)
	}
	for _, ls := range all {
		for _, l := range ls {
			if l.args != nil && !seen[l.args] {
				seen[l.args] = true
				C.free(unsafe.Pointer(l.args))
			}
		}
	}
	f.steps = [2][]flowLaunch{}
	f.diag = [2][5][]flowLaunch{}
}
