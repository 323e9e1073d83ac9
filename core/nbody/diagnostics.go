package nbody

import (
	"github.com/fieldgo/fieldgo/kernels"
)

// Diagnostics are the conserved quantities of a state: energies (the potential
// energy is the softened one the forces derive from, so leapfrog conserves
// kinetic + potential up to O(dt^2)), total momentum and angular momentum
// about the origin. Sums are compensated and in index order: deterministic.
type Diagnostics struct {
	Step       int64
	T          float64
	Kinetic    float64
	Potential  float64
	Energy     float64
	Px, Py, Pz float64
	Lx, Ly, Lz float64
}

// Kinetic is sum_i m_i |v_i|^2 / 2.
func (b *Bodies) Kinetic() float64 {
	t := make([]float64, len(b.M))
	for i, m := range b.M {
		t[i] = 0.5 * m * (b.VX[i]*b.VX[i] + b.VY[i]*b.VY[i] + b.VZ[i]*b.VZ[i])
	}
	return kernels.SumCompensated(t)
}

// Potential is sum_i m_i phi_i / 2, given the potentials phi.
func (b *Bodies) Potential(phi []float64) float64 {
	t := make([]float64, len(b.M))
	for i, m := range b.M {
		t[i] = 0.5 * m * phi[i]
	}
	return kernels.SumCompensated(t)
}

// Momentum is sum_i m_i v_i.
func (b *Bodies) Momentum() (px, py, pz float64) {
	n := len(b.M)
	tx, ty, tz := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, m := range b.M {
		tx[i], ty[i], tz[i] = m*b.VX[i], m*b.VY[i], m*b.VZ[i]
	}
	return kernels.SumCompensated(tx), kernels.SumCompensated(ty), kernels.SumCompensated(tz)
}

// AngularMomentum is sum_i m_i x_i × v_i.
func (b *Bodies) AngularMomentum() (lx, ly, lz float64) {
	n := len(b.M)
	tx, ty, tz := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, m := range b.M {
		tx[i] = m * (b.Y[i]*b.VZ[i] - b.Z[i]*b.VY[i])
		ty[i] = m * (b.Z[i]*b.VX[i] - b.X[i]*b.VZ[i])
		tz[i] = m * (b.X[i]*b.VY[i] - b.Y[i]*b.VX[i])
	}
	return kernels.SumCompensated(tx), kernels.SumCompensated(ty), kernels.SumCompensated(tz)
}

// Diagnose computes the diagnostics of b with potentials phi.
func (b *Bodies) Diagnose(phi []float64) Diagnostics {
	d := Diagnostics{Kinetic: b.Kinetic(), Potential: b.Potential(phi)}
	d.Energy = d.Kinetic + d.Potential
	d.Px, d.Py, d.Pz = b.Momentum()
	d.Lx, d.Ly, d.Lz = b.AngularMomentum()
	return d
}
