package src_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/kernels/cuda"
	"github.com/fieldgo/fieldgo/kernels/src"
)

// nbodyBudget is the register budget of an N-body kernel: the most registers
// per thread, with zero spill and no stack frame. Measured with NVRTC 13.5
// (2026-11-30) for sm_80 and sm_90: float kernels 32-35, double 44-58, kick
// and drift 14-32. A budget is an occupancy promise: 64 registers x 256
// threads keep 4 blocks (1024 threads, half the SM) resident, enough for a
// kernel whose inner loop is 8 independent interactions deep; 40 keeps 6.
// The two-targets-per-thread kernels ("x2") hold two targets' positions and
// accumulators (measured 2026-11-29, NVRTC 13.5: float 40-48, double 74-78):
// 48 x 256 keeps 5 blocks, 80 x 256 keeps 3, each thread two independent
// interaction chains deep.
func nbodyBudget(kernel string) int {
	switch {
	case strings.HasPrefix(kernel, "fg_nbody_kick"):
		return 32
	case strings.Contains(kernel, "x4"):
		// Four targets per thread (float only; measured 2026-11-29, NVRTC
		// 13.5: 59-64, NVRTC 13.0 on the H200: 63-64): 64 x 256 keeps 4
		// blocks, four chains deep.
		return 64
	case strings.Contains(kernel, "x2_f32"):
		return 48
	case strings.Contains(kernel, "x2_f64"):
		return 80
	case strings.Contains(kernel, "_f32"):
		return 40
	default:
		return 64
	}
}

// nbodyKernels are the entry points nbody.cu must define.
func nbodyKernels() []string {
	var ks []string
	for _, p := range []string{"f32", "f64"} {
		for _, t := range []string{"1", "2", "4", "8"} {
			ks = append(ks, "fg_nbody_tiled"+t+"_"+p, "fg_nbody_tiled"+t+"x2_"+p, "fg_nbody_tiled"+t+"x2_"+p+"_pot")
		}
		ks = append(ks, "fg_nbody_untiled_"+p, "fg_nbody_untiled_"+p+"_pot", "fg_nbody_kick_drift_"+p, "fg_nbody_kick_"+p,
			"fg_nbody_tiled1_lib_"+p, "fg_nbody_tiled1_legacy_"+p, "fg_nbody_rsqrt_check_"+p, "fg_nbody_rcp_check_"+p)
	}
	for _, t := range []string{"1", "2", "4", "8"} {
		ks = append(ks, "fg_nbody_tiled"+t+"x4_f32", "fg_nbody_tiled"+t+"x4_f32_pot")
	}
	return ks
}

// TestNBodyKernelsCompile compiles the N-body kernels with NVRTC (no GPU
// needed) with the CUDA backend's options (no fast math) for sm_80 and sm_90,
// and fails on a missing entry point, any spill or stack frame, or a kernel
// over its register budget. On the GPU machine the same test runs with its
// NVRTC 13.0 (see docs/performance/nbody.md).
func TestNBodyKernelsCompile(t *testing.T) {
	if _, _, _, err := cuda.NVRTCVersion(); err != nil {
		t.Skipf("no NVRTC, N-body kernels not compiled (pip install nvidia-cuda-nvrtc into .venv or set FIELDGO_NVRTC): %v", err)
	}
	path, ma, mi, _ := cuda.NVRTCVersion()
	t.Logf("NVRTC %d.%d from %s", ma, mi, path)
	for _, arch := range []string{"sm_80", "sm_90"} {
		_, log, err := cuda.CompileCUBIN(src.NBodyCUDA, arch)
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		res := cuda.ParsePtxasLog(log)
		for _, k := range nbodyKernels() {
			if _, ok := res[k]; !ok {
				t.Errorf("%s: no entry point %s in the ptxas log", arch, k)
			}
		}
		var names []string
		for k := range res {
			names = append(names, k)
		}
		sort.Strings(names)
		var row []string
		for _, k := range names {
			r := res[k]
			row = append(row, fmt.Sprintf("%s=%d", strings.TrimPrefix(k, "fg_nbody_"), r.Registers))
			if r.SpillLoads != 0 || r.SpillStores != 0 || r.StackFrame != 0 {
				t.Errorf("%s %s: %d bytes spill stores, %d spill loads, %d stack frame", arch, k, r.SpillStores, r.SpillLoads, r.StackFrame)
			}
			if b := nbodyBudget(k); r.Registers > b || r.Registers == 0 {
				t.Errorf("%s %s: %d registers, budget %d", arch, k, r.Registers, b)
			}
		}
		t.Logf("%s registers: %s", arch, strings.Join(row, " "))
	}
}
