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
// seven kernels on the flow's own stream (see cuda_kernels.cu, "Phase 2"),
// captured once into a CUDA graph; Run launches the graph step after step and
// reads the control block and the record ring back asynchronously every
// pollEvery steps, double-buffered, so the stream never waits for the host.
type Flow struct {
	p      *Program
	spec   kernels.FlowSpec
	shape  tileShape
	stream C.CUstream
	graph  C.CUgraph
	exec   C.CUgraphExec
	why    string // why there is no graph, "" if there is one

	params, part, rows devScratch
	ctl                C.CUdeviceptr  // fg_flowctl followed by the ring
	snap               unsafe.Pointer // pinned: 2 snapshots of ctl+ring, then one upload slot
	ev                 [2]C.CUevent

	steps  []flowLaunch
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

	// The tile shape, tuned (or read from the cache) on stage 1's launch.
	s1 := base
	s1.stage, s1.nterms, s1.coef[0], s1.terms[0] = 1, 1, 1, phi
	s1.phi, s1.vel, s1.out, s1.want_energy, s1.project = phi, vel, g0, 1, C.int(uv)
	if f.shape, err = p.tileFor(&s1, g); err != nil {
		return err
	}
	tile := func(a C.fg_cargs) flowLaunch {
		a.rpt = C.int(f.shape.RPT)
		ty := f.shape.BY * f.shape.RPT
		return flowLaunch{name: "fg_k_tile", grid: int(a.nchunk) * ((g.Ny + ty - 1) / ty), bx: 32, by: f.shape.BY,
			smem: f.shape.smem(p.unit.NComp), args: cargs(a)}
	}
	one := func(name string, a C.fg_cargs, threads int) flowLaunch {
		bs := p.k[name].info.BlockSize
		return flowLaunch{name: name, grid: (threads + bs - 1) / bs, bx: bs, by: 1, args: cargs(a)}
	}
	rows := base
	rows.stage, rows.out = 1, C.fg_dptr(f.rows.d)
	decide := base
	decide.stage, decide.part = 1, C.fg_dptr(f.rows.d)
	stage := func(k int, terms []C.fg_dptr, coefs []float64, out C.fg_dptr) C.fg_cargs {
		a := base
		a.stage, a.nterms, a.out, a.project = C.int(k), C.int(len(terms)), out, C.int(uv)
		a.phi = phi // unused by the tile kernel beyond its terms
		for t := range terms {
			a.terms[t], a.coef[t] = terms[t], C.double(coefs[t])
		}
		return a
	}
	// The host loop's coefficients (core/flow.go), the velocity's multiplied
	// on the device by the arrest decision kv in {0, 1}.
	s2 := stage(2, []C.fg_dptr{phi, vel}, []float64{1, dt / 2}, g1)
	s3 := stage(3, []C.fg_dptr{phi, vel, g0}, []float64{1, dt / 2, -dt * dt / 4}, g2)
	s4 := stage(4, []C.fg_dptr{phi, vel, g1}, []float64{1, dt, -dt * dt / 2}, g3)
	up := base
	h := dt * dt / 6
	up.stage, up.phi, up.vel, up.project = 5, phi, vel, C.int(uv)
	up.terms[0], up.terms[1], up.terms[2], up.terms[3] = g0, g1, g2, g3
	up.coef[0], up.coef[1], up.coef[2] = C.double(-h), C.double(-dt/6), C.double(-dt/3)
	dec := flowLaunch{name: "fg_k_decide", grid: 1, bx: C.FG_FINAL_THREADS, by: 1, args: cargs(decide)}
	f.steps = []flowLaunch{tile(s1), one("fg_k_rows", rows, g.Ny*32), dec, tile(s2), tile(s3), tile(s4), one("fg_k_update", up, g.Sites())}

	// Capture one step into a graph; without graphs, launch one by one.
	if C.fg_cuGraphsAvailable() == 0 {
		f.why = "the driver has no CUDA graph API"
		return nil
	}
	if err := check(C.fg_cuStreamBeginCapture(f.stream), "cuStreamBeginCapture"); err != nil {
		f.why = err.Error()
		return nil
	}
	lerr := f.launchStep()
	var graph C.CUgraph
	cerr := check(C.fg_cuStreamEndCapture(f.stream, &graph), "cuStreamEndCapture")
	if lerr != nil || cerr != nil {
		if graph != nil {
			C.fg_cuGraphDestroy(graph)
		}
		if lerr != nil {
			f.why = lerr.Error()
		} else {
			f.why = cerr.Error()
		}
		return nil
	}
	f.graph = graph
	if err := check(C.fg_cuGraphInstantiate(&f.exec, graph), "cuGraphInstantiate"); err != nil {
		C.fg_cuGraphDestroy(graph)
		f.graph, f.exec, f.why = nil, nil, err.Error()
	}
	return nil
}

// cargs copies a into C memory (freed with the flow).
func cargs(a C.fg_cargs) *C.fg_cargs {
	m := (*C.fg_cargs)(C.malloc(C.size_t(C.sizeof_fg_cargs)))
	*m = a
	return m
}

func (f *Flow) launchStep() error {
	for _, l := range f.steps {
		k := f.p.k[l.name]
		if err := check(C.fg_cuLaunch(k.fn, C.uint(l.grid), C.uint(l.bx), C.uint(l.by), C.uint(l.smem), f.stream, unsafe.Pointer(l.args)), "launch "+l.name); err != nil {
			return err
		}
	}
	return nil
}

func (f *Flow) step() error {
	if f.exec != nil {
		return check(C.fg_cuGraphLaunch(f.exec, f.stream), "cuGraphLaunch")
	}
	return f.launchStep()
}

// Describe says how the flow runs.
func (f *Flow) Describe() string {
	mode := "one CUDA graph per step"
	if f.exec == nil {
		mode = "plain launches (" + f.why + ")"
	}
	return fmt.Sprintf("device ANF: %d kernels per step, %s; tile 32x%d sites, block 32x%d", len(f.steps), mode,
		f.shape.BY*f.shape.RPT, f.shape.BY)
}

// Graphed reports whether the step runs as a CUDA graph.
func (f *Flow) Graphed() bool { return f.exec != nil }

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
			for i := 0; i < k; i++ {
				if err := f.step(); err != nil {
					C.fg_cuStreamSynchronize(f.stream)
					return res, err
				}
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
	if err := check(C.fg_cuStreamSynchronize(f.stream), "cuStreamSynchronize"); err != nil {
		return res, err
	}
	c := last
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
	if f.exec != nil {
		C.fg_cuGraphExecDestroy(f.exec)
		f.exec = nil
	}
	if f.graph != nil {
		C.fg_cuGraphDestroy(f.graph)
		f.graph = nil
	}
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
	if f.ctl != 0 {
		C.fg_cuMemFree(f.ctl)
		f.ctl = 0
	}
	if f.snap != nil {
		C.fg_cuMemFreeHost(f.snap)
		f.snap = nil
	}
	for _, l := range f.steps {
		C.free(unsafe.Pointer(l.args))
	}
	f.steps = nil
}
