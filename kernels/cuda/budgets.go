package cuda

// Register budgets: the most registers per thread each built-in kernel may
// use, checked with zero spill by TestRegisterBudgets (NVRTC's ptxas log, no
// GPU needed) for sm_80 and sm_90 and by the GPU tests on the loaded kernel
// (cuFuncGetAttribute). A budget is a promise about occupancy: a kernel that
// must exceed it gets its own measured entry in TheoryBudgets with the
// reason beside it, never a blanket raise here.
//
// Measured with NVRTC 13.5 (2026-11-29); docs/kernels/budgets.md has the
// table with the occupancy each budget buys on an H200 (65536 registers and
// 2048 threads per SM).
var Budgets = map[string]int{
	// One site per thread, the site struct (6 values per component plus
	// x, y) and the theory's point gradient in registers. NVRTC 13.5: 80-96;
	// NVRTC 13.0 (the GPU machine's) may allocate more for sm_80. 112 still
	// keeps 512 threads per SM resident.
	"fg_k_continuum": 112,
	// Recomputes the partials of its 8 stencil neighbours in registers
	// instead of reading a partials buffer: 3 fields measured 126-128
	// (NVRTC 13.5), 130 (NVRTC 13.0, sm_90, on the H200 2026-11-29).
	"fg_k_consistent": 136,
	"fg_k_density":    48,
	"fg_k_rows":       32,
	"fg_k_final":      32,
	"fg_k_combine":    32,
	"fg_k_constrain":  40,
	"fg_k_nonfinite":  16,
	// The shared-memory tiled continuum gradient: the site struct
	// as fg_k_continuum plus the tile's row/column bookkeeping and the
	// three-term trial loader. NVRTC 13.5: 77-93, no spill; 104 keeps 512
	// threads per SM resident at every tuned shape.
	"fg_k_tile": 104,
	// Stage 4 of the device flow with the RK4 update fused: the
	// tiled gradient, then phi', v' from five input streams and the
	// gradient still in registers. NVRTC 13.5: 64-162, mostly at or below
	// fg_k_tile's count.
	"fg_k_tile_up": 104,
	"fg_k_decide":  32,
	// Stages 2-4 of the flow in one kernel,
	// three tiled gradients one after the other and the update; the theories
	// above 128 have their own entries. 128 keeps 512 threads per SM resident.
	"fg_k_stages234": 128,
	// Two vectors (phi', v') of FG_NCOMP plus six input streams: 36-40.
	"fg_k_update": 48,
	// Host transfers of float32 storage (never launched by a float64
	// program): a grid-stride copy converting one value per iteration.
	// NVRTC 13.5: 28-30; +8 for NVRTC 13.0. Occupancy is not limited below
	// 1536 threads per SM at 40.
	"fg_k_widen":  40,
	"fg_k_narrow": 40,
	// Program.Dot, MaxAbs and FillRandom: a warp-strided or grid-stride
	// loop with one accumulator or one hash. NVRTC 13.5 and 13.0: 28-32, no
	// spill.
	"fg_k_dot":          40,
	"fg_k_dot_final":    40,
	"fg_k_maxabs":       40,
	"fg_k_maxabs_final": 40,
	"fg_k_random":       40,
	// Program.Project: fg_k_constrain without the normalised field's store.
	"fg_k_project": 40,
	// Program.CombineDots: a site's components combined from up to eight
	// terms, projected, and two accumulators; its final level is
	// fg_k_dot_final's with two sums.
	"fg_k_combine_dots":       64,
	"fg_k_combine_dots_final": 40,
	// Program.Rate: a site's rate from its field and gradient components
	// (the Landau-Lifshitz double cross product, or the Schrodinger pair
	// rotation). NVRTC 13.5's ptxas (sm_80/sm_90, float64 and float32, no
	// spill): 28-32; not yet measured on a GPU (NVRTC 13.0), hence the
	// margin.
	"fg_k_rate": 48,
	// core.CentripetalProgram: two sums over a site's components and one
	// read-modify-write of the acceleration. NVRTC 13.5's ptxas (sm_80/sm_90,
	// float64 and float32, no spill): 30-32; not yet measured on a GPU.
	"fg_k_centripetal": 48,

	// The grid unit (cuda_site3d.cu: lines, 3D lattices, boundaries per
	// axis, theories with z derivatives), checked by TestGridUnitCompiles
	// with phi4_3d, sigma4_3d and the planar built-ins. The site struct of
	// a 3D source holds 10 values per component plus x, y, z; the stencil
	// is read from global memory. NVRTC 13.5 (2026-12-04): 52 (phi4_3d),
	// 96 (baby_skyrme, abelian_higgs), 102-108 (sigma4_3d, 4 components),
	// no spill; 128 keeps 512 threads per SM resident.
	"fg_k_nd_continuum": 128,
	// The site struct and fg_energy or fg_density: 40-64 measured.
	"fg_k_nd_density": 80,
	// The consistent form's two passes (cuda_site3d.cu): the site struct of
	// first derivatives with fg_partials and the doubler differences (NVRTC
	// 13.5: 54-56 phi4_3d, 72-80 planar built-ins, 92-96 sigma4_3d and
	// skyrme, 106-113 faddeev_skyrme), then
	// the transposed stencils over the work columns (46-64); no spill.
	"fg_k_nd_partials":   128,
	"fg_k_nd_consistent": 80,
	// The free boundary's (cuda_free.cu): the same passes and the density
	// with in-box edge stencils read through tables. NVRTC 13.5
	// (2026-12-04), no spill: partials 40 (phi4_3d), 64-72 (planar
	// built-ins), 80-96 (sigma4_3d); consistent 40-72; density 32-72.
	"fg_k_nd_partials_free":   128,
	"fg_k_nd_consistent_free": 80,
	"fg_k_nd_density_free":    80,
	// fg_k_constrain and fg_k_project with the held test of three axes:
	// 26-40 measured.
	"fg_k_nd_constrain": 48,
	"fg_k_nd_project":   48,
	// fg_k_combine_dots with the held test of three axes.
	"fg_k_nd_combine_dots": 64,
	// fg_k_rate with the held test of three axes: NVRTC 13.5's ptxas 8-31,
	// no spill; not yet measured on a GPU.
	"fg_k_nd_rate": 48,
	// fg_k_centripetal with the held test of three axes: NVRTC 13.5's ptxas
	// 28-32, no spill; not yet measured on a GPU.
	"fg_k_nd_centripetal": 48,
	// The device flow on these grids: a stage is fg_k_nd_continuum with the
	// control block's reads, a trial fg_k_combine's three-term sum, the
	// update fg_k_update's arithmetic with the held test of three axes.
	"fg_k_nd_stage":  128,
	"fg_k_nd_trial":  40,
	"fg_k_nd_update": 48,
}

// Float32Budgets are the float32-storage variants' exceptions to Budgets
// (kernel -> override, for every theory without its own TheoryBudgets
// entry): float loads widened to double and double results rounded to float
// change the register allocation little, and mostly downward; where they
// raise it, the measured count is here with the reason.
var Float32Budgets = map[string]BudgetOverride{
	"fg_k_combine": {40, "float32 storage: each term is loaded as a float and widened, and the sum rounded back, inside the grid-stride loop; measured 32 (NVRTC 13.5, sm_80/sm_90, no spill, 2026-11-29) against 28 in float64, +8 for NVRTC 13.0"},
}

// TheoryFloat32Budgets are per-theory exceptions of the float32-storage
// variants (theory -> kernel), checked before TheoryBudgets for float32: the
// kernels where ptxas, given float loads (one register each instead of two),
// keeps more of a site's stencil loads in flight than in float64. Measured by
// tests/python/test_kernel_budgets.py with NVRTC 13.5 on 2026-11-29, +8 for
// the GPU machine's NVRTC 13.0 like TheoryBudgets. fg_k_continuum is the
// untiled gradient (kept for the kernel tests; Gradient and the flows use
// fg_k_tile), fg_k_density runs once per observable.
var TheoryFloat32Budgets = map[string]map[string]BudgetOverride{
	"anisotropic_gl": {
		"fg_k_combine_dots": {82, "6 components, float32 storage: measured 72 (sm_80) / 70 (sm_90) (NVRTC 13.5, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_continuum":    {152, "6 components, float32 storage: measured 144 (sm_90) / 128 (sm_80) against 128-130 in float64 (NVRTC 13.5, no spill), +8 for NVRTC 13.0"},
	},
	"chern_simons_higgs": {
		"fg_k_tile_up": {128, "5 components, float32 storage: stage 4 fused with the RK4 update holds the five float input streams' loads with the site struct; measured 119 (sm_90) against 94 in float64 (NVRTC 13.5, no spill), +8 for NVRTC 13.0; 128 registers keep 512 threads per SM resident"},
	},
	"ferromagnetic_superconductor": {
		"fg_k_combine_dots": {100, "8 components, float32 storage: measured 92 (sm_80) / 80 (sm_90) (NVRTC 13.5, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_continuum":    {156, "8 components, float32 storage: measured 148 (sm_90) / 130 (sm_80) against 128-132 in float64 (NVRTC 13.5, no spill), +8 for NVRTC 13.0"},
	},
	"liquid_crystal": {
		"fg_k_continuum": {120, "4 components, float32 storage: measured 110 (sm_90) / 106 (sm_80) against 102-104 in float64 (NVRTC 13.5, no spill), +8 for NVRTC 13.0"},
	},
	"spin_triplet": {
		"fg_k_combine_dots": {108, "10 components, float32 storage: measured 100 (sm_80) / 87 (sm_90) (NVRTC 13.5, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_continuum":    {184, "10 components, float32 storage: the 25-point stencil loads of 10 components are issued ahead as floats; measured 176 (sm_90) / 138 (sm_80) against 128-130 in float64 (NVRTC 13.5, no spill), +8 for NVRTC 13.0"},
		"fg_k_density":      {116, "10 components, float32 storage: measured 108 (sm_80) / 106 (sm_90) against 100 in float64 (NVRTC 13.5, no spill), +8 for NVRTC 13.0"},
	},
}

// BudgetOverride is a measured budget for one theory's kernel, with why the
// default does not hold.
type BudgetOverride struct {
	Registers int
	Reason    string
}

// TheoryBudgets are per-theory exceptions: theory -> kernel -> override.
//
// The built-in theories of python/fieldgo/theories are held to this table by
// tests/python/test_kernel_budgets.py (their generated sources, compiled with
// NVRTC for sm_80 and sm_90); the entries below were measured there on
// 2026-11-29 with a margin of 8 registers for the GPU machine's NVRTC 13.0.
var TheoryBudgets = map[string]map[string]BudgetOverride{
	"anisotropic_gl": {
		"fg_k_combine_dots": {82, "6 components: CombineDots holds a site's combined components, the projection's sums and two accumulators; measured 74 (sm_80) / 65 (sm_90) (NVRTC 13.5, float64, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_project":      {56, "6 components: the site's components of the field and the projected vector are loaded together; measured 48 (NVRTC 13.5, sm_80/sm_90, float64 and float32, no spill), +8 for NVRTC 13.0"},
		"fg_k_stages234":    {176, "stages 2-4 and the update in one kernel hold the site struct and the generated gradient's common subexpressions in each of three gradient phases; measured 164 (sm_80/sm_90) (NVRTC 13.5, no spill, 2026-11-30), +8 for NVRTC 13.0"},
		"fg_k_consistent":   {255, "6 components: the partials (de/ddx, de/ddy) of 8 stencil neighbours per component stay live across the neighbour loop; measured 230 (NVRTC 13.5) and 254 (NVRTC 13.0, sm_80, on the H200), no spill: the hardware limit"},
		"fg_k_constrain":    {56, "6 components: one site's components and velocity are held together for the projection; measured 42 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_continuum":    {144, "6 components: the site struct (6 values per component plus x, y) and the generated gradient's common subexpressions are live at once; measured 130 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_density":      {96, "6 components: its densities are evaluated from the whole site struct, second derivatives included; measured 82 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_tile":         {176, "6 components: the tiled continuum gradient holds the site struct (6 values per component plus x, y) and the generated gradient's common subexpressions at once; measured 166 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_tile_up":      {176, "6 components: stage 4 fused with the RK4 update holds the site struct and the generated gradient's common subexpressions, then phi', v' of every component; measured 165 (sm_80) / 158 (sm_90) (NVRTC 13.5, sm_80/sm_90, no spill, 2026-11-29), +8 for NVRTC 13.0"},
	},
	"baby_skyrme": {
		"fg_k_stages234": {136, "stages 2-4 and the update in one kernel hold the site struct and the generated gradient's common subexpressions in each of three gradient phases; measured 124 (sm_80) / 120 (sm_90) traced, 119 / 121 for the testdata source (NVRTC 13.5, no spill, 2026-11-30), +8 for NVRTC 13.0"},
		"fg_k_tile":      {128, "3 components: the tiled continuum gradient holds the site struct (6 values per component plus x, y) and the generated gradient's common subexpressions at once; measured 118 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_tile_up":   {128, "3 components: stage 4 fused with the RK4 update holds the site struct and the generated gradient's common subexpressions, then phi', v' of every component; measured 116 (sm_80) / 118 (sm_90) (NVRTC 13.5, sm_80/sm_90, no spill, 2026-11-29), +8 for NVRTC 13.0"},
	},
	"chern_simons_higgs": {
		"fg_k_combine_dots": {74, "5 components: CombineDots holds a site's combined components, the projection's sums and two accumulators; measured 66 (NVRTC 13.5, sm_80, float64, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_stages234":    {136, "stages 2-4 and the update in one kernel hold the site struct and the generated gradient's common subexpressions in each of three gradient phases; measured 116 (sm_80) / 126 (sm_90) (NVRTC 13.5, no spill, 2026-11-30), +8 for NVRTC 13.0"},
		"fg_k_consistent":   {184, "5 components: the partials (de/ddx, de/ddy) of 8 stencil neighbours per component stay live across the neighbour loop; measured 170 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_density":      {72, "5 components: its densities are evaluated from the whole site struct, second derivatives included; measured 64 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_tile":         {122, "5 components: the tiled continuum gradient holds the site struct and the generated gradient's common subexpressions at once; measured 114 on sm_90 (93 on sm_80, both precisions; NVRTC 13.5, no spill, 2026-12-03) once the folded stage-1 reduction's code left the kernel (92 with it; docs/decisions/0014), +8 for NVRTC 13.0"},
	},
	"chiral_magnet": {
		"fg_k_consistent": {176, "4 components: the partials (de/ddx, de/ddy) of 8 stencil neighbours per component stay live across the neighbour loop; measured 163 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_density":    {72, "4 components: its densities are evaluated from the whole site struct, second derivatives included; measured 64 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
	},
	"ferromagnetic_superconductor": {
		"fg_k_combine_dots": {100, "8 components: CombineDots holds a site's combined components, the projection's sums and two accumulators; measured 92 (sm_80) / 78 (sm_90) (NVRTC 13.5, float64, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_project":      {64, "8 components: the site's components of the field and the projected vector are loaded together; measured 56 (NVRTC 13.5, sm_80/sm_90, float64 and float32, no spill), +8 for NVRTC 13.0"},
		"fg_k_stages234":    {168, "stages 2-4 and the update in one kernel hold the site struct and the generated gradient's common subexpressions in each of three gradient phases; measured 148 (sm_80) / 154 (sm_90) (NVRTC 13.5, no spill, 2026-11-30), +8 for NVRTC 13.0"},
		"fg_k_consistent":   {255, "8 components: the partials (de/ddx, de/ddy) of 8 stencil neighbours per component stay live across the neighbour loop; measured 254 (NVRTC 13.5, sm_80/sm_90, no spill): the hardware limit, so theories above 8 components get no consistent kernel (ConsistentMaxComponents)"},
		"fg_k_constrain":    {56, "8 components: one site's components and velocity are held together for the projection; measured 48 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_continuum":    {144, "8 components: the site struct (6 values per component plus x, y) and the generated gradient's common subexpressions are live at once; measured 132 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_density":      {88, "8 components: its densities are evaluated from the whole site struct, second derivatives included; measured 74 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_tile":         {160, "8 components: the tiled continuum gradient holds the site struct (6 values per component plus x, y) and the generated gradient's common subexpressions at once; measured 146 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_tile_up":      {162, "8 components: stage 4 fused with the RK4 update holds the site struct and the generated gradient's common subexpressions, then phi', v' of every component; measured 154 (sm_80) / 128 (sm_90) (NVRTC 13.5, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_update":       {64, "8 components: the RK4 combination holds phi' and v' for every component plus six input streams; measured 56 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
	},
	"liquid_crystal": {
		"fg_k_stages234":  {152, "stages 2-4 and the update in one kernel hold the site struct and the generated gradient's common subexpressions in each of three gradient phases; measured 144 (sm_80) / 140 (sm_90) (NVRTC 13.5, no spill, 2026-11-30), +8 for NVRTC 13.0"},
		"fg_k_consistent": {176, "4 components: the partials (de/ddx, de/ddy) of 8 stencil neighbours per component stay live across the neighbour loop; measured 168 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_density":    {136, "4 components: its densities are evaluated from the whole site struct, second derivatives included; measured 96 (NVRTC 13.5) and 128 (NVRTC 13.0, sm_80, on the H200), no spill, +8"},
		"fg_k_tile":       {136, "4 components: the tiled continuum gradient holds the site struct (6 values per component plus x, y) and the generated gradient's common subexpressions at once; measured 128 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_tile_up":    {136, "4 components: stage 4 fused with the RK4 update holds the site struct and the generated gradient's common subexpressions, then phi', v' of every component; measured 128 (sm_80) / 126 (sm_90) (NVRTC 13.5, sm_80/sm_90, no spill, 2026-11-29), +8 for NVRTC 13.0"},
	},
	"skyrme": {
		"fg_k_nd_continuum":    {188, "the 3D Skyrme model, 4 components: the site struct of a 3D source (10 values per component plus x, y, z) and the quartic term's partials with their tangents along one axis live at once; measured 166-180 (NVRTC 13.5, sm_80/sm_90, both precisions, no spill, 2026-12-04; 242 with the gradient written as the expanded Hessian contraction), +8 for NVRTC 13.0"},
		"fg_k_nd_stage":        {186, "fg_k_nd_continuum in a device flow: the same site struct and gradient; measured 166-178"},
		"fg_k_nd_density_free": {88, "the free boundary's energy density of the 3D Skyrme model: the site struct with the edge stencils' second derivatives; measured 72-80 (NVRTC 13.5, sm_80/sm_90, float64; 64 in float32, no spill, 2026-12-04), +8 for NVRTC 13.0"},
	},
	"anisotropic_gl_3d": {
		"fg_k_nd_partials_free": {136, "the free boundary's first pass with the weighted partials of 5 components; measured 128 (NVRTC 13.5, sm_80/sm_90, both precisions, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_nd_continuum":     {176, "the 3D anisotropic Ginzburg-Landau model, 5 components: the site struct of a 3D source and the weighted covariant derivatives' generated gradient live at once; measured 168 (NVRTC 13.5, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_nd_stage":         {180, "fg_k_nd_continuum in a device flow: the same site struct and gradient; measured 172 (NVRTC 13.5, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_nd_partials":      {152, "the consistent form's first pass with the weighted partials of 5 components; measured 143 (NVRTC 13.5, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_nd_combine_dots":  {76, "5 components: CombineDots holds a site's combined components, the projection's sums and two accumulators; measured 68 (NVRTC 13.5, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_project":          {56, "5 components: the site's components of the field and the projected vector are loaded together; measured 48 (NVRTC 13.5, no spill, 2026-12-04), +8 for NVRTC 13.0"},
	},
	"abelian_higgs_3d": {
		"fg_k_nd_partials_free": {136, "the free boundary's first pass with the covariant partials of 5 components; measured 128 on sm_80 and 106 on sm_90 (NVRTC 13.5, both precisions, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_nd_combine_dots":  {76, "5 components: CombineDots holds a site's combined components, the projection's sums and two accumulators; measured 68 (NVRTC 13.5, sm_80, float64, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_project":          {56, "5 components: the site's components of the field and the projected vector are loaded together; measured 46-48 (NVRTC 13.5, sm_80/sm_90, float64 and float32, no spill), +8 for NVRTC 13.0"},
		"fg_k_nd_continuum":     {176, "the 3D abelian Higgs model, 5 components: the site struct of a 3D source and the three covariant derivatives' generated gradient live at once; measured 168 on sm_80 and 130 on sm_90 (NVRTC 13.5, both precisions, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_nd_stage":         {176, "fg_k_nd_continuum in a device flow: the same site struct and gradient"},
	},
	"faddeev_skyrme": {
		"fg_k_nd_continuum": {176, "the Faddeev-Skyrme model, 3 components: the site struct of a 3D source and the quartic term's generated gradient live at once; measured 166-168 (NVRTC 13.5, sm_80/sm_90, both precisions, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_nd_stage":     {176, "fg_k_nd_continuum in a device flow: the same site struct and gradient"},
	},
	"spin_triplet": {
		"fg_k_combine_dots": {106, "10 components: CombineDots holds a site's combined components, the projection's sums and two accumulators; measured 98 (sm_80) / 92 (sm_90) (NVRTC 13.5, float64, no spill, 2026-12-04), +8 for NVRTC 13.0"},
		"fg_k_project":      {72, "10 components: the site's components of the field and the projected vector are loaded together; measured 64 (NVRTC 13.5, sm_80/sm_90, float64 and float32, no spill), +8 for NVRTC 13.0"},
		"fg_k_stages234":    {160, "stages 2-4 and the update in one kernel hold the site struct and the generated gradient's common subexpressions in each of three gradient phases; measured 148 (sm_80) / 126 (sm_90) (NVRTC 13.5, no spill, 2026-11-30), +8 for NVRTC 13.0"},
		"fg_k_constrain":    {64, "10 components: one site's components and velocity are held together for the projection; measured 56 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_continuum":    {144, "10 components: the site struct (6 values per component plus x, y) and the generated gradient's common subexpressions are live at once; measured 130 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_density":      {112, "10 components: its densities are evaluated from the whole site struct, second derivatives included; measured 100 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
		"fg_k_tile":         {160, "10 components: the tiled continuum gradient holds the site struct (6 values per component plus x, y) and the generated gradient's common subexpressions at once; measured 132 (NVRTC 13.5, sm_80/sm_90, no spill); with the device flow's folded stage-1 reduction (one warp combining the row partials; deleted since, docs/decisions/0014) NVRTC 13.5 allocated 152 for sm_80 (131 for sm_90), no spill, 2026-11-29; +8 for NVRTC 13.0"},
		"fg_k_tile_up":      {170, "10 components: stage 4 fused with the RK4 update holds the site struct and the generated gradient's common subexpressions, then phi', v' of every component; measured 162 (sm_80) / 158 (sm_90) (NVRTC 13.5, sm_80/sm_90, no spill, 2026-11-29), +8 for NVRTC 13.0"},
		"fg_k_update":       {72, "10 components: the RK4 combination holds phi' and v' for every component plus six input streams; measured 64 (NVRTC 13.5, sm_80/sm_90, no spill), +8 for NVRTC 13.0"},
	},
	"abelian_higgs": {
		"fg_k_consistent": {168, "4 components: the covariant-derivative partials of 8 neighbours " +
			"(de/ddx, de/ddy and both d4 differences per component) stay live across the " +
			"neighbour loop; measured 150-154 (NVRTC 13.5) and up to 168 (NVRTC 13.0, sm_80) " +
			"with no spill. 168 registers still keep 384 threads per SM resident."},
	},
}

// OlderNVRTCBudgets are the exceptions of NVRTC releases older than the
// 13.5 the tables above are measured with, checked before every table when
// such an NVRTC is loaded: CUDA 12's (fieldgo[cuda], the
// nvidia-cuda-nvrtc-cu12 wheel, for drivers older than CUDA 13's) and 13.0
// (the H200 machine's toolkit, nvidia-cuda-nvrtc 13.0.88). Measured with
// NVRTC 12.9.86 and 13.0.88, which allocate alike here (sm_80 and sm_90,
// float64 and float32, every built-in theory, 2026-12-03); every other kernel
// stays within the NVRTC 13.5 budget without spill. A budget is the count
// rounded up to 8 plus 8 (255 at the hardware limit).
var OlderNVRTCBudgets = []CompilerBudget{
	{"chern_simons_higgs", "fg_k_tile_up", Float64, BudgetOverride{128, "5 components: stage 4 fused with the RK4 update; 119 registers for sm_90 (94 with NVRTC 13.5), no spill; 128 still keep 512 threads per SM resident"}, 0},
	{"ferromagnetic_superconductor", "fg_k_tile_up", Float64, BudgetOverride{168, "8 components: stage 4 fused with the RK4 update; 153 registers for sm_90 (128 with NVRTC 13.5), no spill; 384 threads per SM resident instead of 448"}, 0},
	{"anisotropic_gl", "fg_k_continuum", Float32, BudgetOverride{168, "6 components, float32 storage: 154 registers for sm_90 (144 with NVRTC 13.5), no spill; the untiled gradient, which the flows do not launch"}, 0},
	{"baby_skyrme", "fg_k_consistent", Float64, BudgetOverride{152, "3 components: 145 registers for sm_80 (128 with NVRTC 13.5), no spill; the consistent form is not the default"}, 0},
	{"ferromagnetic_superconductor", "fg_k_consistent", Float64, BudgetOverride{255, "8 components at the hardware limit: 254 registers and 8 bytes of spill for sm_90 (no spill with NVRTC 13.5); the consistent form is not the default"}, 8},
	{"ferromagnetic_superconductor", "fg_k_consistent", Float32, BudgetOverride{255, "8 components at the hardware limit, float32 storage: 255 registers and 8 (sm_80) / 24 (sm_90) bytes of spill (no spill with NVRTC 13.5); the consistent form is not the default"}, 24},
}

// CompilerBudget is a measured budget of one theory's kernel in one storage
// precision for an NVRTC older than the tables', with the spill it is
// allowed (bytes of stores and of loads each; 0 everywhere else).
type CompilerBudget struct {
	Theory, Kernel string
	Prec           Precision
	BudgetOverride
	Spill int
}

// olderNVRTC reports whether the loaded NVRTC is older than 13.5.
func olderNVRTC() bool {
	_, major, minor, err := NVRTCVersion()
	return err == nil && (major < 13 || major == 13 && minor < 5)
}

func compilerBudget(kernel string, prec Precision, theory []string) (CompilerBudget, bool) {
	if len(theory) > 0 && olderNVRTC() {
		for _, b := range OlderNVRTCBudgets {
			if b.Theory == theory[0] && b.Kernel == kernel && b.Prec == prec {
				return b, true
			}
		}
	}
	return CompilerBudget{}, false
}

// SpillAllowance is the spill (bytes of stores and of loads each) kernel may
// have for theory with buffers stored in prec: 0 but for a measured
// exception of an older NVRTC.
func SpillAllowance(kernel string, prec Precision, theory ...string) int {
	b, _ := compilerBudget(kernel, prec, theory)
	return b.Spill
}

// Budget returns the register budget of kernel for theory ("" for the
// default) with float64 storage.
func Budget(kernel string, theory ...string) int { return BudgetAs(kernel, Float64, theory...) }

// BudgetAs returns the register budget of kernel for theory with buffers
// stored in prec: with float32 storage the theory's float32 entry; then the
// theory's own entry; then (float32) the float32 table's; else the default.
// With an NVRTC older than 13.5 loaded, its measured exceptions come first.
func BudgetAs(kernel string, prec Precision, theory ...string) int {
	if b, ok := compilerBudget(kernel, prec, theory); ok {
		return b.Registers
	}
	if len(theory) > 0 && prec == Float32 {
		if o, ok := TheoryFloat32Budgets[theory[0]][kernel]; ok {
			return o.Registers
		}
	}
	if len(theory) > 0 {
		if o, ok := TheoryBudgets[theory[0]][kernel]; ok {
			return o.Registers
		}
	}
	if prec == Float32 {
		if o, ok := Float32Budgets[kernel]; ok {
			return o.Registers
		}
	}
	return Budgets[kernel]
}
