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
	// NVRTC 13.0 (the GPU machine's) allocated up to 114 for sm_80 before
	// the 32-bit indexing. 112 still keeps 512 threads per SM resident.
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
	// The shared-memory tiled continuum gradient (phase 2): the site struct
	// as fg_k_continuum plus the tile's row/column bookkeeping and the
	// three-term trial loader. NVRTC 13.5: 77-93, no spill; 104 keeps 512
	// threads per SM resident at every tuned shape.
	"fg_k_tile":   104,
	"fg_k_decide": 32,
	// Two vectors (phi', v') of FG_NCOMP plus six input streams: 36-40.
	"fg_k_update": 48,
}

// BudgetOverride is a measured budget for one theory's kernel, with why the
// default does not hold.
type BudgetOverride struct {
	Registers int
	Reason    string
}

// TheoryBudgets are per-theory exceptions: theory -> kernel -> override.
var TheoryBudgets = map[string]map[string]BudgetOverride{
	"abelian_higgs": {
		"fg_k_consistent": {168, "4 components: the covariant-derivative partials of 8 neighbours " +
			"(de/ddx, de/ddy and both d4 differences per component) stay live across the " +
			"neighbour loop; measured 150-154 (NVRTC 13.5) and up to 168 (NVRTC 13.0, sm_80) " +
			"with no spill. 168 registers still keep 384 threads per SM resident."},
	},
}

// Budget returns the register budget of kernel for theory ("" for the
// default).
func Budget(kernel string, theory ...string) int {
	if len(theory) > 0 {
		if o, ok := TheoryBudgets[theory[0]][kernel]; ok {
			return o.Registers
		}
	}
	return Budgets[kernel]
}
