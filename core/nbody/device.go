package nbody

// Device is a GPU (or other accelerator) evaluation of the same sums as
// Solver, and a leapfrog that keeps the bodies on the device. core does not
// import a backend: kernels/cuda/gpunbody implements Device for CUDA with the
// tiled kernel of kernels/src/nbody.cu, and the caller (pybind, a test)
// hands it in through Solver.Device or Config.Device.
type Device interface {
	// String names the device ("cuda: NVIDIA H200 (...)").
	String() string
	// Accelerations has Solver.Accelerations' contract (inputs already
	// checked): a_i (and phi_i when pot is not nil) in precision prec,
	// the self term masked, the same bits on every run.
	Accelerations(x, y, z, m []float64, softening float64, prec Precision, ax, ay, az, pot []float64) error
	// Leapfrog returns an integrator state for n bodies on the device.
	Leapfrog(n int, softening float64, prec Precision) (DeviceLeapfrog, error)
}

// DeviceLeapfrog is kick-drift-kick on the device: positions, velocities
// and accelerations stay there between Downloads. In Float32 the state
// itself is float32 on the device (the CPU integrator keeps float64 state
// and only sums in float32).
type DeviceLeapfrog interface {
	// Upload sets the state and evaluates a(x) (no potentials).
	Upload(x, y, z, vx, vy, vz, m []float64) error
	// Forces evaluates a(x) again, with potentials if asked.
	Forces(potentials bool) error
	// Steps queues k steps of size dt from the current a(x); the last
	// force evaluation computes potentials if asked. It need not wait for
	// the device.
	Steps(k int, dt float64, potentials bool) error
	// Download waits for the queued work and copies the state and the
	// last accelerations (and potentials, 0 unless the last evaluation
	// computed them) to the host.
	Download(x, y, z, vx, vy, vz, ax, ay, az, pot []float64) error
	Close() error
}
