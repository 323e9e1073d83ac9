package gpuradiation_test

import (
	"flag"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels/cuda"
	"github.com/fieldgo/fieldgo/kernels/src"
)

// radiationBudget is the per-thread register budget of a radiation kernel
// (docs/performance/radiation.md): one interval's 34 state values live in
// registers (coef_reuse keeps them across samples; the cold solve reuses the
// same registers), plus the 8-value state, the 4-value acceleration and the
// field's temporaries; float64 needs twice the registers per value. The
// tiled kernels also carry the walker's tile bookkeeping (its scratch index,
// the interval step, the previous shifted time). ptxas takes registers
// freely below 255, and capping the float64 kernels lower with
// __launch_bounds__ or __maxnreg__ spilled (116 B at 168 registers), so the
// budgets are occupancy steps. A kernel above its budget, or any spill,
// fails.
//
// The hardware-estimate reciprocals (fg_rad_rcp, fg_rad_rsqrt) avoid the
// library's slow-path calls and the registers they hold: NVRTC 13.5, sm_90,
// float64 tiled and split solves 142-188 (RK4 cold the most), float32
// 78-112; on the H200 (NVRTC 13.0) the tiled Newton float64 kernels 148-168.
// So the sm_90 budgets are 200 (float64: at least 10 warps per SM) and 128
// (float32: 16). sm_80 allocates more registers to the same code (198-227
// for the float64 tiled kernels, NVRTC 13.5), so its budgets are 224
// (float64: at least 9 warps per SM) and 144 (float32: 14), and RK4 cold
// float64 (tiled and split, 231) has its own of 232 (still 8 warps per SM on
// an A100's 64K registers).
//
// With the position alone in the interval cache the float64 tiled kernels
// are capped at 128 registers on sm_90 (FG_RAD_MAXNREG_f64: four warps per
// SM sub-partition instead of three); their budget is the cap, so that a lost
// cap shows here.
//
// The split variant's solve kernels (fg_rad_<method>_<search>_<f64|f32>_split)
// are the tiled walker without the field and its sums, under the same
// budgets. Its field kernels (fg_rad_field_<f64|f32>_split) hold one
// interval's state and acceleration records, the field's temporaries, the
// 10 double sums and the shifted sample time (X0 = c (t' - t) + |x_obs|, no
// square root, read with its root): float64 100, float32 84 (NVRTC 13.5).
// Their budgets keep the blocks of 32 x 8 threads resident: 128 (float64: 2
// blocks, 16 warps per SM) and 88 (float32). Capping them lower with
// __launch_bounds__ spilled (float64: 40 B at 80 registers).
func radiationBudget(kernel, arch string) int {
	f32 := strings.HasSuffix(kernel, "_f32") || strings.HasSuffix(kernel, "_f32_split")
	switch {
	case arch == "sm_90" && cappedTiled.MatchString(kernel):
		return 128
	case arch == "sm_80" && strings.HasPrefix(kernel, "fg_rad_rk4_cold_f64"):
		return 232
	case strings.HasPrefix(kernel, "fg_rad_field_") && f32:
		return 88
	case strings.HasPrefix(kernel, "fg_rad_field_"):
		return 128
	case f32 && arch == "sm_90":
		return 128
	case f32:
		return 144
	case arch == "sm_90":
		return 200
	}
	return 224
}

var (
	nvrtcArch  = flag.String("arch", "", "TestRadiationKernelCompiles: compile for this architecture alone (e.g. sm_90), not sm_80 and sm_90")
	nvrtcCubin = flag.String("cubin", "", "TestRadiationKernelCompiles: write the CUBIN here (for cuobjdump -sass)")
)

// TestRadiationKernelCompiles compiles kernels/src/radiation.cu with NVRTC
// (no GPU needed) for sm_80 and sm_90 (or -arch) and checks every entry
// point's registers and spills.
func TestRadiationKernelCompiles(t *testing.T) {
	arches := []string{"sm_80", "sm_90"}
	if *nvrtcArch != "" {
		arches = []string{*nvrtcArch}
	}
	for _, arch := range arches {
		t.Run(arch, func(t *testing.T) { radiationKernelsFit(t, arch) })
	}
}

func radiationKernelsFit(t *testing.T, arch string) {
	path, major, minor, err := cuda.NVRTCVersion()
	if err != nil {
		t.Skipf("NVRTC not available, so the CUDA kernel cannot be compiled here: %v", err)
	}
	cubin, log, err := cuda.CompileCUBIN(src.RadiationCUDA, arch)
	if err != nil {
		if errs.Is(err, errs.Compile) {
			t.Fatalf("radiation.cu does not compile:\n%v", err)
		}
		t.Skipf("NVRTC unusable: %v", err)
	}
	if len(cubin) == 0 {
		t.Fatal("empty CUBIN")
	}
	if *nvrtcCubin != "" { // for cuobjdump -sass
		if err := os.WriteFile(*nvrtcCubin, cubin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := cuda.ParsePtxasLog(log)
	for k := range res {
		if strings.HasPrefix(k, cuda.UncachedEntry) {
			t.Logf("the driver's compute cache held the first compile: recompiled with %s", k)
		}
	}
	for _, k := range src.RadiationKernels {
		if _, ok := res[k]; !ok {
			t.Errorf("ptxas log has no entry %s", k)
		}
	}
	// Every entry point the log lists, the comparison kernels included.
	var names []string
	for k := range res {
		if strings.HasPrefix(k, "fg_rad_") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, k := range names {
		r := res[k]
		sb.WriteString("\n  " + k + ": " + itoa(r.Registers) + " registers, spill " + itoa(r.SpillStores) + "/" + itoa(r.SpillLoads) +
			" B, stack " + itoa(r.StackFrame) + " B, theoretical occupancy " + itoa(occupancyPercent(r.Registers, 128)) + "% at 128 threads/block")
		if r.SpillStores != 0 || r.SpillLoads != 0 {
			if arch == "sm_90" && cappedTiled.MatchString(k) && r.StackFrame <= cappedStack {
				t.Logf("%s: %d B of stack under the 128-register cap", k, r.StackFrame)
			} else {
				t.Errorf("%s spills (%d B stores, %d B loads)", k, r.SpillStores, r.SpillLoads)
			}
		}
		if r.Registers > radiationBudget(k, arch) {
			t.Errorf("%s uses %d registers, over its budget %d", k, r.Registers, radiationBudget(k, arch))
		}
	}
	t.Logf("NVRTC %d.%d (%s), %s, %s:%s", major, minor, path, arch, cuda.NVRTCOptions(arch), sb.String())
}

// cappedTiled names the kernels FG_RAD_MAXNREG_f64 caps. Under the cap NVRTC
// 13.5 spills a few per-observer values (24 B of stack: a pointer, an index,
// the particle's knot range) around the particle and tile loops, none inside
// the sample loop (nvdisasm of sm_90's fg_rad_newton_reuse_f64: STL/LDL only
// before and after it): a load per particle and tile of samples against the
// ~450 B of records a sample reads. More than cappedStack would be a new
// spill, to be looked at.
var cappedTiled = regexp.MustCompile(`^fg_rad_(newton|rk4)_(cold|warm|reuse)_f64(_tret)?$`)

const cappedStack = 32

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

// occupancyPercent is the register-limited theoretical occupancy on sm_90
// (65536 registers and 64 warps per SM, registers allocated per warp in units
// of 256, whole blocks of block threads).
func occupancyPercent(regs, block int) int {
	perWarp := (regs*32 + 255) / 256 * 256
	warpsPerBlock := (block + 31) / 32
	blocks := 65536 / (perWarp * warpsPerBlock)
	warps := min(blocks*warpsPerBlock, 64)
	return warps * 100 / 64
}
