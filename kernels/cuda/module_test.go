package cuda

import (
	"testing"

	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
)

// saxpyArgs is the test kernel saxpy's argument block (saxpy_args);
// scaleArgs scale's parameter list.
type saxpyArgs struct {
	X uint64 `c:"x"`
	Y uint64 `c:"y"`
	N int32  `c:"n"`
	_ int32
	A float64 `c:"a"`
}

type scaleArgs struct {
	Y driver.DevicePtr `c:"y"`
	N int32            `c:"n"`
	S float32          `c:"s"`
	K int64            `c:"k"`
}

var (
	_ = driver.Register[saxpyArgs](driver.Block, "saxpy")
	_ = driver.Register[scaleArgs](driver.Params, "scale")
)

const moduleTestSource = `
struct saxpy_args { const double* x; double* y; int n; double a; };
extern "C" __global__ void saxpy(const saxpy_args A) {
  int i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
  if (i < A.n) A.y[i] += A.a * A.x[i];
}
extern "C" __global__ void scale(float* y, int n, float s, long long k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] * s + (float)k;
}
`

// TestModuleAPI exercises the generic module API on the device: compile and
// cache, Describe, a struct passed by value, a 2-D grid with a 2-D block,
// a parameter list of scalars of every kind, Memset, events, the refusal of
// an unregistered argument type, Close.
func TestModuleAPI(t *testing.T) {
	b := gpu(t)
	b.opt.CacheDir = cacheDir(t)
	m, err := b.LoadModule(moduleTestSource)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := b.LoadModule(moduleTestSource)
	if err != nil {
		t.Fatal(err)
	}
	if m.Cached() || !m2.Cached() {
		t.Fatalf("cache: first load cached=%v, second cached=%v", m.Cached(), m2.Cached())
	}
	m2.Close()
	defer m.Close()
	fn, err := m.Function("saxpy")
	if err != nil {
		t.Fatal(err)
	}
	in := fn.Describe()
	if in.Registers <= 0 || in.BlockSize <= 0 || in.Occupancy <= 0 {
		t.Fatalf("Describe: %+v", in)
	}
	t.Logf("saxpy: %+v", in)
	const n = 10000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = float64(i), 1
	}
	dx, _ := m.Alloc(8 * n)
	dy, _ := m.Alloc(8 * n)
	if err := Upload(dx, 0, x); err != nil {
		t.Fatal(err)
	}
	if err := Upload(dy, 0, y); err != nil {
		t.Fatal(err)
	}
	a := &saxpyArgs{X: dx.Ptr(), Y: dy.Ptr(), N: n, A: 2}
	start, _ := m.NewEvent()
	end, _ := m.NewEvent()
	start.Record()
	// 8 x 8 threads per block, a 2-D grid of 16 x 10 blocks = 10240 threads.
	if err := m.Launch(fn, [3]uint32{16, 10, 1}, [3]uint32{8, 8, 1}, 0, a); err != nil {
		t.Fatal(err)
	}
	end.Record()
	if _, err := Elapsed(start, end); err != nil {
		t.Fatal(err)
	}
	if err := Download(y, dy, 0); err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if y[i] != 1+2*float64(i) {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], 1+2*float64(i))
		}
	}
	sc, err := m.Function("scale")
	if err != nil {
		t.Fatal(err)
	}
	f := make([]float32, 100)
	df, _ := m.Alloc(4 * 100)
	if err := df.Memset(0, 400, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Launch(sc, [3]uint32{1, 1, 1}, [3]uint32{128, 1, 1}, 0, &scaleArgs{Y: df.Addr(), N: 100, S: 3, K: 7}); err != nil {
		t.Fatal(err)
	}
	if err := m.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := Download(f, df, 0); err != nil {
		t.Fatal(err)
	}
	if f[0] != 7 || f[99] != 7 {
		t.Fatalf("scale: %v %v", f[0], f[99])
	}
	if err := m.Launch(sc, [3]uint32{1, 1, 1}, [3]uint32{128, 1, 1}, 0, a); err == nil {
		t.Fatal("scale launched with saxpy's argument block")
	}
	if err := m.Launch(sc, [3]uint32{1, 1, 1}, [3]uint32{128, 1, 1}, 0, scaleArgs{Y: df.Addr(), N: 1}); err == nil {
		t.Fatal("scale launched with its parameters by value, not by pointer")
	}
	df.Free()
	df.Free()
	if df.Ptr() != 0 {
		t.Fatal("a freed buffer keeps its address")
	}
}
