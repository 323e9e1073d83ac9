package cuda

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
)

// flowRing is the number of step records the device keeps between host
// polls; a Run polls at least every flowRing steps.
const flowRing = 1024

// defaultPoll is the steps between host polls when the caller leaves it to
// the flow.
const defaultPoll = 64

// Flow is an arrested Newton flow on the device (kernels.Flow). One step is
// four kernels on the flow's own stream (cuda_flow.cu): fg_k_tile stage 1,
// fg_k_rows and fg_k_decide (the reduction's last levels and the arrest
// decision), and fg_k_stages234 (stages 2-4 and the RK4 update), which
// writes phi' and v' into a second pair of buffers: steps alternate between
// the spec's Phi/Vel and the flow's own pair (ping-pong), and a run that ends
// on the second pair copies it back (docs/decisions/0002). A theory whose
// fg_k_stages234 cannot launch (its shared memory or registers) runs stages 2
// and 3 by fg_k_tile and stage 4 with the update by fg_k_tile_up; one whose
// fg_k_tile_up cannot launch either runs stage 4 by fg_k_tile and the update
// by fg_k_update, in place. Two steps (one from each pair) are captured into
// one CUDA graph, single steps into their own; Run launches graphs and reads
// the control block and the record ring back asynchronously every pollEvery
// steps, double-buffered, so the stream never waits for the host.
type Flow struct {
	p      *Program
	spec   kernels.FlowSpec
	shape  tileShape // of every stage's tile launch
	stream driver.Stream
	graphs []driver.Graph
	single [2]driver.GraphExec // one step from parity 0 / 1
	pair   driver.GraphExec    // two steps from parity 0
	why    string              // why there is no graph, "" if there is one

	fusedUpdate        bool // stage 4 writes phi', v' (fg_k_tile_up or fg_k_stages234): ping-pong buffers
	fused234           bool // stages 2-4 in one kernel (fg_k_stages234)
	fieldBytes         int
	phiD, velD         driver.DevicePtr // the spec's Phi and Vel
	params, part, rows devScratch
	phi2, vel2         devScratch
	ctl                driver.DevicePtr // fg_flowctl followed by the ring
	snap               unsafe.Pointer   // pinned: 2 snapshots of ctl+ring, then one upload slot
	ev                 [2]driver.Event

	onGrid bool               // the grid unit's step (gridflow.go)
	trial  devScratch         // its stages' trial field
	steps  [2][]flowLaunch    // one step from parity 0 (spec buffers) / 1 (own pair)
	diag   [2][5][]flowLaunch // fused stages: launches that store stage k's gradient again, to name a non-finite site
	closed bool
}

// flowLaunch is one kernel launch of a step: args points to the kernel's
// argument block (args.go).
type flowLaunch struct {
	name   string
	k      *kernel // nil: the Program's kernel name
	grid   int
	bx, by int
	smem   int
	args   any
}

// ctlBytes and recBytes are sizeof(fg_flowctl) and sizeof(fg_flowrec)
// (TestArgumentLayouts checks flowCtl's and flowRec's layouts).
const (
	ctlBytes = int(unsafe.Sizeof(flowCtl{}))
	recBytes = int(unsafe.Sizeof(flowRec{}))
)

func snapBytes() int { return ctlBytes + flowRing*recBytes }

// NewFlow implements kernels.Stepper for the continuum gradient form.
func (p *Program) NewFlow(spec kernels.FlowSpec) (kernels.Flow, error) {
	if spec.Form != kernels.Continuum {
		return nil, errs.New(errs.Backend, "the device flow fuses the continuum gradient only; the %v form steps on the host", spec.Form)
	}
	if spec.Grid.Free {
		// The free boundary's gradient is the consistent form's.
		return nil, errs.New(errs.Backend, "the free boundary has no device flow: its consistent form steps on the host")
	}
	if !(spec.Dt > 0) || math.IsInf(spec.Dt, 0) || math.IsNaN(spec.Tol) {
		return nil, errs.New(errs.Parameter, "bad flow settings dt=%v tol=%v", spec.Dt, spec.Tol)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f := &Flow{p: p, spec: spec}
	f.spec.Params = append([]float64(nil), spec.Params...)
	err := p.b.onDevice(func() error { return f.build() })
	if err != nil {
		_ = p.b.onDevice(func() error { f.free(); return nil })
		return nil, err
	}
	return f, nil
}

// build resolves the spec's buffers, allocates the flow's own memory, picks
// the step's kernels, tunes their tile shape and captures the steps into
// graphs.
func (f *Flow) build() error {
	p, spec, g := f.p, f.spec, f.spec.Grid
	grid, err := p.prepare(g, spec.Params) // validates the grid and parameters
	if err != nil {
		return err
	}
	var d [6]uint64
	names := []string{"field", "velocity", "gradient 1", "gradient 2", "gradient 3", "gradient 4"}
	for i, b := range []kernels.Buffer{spec.Phi, spec.Vel, spec.G[0], spec.G[1], spec.G[2], spec.G[3]} {
		cb, err := p.buf(b)
		if err != nil {
			return err
		}
		if err := p.checkField(names[i], cb, g); err != nil {
			return err
		}
		d[i] = uint64(cb.d)
	}
	f.phiD, f.velD = driver.DevicePtr(d[0]), driver.DevicePtr(d[1])
	f.fieldBytes = p.prec.Bytes() * p.unit.NComp * g.Sites()
	if p.onGrid(g) {
		return f.buildGrid(d)
	}
	// The fused kernels hold more registers and shared memory than fg_k_tile
	// for some theories: each needs a launchable shape, else the step falls
	// back to the kernels before it (Flow).
	f.fusedUpdate = p.anyTile("fg_k_tile_up") && !p.noFusedUpdate
	f.fused234 = f.fusedUpdate && p.anyTile("fg_k_stages234") && !p.noFused234
	if err := f.alloc(grid); err != nil {
		return err
	}
	sa := stepArgs{grid: grid, params: uint64(f.params.d), part: uint64(f.part.d), rows: uint64(f.rows.d),
		ctl: uint64(f.ctl), g: [4]uint64{d[2], d[3], d[4], d[5]}, dt: spec.Dt, tol: spec.Tol,
		project: flag(spec.UnitVector), arrestTest: arrestTest(spec)}
	phi, vel, phi2, vel2 := d[0], d[1], uint64(f.phi2.d), uint64(f.vel2.d)
	if err := f.tune(&sa, phi, vel, phi2, vel2); err != nil {
		return err
	}
	f.steps[0], f.diag[0] = f.step(&sa, phi, vel, phi2, vel2)
	f.steps[1] = f.steps[0] // the update in place: one pair of buffers
	if f.fusedUpdate {
		f.steps[1], f.diag[1] = f.step(&sa, phi2, vel2, phi, vel)
	}
	f.captureGraphs()
	return nil
}

// alloc sizes the flow's own parameters and scratch (the Program's are shared
// with its other operations and may move; a graph keeps the pointers it
// captured), its control block, pinned snapshots, events, stream and, with
// the fused update, the second buffer pair.
func (f *Flow) alloc(grid gridArgs) error {
	spec := f.spec
	if err := f.params.ensure(8 * (len(spec.Params) + 1)); err != nil {
		return err
	}
	if len(spec.Params) > 0 {
		if err := check(driver.MemcpyHtoD(f.params.d, unsafe.Pointer(&spec.Params[0]), 8*len(spec.Params)), "cuMemcpyHtoD params"); err != nil {
			return err
		}
	}
	if err := f.part.ensure(8 * 3 * int(grid.Ny) * int(grid.Nchunk)); err != nil {
		return err
	}
	if err := f.rows.ensure(8 * 3 * int(grid.Ny)); err != nil {
		return err
	}
	var rc driver.Result
	f.ctl, rc = driver.MemAlloc(snapBytes())
	if err := check(rc, "cuMemAlloc flow control"); err != nil {
		return err
	}
	if err := check(driver.MemsetD8(f.ctl, 0, snapBytes()), "cuMemsetD8"); err != nil {
		return err
	}
	f.snap, rc = driver.MemAllocHost(3 * snapBytes())
	if err := check(rc, "cuMemAllocHost"); err != nil {
		return err
	}
	for i := range f.ev {
		f.ev[i], rc = driver.EventCreate(driver.EventDisableTiming)
		if err := check(rc, "cuEventCreate"); err != nil {
			return err
		}
	}
	// A blocking stream: ordered with the default stream the Program's
	// other operations use.
	f.stream, rc = driver.StreamCreate(0)
	if err := check(rc, "cuStreamCreate"); err != nil {
		return err
	}
	if f.fusedUpdate {
		if err := f.phi2.ensure(f.fieldBytes); err != nil {
			return err
		}
		return f.vel2.ensure(f.fieldBytes)
	}
	return nil
}

// tune sets the tile shape, tuned (or read from the cache) on the step's tile
// launches together (two with stages 2-4 in one kernel, else four): the
// one-term copy of stage 1, the trial fields' two and three terms and the
// fused update load different streams and hold different registers, and the
// shape stage 1 alone likes can be the slowest for the step
// (docs/decisions/0003). The tuning launches write the flow's scratch
// (gradients, partials, the second buffer pair) and never its control block.
func (f *Flow) tune(sa *stepArgs, phi, vel, nxt, nvel uint64) error {
	p := f.p
	ls := []tileLaunch{{"fg_k_tile", sa.stage1(phi, vel)}}
	switch {
	case f.fused234:
		ls = append(ls, tileLaunch{"fg_k_stages234", sa.stages234(phi, vel, nxt, nvel)})
	case f.fusedUpdate:
		ls = append(ls, tileLaunch{"fg_k_tile", sa.stage(2, phi, vel)}, tileLaunch{"fg_k_tile", sa.stage(3, phi, vel)},
			tileLaunch{"fg_k_tile_up", sa.stage4Update(phi, vel, nxt, nvel)})
	default:
		ls = append(ls, tileLaunch{"fg_k_tile", sa.stage(2, phi, vel)}, tileLaunch{"fg_k_tile", sa.stage(3, phi, vel)},
			tileLaunch{"fg_k_tile", sa.stage(4, phi, vel)})
	}
	var err error
	if f.shape, err = p.tuned(sizeClass(f.spec.Grid), ls); err != nil {
		return err
	}
	for _, l := range ls {
		p.setTileInfo(l.name, f.shape)
	}
	return nil
}

// step is the launches of one step from (cur, cvel) to (nxt, nvel) (the same
// pair when the update is in place), and, by stage, the launches that store
// a fused stage's gradient again (same bits) so Run can name a non-finite
// site.
func (f *Flow) step(sa *stepArgs, cur, cvel, nxt, nvel uint64) (st []flowLaunch, diag [5][]flowLaunch) {
	p := f.p
	one := func(name string, a any, threads int) flowLaunch {
		bs := p.k[name].info.BlockSize
		return flowLaunch{name: name, grid: (threads + bs - 1) / bs, bx: bs, by: 1, args: a}
	}
	st = []flowLaunch{f.tile("fg_k_tile", sa.stage1(cur, cvel)), one("fg_k_rows", sa.rowsArgs(), int(sa.grid.Ny)*32),
		{name: "fg_k_decide", grid: 1, bx: finalThreads, by: 1, args: sa.decide()}}
	s2, s3, s4 := f.tile("fg_k_tile", sa.stage(2, cur, cvel)), f.tile("fg_k_tile", sa.stage(3, cur, cvel)), f.tile("fg_k_tile", sa.stage(4, cur, cvel))
	switch {
	case f.fused234:
		st = append(st, f.tile("fg_k_stages234", sa.stages234(cur, cvel, nxt, nvel)))
		// g1 and g2 stay in shared memory: store them again.
		diag[2], diag[3], diag[4] = []flowLaunch{s2}, []flowLaunch{s3}, []flowLaunch{s2, s4}
	case f.fusedUpdate:
		st = append(st, s2, s3, f.tile("fg_k_tile_up", sa.stage4Update(cur, cvel, nxt, nvel)))
		diag[4] = []flowLaunch{s4}
	default:
		st = append(st, s2, s3, s4, one("fg_k_update", sa.update(cur, cvel), f.spec.Grid.Sites()))
	}
	return st, diag
}

// tile is a launch of tile kernel name at the flow's shape.
func (f *Flow) tile(name string, a tileBlock) flowLaunch {
	a.setRows(f.shape.RPT)
	return flowLaunch{name: name, grid: tileGrid(a.lattice(), f.shape), bx: 32, by: f.shape.BY,
		smem: f.p.tileSmem(name, f.shape), args: a}
}

// captureGraphs captures the steps into graphs; without graphs (an old
// driver, or a capture that failed: f.why says which) Run launches them one
// by one.
func (f *Flow) captureGraphs() {
	if !driver.GraphsAvailable() {
		f.why = "the driver has no CUDA graph API"
		return
	}
	var err error
	if f.single[0], err = f.capture(f.steps[0]); err == nil {
		if f.single[1], err = f.capture(f.steps[1]); err == nil {
			f.pair, err = f.capture(append(append([]flowLaunch(nil), f.steps[0]...), f.steps[1]...))
		}
	}
	if err != nil {
		f.why = err.Error()
		f.freeGraphs()
	}
}

// stepArgs makes the argument blocks of a step's kernels: the flow's grid,
// scratch, control block, stage gradients g and settings. The trials'
// coefficients are the host loop's (core/flow.go); the velocity's is
// multiplied on the device by the arrest decision kv in {0, 1}.
type stepArgs struct {
	grid                    gridArgs
	params, part, rows, ctl uint64
	g                       [4]uint64
	dt, tol                 float64
	project, arrestTest     int32
}

// stage1 is fg_k_tile's stage 1: the gradient at cur into g[0], the energy,
// max|grad| and power v.g as chunk partials.
func (sa *stepArgs) stage1(cur, cvel uint64) *tileArgs {
	a := &tileArgs{Grid: sa.grid, Params: sa.params, Ctl: sa.ctl, Project: sa.project, Stage: 1, Nterms: 1,
		WantEnergy: 1, Out: sa.g[0], Vel: cvel, Part: sa.part}
	a.Coef[0], a.Terms[0] = 1, cur
	return a
}

// stage is fg_k_tile's stage k (2..4): the gradient at the trial field into
// g[k-1].
func (sa *stepArgs) stage(k int, cur, cvel uint64) *tileArgs {
	dt := sa.dt
	a := &tileArgs{Grid: sa.grid, Params: sa.params, Ctl: sa.ctl, Project: sa.project, Stage: int32(k), Out: sa.g[k-1],
		Part: sa.part}
	switch k {
	case 2:
		a.Nterms, a.Coef, a.Terms = 2, [3]float64{1, dt / 2}, [3]uint64{cur, cvel}
	case 3:
		a.Nterms, a.Coef, a.Terms = 3, [3]float64{1, dt / 2, -dt * dt / 4}, [3]uint64{cur, cvel, sa.g[0]}
	case 4:
		a.Nterms, a.Coef, a.Terms = 3, [3]float64{1, dt, -dt * dt / 2}, [3]uint64{cur, cvel, sa.g[1]}
	}
	return a
}

// stage4Update is fg_k_tile_up: stage 4 and the update into (nxt, nvel).
func (sa *stepArgs) stage4Update(cur, cvel, nxt, nvel uint64) *tileUpArgs {
	dt, h := sa.dt, sa.dt*sa.dt/6
	a := &tileUpArgs{Tile: *sa.stage(4, cur, cvel), G0: sa.g[0], G2: sa.g[2], PhiOut: nxt, VelOut: nvel,
		H: -h, Q6: -dt / 6, Q3: -dt / 3, Dt: dt}
	a.Tile.Out = 0
	return a
}

// stages234 is fg_k_stages234: stages 2-4 and the update into (nxt, nvel).
func (sa *stepArgs) stages234(cur, cvel, nxt, nvel uint64) *stages234Args {
	dt, h := sa.dt, sa.dt*sa.dt/6
	return &stages234Args{Grid: sa.grid, Params: sa.params, Ctl: sa.ctl, Project: sa.project, Phi: cur, Vel: cvel,
		G0: sa.g[0], PhiOut: nxt, VelOut: nvel, One: 1, TrialV2: dt / 2, TrialG3: -dt * dt / 4, TrialV4: dt,
		TrialG4: -dt * dt / 2, H: -h, Q6: -dt / 6, Q3: -dt / 3, Dt: dt}
}

// update is fg_k_update: the update of (phi, vel) in place.
func (sa *stepArgs) update(phi, vel uint64) *updateArgs {
	dt, h := sa.dt, sa.dt*sa.dt/6
	return &updateArgs{Grid: sa.grid, Ctl: sa.ctl, Phi: phi, Vel: vel, G0: sa.g[0], G1: sa.g[1], G2: sa.g[2], G3: sa.g[3],
		Dt: dt, H: -h, Q6: -dt / 6, Q3: -dt / 3, Project: sa.project}
}

// rowsArgs is fg_k_rows on stage 1's chunk partials.
func (sa *stepArgs) rowsArgs() *rowsArgs {
	return &rowsArgs{Ny: sa.grid.Ny, Nchunk: sa.grid.Nchunk, Part: sa.part, Out: sa.rows, Ctl: sa.ctl}
}

// decide is fg_k_decide on the row partials.
func (sa *stepArgs) decide() *decideArgs {
	return &decideArgs{Ny: sa.grid.Ny, Rows: sa.rows, Ctl: sa.ctl, Ring: sa.ctl + uint64(ctlBytes),
		Ringcap: flowRing, Tol: sa.tol, ArrestTest: sa.arrestTest}
}

// capture records launches on the flow's stream into an instantiated graph.
func (f *Flow) capture(ls []flowLaunch) (driver.GraphExec, error) {
	if err := check(f.stream.BeginCapture(), "cuStreamBeginCapture"); err != nil {
		return driver.GraphExec{}, err
	}
	lerr := f.launchList(ls)
	graph, rc := f.stream.EndCapture()
	cerr := check(rc, "cuStreamEndCapture")
	if lerr != nil || cerr != nil {
		if !graph.Nil() {
			graph.Destroy()
		}
		if lerr != nil {
			return driver.GraphExec{}, lerr
		}
		return driver.GraphExec{}, cerr
	}
	f.graphs = append(f.graphs, graph)
	exec, rc := graph.Instantiate()
	if err := check(rc, "cuGraphInstantiate"); err != nil {
		return driver.GraphExec{}, err
	}
	return exec, nil
}

func (f *Flow) freeGraphs() {
	for i := range f.single {
		if !f.single[i].Nil() {
			f.single[i].Destroy()
			f.single[i] = driver.GraphExec{}
		}
	}
	if !f.pair.Nil() {
		f.pair.Destroy()
		f.pair = driver.GraphExec{}
	}
	for _, g := range f.graphs {
		g.Destroy()
	}
	f.graphs = nil
}

func (f *Flow) launchList(ls []flowLaunch) error {
	for _, l := range ls {
		k := l.k
		if k == nil {
			k = f.p.k[l.name]
		}
		if err := launchArgs(k, l.grid, l.bx, l.by, l.smem, f.stream, l.args); err != nil {
			return err
		}
	}
	return nil
}

// parity is which buffer pair step i of a run (from 0) reads: runs start on
// the spec's buffers, and with the fused update every step flips the pair.
func (f *Flow) parity(i int) int {
	if f.fusedUpdate {
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
		case f.pair.Nil():
			err = f.launchList(f.steps[par])
			from, k = from+1, k-1
		case par == 0 && k >= 2:
			err = check(f.pair.Launch(f.stream), "cuGraphLaunch")
			from, k = from+2, k-2
		default:
			err = check(f.single[par].Launch(f.stream), "cuGraphLaunch")
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
	if f.pair.Nil() {
		mode = "plain launches (" + f.why + ")"
	}
	if f.onGrid {
		return fmt.Sprintf("device ANF on the grid unit: %d kernels per step (trial fields written, the update in place), %s; %s storage",
			len(f.steps[0]), mode, f.p.prec)
	}
	var how []string
	if f.fused234 {
		how = append(how, "stages 2-4 in one kernel")
	}
	if f.fusedUpdate {
		how = append(how, "stage 4 fuses the update (ping-pong buffers)")
	}
	return fmt.Sprintf("device ANF: %d kernels per step (%s), %s; tile 32x%d sites (block 32x%d, %d rows per thread); %s storage", len(f.steps[0]),
		joinStrings(how, ", "), mode, f.shape.BY*f.shape.RPT, f.shape.BY, f.shape.RPT, f.p.prec)
}

// Graphed reports whether the steps run as CUDA graphs.
func (f *Flow) Graphed() bool { return !f.pair.Nil() }

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
	up := (*flowCtl)(unsafe.Add(f.snap, 2*sb))
	*up = flowCtl{Step: int64(st.Step), Resets: int64(st.Resets), Kv: 1, PrevEnergy: st.PrevEnergy}
	if err := check(driver.MemcpyHtoDAsync(f.ctl, unsafe.Pointer(up), ctlBytes, f.stream), "cuMemcpyHtoDAsync"); err != nil {
		return res, err
	}
	var queue []int // snapshot slots in flight, oldest first
	launched, slot := 0, 0
	var seen int64
	halt := false
	var last *flowCtl
	for {
		for len(queue) < 2 && launched < maxSteps && !halt {
			k := min(pollEvery, maxSteps-launched)
			if err := f.launch(launched, k); err != nil {
				f.stream.Synchronize()
				return res, err
			}
			launched += k
			dst := unsafe.Add(f.snap, slot*sb)
			if err := check(driver.MemcpyDtoHAsync(dst, f.ctl, sb, f.stream), "cuMemcpyDtoHAsync"); err != nil {
				f.stream.Synchronize()
				return res, err
			}
			if err := check(f.ev[slot].Record(f.stream), "cuEventRecord"); err != nil {
				f.stream.Synchronize()
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
		if err := check(f.ev[s].Synchronize(), "cuEventSynchronize"); err != nil {
			f.stream.Synchronize()
			return res, err
		}
		c := (*flowCtl)(unsafe.Add(f.snap, s*sb))
		ring := unsafe.Slice((*flowRec)(unsafe.Add(unsafe.Pointer(c), ctlBytes)), flowRing)
		for r := seen; r < c.Nrec; r++ {
			rec := ring[r%flowRing]
			res.Records = append(res.Records, kernels.FlowRecord{Step: int(rec.Step), Resets: int(rec.Resets),
				Energy: rec.Energy, MaxGrad: rec.MaxGrad})
		}
		seen = c.Nrec
		cp := *c
		last = &cp
		if c.Stop != 0 || c.Nonfinite != 0 {
			halt = true
		}
		if cancel != nil && cancel.Load() && launched < maxSteps {
			halt, res.Cancelled = true, true
		}
	}
	c := last
	if c.Pending != 0 && c.Nonfinite == 0 && c.Stop == 0 {
		// The last step decided was taken; its commit is the host's.
		c.Step++
		c.Taken++
		if c.Arrest != 0 {
			c.Resets++
		}
		c.PrevEnergy = c.Energy1
	}
	if f.fusedUpdate {
		par := int(c.Taken) & 1 // the pair holding the state
		if c.Nonfinite >= 2 && c.Nonfinite <= 4 && len(f.diag[par][c.Nonfinite]) > 0 {
			// The stage stored no gradient: recompute it (same bits) so the
			// caller can name the site.
			if err := f.launchList(f.diag[par][c.Nonfinite]); err != nil {
				f.stream.Synchronize()
				return res, err
			}
		}
		if par == 1 {
			for _, cp := range [][2]driver.DevicePtr{{f.phiD, f.phi2.d}, {f.velD, f.vel2.d}} {
				if err := check(driver.MemcpyDtoDAsync(cp[0], cp[1], f.fieldBytes, f.stream), "cuMemcpyDtoDAsync"); err != nil {
					f.stream.Synchronize()
					return res, err
				}
			}
		}
	}
	if err := check(f.stream.Synchronize(), "cuStreamSynchronize"); err != nil {
		return res, err
	}
	res.State = kernels.FlowState{Step: int(c.Step), Resets: int(c.Resets), PrevEnergy: c.PrevEnergy}
	res.Taken = int(c.Taken)
	switch {
	case c.Stop == stopConverged:
		res.Stop = kernels.FlowConverged
	case c.Stop == stopNonFinite:
		res.Stop, res.Stage = kernels.FlowNonFinite, 1
	case c.Nonfinite != 0:
		res.Stop, res.Stage = kernels.FlowNonFinite, int(c.Nonfinite)
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
	return f.p.b.onDevice(func() error { f.free(); return nil })
}

func (f *Flow) free() {
	if !f.stream.Nil() {
		f.stream.Synchronize()
	}
	f.freeGraphs()
	if !f.stream.Nil() {
		f.stream.Destroy()
		f.stream = driver.Stream{}
	}
	for i := range f.ev {
		if !f.ev[i].Nil() {
			f.ev[i].Destroy()
			f.ev[i] = driver.Event{}
		}
	}
	f.params.free()
	f.part.free()
	f.rows.free()
	f.phi2.free()
	f.vel2.free()
	f.trial.free()
	if f.ctl != 0 {
		driver.MemFree(f.ctl)
		f.ctl = 0
	}
	if f.snap != nil {
		driver.MemFreeHost(f.snap)
		f.snap = nil
	}
	f.steps = [2][]flowLaunch{}
	f.diag = [2][5][]flowLaunch{}
}

// arrestTest is fg_decide_args.arrest_test for a flow: 0 arrests when
// v.g > 0, 1 when the energy rose, 2 never (the dynamics of evolve).
func arrestTest(spec kernels.FlowSpec) int32 {
	switch {
	case spec.NoArrest:
		return 2
	case spec.EnergyArrest:
		return 1
	}
	return 0
}
