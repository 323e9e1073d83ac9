package cuda

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
	"github.com/fieldgo/fieldgo/kernels/src"
)

// TestArgumentLayouts: every kernel of the templates has a Go argument block
// registered (registerArgs, with the driver) whose layout the CUDA compiler
// agrees with, and so do the constants and the flow's control block and
// records the host reads (cuda_args.h): the templates and a static_assert
// per field and constant compile with NVRTC (no GPU needed).
func TestArgumentLayouts(t *testing.T) {
	ctypes := map[string]string{}
	for _, m := range kernelSignature.FindAllStringSubmatch(src.CUDAKernels+src.CUDAGridKernels, -1) {
		ctypes[m[1]] = m[2]
	}
	all := map[string]bool{}
	for _, k := range append(append([]string(nil), KernelNames...), GridKernelNames...) {
		all[k] = true
	}
	if len(ctypes) != len(all) || len(KernelNames) == 0 {
		t.Fatalf("kernels %v, signatures %v", KernelNames, ctypes)
	}
	var asserts, gridAsserts []string
	seen := map[string]bool{}
	for _, k := range GridKernelNames {
		if strings.HasPrefix(k, "fg_k_nd_") {
			gt, ok := argTypes[k]
			if !ok {
				t.Errorf("%s (takes %s) has no Go argument block: registerArgs it", k, ctypes[k])
				continue
			}
			if !seen[ctypes[k]] {
				seen[ctypes[k]] = true
				gridAsserts = append(gridAsserts, LayoutAsserts(ctypes[k], gt)...)
			}
		}
	}
	for _, k := range KernelNames {
		gt, ok := argTypes[k]
		if !ok {
			t.Errorf("%s (takes %s) has no Go argument block: registerArgs it", k, ctypes[k])
			continue
		}
		if !seen[ctypes[k]] {
			seen[ctypes[k]] = true
			asserts = append(asserts, LayoutAsserts(ctypes[k], gt)...)
		}
	}
	for k, gt := range argTypes {
		if _, ok := ctypes[k]; !ok {
			t.Errorf("registerArgs names %s, which is no kernel of the templates", k)
		}
		if at, ok := driver.Lookup(k); !ok || at.Type != gt || at.Kind != driver.Block {
			t.Errorf("the driver launches %s with %v (%v), not its argument block %v", k, at.Type, at.Kind, gt)
		}
	}
	// What the host shares with the kernels through cuda_args.h: the
	// constants and the flow's control block and records.
	for name, v := range headerConstants {
		asserts = append(asserts, fmt.Sprintf("static_assert(%s == %d, \"%s\");", name, v, name))
	}
	for ctype, gt := range hostStructs {
		asserts = append(asserts, LayoutAsserts(ctype, gt)...)
	}
	if _, _, _, err := NVRTCVersion(); err != nil {
		t.Skipf("no NVRTC, layouts not compiled (pip install nvidia-cuda-nvrtc into .venv or set FIELDGO_NVRTC): %v", err)
	}
	skipWithoutOffsetof(t)
	th := builtins(t)[0]
	for _, prec := range []Precision{Float64, Float32} {
		source := TranslationUnitAs(th.unit, prec) + "\n" + strings.Join(asserts, "\n") + "\n"
		if _, log, err := CompileCUBIN(source, "sm_90"); err != nil {
			t.Fatalf("%v: the argument blocks' layouts differ from Go's: %v\n%s", prec, err, log)
		}
	}
	// The grid unit's blocks hold no fg_store values: one precision checks them.
	source := TranslationUnitGridAs(th.unit, Float64) + "\n" + strings.Join(gridAsserts, "\n") + "\n"
	if _, log, err := CompileCUBIN(source, "sm_90"); err != nil {
		t.Fatalf("the grid unit's argument blocks' layouts differ from Go's: %v\n%s", err, log)
	}
	t.Logf("%d kernels, %d argument blocks, %d checks", len(all), len(seen), len(asserts)+len(gridAsserts))
}

// TestArgumentLayoutsCatchADifference: a Go block that differs from its C
// struct fails to compile.
func TestArgumentLayoutsCatchADifference(t *testing.T) {
	if _, _, _, err := NVRTCVersion(); err != nil {
		t.Skipf("NVRTC not available: %v", err)
	}
	skipWithoutOffsetof(t)
	type wrong struct {
		Ny   int64  `c:"ny"`
		Out  uint64 `c:"out"` // C has rows first
		Rows uint64 `c:"rows"`
	}
	th := builtins(t)[0]
	source := TranslationUnitAs(th.unit, Float64) + "\n" + strings.Join(LayoutAsserts("fg_final_args", reflect.TypeFor[wrong]()), "\n") + "\n"
	_, log, err := CompileCUBIN(source, "sm_90")
	if err == nil || !strings.Contains(log+err.Error(), "fg_final_args.out offset") {
		t.Fatalf("a swapped pair of fields: want the out offset refused, got %v\n%s", err, log)
	}
}

// skipWithoutOffsetof skips where NVRTC cannot check layouts (OffsetofSupported).
func skipWithoutOffsetof(t *testing.T) {
	t.Helper()
	if err := OffsetofSupported(); err != nil {
		t.Skip(err)
	}
}
