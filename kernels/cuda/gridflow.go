package cuda

// The device flow on the grid unit's grids (lines, 3D lattices, boundaries
// set per axis, theories with z derivatives; cuda_site3d.cu): the argument
// blocks of its kernels and its step.

// ndStageArgs is fg_nd_stage_args (fg_k_nd_stage).
type ndStageArgs struct {
	G     ndGradientArgs `c:"g"`
	Ctl   uint64         `c:"ctl"`
	Stage int32          `c:"stage"`
	_     int32
}

// ndTrialArgs is fg_nd_trial_args (fg_k_nd_trial).
type ndTrialArgs struct {
	Len    int64      `c:"len"`
	Ctl    uint64     `c:"ctl"`
	Stage  int32      `c:"stage"`
	Nterms int32      `c:"nterms"`
	Coef   [3]float64 `c:"coef"`
	Terms  [3]uint64  `c:"terms"`
	Out    uint64     `c:"out"`
}

// ndUpdateArgs is fg_nd_update_args (fg_k_nd_update).
type ndUpdateArgs struct {
	Grid    grid3Args `c:"grid"`
	Ctl     uint64    `c:"ctl"`
	Phi     uint64    `c:"phi"`
	Vel     uint64    `c:"vel"`
	G0      uint64    `c:"g0"`
	G1      uint64    `c:"g1"`
	G2      uint64    `c:"g2"`
	G3      uint64    `c:"g3"`
	Dt      float64   `c:"dt"`
	H       float64   `c:"h"`
	Q6      float64   `c:"q6"`
	Q3      float64   `c:"q3"`
	Project int32     `c:"project"`
	_       int32
}

var (
	_ = registerArgs[ndStageArgs]("fg_k_nd_stage")
	_ = registerArgs[ndTrialArgs]("fg_k_nd_trial")
	_ = registerArgs[ndUpdateArgs]("fg_k_nd_update")
)

// buildGrid is build on the grid unit (lines, 3D lattices, boundaries set
// per axis, theories with z derivatives): core's host step (core/flow.go) as
// ten launches, in place (the update writes phi and v where it read them),
// captured into graphs and run by Flow.Run with the planar flow's control
// block and record ring, so that the host reads where the flow stands only
// every few steps. The step is not fused: each stage's trial field is
// written (fg_k_nd_trial) and its gradient read from it, as the host loop
// does, so it moves the host loop's bytes and gives its bits
// (TestGridDeviceFlowOnTheHost, TestGridFlowAgreesWithCPU); what it saves
// is the host's round trips, a dozen per step.
func (f *Flow) buildGrid(d [6]uint64) error {
	p, spec, g := f.p, f.spec, f.spec.Grid
	ks, err := p.gridKernels()
	if err != nil {
		return err
	}
	g3 := grid3Of(g)
	if err := f.alloc(gridArgs{Ny: g3.Lines, Nchunk: g3.Nchunk}); err != nil {
		return err
	}
	n := p.unit.NComp * g.Sites()
	if err := f.trial.ensure(p.prec.Bytes() * n); err != nil {
		return err
	}
	phi, vel, gs, trial := d[0], d[1], [4]uint64{d[2], d[3], d[4], d[5]}, uint64(f.trial.d)
	ctl := uint64(f.ctl)
	launch := func(name string, threads int, a any) flowLaunch {
		k := ks[name]
		bs := k.info.BlockSize
		return flowLaunch{name: name, k: k, grid: max((threads+bs-1)/bs, 1), bx: bs, by: 1, args: a}
	}
	project := flag(spec.UnitVector)
	stage := func(k int, field uint64) flowLaunch {
		a := &ndStageArgs{G: ndGradientArgs{Grid: g3, Params: uint64(f.params.d), Phi: field, Out: gs[k-1],
			Part: uint64(f.part.d), Project: project}, Ctl: ctl, Stage: int32(k)}
		if k == 1 {
			a.G.Vel, a.G.WantEnergy = vel, 1
		}
		sk := ks["fg_k_nd_stage"]
		bs := sk.info.BlockSize
		return flowLaunch{name: "fg_k_nd_stage", k: sk, grid: linesBlocks(g3, bs), bx: bs, by: 1, args: a}
	}
	dt := spec.Dt
	trialOf := func(k int, coef [3]float64, terms [3]uint64, nterms int32) flowLaunch {
		a := &ndTrialArgs{Len: int64(n), Ctl: ctl, Stage: int32(k), Nterms: nterms, Coef: coef, Terms: terms, Out: trial}
		return launch("fg_k_nd_trial", min(n, 1<<24), a)
	}
	rows := &rowsArgs{Ny: g3.Lines, Nchunk: g3.Nchunk, Part: uint64(f.part.d), Out: uint64(f.rows.d), Ctl: ctl}
	decide := &decideArgs{Ny: g3.Lines, Rows: uint64(f.rows.d), Ctl: ctl, Ring: ctl + uint64(ctlBytes),
		Ringcap: flowRing, Tol: spec.Tol, ArrestTest: arrestTest(spec)}
	h := dt * dt / 6
	update := &ndUpdateArgs{Grid: g3, Ctl: ctl, Phi: phi, Vel: vel, G0: gs[0], G1: gs[1], G2: gs[2], G3: gs[3],
		Dt: dt, H: -h, Q6: -dt / 6, Q3: -dt / 3, Project: project}
	f.steps[0] = []flowLaunch{
		stage(1, phi),
		launch("fg_k_rows", int(g3.Lines)*32, rows),
		{name: "fg_k_decide", k: ks["fg_k_decide"], grid: 1, bx: finalThreads, by: 1, args: decide},
		trialOf(2, [3]float64{1, dt / 2}, [3]uint64{phi, vel}, 2),
		stage(2, trial),
		trialOf(3, [3]float64{1, dt / 2, -dt * dt / 4}, [3]uint64{phi, vel, gs[0]}, 3),
		stage(3, trial),
		trialOf(4, [3]float64{1, dt, -dt * dt / 2}, [3]uint64{phi, vel, gs[1]}, 3),
		stage(4, trial),
		launch("fg_k_nd_update", g.Sites(), update),
	}
	f.steps[1] = f.steps[0]
	f.onGrid = true
	f.captureGraphs()
	return nil
}
