package nbody

import (
	"math"
	"math/rand/v2"

	"github.com/fieldgo/fieldgo/errs"
)

// Bodies are n bodies, structure of arrays.
type Bodies struct {
	X, Y, Z    []float64
	VX, VY, VZ []float64
	M          []float64
}

// Len is the number of bodies.
func (b *Bodies) Len() int { return len(b.M) }

// NewBodies allocates n zeroed bodies on the Go heap.
func NewBodies(n int) *Bodies {
	return &Bodies{X: make([]float64, n), Y: make([]float64, n), Z: make([]float64, n),
		VX: make([]float64, n), VY: make([]float64, n), VZ: make([]float64, n), M: make([]float64, n)}
}

// Plummer samples an n-body Plummer sphere in Hénon units (G = M = 1,
// E = -1/4) with the recipe of Aarseth, Hénon & Wielen (1974, A&A 37, 183):
// equal masses 1/n; radii from the cumulative mass m(r) = r^3 (1 + r^2)^(-3/2)
// inverted, r = (X^(-2/3) - 1)^(-1/2), with mass fractions above 0.999 redrawn
// (AHW's cut, r < 22.8 Plummer radii); isotropic directions; speeds v = q v_esc,
// v_esc = sqrt(2) (1 + r^2)^(-1/4), q drawn by von Neumann rejection from
// g(q) = q^2 (1 - q^2)^(7/2) (0.1 bounds its maximum 0.092); lengths scaled by
// 3 pi / 16 and velocities by sqrt(16 / (3 pi)), which gives E = -1/4 as
// n -> infinity. The centre of mass is moved to rest at the origin.
//
// With exact set, the sample is then rescaled so that this n-body realisation
// has exactly (to rounding) kinetic energy 1/4 and unsoftened potential energy
// -1/2 (the virial ratio 1/2 of equilibrium), so E = -1/4 for it: this costs
// one O(n^2) potential evaluation. The same seed gives the same bodies.
func Plummer(n int, seed uint64, exact bool) (*Bodies, error) {
	if n < 2 {
		return nil, errs.New(errs.Parameter, "a Plummer sphere needs at least 2 bodies, got %d", n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := NewBodies(n)
	// (0, 1]: never 0, whose inverse powers are infinite.
	uniform := func() float64 { return 1 - rng.Float64() }
	isotropic := func(r float64) (x, y, z float64) {
		z = (1 - 2*rng.Float64()) * r
		rho := math.Sqrt(math.Max(r*r-z*z, 0))
		phi := 2 * math.Pi * rng.Float64()
		return rho * math.Cos(phi), rho * math.Sin(phi), z
	}
	const lengthScale = 3 * math.Pi / 16
	velScale := math.Sqrt(16 / (3 * math.Pi))
	for i := 0; i < n; i++ {
		b.M[i] = 1 / float64(n)
		var r float64
		for {
			xm := uniform()
			if xm > 0.999 {
				continue
			}
			r = 1 / math.Sqrt(math.Pow(xm, -2.0/3.0)-1)
			break
		}
		var q float64
		for {
			q = rng.Float64()
			if 0.1*rng.Float64() < q*q*math.Pow(1-q*q, 3.5) {
				break
			}
		}
		v := q * math.Sqrt2 * math.Pow(1+r*r, -0.25)
		x, y, z := isotropic(r)
		b.X[i], b.Y[i], b.Z[i] = x*lengthScale, y*lengthScale, z*lengthScale
		vx, vy, vz := isotropic(v)
		b.VX[i], b.VY[i], b.VZ[i] = vx*velScale, vy*velScale, vz*velScale
	}
	b.Recentre()
	if exact {
		k := b.Kinetic()
		s := Solver{}
		pot := make([]float64, n)
		ax, ay, az := make([]float64, n), make([]float64, n), make([]float64, n)
		if err := s.Accelerations(b.X, b.Y, b.Z, b.M, ax, ay, az, pot); err != nil {
			return nil, err
		}
		w := b.Potential(pot)
		// Lengths scale W as 1/lambda, velocities K as mu^2.
		lambda := w / -0.5
		mu := math.Sqrt(0.25 / k)
		for i := 0; i < n; i++ {
			b.X[i] *= lambda
			b.Y[i] *= lambda
			b.Z[i] *= lambda
			b.VX[i] *= mu
			b.VY[i] *= mu
			b.VZ[i] *= mu
		}
	}
	return b, nil
}

// Recentre moves the centre of mass to the origin and its velocity to zero.
func (b *Bodies) Recentre() {
	var mt float64
	var c [6]float64
	cols := [6][]float64{b.X, b.Y, b.Z, b.VX, b.VY, b.VZ}
	for i, m := range b.M {
		mt += m
		for k := range cols {
			c[k] += m * cols[k][i]
		}
	}
	if mt == 0 {
		return
	}
	for k := range cols {
		c[k] /= mt
		for i := range cols[k] {
			cols[k][i] -= c[k]
		}
	}
}
