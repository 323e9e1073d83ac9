package gpunbody

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/kernels/cuda"
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
	"github.com/fieldgo/fieldgo/kernels/src"
)

// TestArgumentLayouts: every entry point of nbody.cu has a parameter struct
// registered (args.go) whose fields are its parameters, size, kind and
// offset (cuda.CheckSignatures: NVRTC, no GPU needed).
func TestArgumentLayouts(t *testing.T) {
	if _, _, _, err := cuda.NVRTCVersion(); err != nil {
		t.Skipf("no NVRTC, the signatures are not compiled (pip install nvidia-cuda-nvrtc into .venv or set FIELDGO_NVRTC): %v", err)
	}
	if err := cuda.OffsetofSupported(); err != nil {
		t.Skip(err)
	}
	checked, missing, err := cuda.CheckSignatures(src.NBodyCUDA)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("entry points of nbody.cu without a registered parameter struct: %v", missing)
	}
	if len(checked) < 40 {
		t.Errorf("checked %d entry points, want every kernel of nbody.cu: %v", len(checked), checked)
	}
	t.Logf("%d entry points checked", len(checked))
}

// TestArgumentLayoutsCatchADifference: float64's kick parameters taken for
// the float32 kernel, and a parameter missing, fail to compile.
func TestArgumentLayoutsCatchADifference(t *testing.T) {
	if _, _, _, err := cuda.NVRTCVersion(); err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	type short struct {
		Vel driver.DevicePtr `c:"vel"`
		Acc driver.DevicePtr `c:"acc"`
		N   int32            `c:"n"`
	}
	type swapped struct {
		Acc driver.DevicePtr `c:"acc"`
		N   int32            `c:"n"`
		Vel driver.DevicePtr `c:"vel"`
		H   float32          `c:"h"`
	}
	for _, c := range []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[kickArgs[float64]](), "fg_nbody_kick_f32 parameter 3 (h)"},
		{reflect.TypeFor[short](), "fg_nbody_kick_f32: 3 parameters"},
		{reflect.TypeFor[swapped](), "fg_nbody_kick_f32 parameter 1 (n)"},
	} {
		source := src.NBodyCUDA + cuda.SignaturePrelude + strings.Join(cuda.SignatureAsserts("fg_nbody_kick_f32", c.t, driver.Params), "\n") + "\n"
		log, err := cuda.CheckSyntax(source)
		if err == nil || !strings.Contains(log, c.want) {
			t.Errorf("%v for fg_nbody_kick_f32: want %q refused, got %v\n%s", c.t, c.want, err, log)
		}
	}
}
