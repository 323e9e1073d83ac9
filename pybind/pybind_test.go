package pybind

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPanicsBecomeInternalErrors(t *testing.T) {
	f := func() (err error) {
		defer recoverInto(&err)
		var m map[string]int
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
