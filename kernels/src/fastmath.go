package src

import _ "embed"

// fastMath is fastmath.cuh: the hardware-estimate reciprocal and reciprocal
// square root shared by the N-body and radiation kernels, prepended to their
// translation units (NVRTC gets one source string, no include path).
//
//go:embed fastmath.cuh
var fastMath string
