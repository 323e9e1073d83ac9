package nbody

import (
	"context"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/hostmem"
)

// Config sets up an Integrator.
type Config struct {
	Dt        float64 // time step, > 0 (reverse time by negating velocities: Reverse)
	Softening float64 // Plummer softening length, >= 0
	Precision Precision
	Threads   int    // 0: GOMAXPROCS
	Device    Device // nil: the CPU; else the steps run on the device (see DeviceLeapfrog)
}

// Integrator advances bodies with the kick-drift-kick leapfrog
//
//	v += a(x) dt/2;  x += v dt;  v += a(x) dt/2
//
// which is symplectic and time-reversible, second order: energy errors are
// bounded (no secular drift) and scale as dt^2. Positions and velocities are
// float64 in C memory; the accelerations are computed in Config.Precision.
type Integrator struct {
	cfg     Config
	state   Bodies // views of buf
	ax      []float64
	ay, az  []float64
	pot     []float64
	buf     *memory.Buffer
	solver  Solver
	step    int64
	haveAcc bool // ax.. hold a(x) of the current positions
	havePot bool // pot holds phi(x) of the current positions
	emitted int64
	dev     DeviceLeapfrog // nil on the CPU
	dirty   bool           // the host state changed since the device's copy
}

// NewIntegrator copies b into C memory and validates the set-up.
func NewIntegrator(b *Bodies, cfg Config) (*Integrator, error) {
	if b == nil || b.Len() == 0 {
		return nil, errs.New(errs.Shape, "no bodies to integrate")
	}
	n := b.Len()
	for name, col := range map[string][]float64{"vx": b.VX, "vy": b.VY, "vz": b.VZ} {
		if len(col) != n {
			return nil, errs.New(errs.Shape, "%s has %d values for %d bodies", name, len(col), n)
		}
		for i, v := range col {
			if !finite(v) {
				return nil, errs.New(errs.Parameter, "body %d has a non-finite velocity %s = %v", i, name, v)
			}
		}
	}
	if err := Check(b.X, b.Y, b.Z, b.M, cfg.Softening); err != nil {
		return nil, err
	}
	if !(cfg.Dt > 0) || math.IsInf(cfg.Dt, 0) {
		return nil, errs.New(errs.Parameter, "dt must be finite and > 0, got %v", cfg.Dt)
	}
	const cols = 11 // x y z vx vy vz m ax ay az pot
	buf := memory.NewBufferWithAllocator(hostmem.Allocator.Allocate(cols*n*8), hostmem.Allocator)
	base := unsafe.Pointer(unsafe.SliceData(buf.Bytes()))
	col := func(c int) []float64 { return unsafe.Slice((*float64)(unsafe.Add(base, c*n*8)), n) }
	it := &Integrator{cfg: cfg, buf: buf,
		solver: Solver{Softening: cfg.Softening, Precision: cfg.Precision, Threads: cfg.Threads}}
	it.state = Bodies{X: col(0), Y: col(1), Z: col(2), VX: col(3), VY: col(4), VZ: col(5), M: col(6)}
	it.ax, it.ay, it.az, it.pot = col(7), col(8), col(9), col(10)
	copy(it.state.X, b.X)
	copy(it.state.Y, b.Y)
	copy(it.state.Z, b.Z)
	copy(it.state.VX, b.VX)
	copy(it.state.VY, b.VY)
	copy(it.state.VZ, b.VZ)
	copy(it.state.M, b.M)
	it.emitted = -1
	if cfg.Device != nil {
		dev, err := cfg.Device.Leapfrog(n, cfg.Softening, cfg.Precision)
		if err != nil {
			buf.Release()
			return nil, err
		}
		it.dev, it.dirty = dev, true
	}
	return it, nil
}

// Bodies is the current state (views of the integrator's C memory: valid until
// Release; writing positions or masses invalidates nothing only if followed by
// Invalidate).
func (it *Integrator) Bodies() *Bodies { return &it.state }

// Invalidate says the positions or masses were changed from outside.
func (it *Integrator) Invalidate() { it.haveAcc, it.havePot, it.dirty = false, false, true }

// Config is the integrator's set-up.
func (it *Integrator) Config() Config { return it.cfg }

// StepCount is the number of steps taken; Time is StepCount·dt.
func (it *Integrator) StepCount() int64 { return it.step }

// Time is the simulated time since the start.
func (it *Integrator) Time() float64 { return float64(it.step) * it.cfg.Dt }

// Reverse negates every velocity: integrating on then retraces the past.
func (it *Integrator) Reverse() {
	for i := range it.state.M {
		it.state.VX[i], it.state.VY[i], it.state.VZ[i] = -it.state.VX[i], -it.state.VY[i], -it.state.VZ[i]
	}
	it.dirty = true
}

func (it *Integrator) forces(withPot bool) error {
	s := &it.state
	if it.dev != nil {
		return it.deviceForces(withPot)
	}
	if withPot {
		it.solver.compute(s.X, s.Y, s.Z, s.M, it.ax, it.ay, it.az, it.pot)
	} else {
		it.solver.compute(s.X, s.Y, s.Z, s.M, it.ax, it.ay, it.az, nil)
	}
	it.haveAcc, it.havePot = true, withPot
	return it.checkAccelerations()
}

// Diagnose returns energies and momenta of the current state.
func (it *Integrator) Diagnose() (Diagnostics, error) {
	if !it.havePot {
		if err := it.forces(true); err != nil {
			return Diagnostics{}, err
		}
	}
	d := it.state.Diagnose(it.pot)
	d.Step, d.T = it.step, it.Time()
	return d, nil
}

// Run takes steps leapfrog steps. It hands a snapshot to every sink at the
// current step if none was handed yet (the start), then every `every` steps
// (counted from the start of the integration) and after the last step.
// Sinks that are slow should be wrapped in Async. ctx cancels between steps
// (errs.Cancelled); the state stays that of the last whole step.
func (it *Integrator) Run(ctx context.Context, steps, every int, sinks ...Sink) error {
	if steps < 0 {
		return errs.New(errs.Parameter, "steps must be >= 0, got %d", steps)
	}
	if every <= 0 {
		return errs.New(errs.Parameter, "every must be >= 1, got %d", every)
	}
	emit := func() error {
		d, err := it.Diagnose()
		if err != nil {
			return err
		}
		it.emitted = it.step
		if len(sinks) == 0 {
			return nil
		}
		rec := it.record()
		defer rec.Release()
		for _, s := range sinks {
			if err := s.Write(Snapshot{Diagnostics: d, Batch: rec}); err != nil {
				return err
			}
		}
		return nil
	}
	if it.emitted != it.step {
		if err := emit(); err != nil {
			return err
		}
	}
	if it.dev != nil {
		return it.runDevice(ctx, steps, every, emit)
	}
	if !it.haveAcc {
		if err := it.forces(false); err != nil {
			return err
		}
	}
	s := &it.state
	h := 0.5 * it.cfg.Dt
	dt := it.cfg.Dt
	for k := 0; k < steps; k++ {
		if ctx != nil {
			if err := ctx.Err(); err != nil {
				return errs.Wrap(errs.Cancelled, err, "integration stopped at step %d", it.step)
			}
		}
		for i := range s.M {
			s.VX[i] += h * it.ax[i]
			s.VY[i] += h * it.ay[i]
			s.VZ[i] += h * it.az[i]
			s.X[i] += dt * s.VX[i]
			s.Y[i] += dt * s.VY[i]
			s.Z[i] += dt * s.VZ[i]
		}
		last := k == steps-1
		snap := (it.step+1)%int64(every) == 0 || last
		if err := it.forces(snap); err != nil {
			return err
		}
		for i := range s.M {
			s.VX[i] += h * it.ax[i]
			s.VY[i] += h * it.ay[i]
			s.VZ[i] += h * it.az[i]
		}
		it.step++
		it.havePot = it.havePot && snap
		if snap {
			if err := emit(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Release frees the integrator's C memory. Batches already emitted own their
// memory and stay valid.
func (it *Integrator) Release() {
	if it.dev != nil {
		it.dev.Close()
		it.dev = nil
	}
	if it.buf != nil {
		it.buf.Release()
		it.buf = nil
		it.state = Bodies{}
		it.ax, it.ay, it.az, it.pot = nil, nil, nil, nil
	}
}

// deviceForces evaluates a(x) on the device (uploading the host state if it
// changed) and copies state and accelerations back.
func (it *Integrator) deviceForces(withPot bool) error {
	s := &it.state
	if it.dirty {
		if err := it.dev.Upload(s.X, s.Y, s.Z, s.VX, s.VY, s.VZ, s.M); err != nil {
			return err
		}
		it.dirty = false
	}
	if err := it.dev.Forces(withPot); err != nil {
		return err
	}
	return it.download(withPot)
}

func (it *Integrator) download(withPot bool) error {
	s := &it.state
	if err := it.dev.Download(s.X, s.Y, s.Z, s.VX, s.VY, s.VZ, it.ax, it.ay, it.az, it.pot); err != nil {
		return err
	}
	it.haveAcc, it.havePot = true, withPot
	return it.checkAccelerations()
}

// checkAccelerations names the first body whose acceleration is not finite.
func (it *Integrator) checkAccelerations() error {
	for i := range it.ax {
		if !finite(it.ax[i]) || !finite(it.ay[i]) || !finite(it.az[i]) {
			return errs.New(errs.Divergence, "step %d: body %d has a non-finite acceleration (%v, %v, %v): "+
				"two bodies coincide with no softening?", it.step, i, it.ax[i], it.ay[i], it.az[i])
		}
	}
	return nil
}

// deviceChunk bounds the steps queued between cancellation checks.
const deviceChunk = 256

// runDevice is Run's loop on the device: the steps between two snapshots are
// queued without a host round trip, the last force evaluation of each
// stretch computes potentials, and the state comes back only at snapshots.
func (it *Integrator) runDevice(ctx context.Context, steps, every int, emit func() error) error {
	if it.dirty || !it.haveAcc {
		if err := it.deviceForces(false); err != nil {
			return err
		}
	}
	done := 0
	for done < steps {
		// Steps to the next snapshot: when (step+1) % every == 0, or the last.
		k := min(steps-done, every-int(it.step%int64(every)))
		for k > 0 {
			if ctx != nil {
				if err := ctx.Err(); err != nil {
					// The state of the last whole queued step is the device's.
					if derr := it.download(false); derr != nil {
						return derr
					}
					return errs.Wrap(errs.Cancelled, err, "integration stopped at step %d", it.step)
				}
			}
			c := min(k, deviceChunk)
			if err := it.dev.Steps(c, it.cfg.Dt, c == k); err != nil {
				return err
			}
			it.step += int64(c)
			done += c
			k -= c
		}
		if err := it.download(true); err != nil {
			return err
		}
		if err := emit(); err != nil {
			return err
		}
	}
	return nil
}
