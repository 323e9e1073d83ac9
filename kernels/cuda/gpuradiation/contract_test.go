package gpuradiation

import (
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/src"
)

// TestSourceMatchesContract: radiation.cu's record length, the acceleration's
// offset in a record and the cube's components are the contract's
// (kernels/radiation.go), which the host builds the records by.
func TestSourceMatchesContract(t *testing.T) {
	for name, want := range map[string]int{
		"FG_RAD_REC":       kernels.RadiationRecordLen,
		"FG_RAD_REC_ACCEL": kernels.RadiationRecordAccel,
		"FG_RAD_NCOMP":     kernels.RadiationComponents,
	} {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)\b`).FindStringSubmatch(src.RadiationCUDA)
		if m == nil {
			t.Fatalf("radiation.cu defines no %s", name)
		}
		if m[1] != fmt.Sprint(want) {
			t.Fatalf("radiation.cu: %s is %s, the contract's %d", name, m[1], want)
		}
	}
}

// TestEntryPoints: every kernel a job can ask for has its entry points in
// radiation.cu (src.RadiationKernels), the tiled one with and without the
// retarded times and the split phases; the cold search ignores CoefReuse.
func TestEntryPoints(t *testing.T) {
	for _, prec := range []kernels.Precision{kernels.Float64, kernels.Float32} {
		for _, m := range []kernels.RadiationMethod{kernels.RadiationNewton, kernels.RadiationRK4} {
			for _, s := range []kernels.RadiationSearch{kernels.WarmSearch, kernels.ColdSearch} {
				for _, reuse := range []bool{false, true} {
					k := kernels.RadiationKernel{Method: m, Search: s, CoefReuse: reuse, Precision: prec}
					e := EntryPoint(k)
					for _, name := range []string{e, e + Tret, e + Split, SplitFieldKernel(prec)} {
						if !slices.Contains(src.RadiationKernels, name) {
							t.Fatalf("%+v: no entry point %s in radiation.cu", k, name)
						}
					}
				}
			}
		}
	}
	k := kernels.RadiationKernel{Search: kernels.ColdSearch, CoefReuse: true, Precision: kernels.Float32, Method: kernels.RadiationRK4}
	if got := EntryPoint(k); got != "fg_rad_rk4_cold_f32" {
		t.Fatalf("EntryPoint(%+v) = %s, want fg_rad_rk4_cold_f32", k, got)
	}
	if got := EntryPoint(kernels.RadiationKernel{CoefReuse: true}); got != "fg_rad_newton_reuse_f64" {
		t.Fatalf("the default kernel's entry point is %s, want fg_rad_newton_reuse_f64", got)
	}
}
