// Package cpubench holds the CPU backend's benchmarks (go test -bench), the
// convergence measurements of docs/convergence.md (BenchmarkConvergence) among them.
package cpubench
