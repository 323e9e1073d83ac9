package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/kernels/src"
)

// TestGridKernelsOnTheHost runs the grid unit's site kernels on the host
// through a small emulation of CUDA's blocks, warps, barriers and shuffles
// (testdata/emu: one host thread per CUDA thread; C++20, it needs c++ or
// $CXX, not a GPU) and the CPU backend's (the CPU translation unit compiled
// by cc as a shared library), both without FMA contraction, and requires the
// same bits: the consistent form's two passes (fg_k_nd_partials,
// fg_k_nd_consistent against fg_k_partials, fg_k_consistent; with and without
// the doubler penalty, its max and its energy and power to 1e-12), the
// continuum gradient, the energy density, the constraint, the projection and
// Program.Rate's two kinds (fg_k_nd_rate against fg_k_rate), and
// AddCentripetal against core's host expressions, on 3D lattices, per-axis
// planes and lines, and the free boundary's kernels (cuda_free.cu against the
// CPU's _free kernels) on boxes, planes and lines; for a point source with z
// derivatives (sigma4_3d) and a planar one (baby_skyrme, whose free planes
// run on the grid unit too).
func TestGridKernelsOnTheHost(t *testing.T) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler (%s): %v", cc, err)
	}
	for _, point := range []string{"testdata/sigma4_3d.c", "../../core/testdata/baby_skyrme.c"} {
		t.Run(filepath.Base(point), func(t *testing.T) {
			lib := filepath.Join(t.TempDir(), "cpu.so")
			csrc := lib + ".c"
			cpuTU := "#define FG_EXPORT __attribute__((visibility(\"default\")))\n" + readFile(t, point) +
				src.CPUArgs + src.Stencils + src.CPUKernels
			if err := os.WriteFile(csrc, []byte(cpuTU), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(cc, "-std=c99", "-O1", "-ffp-contract=off", "-fPIC", "-shared", "-w", csrc, "-o", lib, "-lm").CombinedOutput(); err != nil {
				t.Fatalf("the CPU translation unit does not compile: %v\n%s", err, out)
			}
			out, err := hostEmulate(t, point, "cpu_check.inc", []string{lib})
			t.Logf("\n%s", out)
			if err != nil || !strings.Contains(out, "all equal") {
				t.Fatalf("the grid unit's kernels and the CPU backend's differ on the host: %v", err)
			}
		})
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hostEmulate compiles the grid unit of the point source at point (projected)
// over testdata/emu/emu.h with the check program testdata/emu/<check> (C++20,
// no FMA contraction) and runs it with args, returning its output; it skips
// the test without a C++20 compiler (c++ or $CXX).
func hostEmulate(t *testing.T, point, check string, args []string) (string, error) {
	t.Helper()
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "c++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		t.Skipf("no C++ compiler (%s): %v", cxx, err)
	}
	dir := t.TempDir()
	probe := filepath.Join(dir, "probe.cc")
	if err := os.WriteFile(probe, []byte("#include <barrier>\nint main() { std::barrier<> b(1); b.arrive_and_wait(); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cxx, "-std=c++20", "-pthread", probe, "-o", filepath.Join(dir, "probe")).CombinedOutput(); err != nil {
		t.Skipf("%s has no C++20 <barrier>: %v\n%s", cxx, err, out)
	}
	tu := readFile(t, "testdata/emu/emu.h") + "#define FG_FUNC static inline\n" + readFile(t, point) +
		src.CUDAArgs + src.Stencils + src.CUDAGridKernels + "#define FG_PROJECT 1\n" + readFile(t, "testdata/emu/"+check)
	cc, bin := filepath.Join(dir, "check.cc"), filepath.Join(dir, "check")
	if err := os.WriteFile(cc, []byte(tu), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cxx, "-std=c++20", "-O1", "-ffp-contract=off", "-pthread", "-w", "-I../src", cc, "-o", bin, "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("the emulated grid unit does not compile: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

// TestGridDeviceFlowOnTheHost runs the grid unit's device flow kernels
// (fg_k_nd_stage, fg_k_rows, fg_k_decide, fg_k_nd_trial, fg_k_nd_update)
// step by step on the host emulation and core's host loop with the same
// unit's kernels (fg_k_nd_continuum, fg_k_final, fg_k_combine,
// fg_k_nd_constrain), and requires the same bits in the field, the velocity
// and each step's energy and max|grad|, on 3D lattices, a plane and a line.
func TestGridDeviceFlowOnTheHost(t *testing.T) {
	out, err := hostEmulate(t, "testdata/sigma4_3d.c", "flow_check.inc", nil)
	t.Logf("\n%s", out)
	if err != nil || !strings.Contains(out, "all equal") {
		t.Fatalf("the grid unit's device flow and the host loop differ on the host: %v", err)
	}
}
