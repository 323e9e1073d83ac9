// Package gpubench holds the CUDA backend's end-to-end checks and
// measurements (docs/performance/gpu.md): the device flow (kernels.Stepper)
// against the host loop and the CPU, ms per arrested Newton flow step, time
// to the first step and to a converged soliton. Everything skips, saying
// why, without a GPU. Build here, run on the GPU machine:
//
//	go test -c -o .gpu/gpubench.test ./bench/gpu
//	cd .gpu && ./gpubench.test -test.v -test.run .
package gpubench
