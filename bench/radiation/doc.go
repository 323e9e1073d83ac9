// Package radbench holds the radiation benchmarks on the CPU (go test -bench)
// and the checks of their scene (internal/radscene). The GPU's tests and
// benchmarks live beside its code in kernels/cuda/gpuradiation. Results and
// commands: docs/performance/radiation.md.
package radbench
