package cuda

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/kernels"
)

// gridBuiltins are the point sources the second translation unit is checked
// with: two with z derivatives (FG_DIM 3), the phi^4 wall theory of
// core/testdata and a 4-component O(4) sigma model of testdata, and the
// planar built-ins, which run lines and 3D lattices through the same unit.
func gridBuiltins(t testing.TB) []builtin {
	t.Helper()
	read := func(name string) string {
		for _, dir := range []string{"../../core/testdata", "testdata"} {
			if b, err := os.ReadFile(filepath.Join(dir, name+".c")); err == nil {
				return string(b)
			}
		}
		t.Fatalf("point source %s not found", name)
		return ""
	}
	out := []builtin{
		{"phi4_3d", kernels.Unit{Point: read("phi4_3d"), NComp: 1, NParams: 1, NDens: 0, ThreeD: true}},
		{"sigma4_3d", kernels.Unit{Point: read("sigma4_3d"), NComp: 4, NParams: 1, NDens: 1, ThreeD: true}},
	}
	return append(out, builtins(t)...)
}

// TestPlanarUnitIsUnchanged: the planar translation unit of a planar theory
// is the source it was before the kernels of lines and 3D lattices came
// (their own unit, cuda_site3d.cu): the same bytes, so the same CUBIN cache
// keys, tune caches and register counts. The digests were taken when
// Program.CombineDots added its two kernels (sharing fg_k_combine's sum,
// fg_sum_terms) and the flow's decision moved to cuda_reduce.cu (shared with
// the grid unit's device flow), then again when Program.Rate and
// AddCentripetal added fg_k_rate and fg_k_centripetal with their shared site
// functions (cuda_reduce.cu) for dynamics, then when the mixed derivative became
// the 8-point diagonal stencil (stencil.h FG_DMIX), then when the flow's decision
// took an arrest test that can be off (evolve's RK4 on the device flow); a
// deliberate change to the planar templates updates them.
func TestPlanarUnitIsUnchanged(t *testing.T) {
	want := map[string]string{
		"baby_skyrme float64":   "124776f22a65173f4f57024d53dbf7dbc9f5cf3a82e5cc1a01ef56ede93d8779",
		"baby_skyrme float32":   "02b6c834c5cb07d51b283eeabf1b0c8d319ab1aeaa9aba485d600689a8d6541e",
		"abelian_higgs float64": "ca67ea767620b2c85626eb4afda133c276d60f13ab1c70eadea97dcf41e029b4",
		"abelian_higgs float32": "a4529d5f8b5febcc82b679c6065f3ac00c6e17d136b7356bbaccc86f78878207",
	}
	for _, th := range builtins(t) {
		for _, prec := range []Precision{Float64, Float32} {
			key := th.name + " " + prec.String()
			if got := fmt.Sprintf("%x", sha256.Sum256([]byte(TranslationUnitAs(th.unit, prec)))); got != want[key] {
				t.Errorf("%s: the planar translation unit changed (sha256 %s, was %s)", key, got, want[key])
			}
		}
	}
	for _, k := range GridKernelNames {
		if strings.HasPrefix(k, "fg_k_nd_") && strings.Contains(TranslationUnit(builtins(t)[0].unit), k) {
			t.Errorf("%s is in the planar unit", k)
		}
	}
}

// TestGridUnitCompiles compiles the second translation unit (lines, 3D
// lattices, boundaries per axis; every grid of a theory with z derivatives)
// with NVRTC, no GPU needed: the theories with z derivatives for sm_80 and
// sm_90 in float64 and for sm_90 in float32, the planar built-ins for sm_90
// in float64 (eight compiles, to keep the test short). Every kernel is
// reported by ptxas, within its register budget, with no spill and no stack
// frame.
func TestGridUnitCompiles(t *testing.T) {
	if _, _, _, err := NVRTCVersion(); err != nil {
		t.Skipf("no NVRTC, the grid unit not compiled (pip install nvidia-cuda-nvrtc into .venv or set FIELDGO_NVRTC): %v", err)
	}
	type variant struct {
		arch string
		prec Precision
	}
	for _, th := range gridBuiltins(t) {
		variants := []variant{{"sm_90", Float64}}
		if th.unit.ThreeD {
			variants = append(variants, variant{"sm_80", Float64}, variant{"sm_90", Float32})
		}
		for _, v := range variants {
			_, log, err := CompileCUBIN(TranslationUnitGridAs(th.unit, v.prec), v.arch)
			if err != nil {
				t.Fatalf("%s %s %v: %v", th.name, v.arch, v.prec, err)
			}
			res := ParsePtxasLog(log)
			var row []string
			for _, k := range GridKernelNames {
				r, ok := res[k]
				if !ok {
					t.Errorf("%s %s: no ptxas report for %s", th.name, v.arch, k)
					continue
				}
				b := BudgetAs(k, v.prec, th.name)
				if r.Registers > b {
					t.Errorf("%s %s %v %s: %d registers, budget %d", th.name, v.arch, v.prec, k, r.Registers, b)
				}
				if sp := SpillAllowance(k, v.prec, th.name); r.SpillStores > sp || r.SpillLoads > sp {
					t.Errorf("%s %s %v %s: spills %d bytes stores, %d bytes loads", th.name, v.arch, v.prec, k, r.SpillStores, r.SpillLoads)
				}
				if r.StackFrame != 0 {
					t.Errorf("%s %s %v %s: %d bytes stack frame (local memory)", th.name, v.arch, v.prec, k, r.StackFrame)
				}
				if strings.HasPrefix(k, "fg_k_nd_") {
					row = append(row, k[8:]+"="+itoa(r.Registers)+"/"+itoa(b))
				}
			}
			t.Logf("%-14s %s %v: %s", th.name, v.arch, v.prec, strings.Join(row, " "))
		}
	}
}
