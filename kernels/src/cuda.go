package src

import _ "embed"

// CUDAArgs declares what the CUDA field engine's kernels share with the host:
// the reduction constants and the device flow's control block; the cgo side
// of kernels/cuda includes the same file.
//
//go:embed cuda_args.h
var CUDAArgs string

// CUDAKernels are the CUDA field engine's kernels, compiled by NVRTC after
// the point source, CUDAArgs and Stencils: four parts by job, in this order
// (each uses what the ones before declare).
var CUDAKernels = cudaSite + cudaReduce + cudaOps + cudaFlow

// The site code: storage type, geometry, one site's stencil and gradient.
//
//go:embed cuda_site.cu
var cudaSite string

// The deterministic reductions (chunk, row and final levels; Dot, MaxAbs).
//
//go:embed cuda_reduce.cu
var cudaReduce string

// The whole-field operations: untiled gradients, densities, elementwise kernels.
//
//go:embed cuda_ops.cu
var cudaOps string

// The shared-memory tiled stencil and the device flow's step kernels.
//
//go:embed cuda_flow.cu
var cudaFlow string
