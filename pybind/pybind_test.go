package pybind

import (
	"github.com/fieldgo/fieldgo/kernels/cuda"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/fixtures"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPanicsBecomeInternalErrors(t *testing.T) {
	f := func() (err error) {
		defer recoverInto(&err)
		var m map[string]int
		//lint:ignore SA5000 the test needs a runtime panic
		m["x"] = 1 // panics
		return nil
	}
	err := f()
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "fieldgo[InternalError]: panic"), err.Error())
}

func TestHandlesAreNotReused(t *testing.T) {
	h, err := NewField(4, 4, 1, 1, 0, 0, "fixed", `["a"]`)
	require.NoError(t, err)
	require.NoError(t, ReleaseField(h))
	err = ReleaseField(h)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fieldgo[ReleasedError]")
	h2, err := NewField(4, 4, 1, 1, 0, 0, "fixed", `["a"]`)
	require.NoError(t, err)
	assert.NotEqual(t, h, h2)
	_, err = FieldSum(h, 0)
	assert.Contains(t, err.Error(), "ReleasedError")
	require.NoError(t, ReleaseField(h2))
}

func TestBadInputsAreTyped(t *testing.T) {
	_, err := NewField(4, 4, 1, 1, 0, 0, "fixed", `not json`)
	assert.Contains(t, err.Error(), "fieldgo[ShapeError]")
	_, err = NewField(4, 4, 1, 1, 0, 0, "moebius", `["a"]`)
	assert.Contains(t, err.Error(), "fieldgo[LatticeError]")
	_, err = ImportField(0, "")
	assert.Contains(t, err.Error(), "fieldgo[FormatError]")
	p := NewArrowPair()
	_, err = ImportField(p, "") // empty structs
	assert.Contains(t, err.Error(), "fieldgo[FormatError]")
	require.NoError(t, FreeArrowPair(p))
}

func TestExportImportThroughPairs(t *testing.T) {
	h, err := NewField(3, 2, 0.5, 0.5, 0, 0, "periodic", `["u","v"]`)
	require.NoError(t, err)
	require.NoError(t, FieldSet(h, 1, 2, 1, 4.0))
	p, err := ExportField(h)
	require.NoError(t, err)
	h2, err := ImportField(p, "")
	require.NoError(t, err)
	require.NoError(t, FreeArrowPair(p))
	v, err := FieldGet(h2, 1, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, 4.0, v)
	require.NoError(t, ReleaseField(h))
	require.NoError(t, ReleaseField(h2))
	assert.Equal(t, int64(0), AllocatedBytes())
}

// WarmBackend's background probe and the probes that follow it (from many
// goroutines at once, as Simulations made in threads would) see one result:
// the backend or the reason it is unavailable, never a half-made one.
func TestWarmBackendThenSelect(t *testing.T) {
	WarmBackend("cpu") // nothing to start
	WarmBackend("auto")
	done := make(chan string, 8)
	for range 8 {
		go func() {
			b, note, err := selectBackend(backendOptions{Backend: "auto"})
			if err != nil || b == nil {
				done <- "auto failed"
				return
			}
			done <- b.Name() + "|" + note
		}()
	}
	first := <-done
	for range 7 {
		assert.Equal(t, first, <-done)
	}
	_, cerr := cudaBackend()
	if cerr != nil { // no GPU here: auto fell back to the CPU and said why
		assert.Contains(t, first, "cuda unavailable")
		assert.True(t, errs.Is(cerr, errs.Backend), cerr.Error())
	} else {
		assert.NotContains(t, first, "unavailable")
	}
}

// A free-boundary simulation on backend="auto" runs where the other
// boundaries do: on the GPU when the CUDA backend is usable, else on the CPU,
// saying why; a saved free-boundary run loads the same way.
func TestAutoBackendTreatsTheFreeBoundaryLikeTheOthers(t *testing.T) {
	_, gpuErr := cudaBackend()
	want := `"backend":"cuda"`
	if gpuErr != nil {
		want = `"backend":"cpu"`
	}
	h, err := NewSimulation(fixtures.FreeScalarSpec, fixtures.FreeScalarSource, 16, 16, 0.1, 0.1, 0, 0, "free", `{"backend": "auto"}`)
	if err != nil {
		t.Skipf("no C compiler for the CPU backend: %v", err)
	}
	defer ReleaseSimulation(h)
	d, err := SimDescribe(h)
	require.NoError(t, err)
	assert.Contains(t, d, want)
	if gpuErr != nil {
		assert.Contains(t, d, "cuda unavailable")
	}
	path := filepath.Join(t.TempDir(), "free.arrow")
	require.NoError(t, SimSave(h, path))
	h2, err := LoadSimulation(path, `{"backend": "auto"}`)
	require.NoError(t, err)
	defer ReleaseSimulation(h2)
	d2, err := SimDescribe(h2)
	require.NoError(t, err)
	assert.Contains(t, d2, want)
	assert.Contains(t, d2, `"boundary":"free"`)
}

// KernelResources reports the theory's kernels only: the empty entry that
// makes NVRTC 12.9+ bypass the driver's compute cache (seen on a GPU
// machine, where a cached compile has no ptxas report) is left out.
func TestResourceRowsLeaveOutTheUncachedEntry(t *testing.T) {
	report := map[string]cuda.Resources{
		"fg_k_tile": {Registers: 96},
		cuda.UncachedEntry + "1796329650094683898": {Registers: 2},
		"fg_k_update": {Registers: 40, SpillStores: 4},
	}
	rows := resourceRows(report, cuda.Float64, "abelian_higgs")
	if len(rows) != 2 || rows[0].Kernel != "fg_k_tile" || rows[1].Kernel != "fg_k_update" {
		t.Fatalf("rows %+v: want fg_k_tile and fg_k_update", rows)
	}
	if rows[0].Budget != cuda.BudgetAs("fg_k_tile", cuda.Float64, "abelian_higgs") || rows[1].SpillStores != 4 {
		t.Fatalf("rows %+v: budgets or spills not carried", rows)
	}
}

// An options field Go does not know is refused, naming it, instead of
// being dropped.
func TestUnknownOptionsAreRefused(t *testing.T) {
	var o simOptions
	if err := decodeOptions(`{"backend": "cpu", "precison": "float32"}`, &o); err == nil || !strings.Contains(err.Error(), "precison") {
		t.Fatalf("a misspelt field: %v", err)
	}
	if err := decodeOptions(`{"backend": "cpu"} {}`, &o); err == nil {
		t.Fatal("two JSON values accepted")
	}
	if err := decodeOptions(`{"backend": "cpu", "precision": "float32"}`, &o); err != nil || o.Precision != "float32" {
		t.Fatalf("known fields: %v, %+v", err, o)
	}
	err := radiationError(0, 0, 0, 1, `{"methd": "newton"}`)
	if err == nil || !strings.HasPrefix(err.Error(), "fieldgo[ParameterError]") || !strings.Contains(err.Error(), "methd") {
		t.Fatalf("radiation options with a misspelt field: %v", err)
	}
}
