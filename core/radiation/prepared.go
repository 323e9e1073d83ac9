package radiation

import (
	"bytes"
	"math"
	"sync"
	"unsafe"

	"github.com/fieldgo/fieldgo/internal/par"
)

// Prepared keeps what Fields derives from one Source between calls: the
// knots and interval records of each precision, and the kernel arrays of the
// last observers a device call was given (positions in the kernel's
// precision and units, |x|, the per-observer time shift). A call that repeats
// its source and observers then costs the kernel and the cube, not the
// host's preparation (on the GPU benchmark's scene that preparation was
// about half of an on-device call). A Prepared belongs to one Source:
// whoever changes the source makes a new one (pybind keys it by the
// trajectory table's bytes). Observers are compared by their bytes, so any
// change to them is seen. Safe for concurrent calls; what it hands out is
// never written again.
type Prepared struct {
	mu    sync.Mutex
	knots [2]any // *knots[F] by precision
	obs   *preparedObservers
}

// preparedObservers are one set of observers' kernel arrays in one
// precision, with a copy of the positions they were made from.
type preparedObservers struct {
	x, y, z []byte
	prec    Precision
	arrays  any // *observerArrays[F]
}

// observerArrays are the observer part of a device job: the positions in
// the kernel's units (float64, for the device's observer order), in its
// precision, |x|, and the time shift |x|/c.
type observerArrays[F float] struct {
	X, Y, Z        []float64
	OX, OY, OZ, R0 []F
	Shift          []float64
}

func precisionOf[F float]() Precision {
	var zero F
	if _, ok := any(zero).(float32); ok {
		return Float32
	}
	return Float64
}

// knotsOf are src's knots in precision F and units u, from p when it has them.
func knotsOf[F float](p *Prepared, src Source, u units) *knots[F] {
	if p == nil {
		return toKnots[F](src, u)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	i := int(precisionOf[F]())
	if k, ok := p.knots[i].(*knots[F]); ok {
		return k
	}
	k := toKnots[F](src, u)
	p.knots[i] = k
	return k
}

func rawBytes(x []float64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 8*len(x))
}

// observerArraysOf are obs's kernel arrays in precision F, units u and
// speed of light c (in those units), from p when it saw the same observers.
func observerArraysOf[F float](p *Prepared, obs Observers, u units, c float64) *observerArrays[F] {
	if p == nil {
		return newObserverArrays[F](obs, u, c)
	}
	prec := precisionOf[F]()
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.obs; e != nil && e.prec == prec && bytes.Equal(e.x, rawBytes(obs.X)) &&
		bytes.Equal(e.y, rawBytes(obs.Y)) && bytes.Equal(e.z, rawBytes(obs.Z)) {
		return e.arrays.(*observerArrays[F])
	}
	a := newObserverArrays[F](obs, u, c)
	p.obs = &preparedObservers{x: bytes.Clone(rawBytes(obs.X)), y: bytes.Clone(rawBytes(obs.Y)), z: bytes.Clone(rawBytes(obs.Z)),
		prec: prec, arrays: a}
	return a
}

// newObserverArrays forms the arrays in float64 as the CPU kernel does (the
// positions scaled by 1/L, |x| of the scaled positions, the shift |x|/c)
// and rounds each once to F.
func newObserverArrays[F float](obs Observers, u units, c float64) *observerArrays[F] {
	o := len(obs.X)
	a := &observerArrays[F]{X: make([]float64, o), Y: make([]float64, o), Z: make([]float64, o),
		OX: make([]F, o), OY: make([]F, o), OZ: make([]F, o), R0: make([]F, o), Shift: make([]float64, o)}
	f := 1 / u.L
	par.For(o, 8192, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x, y, z := obs.X[i], obs.Y[i], obs.Z[i]
			if f != 1 {
				x, y, z = x*f, y*f, z*f
			}
			r0 := math.Sqrt(x*x + y*y + z*z)
			a.X[i], a.Y[i], a.Z[i] = x, y, z
			a.OX[i], a.OY[i], a.OZ[i], a.R0[i] = F(x), F(y), F(z), F(r0)
			a.Shift[i] = r0 / c // as the CPU kernel's t - r0/src.C
		}
	})
	return a
}
