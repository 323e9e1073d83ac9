// Package nbody holds the CPU benchmark of direct-summation N-body
// (core/nbody): interactions per second for a range of N, float64 and
// float32, on every core. The GPU benchmark is in kernels/cuda/gpunbody (go test -bench
// there, on the GPU machine); docs/performance/nbody.md has the numbers and the commands.
package nbody
