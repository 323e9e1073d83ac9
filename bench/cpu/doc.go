// Package cpubench holds the CPU backend's benchmarks (go test -bench) and the
// convergence measurements of docs/convergence.md (FIELDGO_CONVERGENCE=1).
package cpubench
