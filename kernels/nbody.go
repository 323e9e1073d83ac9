package kernels

// NBodyDevice evaluates softened direct N-body sums on a device (a GPU), and
// runs a leapfrog that keeps the bodies there: the contract between
// core/nbody, which hands one in (Solver.Device, Config.Device), and
// kernels/cuda/gpunbody, which implements it with kernels/src/nbody.cu.
// Bodies are plain columns of float64; G = 1.
type NBodyDevice interface {
	// String names the device ("cuda: NVIDIA H200 (...)").
	String() string
	// Accelerations writes, for every body i, a_i = sum over j != i of
	// m_j (x_j - x_i) / (|x_j - x_i|^2 + softening^2)^(3/2) into ax, ay,
	// az (and, when pot is not nil, phi_i = -sum over j != i of
	// m_j / (|x_j - x_i|^2 + softening^2)^(1/2) into pot), the pairwise
	// terms computed and summed in prec, the self term masked, the same
	// bits on every run. The inputs are already checked: equal lengths,
	// finite values.
	Accelerations(x, y, z, m []float64, softening float64, prec Precision, ax, ay, az, pot []float64) error
	// Leapfrog returns an integrator state for n bodies on the device.
	Leapfrog(n int, softening float64, prec Precision) (NBodyLeapfrog, error)
}

// NBodyLeapfrog is kick-drift-kick on the device: positions, velocities
// and accelerations stay there between Downloads. In Float32 the state
// itself is float32 on the device (core/nbody's CPU integrator keeps float64
// state and only sums in float32).
type NBodyLeapfrog interface {
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
