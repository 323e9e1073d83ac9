// Package gpubench holds the device flow's A/B check of its fused stages 2-4
// against three kernels (TestDeviceFlowFused234). The device flow's other
// tests and its benchmarks live beside it in kernels/cuda. Everything skips,
// saying why, without a GPU.
package gpubench
