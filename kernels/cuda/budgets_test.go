package cuda

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/kernels"
	"github.com/stretchr/testify/require"
)

// builtin is a point source the budgets and GPU tests compile.
type builtin struct {
	name string
	unit kernels.Unit
}

// builtins reads the hand-written point sources of core/testdata (the same
// ABI the tracer emits), falling back to this package's testdata copies.
func builtins(t testing.TB) []builtin {
	t.Helper()
	specs := []struct {
		name                 string
		ncomp, nparam, ndens int
	}{{"baby_skyrme", 3, 2, 3}, {"abelian_higgs", 4, 1, 1}}
	var out []builtin
	for _, s := range specs {
		var src []byte
		var err error
		for _, dir := range []string{"../../core/testdata", "testdata"} {
			if src, err = os.ReadFile(filepath.Join(dir, s.name+".c")); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("point source %s: %v", s.name, err)
		}
		out = append(out, builtin{s.name, kernels.Unit{Point: string(src), NComp: s.ncomp, NParams: s.nparam, NDens: s.ndens}})
	}
	return out
}

// TestRegisterBudgets compiles every kernel of every built-in theory for
// sm_80 and sm_90 with NVRTC (no GPU needed) and fails on any spill or any
// kernel over its register budget.
func TestRegisterBudgets(t *testing.T) {
	if _, _, _, err := NVRTCVersion(); err != nil {
		t.Skipf("no NVRTC, budgets not checked (pip install nvidia-cuda-nvrtc into .venv or set FIELDGO_NVRTC): %v", err)
	}
	path, ma, mi, _ := NVRTCVersion()
	t.Logf("NVRTC %d.%d from %s", ma, mi, path)
	for _, th := range builtins(t) {
		for _, v := range []struct {
			arch string
			prec Precision
		}{{"sm_80", Float64}, {"sm_90", Float64}, {"sm_80", Float32}, {"sm_90", Float32}} {
			arch := v.arch
			_, log, err := CompileCUBIN(TranslationUnitAs(th.unit, v.prec), arch)
			if err != nil {
				t.Fatalf("%s %s %v: %v", th.name, arch, v.prec, err)
			}
			res := ParsePtxasLog(log)
			var row []string
			for _, k := range KernelNames {
				r, ok := res[k]
				if !ok {
					t.Errorf("%s %s: no ptxas report for %s in the log:\n%s", th.name, arch, k, log)
					continue
				}
				b := BudgetAs(k, v.prec, th.name)
				if b == 0 {
					t.Errorf("%s: no register budget", k)
				}
				if r.Registers > b {
					t.Errorf("%s %s %s: %d registers, budget %d", th.name, arch, k, r.Registers, b)
				}
				if sp := SpillAllowance(k, v.prec, th.name); r.SpillStores > sp || r.SpillLoads > sp {
					t.Errorf("%s %s %s: spills %d bytes stores, %d bytes loads", th.name, arch, k, r.SpillStores, r.SpillLoads)
				}
				if r.StackFrame != 0 {
					t.Errorf("%s %s %s: %d bytes stack frame (local memory)", th.name, arch, k, r.StackFrame)
				}
				row = append(row, k[5:]+"="+itoa(r.Registers)+"/"+itoa(b))
			}
			t.Logf("%-14s %s %v: %s", th.name, arch, v.prec, strings.Join(row, " "))
		}
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	if n == 0 {
		return "0"
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

func TestParsePtxasLog(t *testing.T) {
	log := `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'fg_k_a' for 'sm_90'
ptxas info    : Function properties for fg_k_a
ptxas         .     8 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers
ptxas info    : Function properties for helper
ptxas         .     16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'fg_k_b' for 'sm_90'
ptxas info    : Function properties for fg_k_b
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 30 registers, used 1 barriers, 6144 bytes smem
`
	r := ParsePtxasLog(log)
	if got := r["fg_k_a"]; got != (Resources{Registers: 255, SpillStores: 8, SpillLoads: 4, StackFrame: 8}) {
		t.Errorf("fg_k_a: %+v", got)
	}
	if got := r["fg_k_b"]; got != (Resources{Registers: 30}) {
		t.Errorf("fg_k_b: %+v", got)
	}
	if _, ok := r["helper"]; ok {
		t.Errorf("a device function was reported as a kernel")
	}
}

// TestUncachedRecompile: the source CompileCUBIN recompiles when the
// driver's cache held the first compile (an empty kernel of a new name
// added) still compiles and reports the user's kernels and the new one, two
// of them never named alike; withoutDriverCache restores the environment.
// Needs NVRTC, not a GPU.
func TestUncachedRecompile(t *testing.T) {
	if _, _, _, err := NVRTCVersion(); err != nil {
		t.Skipf("NVRTC not available: %v", err)
	}
	src := `extern "C" __global__ void fg_k_probe(double* x) { x[threadIdx.x] *= 2.0; }`
	u1, u2 := uncachedSource(src), uncachedSource(src)
	if u1 == u2 {
		t.Fatal("two uncached sources are the same")
	}
	cubin, log, err := compileCUBIN(u1, "sm_90")
	require.NoError(t, err)
	require.NotEmpty(t, cubin)
	res := ParsePtxasLog(log)
	if r, ok := res["fg_k_probe"]; !ok || r.Registers == 0 {
		t.Fatalf("no ptxas report for fg_k_probe in:\n%s", log)
	}
	n := 0
	for k := range res {
		if strings.HasPrefix(k, UncachedEntry) {
			n++
		}
	}
	require.Equal(t, 1, n, "entries named %s* in %v", UncachedEntry, res)
	t.Setenv("CUDA_CACHE_DISABLE", "7")
	withoutDriverCache(func() { require.Equal(t, "1", os.Getenv("CUDA_CACHE_DISABLE")) })
	require.Equal(t, "7", os.Getenv("CUDA_CACHE_DISABLE"))
}

// TestBudgetsNameTheKernels: the budget tables and the templates' kernels
// (KernelNames, read from the sources) agree: every kernel has a default
// budget, and every entry of every table names a kernel that exists.
func TestBudgetsNameTheKernels(t *testing.T) {
	kernels := map[string]bool{}
	for _, k := range append(append([]string(nil), KernelNames...), GridKernelNames...) {
		kernels[k] = true
		if Budgets[k] == 0 {
			t.Errorf("%s has no register budget in Budgets", k)
		}
	}
	check := func(table, k string) {
		if !kernels[k] {
			t.Errorf("%s names %s, which is no kernel of the templates", table, k)
		}
	}
	for k := range Budgets {
		check("Budgets", k)
	}
	for k := range Float32Budgets {
		check("Float32Budgets", k)
	}
	for th, m := range TheoryBudgets {
		for k := range m {
			check("TheoryBudgets["+th+"]", k)
		}
	}
	for th, m := range TheoryFloat32Budgets {
		for k := range m {
			check("TheoryFloat32Budgets["+th+"]", k)
		}
	}
	for _, b := range OlderNVRTCBudgets {
		check("OlderNVRTCBudgets["+b.Theory+"]", b.Kernel)
	}
}
