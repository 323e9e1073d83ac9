package kernels

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSumCompensatedRecoversWhatPlainSummingLoses(t *testing.T) {
	xs := []float64{1e16, 1, -1e16, 1}
	plain := 0.0
	for _, x := range xs {
		plain += x
	}
	assert.Equal(t, 1.0, plain) // the first 1 is lost against 1e16
	assert.Equal(t, 2.0, SumCompensated(xs))
}

func TestSizeChecksNameEachSize(t *testing.T) {
	s := SizeChecks(Unit{NComp: 3, NDens: 1, NParams: 12})
	for _, want := range []string{"#if FG_NCOMP != 3", "#if FG_NDENS != 1", "#if FG_NPARAMS != 12", "the spec's parameter count"} {
		assert.True(t, strings.Contains(s, want), want)
	}
}
