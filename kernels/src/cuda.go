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
var CUDAKernels = cudaSite + cudaReduce + cudaOps + cudaElem + cudaFlow

// CUDAGridKernels are the kernels of the second CUDA translation unit, for
// grids that are not planar (lines, 3D lattices, boundaries set per axis) and
// for point sources with z derivatives (FG_DIM 3): the site code and the
// reductions above, the elementwise kernels, then cuda_site3d.cu's site
// kernels and cuda_free.cu's free boundary. The planar unit (CUDAKernels)
// stays as it was, byte for byte.
var CUDAGridKernels = cudaSite + cudaReduce + cudaElem + cudaSite3D + cudaFree

// The site code: storage type, geometry, one site's stencil and gradient.
//
//go:embed cuda_site.cu
var cudaSite string

// The deterministic reductions (chunk, row and final levels; Dot, MaxAbs).
//
//go:embed cuda_reduce.cu
var cudaReduce string

// The whole-field operations: untiled gradients and densities (cuda_ops.cu),
// then the elementwise kernels (cuda_elem.cu: Combine, the float32
// transfers, Constrain, FillRandom, Project, FirstNonFinite). The two files
// were one; the planar unit concatenates them in the same order, so its
// source is what it was.
//
//go:embed cuda_ops.cu
var cudaOps string

//go:embed cuda_elem.cu
var cudaElem string

// The site kernels of lines, 3D lattices and boundaries set per axis.
//
//go:embed cuda_site3d.cu
var cudaSite3D string

// The free boundary's site kernels (kernels.Grid.Free) on every grid.
//
//go:embed cuda_free.cu
var cudaFree string

// The shared-memory tiled stencil and the device flow's step kernels.
//
//go:embed cuda_flow.cu
var cudaFlow string
