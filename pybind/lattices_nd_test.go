package pybind

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/internal/fixtures"
)

// A saved run on a 3D lattice loads on backend="auto" where it can run, with
// its lattice's three axes and its gradient form: the free boundary and the
// consistent form as a new simulation would (either backend runs them), so
// "auto" takes the CPU here only when the CUDA backend is unavailable, and
// says so.
func TestSavedRunBeyondThePlaneLoadsWhereItRuns(t *testing.T) {
	_, gpuErr := cudaBackend()
	for _, c := range []struct {
		name, lattice, options, note string
		cpu                          bool
	}{
		{"free", `{"n": [8, 7, 6], "h": [0.2, 0.25, 0.3], "origin": [0, 0, 0], "boundaries": ["free"]}`,
			`{"backend": "cpu"}`, "cuda unavailable", gpuErr != nil},
		{"consistent", `{"n": [8, 7, 6], "h": [0.2, 0.25, 0.3], "origin": [0, 0, 0], "boundaries": ["fixed", "periodic", "periodic"]}`,
			`{"backend": "cpu", "gradient": "consistent"}`, "cuda unavailable", gpuErr != nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := NewSimulationOn(fixtures.FreeScalarSpec, fixtures.FreeScalarSource, c.lattice, c.options)
			if err != nil {
				t.Skipf("no C compiler for the CPU backend: %v", err)
			}
			defer ReleaseSimulation(h)
			path := filepath.Join(t.TempDir(), c.name+".arrow")
			require.NoError(t, SimSave(h, path))
			h2, err := LoadSimulation(path, `{"backend": "auto"}`)
			require.NoError(t, err)
			defer ReleaseSimulation(h2)
			d, err := SimDescribe(h2)
			require.NoError(t, err)
			if c.cpu {
				assert.Contains(t, d, `"backend":"cpu"`)
				assert.Contains(t, d, c.note)
			} else {
				assert.Contains(t, d, `"backend":"cuda"`)
			}
			assert.Contains(t, d, `"dims":3`)
			assert.Contains(t, d, `"gradient":"consistent"`)
		})
	}
}
