package src

import _ "embed"

// CUDAArgs declares fg_cargs, the argument block of every CUDA kernel; the
// cgo side of kernels/cuda includes the same file.
//
//go:embed cuda_args.h
var CUDAArgs string

// CUDAKernels are the CUDA kernels (one thread per site), compiled by NVRTC
// after the point source, CUDAArgs and Stencils.
//
//go:embed cuda_kernels.cu
var CUDAKernels string
