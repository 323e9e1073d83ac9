// Package src holds the C kernel templates that backends append to a theory's
// point source (docs/abi.md) to make one translation unit.
package src

import _ "embed"

// CPUArgs declares fg_args, the argument block of every CPU kernel; the cgo
// side of kernels/cpu includes the same file.
//
//go:embed cpu_args.h
var CPUArgs string

// Stencils are the fourth-order finite-difference helpers shared by backends.
//
//go:embed stencil.h
var Stencils string

// CPUKernels are the CPU kernels (row-range functions).
//
//go:embed cpu_kernels.c.tmpl
var CPUKernels string
