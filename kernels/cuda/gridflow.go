package cuda

// The device flow on the grid unit's grids (lines, 3D lattices, boundaries
// set per axis, theories with z derivatives; cuda_site3d.cu): the argument
// blocks of its kernels.

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
