package gpuradiation

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/kernels/cuda"
	"github.com/fieldgo/fieldgo/kernels/src"
)

// TestArgumentLayout: args[F] has fg_rad_args<F>'s layout in both
// precisions, field by field, as the CUDA compiler lays it out (the source
// and a static_assert per field compile with NVRTC; no GPU needed), and
// every entry point of radiation.cu has an argument type registered
// (params.go) that matches its signature (cuda.CheckSignatures).
func TestArgumentLayout(t *testing.T) {
	if _, _, _, err := cuda.NVRTCVersion(); err != nil {
		t.Skipf("no NVRTC, the layout is not compiled (pip install nvidia-cuda-nvrtc into .venv or set FIELDGO_NVRTC): %v", err)
	}
	if err := cuda.OffsetofSupported(); err != nil {
		t.Skip(err)
	}
	asserts := append(cuda.LayoutAsserts("fg_rad_args<double>", reflect.TypeFor[args[float64]]()),
		cuda.LayoutAsserts("fg_rad_args<float>", reflect.TypeFor[args[float32]]())...)
	source := src.RadiationCUDA + "\n" + strings.Join(asserts, "\n") + "\n"
	if log, err := cuda.CheckSyntax(source); err != nil {
		t.Fatalf("args differs from fg_rad_args: %v\n%s", err, log)
	}
	checked, missing, err := cuda.CheckSignatures(src.RadiationCUDA)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("entry points of radiation.cu without a registered argument type: %v", missing)
	}
	t.Logf("%d entry points checked", len(checked))
	// The check sees a difference: float64's block taken for float32's.
	bad := strings.Join(cuda.LayoutAsserts("fg_rad_args<float>", reflect.TypeFor[args[float64]]()), "\n")
	if log, err := cuda.CheckSyntax(src.RadiationCUDA + "\n" + bad + "\n"); err == nil || !strings.Contains(log, "fg_rad_args<float>.ic offset") {
		t.Fatalf("float64's layout taken for fg_rad_args<float>: want the ic offset refused, got %v", err)
	}
}
