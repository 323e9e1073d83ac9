package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/kernels/src"
)

// TestMarchOnTheHost runs the grid unit's two gradient kernels, the
// 2.5D-blocked fg_k_nd_march and the per-site fg_k_nd_continuum, on the host
// through a small emulation of CUDA's blocks, warps, barriers and shuffles
// (testdata/emu: one host thread per CUDA thread), compiled as C++20 without
// FMA contraction, and requires the same bits from both: every gradient
// value and every chunk partial of the reductions, on 3D lattices of every
// boundary mix, with tiles of 8 and 4 rows and 1 to all planes per block.
// The four-component sigma model with z derivatives, projected, is the
// theory. It needs a C++20 compiler (c++ or $CXX), not a GPU.
func TestMarchOnTheHost(t *testing.T) {
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
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	kernels := src.CUDAGridKernels
	const ring = "extern __shared__ double fg_ring[];"
	if !strings.Contains(kernels, ring) {
		t.Fatalf("fg_k_nd_march no longer declares %q: update the emulation", ring)
	}
	kernels = strings.Replace(kernels, ring, "double* fg_ring = g_ring;", 1)
	tu := read("testdata/emu/emu.h") + "#define FG_FUNC static inline\n" + read("testdata/sigma4_3d.c") +
		src.CUDAArgs + src.Stencils + kernels + "#define FG_PROJECT 1\n" + read("testdata/emu/march_check.inc")
	cc, bin := filepath.Join(dir, "march.cc"), filepath.Join(dir, "march")
	if err := os.WriteFile(cc, []byte(tu), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cxx, "-std=c++20", "-O1", "-ffp-contract=off", "-pthread", "-w", cc, "-o", bin).CombinedOutput(); err != nil {
		t.Fatalf("the emulated grid unit does not compile: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	t.Logf("\n%s", out)
	if err != nil || !strings.Contains(string(out), "all equal") {
		t.Fatalf("fg_k_nd_march and fg_k_nd_continuum differ on the host: %v", err)
	}
}
