package nbody

import "github.com/fieldgo/fieldgo/kernels"

// Device is a GPU (or other accelerator) evaluation of the same sums as
// Solver, and a leapfrog that keeps the bodies on the device: the contract
// kernels.NBodyDevice, which the kernels own (nbody does not import a
// backend). kernels/cuda/gpunbody implements it for CUDA with the tiled
// kernel of kernels/src/nbody.cu, and the caller (pybind, a test) hands it in
// through Solver.Device or Config.Device.
type Device = kernels.NBodyDevice

// DeviceLeapfrog is kick-drift-kick on the device (kernels.NBodyLeapfrog).
type DeviceLeapfrog = kernels.NBodyLeapfrog
