package cpu_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cpu"
)

func abelianHiggs(t *testing.T) kernels.Unit {
	src, err := os.ReadFile("../../core/testdata/abelian_higgs.c")
	require.NoError(t, err)
	return kernels.Unit{Point: string(src), NComp: 4, NParams: 1, NDens: 1}
}

func objects(t *testing.T, dir string) []string {
	m, err := filepath.Glob(filepath.Join(dir, "*.so"))
	require.NoError(t, err)
	return m
}

func TestCompileCachesAndRebuildsCorruptEntries(t *testing.T) {
	dir := t.TempDir()
	b := cpu.New(cpu.Options{CacheDir: dir})
	p, err := b.Compile(abelianHiggs(t))
	require.NoError(t, err)
	require.NoError(t, p.Close())
	objs := objects(t, dir)
	require.Len(t, objs, 1)
	_, err = os.Stat(objs[0] + ".sha256")
	require.NoError(t, err)
	st, err := os.Stat(objs[0])
	require.NoError(t, err)

	// A cache hit does not rewrite the object.
	p, err = b.Compile(abelianHiggs(t))
	require.NoError(t, err)
	require.NoError(t, p.Close())
	st2, err := os.Stat(objs[0])
	require.NoError(t, err)
	assert.Equal(t, st.ModTime(), st2.ModTime())

	// A truncated object fails its checksum and is rebuilt.
	require.NoError(t, os.Truncate(objs[0], st.Size()/2))
	p, err = b.Compile(abelianHiggs(t))
	require.NoError(t, err)
	require.NoError(t, p.Close())
	st3, err := os.Stat(objs[0])
	require.NoError(t, err)
	assert.Equal(t, st.Size(), st3.Size())

	// So is one whose checksum file is missing.
	require.NoError(t, os.Remove(objs[0]+".sha256"))
	p, err = b.Compile(abelianHiggs(t))
	require.NoError(t, err)
	require.NoError(t, p.Close())
	_, err = os.Stat(objs[0] + ".sha256")
	require.NoError(t, err)
}

func TestCompileErrorCarriesTheLog(t *testing.T) {
	u := abelianHiggs(t)
	u.Point = strings.Replace(u.Point, "return 0.5 * (ux", "return 0.5 * (no_such_symbol + ux", 1)
	_, err := cpu.New(cpu.Options{CacheDir: t.TempDir()}).Compile(u)
	require.Error(t, err)
	assert.True(t, errs.Is(err, errs.Compile), "got %v", err)
	assert.Contains(t, err.Error(), "error")

	u = abelianHiggs(t)
	u.NComp = 3 // the spec and the source disagree
	_, err = cpu.New(cpu.Options{CacheDir: t.TempDir()}).Compile(u)
	require.Error(t, err)
	assert.True(t, errs.Is(err, errs.Compile))
	assert.Contains(t, err.Error(), "FG_NCOMP")
}

func TestMissingCompilerIsBackendError(t *testing.T) {
	_, err := cpu.New(cpu.Options{CC: "/nonexistent/fieldgo-cc", CacheDir: t.TempDir()}).Compile(abelianHiggs(t))
	require.Error(t, err)
	assert.True(t, errs.Is(err, errs.Backend), "got %v", err)
}

func TestCombineAndReductionsIndependentOfThreads(t *testing.T) {
	dir := t.TempDir()
	g := kernels.Grid{Nx: 37, Ny: 29, Hx: 0.3, Hy: 0.25, Ox: -5, Oy: -3.5}
	var ref kernels.Reduction
	for k, threads := range []int{1, 3, 8} {
		p, err := cpu.New(cpu.Options{Threads: threads, CacheDir: dir}).Compile(abelianHiggs(t))
		require.NoError(t, err)
		n := 4 * g.Sites()
		phi, _ := p.NewBuffer(n)
		out, _ := p.NewBuffer(n)
		pat := make([]float64, n)
		for i := range pat {
			pat[i] = float64(i%17)/17 - 0.4
		}
		cp := copyIn(t, p, pat)
		require.NoError(t, p.Combine(phi, kernels.Term{Coef: 0.5, X: cp}, kernels.Term{Coef: 0.5, X: cp}))
		for _, form := range []kernels.Form{kernels.Continuum, kernels.Consistent} {
			r, err := p.Gradient(kernels.GradientArgs{Grid: g, Form: form, Penalty: 1.0 / 64, Params: []float64{1}, Phi: phi, Out: out, Vel: phi, Energy: true})
			require.NoError(t, err)
			if k == 0 && form == kernels.Consistent {
				ref = r
			} else if form == kernels.Consistent {
				assert.Equal(t, ref, r, "threads=%d", threads)
			}
		}
		require.NoError(t, p.Close())
	}
}

// copyIn puts xs into a new buffer (C memory).
func copyIn(t *testing.T, p kernels.Program, xs []float64) kernels.Buffer {
	t.Helper()
	b, err := p.NewBuffer(len(xs))
	require.NoError(t, err)
	dst := cpu.BufferSlice(b)
	copy(dst, xs)
	return b
}
