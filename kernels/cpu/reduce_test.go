package cpu_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cpu"
)

func TestDotIsExactOnIntegersAndTheSameForAnyThreadCount(t *testing.T) {
	var first float64
	for k, threads := range []int{1, 2, 3, 7} {
		p, err := cpu.New(cpu.Options{Threads: threads, CacheDir: t.TempDir()}).Compile(abelianHiggs(t))
		require.NoError(t, err)
		n := 3*kernels.DotBlock + 17 // partial last block
		a, err := p.NewBuffer(n)
		require.NoError(t, err)
		b, err := p.NewBuffer(n)
		require.NoError(t, err)
		x, y := cpu.BufferSlice(a), cpu.BufferSlice(b)
		var want float64
		for i := range x {
			x[i], y[i] = float64(i%13-6), float64(i%7-3)
			want += x[i] * y[i]
		}
		got, err := p.Dot(a, b)
		require.NoError(t, err)
		assert.Equal(t, want, got, "integer products sum exactly")

		// Values spanning many magnitudes: the compensated sum is within a
		// few ulps of the exact one, and the bits do not depend on threads.
		for i := range x {
			x[i] = kernels.RandomValue(1, i) * math.Pow(10, float64(i%9-4))
		}
		got, err = p.Dot(a, a)
		require.NoError(t, err)
		exact := new(big.Float).SetPrec(2048)
		for _, v := range x {
			exact.Add(exact, new(big.Float).SetPrec(2048).Mul(big.NewFloat(v), big.NewFloat(v)))
		}
		ref, _ := exact.Float64()
		assert.InDelta(t, ref, got, 4*0x1p-53*ref)
		if k == 0 {
			first = got
		}
		assert.Equal(t, math.Float64bits(first), math.Float64bits(got), "%d threads", threads)

		_, err = p.Dot(a, nil)
		assert.True(t, errs.Is(err, errs.Shape))
		short, err := p.NewBuffer(n - 1)
		require.NoError(t, err)
		_, err = p.Dot(a, short)
		assert.True(t, errs.Is(err, errs.Shape))
		for _, buf := range []kernels.Buffer{a, b, short} {
			buf.Release()
		}
		require.NoError(t, p.Close())
	}
}

func TestFillRandomIsUniformAndDeterministic(t *testing.T) {
	p, err := cpu.New(cpu.Options{Threads: 3, CacheDir: t.TempDir()}).Compile(abelianHiggs(t))
	require.NoError(t, err)
	defer p.Close()
	n := 1 << 16
	a, err := p.NewBuffer(n)
	require.NoError(t, err)
	defer a.Release()
	require.NoError(t, p.FillRandom(a, 42))
	x := cpu.BufferSlice(a)
	var mean, sq float64
	for i, v := range x {
		require.Equal(t, kernels.RandomValue(42, i), v)
		require.True(t, v >= -1 && v < 1)
		mean += v
		sq += v * v
	}
	mean /= float64(n)
	sq /= float64(n)
	// Uniform on [-1, 1): mean 0, second moment 1/3; n = 65536 draws.
	assert.InDelta(t, 0, mean, 5/math.Sqrt(3*float64(n)))
	assert.InDelta(t, 1.0/3, sq, 5*0.3/math.Sqrt(float64(n)))
	require.NoError(t, p.FillRandom(a, 43))
	assert.NotEqual(t, kernels.RandomValue(42, 0), x[0], "another seed, other values")
}

func TestMaxAbsFindsTheLargestMagnitudeAndNaN(t *testing.T) {
	p, err := cpu.New(cpu.Options{Threads: 3, CacheDir: t.TempDir()}).Compile(abelianHiggs(t))
	require.NoError(t, err)
	defer p.Close()
	n := 5*kernels.DotBlock + 3
	a, err := p.NewBuffer(n)
	require.NoError(t, err)
	defer a.Release()
	x := cpu.BufferSlice(a)
	for i := range x {
		x[i] = kernels.RandomValue(3, i)
	}
	x[n-1] = -7.5 // in the short last block, negative
	m, err := p.MaxAbs(a)
	require.NoError(t, err)
	assert.Equal(t, 7.5, m)
	x[kernels.DotBlock+5] = math.NaN()
	m, err = p.MaxAbs(a)
	require.NoError(t, err)
	assert.True(t, math.IsNaN(m))
}
