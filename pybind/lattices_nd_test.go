package pybind

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/internal/fixtures"
)

// A saved run on a 3D lattice loads on backend="auto" where it can run: the
// CPU, saying why, for the free boundary and for the consistent form (the
// CUDA backend runs neither there), with its lattice's three axes.
func TestSavedRunBeyondThePlaneLoadsWhereItRuns(t *testing.T) {
	for _, c := range []struct {
		name, lattice, options, note string
	}{
		{"free", `{"n": [8, 7, 6], "h": [0.2, 0.25, 0.3], "origin": [0, 0, 0], "boundaries": ["free"]}`,
			`{"backend": "auto"}`, freeOnCPU},
		{"consistent", `{"n": [8, 7, 6], "h": [0.2, 0.25, 0.3], "origin": [0, 0, 0], "boundaries": ["fixed", "periodic", "periodic"]}`,
			`{"backend": "cpu", "gradient": "consistent"}`, "consistent gradient form of lines, 3D lattices"},
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
			assert.Contains(t, d, `"backend":"cpu"`)
			assert.Contains(t, d, c.note)
			assert.Contains(t, d, `"dims":3`)
			assert.Contains(t, d, `"gradient":"consistent"`)
		})
	}
}
