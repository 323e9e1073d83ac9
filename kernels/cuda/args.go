package cuda

import (
	"reflect"

	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
)

// Every kernel of the field engine takes one argument block by value: a C
// struct declared beside the kernel in kernels/src/cuda_*.cu and its Go twin
// here, field for field with the C name in the c tag, in the same order and
// with the same padding (explicit blank fields where C pads). Device
// pointers are uint64 (CUdeviceptr). registerArgs ties a kernel to its Go
// type in the driver's registry (driver.Register, driver.Block); a launch
// with any other type is refused (driver.Launch), and TestArgumentLayouts
// compiles the sources with NVRTC and static_asserts of every field's offset
// and size, so Go and the CUDA compiler agree on the layout without a GPU.
// The same test holds the constants and the flow's control block below
// (cuda_args.h) to their C definitions.

// argTypes maps each kernel to the Go type of its argument block.
var argTypes = map[string]reflect.Type{}

// registerArgs records that kernels take an argument block of type A; used
// as `var _ = registerArgs[xArgs]("fg_k_x")` beside the type.
func registerArgs[A any](kernels ...string) bool {
	for _, k := range kernels {
		argTypes[k] = reflect.TypeFor[A]()
	}
	return driver.Register[A](driver.Block, kernels...)
}

// The constants of cuda_args.h the host uses (TestArgumentLayouts checks
// them against the header).
const (
	chunk         = 32   // FG_CHUNK: sites of one reduction chunk
	finalThreads  = 256  // FG_FINAL_THREADS: the final reduction's block
	dotChunk      = 2048 // FG_DOT_CHUNK: elements of one Dot partial
	stopConverged = 1    // FG_STOP_CONVERGED
	stopNonFinite = 2    // FG_STOP_NONFINITE
	stopHalted    = 3    // FG_STOP_HALTED
)

// headerConstants are the C names and Go values of the constants above.
var headerConstants = map[string]int{"FG_CHUNK": chunk, "FG_FINAL_THREADS": finalThreads, "FG_DOT_CHUNK": dotChunk,
	"FG_STOP_CONVERGED": stopConverged, "FG_STOP_NONFINITE": stopNonFinite, "FG_STOP_HALTED": stopHalted,
	"FG_CUDA_MAX_TERMS": maxTerms}

// flowCtl is fg_flowctl: the device flow's control block, which the host
// writes at the start of a run and reads back with the record ring.
type flowCtl struct {
	Step       int64   `c:"step"`
	Resets     int64   `c:"resets"`
	Taken      int64   `c:"taken"`
	Nrec       int64   `c:"nrec"`
	Stop       int32   `c:"stop"`
	Nonfinite  int32   `c:"nonfinite"`
	Arrest     int32   `c:"arrest"`
	Pending    int32   `c:"pending"`
	Kv         float64 `c:"kv"`
	PrevEnergy float64 `c:"prev_energy"`
	Energy1    float64 `c:"energy1"`
}

// flowRec is fg_flowrec: one step's stage-1 reductions in the ring.
type flowRec struct {
	Step    int64   `c:"step"`
	Resets  int64   `c:"resets"`
	Energy  float64 `c:"energy"`
	MaxGrad float64 `c:"max_grad"`
}

// hostStructs are the structs of cuda_args.h the host reads, by C name.
var hostStructs = map[string]reflect.Type{"fg_flowctl": reflect.TypeFor[flowCtl](), "fg_flowrec": reflect.TypeFor[flowRec]()}

// gridArgs is fg_grid: the lattice as the site kernels read it.
type gridArgs struct {
	Nx       int64 `c:"nx"`
	Ny       int64 `c:"ny"`
	N        int64 `c:"n"`      // Nx*Ny
	Nchunk   int64 `c:"nchunk"` // chunks per row: ceil(Nx/FG_CHUNK)
	Periodic int32 `c:"periodic"`
	_        int32
	Hx       float64 `c:"hx"`
	Hy       float64 `c:"hy"`
	Ox       float64 `c:"ox"`
	Oy       float64 `c:"oy"`
}

// gradientArgs is fg_gradient_args (fg_k_continuum, fg_k_consistent).
type gradientArgs struct {
	Grid       gridArgs `c:"grid"`
	Params     uint64   `c:"params"`
	Phi        uint64   `c:"phi"`
	Vel        uint64   `c:"vel"`
	Out        uint64   `c:"out"`
	Part       uint64   `c:"part"`
	Project    int32    `c:"project"`
	WantEnergy int32    `c:"want_energy"`
	Penalty    float64  `c:"penalty"`
}

var _ = registerArgs[gradientArgs]("fg_k_continuum", "fg_k_consistent")

// densityArgs is fg_density_args (fg_k_density).
type densityArgs struct {
	Grid    gridArgs `c:"grid"`
	Params  uint64   `c:"params"`
	Phi     uint64   `c:"phi"`
	Out     uint64   `c:"out"`
	Part    uint64   `c:"part"`
	Density int32    `c:"density"`
	_       int32
}

var _ = registerArgs[densityArgs]("fg_k_density")

// rowsArgs is fg_rows_args (fg_k_rows).
type rowsArgs struct {
	Ny     int64  `c:"ny"`
	Nchunk int64  `c:"nchunk"`
	Part   uint64 `c:"part"`
	Out    uint64 `c:"out"`
	Ctl    uint64 `c:"ctl"`
}

var _ = registerArgs[rowsArgs]("fg_k_rows")

// finalArgs is fg_final_args (fg_k_final).
type finalArgs struct {
	Ny   int64  `c:"ny"`
	Rows uint64 `c:"rows"`
	Out  uint64 `c:"out"`
}

var _ = registerArgs[finalArgs]("fg_k_final")

// dotArgs is fg_dot_args (Dot and MaxAbs, both levels).
type dotArgs struct {
	Len  int64  `c:"len"`
	X    uint64 `c:"x"`
	Y    uint64 `c:"y"`
	Part uint64 `c:"part"`
	Out  uint64 `c:"out"`
}

var _ = registerArgs[dotArgs]("fg_k_dot", "fg_k_dot_final", "fg_k_maxabs", "fg_k_maxabs_final")

// maxTerms is FG_CUDA_MAX_TERMS.
const maxTerms = 8

// combineArgs is fg_combine_args (fg_k_combine).
type combineArgs struct {
	Len    int64 `c:"len"`
	Nterms int32 `c:"nterms"`
	_      int32
	Coef   [maxTerms]float64 `c:"coef"`
	Terms  [maxTerms]uint64  `c:"terms"`
	Out    uint64            `c:"out"`
}

var _ = registerArgs[combineArgs]("fg_k_combine")

// convertArgs is fg_convert_args (fg_k_widen, fg_k_narrow).
type convertArgs struct {
	Len int64  `c:"len"`
	In  uint64 `c:"in"`
	Out uint64 `c:"out"`
}

var _ = registerArgs[convertArgs]("fg_k_widen", "fg_k_narrow")

// constrainArgs is fg_constrain_args (fg_k_constrain).
type constrainArgs struct {
	Grid gridArgs `c:"grid"`
	Phi  uint64   `c:"phi"`
	Vel  uint64   `c:"vel"`
}

var _ = registerArgs[constrainArgs]("fg_k_constrain")

// projectArgs is fg_project_args (fg_k_project).
type projectArgs struct {
	Grid gridArgs `c:"grid"`
	Phi  uint64   `c:"phi"`
	X    uint64   `c:"x"`
}

var _ = registerArgs[projectArgs]("fg_k_project")

// randomArgs is fg_random_args (fg_k_random).
type randomArgs struct {
	Len  int64  `c:"len"`
	Out  uint64 `c:"out"`
	Seed uint64 `c:"seed"`
}

var _ = registerArgs[randomArgs]("fg_k_random")

// nonfiniteArgs is fg_nonfinite_args (fg_k_nonfinite).
type nonfiniteArgs struct {
	Len int64  `c:"len"`
	X   uint64 `c:"x"`
	Out uint64 `c:"out"`
}

var _ = registerArgs[nonfiniteArgs]("fg_k_nonfinite")

// tileArgs is fg_tile_args (fg_k_tile).
type tileArgs struct {
	Grid       gridArgs `c:"grid"`
	Params     uint64   `c:"params"`
	Ctl        uint64   `c:"ctl"`
	Rpt        int32    `c:"rpt"`
	Project    int32    `c:"project"`
	Stage      int32    `c:"stage"`
	Nterms     int32    `c:"nterms"`
	WantEnergy int32    `c:"want_energy"`
	_          int32
	Coef       [3]float64 `c:"coef"`
	Terms      [3]uint64  `c:"terms"`
	Out        uint64     `c:"out"`
	Vel        uint64     `c:"vel"`
	Part       uint64     `c:"part"`
}

var _ = registerArgs[tileArgs]("fg_k_tile")

// tileUpArgs is fg_tile_up_args (fg_k_tile_up).
type tileUpArgs struct {
	Tile   tileArgs `c:"tile"`
	G0     uint64   `c:"g0"`
	G2     uint64   `c:"g2"`
	PhiOut uint64   `c:"phi_out"`
	VelOut uint64   `c:"vel_out"`
	H      float64  `c:"h"`
	Q6     float64  `c:"q6"`
	Q3     float64  `c:"q3"`
	Dt     float64  `c:"dt"`
}

var _ = registerArgs[tileUpArgs]("fg_k_tile_up")

// stages234Args is fg_stages234_args (fg_k_stages234).
type stages234Args struct {
	Grid    gridArgs `c:"grid"`
	Params  uint64   `c:"params"`
	Ctl     uint64   `c:"ctl"`
	Rpt     int32    `c:"rpt"`
	Project int32    `c:"project"`
	Phi     uint64   `c:"phi"`
	Vel     uint64   `c:"vel"`
	G0      uint64   `c:"g0"`
	PhiOut  uint64   `c:"phi_out"`
	VelOut  uint64   `c:"vel_out"`
	One     float64  `c:"one"`
	TrialV2 float64  `c:"trial_v2"`
	TrialG3 float64  `c:"trial_g3"`
	TrialV4 float64  `c:"trial_v4"`
	TrialG4 float64  `c:"trial_g4"`
	H       float64  `c:"h"`
	Q6      float64  `c:"q6"`
	Q3      float64  `c:"q3"`
	Dt      float64  `c:"dt"`
}

var _ = registerArgs[stages234Args]("fg_k_stages234")

// decideArgs is fg_decide_args (fg_k_decide).
type decideArgs struct {
	Ny         int64   `c:"ny"`
	Rows       uint64  `c:"rows"`
	Ctl        uint64  `c:"ctl"`
	Ring       uint64  `c:"ring"`
	Ringcap    int64   `c:"ringcap"`
	Tol        float64 `c:"tol"`
	ArrestTest int32   `c:"arrest_test"` // arrestTest
	_          int32
}

var _ = registerArgs[decideArgs]("fg_k_decide")

// updateArgs is fg_update_args (fg_k_update).
type updateArgs struct {
	Grid    gridArgs `c:"grid"`
	Ctl     uint64   `c:"ctl"`
	Phi     uint64   `c:"phi"`
	Vel     uint64   `c:"vel"`
	G0      uint64   `c:"g0"`
	G1      uint64   `c:"g1"`
	G2      uint64   `c:"g2"`
	G3      uint64   `c:"g3"`
	Dt      float64  `c:"dt"`
	H       float64  `c:"h"`
	Q6      float64  `c:"q6"`
	Q3      float64  `c:"q3"`
	Project int32    `c:"project"`
	_       int32
}

var _ = registerArgs[updateArgs]("fg_k_update")

// flag is 1 for true, the C side's int.
func flag(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// grid3Args is fg_grid3 (cuda_site3d.cu): the lattice as the kernels of lines,
// 3D lattices and boundaries set per axis read it.
type grid3Args struct {
	Nx     int64    `c:"nx"`
	Ny     int64    `c:"ny"`
	Nz     int64    `c:"nz"`
	N      int64    `c:"n"`      // Nx*Ny*Nz
	Lines  int64    `c:"lines"`  // Ny*Nz
	Nchunk int64    `c:"nchunk"` // chunks per line: ceil(Nx/FG_CHUNK)
	Dims   int32    `c:"dims"`
	Wrap   [3]int32 `c:"wrap"`
	Free   int32    `c:"free_edges"` // the free boundary: no site held
	_      int32    // pad_
	Hx     float64  `c:"hx"`
	Hy     float64  `c:"hy"`
	Hz     float64  `c:"hz"`
	Ox     float64  `c:"ox"`
	Oy     float64  `c:"oy"`
	Oz     float64  `c:"oz"`
}

// ndGradientArgs is fg_nd_gradient_args (fg_k_nd_continuum).
type ndGradientArgs struct {
	Grid       grid3Args `c:"grid"`
	Params     uint64    `c:"params"`
	Phi        uint64    `c:"phi"`
	Vel        uint64    `c:"vel"`
	Out        uint64    `c:"out"`
	Part       uint64    `c:"part"`
	Project    int32     `c:"project"`
	WantEnergy int32     `c:"want_energy"`
}

var _ = registerArgs[ndGradientArgs]("fg_k_nd_continuum")

// ndDensityArgs is fg_nd_density_args (fg_k_nd_density).
type ndDensityArgs struct {
	Grid    grid3Args `c:"grid"`
	Params  uint64    `c:"params"`
	Phi     uint64    `c:"phi"`
	Out     uint64    `c:"out"`
	Part    uint64    `c:"part"`
	Density int32     `c:"density"`
	_       int32
}

var _ = registerArgs[ndDensityArgs]("fg_k_nd_density", "fg_k_nd_density_free")

// ndSiteArgs is fg_nd_site_args (fg_k_nd_constrain, fg_k_nd_project).
type ndSiteArgs struct {
	Grid grid3Args `c:"grid"`
	Phi  uint64    `c:"phi"`
	X    uint64    `c:"x"`
}

var _ = registerArgs[ndSiteArgs]("fg_k_nd_constrain", "fg_k_nd_project")

// ndConsistentArgs is fg_nd_consistent_args (fg_k_nd_partials, fg_k_nd_consistent).
type ndConsistentArgs struct {
	Grid    grid3Args `c:"grid"`
	Params  uint64    `c:"params"`
	Phi     uint64    `c:"phi"`
	Vel     uint64    `c:"vel"`
	Out     uint64    `c:"out"`
	Part    uint64    `c:"part"`
	Work    uint64    `c:"work"`
	Project int32     `c:"project"`
	_       int32
	Penalty float64 `c:"penalty"`
}

var _ = registerArgs[ndConsistentArgs]("fg_k_nd_partials", "fg_k_nd_consistent", "fg_k_nd_partials_free", "fg_k_nd_consistent_free")

// cdotsArgs is fg_cdots_args (cuda_reduce.cu): Program.CombineDots' terms,
// projection, products and partials; fg_k_combine_dots_final takes it, the
// two grids' combine-dots kernels take it with their grid.
type cdotsArgs struct {
	Sites  int64 `c:"sites"`
	Nterms int32 `c:"nterms"`
	_      int32
	Coef   [maxTerms]float64 `c:"coef"`
	Terms  [maxTerms]uint64  `c:"terms"`
	Phi    uint64            `c:"phi"`
	Out    uint64            `c:"out"`
	Y      uint64            `c:"y"`
	Part   uint64            `c:"part"`
	Res    uint64            `c:"res"`
}

var _ = registerArgs[cdotsArgs]("fg_k_combine_dots_final")

// combineDotsArgs is fg_combine_dots_args (fg_k_combine_dots).
type combineDotsArgs struct {
	D    cdotsArgs `c:"d"`
	Grid gridArgs  `c:"grid"`
}

var _ = registerArgs[combineDotsArgs]("fg_k_combine_dots")

// ndCombineDotsArgs is fg_nd_combine_dots_args (fg_k_nd_combine_dots).
type ndCombineDotsArgs struct {
	D    cdotsArgs `c:"d"`
	Grid grid3Args `c:"grid"`
}

var _ = registerArgs[ndCombineDotsArgs]("fg_k_nd_combine_dots")
