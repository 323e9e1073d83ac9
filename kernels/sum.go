package kernels

import "math"

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
