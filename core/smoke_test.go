package core_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
)

func TestSmokeBabySkyrme(t *testing.T) {
	s := newSim(t, babySkyrme(t), 64, 64, 0.25, 0.25, core.Fixed, []float64{1, 1}, core.Options{}, 0)
	require.NoError(t, s.Fill(hedgehog(1)))
	e0, err := s.Energy()
	require.NoError(t, err)
	q, err := s.Integral("charge")
	require.NoError(t, err)
	t.Logf("E0=%v Q=%v", e0, q)
	require.NoError(t, s.Start(core.FlowConfig{Tol: 1e-6, MaxSteps: 3000}))
	p, err := s.Advance(0, 0)
	require.NoError(t, err)
	q, _ = s.Integral("charge")
	e4, _ := s.Integral("skyrme")
	e0p, _ := s.Integral("potential")
	t.Logf("%+v Q=%v E4=%v E0=%v", p, q, e4, e0p)
}
