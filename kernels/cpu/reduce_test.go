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

func TestProjectRemovesThePartAlongTheFieldAtFreeSites(t *testing.T) {
	p, err := cpu.New(cpu.Options{Threads: 2, CacheDir: t.TempDir()}).Compile(abelianHiggs(t))
	require.NoError(t, err)
	defer p.Close()
	g := kernels.Grid{Nx: 9, Ny: 7, Hx: 0.1, Hy: 0.1} // fixed: two held layers
	n := g.Sites()
	phi, err := p.NewBuffer(4 * n)
	require.NoError(t, err)
	x, err := p.NewBuffer(4 * n)
	require.NoError(t, err)
	f, v := cpu.BufferSlice(phi), cpu.BufferSlice(x)
	for e := range f {
		f[e], v[e] = 2+kernels.RandomValue(1, e), kernels.RandomValue(2, e)
	}
	f0, v0 := append([]float64(nil), f...), append([]float64(nil), v...)
	require.NoError(t, p.Project(g, phi, x))
	assert.Equal(t, f0, f, "the field is read, not written")
	for j := 0; j < g.Ny; j++ {
		for i := 0; i < g.Nx; i++ {
			site := j*g.Nx + i
			held := i < 2 || i >= g.Nx-2 || j < 2 || j >= g.Ny-2
			var dot, norm float64
			for k := 0; k < 4; k++ {
				dot += v[k*n+site] * f[k*n+site]
				norm += v0[k*n+site] * v0[k*n+site]
				if held {
					require.Equal(t, v0[k*n+site], v[k*n+site], "held site (%d, %d)", i, j)
				}
			}
			if !held {
				require.InDelta(t, 0, dot, 1e-14*math.Sqrt(norm)*10, "site (%d, %d) keeps a part along the field", i, j)
			}
		}
	}
}

// Gradient's Shift forms Phi + the terms as Combine would: the same bits as
// the gradient of the combined field.
func TestGradientOfAShiftedFieldIsTheGradientOfTheCombination(t *testing.T) {
	p, err := cpu.New(cpu.Options{Threads: 2, CacheDir: t.TempDir()}).Compile(abelianHiggs(t))
	require.NoError(t, err)
	defer p.Close()
	g := kernels.Grid{Nx: 16, Ny: 12, Hx: 0.3, Hy: 0.3, Periodic: true}
	n := 4 * g.Sites()
	bufs := make([]kernels.Buffer, 5)
	for i := range bufs {
		bufs[i], err = p.NewBuffer(n)
		require.NoError(t, err)
	}
	phi, x, sum, out1, out2 := bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]
	for e, f := 0, cpu.BufferSlice(phi); e < n; e++ {
		f[e] = math.Sin(0.1*float64(e)) + 0.5
		cpu.BufferSlice(x)[e] = kernels.RandomValue(5, e)
	}
	require.NoError(t, p.Combine(sum, kernels.Term{Coef: 1, X: phi}, kernels.Term{Coef: 1e-3, X: x}))
	params := []float64{1}
	r1, err := p.Gradient(kernels.GradientArgs{Grid: g, Params: params, Phi: sum, Out: out1, Energy: true})
	require.NoError(t, err)
	r2, err := p.Gradient(kernels.GradientArgs{Grid: g, Params: params, Phi: phi, Shift: []kernels.Term{{Coef: 1e-3, X: x}},
		Out: out2, Energy: true})
	require.NoError(t, err)
	assert.Equal(t, r1, r2)
	assert.Equal(t, cpu.BufferSlice(out1), cpu.BufferSlice(out2))
	_, err = p.Gradient(kernels.GradientArgs{Grid: g, Params: params, Phi: phi, Out: out2,
		Shift: []kernels.Term{{Coef: 1, X: x}, {Coef: 1, X: x}, {Coef: 1, X: x}}})
	assert.True(t, errs.Is(err, errs.Internal), "at most two shift terms")
}

// CombineDots is Combine, Project and two Dots in one call: the same bits in
// its output and its sums, for a unit-vector field (projected) and without
// the projection; a mismatched buffer is refused.
func TestCombineDotsIsItsParts(t *testing.T) {
	p, err := cpu.New(cpu.Options{Threads: 3, CacheDir: t.TempDir()}).Compile(abelianHiggs(t))
	require.NoError(t, err)
	defer p.Close()
	g := kernels.Grid{Nx: 37, Ny: 29, Hx: 0.3, Hy: 0.3}
	n := 4 * g.Sites()
	buf := func(f func(i int) float64) (kernels.Buffer, []float64) {
		b, err := p.NewBuffer(n)
		require.NoError(t, err)
		s := cpu.BufferSlice(b)
		for i := range s {
			s[i] = f(i)
		}
		return b, s
	}
	phi, _ := buf(func(i int) float64 { return math.Sin(0.37*float64(i)) + 0.2 })
	x, _ := buf(func(i int) float64 { return kernels.RandomValue(3, i) * math.Pow(10, float64(i%5-2)) })
	y, _ := buf(func(i int) float64 { return math.Cos(1.1 * float64(i)) })
	got, gs := buf(func(int) float64 { return 0 })
	want, ws := buf(func(int) float64 { return 0 })
	terms := []kernels.Term{{Coef: 0.7, X: x}, {Coef: -1.3, X: y}}
	for _, proj := range []kernels.Buffer{nil, phi} {
		require.NoError(t, p.Combine(want, terms...))
		if proj != nil {
			require.NoError(t, p.Project(g, phi, want))
		}
		oo, oy, err := p.CombineDots(g, proj, got, y, terms...)
		require.NoError(t, err)
		assert.Equal(t, ws, gs)
		wo, _ := p.Dot(want, want)
		wy, _ := p.Dot(want, y)
		assert.Equal(t, math.Float64bits(wo), math.Float64bits(oo))
		assert.Equal(t, math.Float64bits(wy), math.Float64bits(oy))
	}
	short, err := p.NewBuffer(n - 1)
	require.NoError(t, err)
	_, _, err = p.CombineDots(g, nil, got, short, terms...)
	assert.True(t, errs.Is(err, errs.Shape))
}
