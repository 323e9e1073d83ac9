// Package radbench holds the radiation kernels' benchmarks (go test -bench)
// and the NVRTC check of the CUDA kernel (kernels/src/radiation.cu): it
// compiles for sm_90 without a GPU and reports registers and spills per entry
// point. Results and commands: docs/performance/radiation.md.
package radbench
