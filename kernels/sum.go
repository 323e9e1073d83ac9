package kernels

import (
	"fmt"
	"math"
)

// SumCompensated is Neumaier's compensated sum of xs in index order: the
// fixed-order reduction every backend and core use, so that a sum is the same
// bits however the partials were produced.
func SumCompensated(xs []float64) float64 {
	var s, comp float64
	for _, x := range xs {
		t := s + x
		if math.Abs(s) >= math.Abs(x) {
			comp += (s - t) + x
		} else {
			comp += (x - t) + s
		}
		s = t
	}
	return s + comp
}

// SizeChecks is the C preprocessor guard every backend's translation unit
// puts after the point source: the sizes the engine allocates for must be the
// ones the source declares.
func SizeChecks(u Unit) string {
	var out string
	for _, c := range []struct {
		macro, what string
		n           int
	}{{"FG_NCOMP", "field", u.NComp}, {"FG_NDENS", "density", u.NDens}, {"FG_NPARAMS", "parameter", u.NParams}} {
		out += fmt.Sprintf("#if %s != %d\n#error \"point source declares %s != %d (the spec's %s count)\"\n#endif\n",
			c.macro, c.n, c.macro, c.n, c.what)
	}
	return out
}
