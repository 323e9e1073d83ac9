package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// The free boundary runs on the grid unit on every grid, planes of a planar
// theory included (the planar unit has no free stencils), in the consistent
// form only: the continuum form and the device flow are refused before any
// launch, as on the CPU backend (no device needed).
func TestFreeBoundaryRunsOnTheGridUnit(t *testing.T) {
	p := &Program{}
	plane := kernels.Grid{Nx: 16, Ny: 16, Hx: 0.1, Hy: 0.1, Free: true}
	require.True(t, p.onGrid(plane))
	require.False(t, p.onGrid(kernels.Grid{Nx: 16, Ny: 16, Hx: 0.1, Hy: 0.1}))
	require.False(t, p.onGrid(kernels.Grid{Nx: 16, Ny: 16, Hx: 0.1, Hy: 0.1, Periodic: true}))
	require.Equal(t, int32(1), grid3Of(plane).Free)
	require.Equal(t, int32(0), grid3Of(kernels.Grid{Nx: 16, Ny: 16, Hx: 0.1, Hy: 0.1}).Free)

	err := checkForm(kernels.GradientArgs{Grid: plane, Form: kernels.Continuum})
	require.True(t, errs.Is(err, errs.Parameter), "%v", err)
	require.Contains(t, err.Error(), "consistent form")
	require.NoError(t, checkForm(kernels.GradientArgs{Grid: plane, Form: kernels.Consistent}))
	line := kernels.Grid{Nx: 16, Ny: 1, Hx: 0.1, Dims: 1}
	require.NoError(t, checkForm(kernels.GradientArgs{Grid: line, Form: kernels.Continuum}))

	_, err = p.NewFlow(kernels.FlowSpec{Grid: plane, Form: kernels.Continuum, Dt: 0.01})
	require.True(t, errs.Is(err, errs.Backend), "%v", err)
	require.Contains(t, err.Error(), "free boundary")
}
