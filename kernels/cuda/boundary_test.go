package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// The free boundary's kernels exist on the CPU backend only: a CUDA program
// refuses such a grid with a Backend error that names the CPU backend, before
// any launch (no device needed), and accepts the other boundaries.
func TestFreeBoundaryIsRefusedNamingTheCPUBackend(t *testing.T) {
	p := &Program{}
	g := kernels.Grid{Nx: 16, Ny: 16, Hx: 0.1, Hy: 0.1, Free: true}
	err := p.CheckGrid(g)
	require.Error(t, err)
	require.True(t, errs.Is(err, errs.Backend), "%v", err)
	require.Contains(t, err.Error(), "CPU backend")
	_, err = p.prepare(g, nil)
	require.True(t, errs.Is(err, errs.Backend), "%v", err)
	require.NoError(t, p.CheckGrid(kernels.Grid{Nx: 16, Ny: 16, Hx: 0.1, Hy: 0.1}))
	require.NoError(t, p.CheckGrid(kernels.Grid{Nx: 16, Ny: 16, Hx: 0.1, Hy: 0.1, Periodic: true}))
}
