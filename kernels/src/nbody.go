package src

import _ "embed"

// NBodyCUDA is the direct-summation N-body kernels (tiled and untiled
// accelerations, leapfrog kick and drift) in float and double builds: a
// standalone CUDA translation unit (no point source). See the file's header
// for the launch shapes; core/nbody is the CPU counterpart.
//
// It starts with fastmath.cuh.
var NBodyCUDA = fastMath + nbodyCU

//go:embed nbody.cu
var nbodyCU string
