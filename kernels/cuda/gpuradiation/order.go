package gpuradiation

import (
	"math"
	"slices"

	"github.com/fieldgo/fieldgo/core/radiation"
)

// order is the observer schedule a run takes: Device.Hilbert's or the
// direction order.
func (d *Device) order(job *radiation.DeviceJob) []int32 {
	if d.Hilbert {
		return HilbertOrder(job.OX, job.OY, job.OZ)
	}
	return DirectionOrder(job.OX, job.OY, job.OZ)
}

// DirectionOrder is the tiled kernels' observer schedule: the observers
// sorted by the Morton code of their direction from the origin (10 bits per
// coordinate of x/|x|), index breaking ties, so that a warp's observers look
// at the particles from similar directions: their retarded times, and the
// spline intervals they read, are then close, and the records a warp fetches
// are mostly shared. The order does not change any observer's numbers.
func DirectionOrder(x, y, z []float64) []int32 {
	keys := make([]uint64, len(x))
	q := func(v float64) uint64 { return uint64(math.Min(1023, math.Max(0, math.Floor((v+1)*512)))) }
	spread := func(v uint64) uint64 { // 10 bits -> every third of 30
		v &= 0x3ff
		v = (v | v<<16) & 0x030000ff
		v = (v | v<<8) & 0x0300f00f
		v = (v | v<<4) & 0x030c30c3
		v = (v | v<<2) & 0x09249249
		return v
	}
	for i := range x {
		r := math.Sqrt(x[i]*x[i] + y[i]*y[i] + z[i]*z[i])
		var ux, uy, uz float64
		if r > 0 {
			ux, uy, uz = x[i]/r, y[i]/r, z[i]/r
		}
		m := spread(q(ux)) | spread(q(uy))<<1 | spread(q(uz))<<2
		keys[i] = m<<32 | uint64(i)
	}
	return byKey(keys)
}

// HilbertOrder is an observer schedule with more compact warps: the
// observers sorted by the Hilbert index (16 bits per axis) of their
// direction's octahedral map (the unit sphere folded onto a square: the
// upper half as |x|+|y| <= 1, the lower half's triangles folded out to the
// corners, so that the map is continuous and a curve through the square
// passes through neighbouring directions), index breaking ties. Measured
// on the benchmark's 32768 observers (a Fibonacci sphere): each 32
// consecutive observers lie within 0.168 rad of their centre (0.129 at the
// 90th percentile), where DirectionOrder's Morton curve jumps (1.48 rad at
// worst, 0.27 at the 90th percentile).
func HilbertOrder(x, y, z []float64) []int32 {
	const bits = 16
	const n = 1 << bits
	keys := make([]uint64, len(x))
	cell := func(v float64) uint32 { return uint32(math.Min(n-1, math.Max(0, math.Floor((v+1)/2*n)))) }
	for i := range x {
		var u, v float64
		if s := math.Abs(x[i]) + math.Abs(y[i]) + math.Abs(z[i]); s > 0 {
			u, v = x[i]/s, y[i]/s
			if z[i] < 0 {
				u, v = math.Copysign(1-math.Abs(v), u), math.Copysign(1-math.Abs(u), v)
			}
		}
		keys[i] = uint64(hilbertIndex(n, cell(u), cell(v)))<<32 | uint64(i)
	}
	return byKey(keys)
}

// hilbertIndex is the distance along the Hilbert curve of the n x n grid (n
// a power of two) of cell (x, y).
func hilbertIndex(n, x, y uint32) uint32 {
	var d uint32
	for s := n / 2; s > 0; s /= 2 {
		var rx, ry uint32
		if x&s != 0 {
			rx = 1
		}
		if y&s != 0 {
			ry = 1
		}
		d += s * s * ((3 * rx) ^ ry)
		if ry == 0 { // rotate the quadrant
			if rx == 1 {
				x, y = n-1-x, n-1-y
			}
			x, y = y, x
		}
	}
	return d
}

// byKey is the observers sorted by their keys: each key holds the observer's
// sort value in its high 32 bits and its index in the low 32 (so the index
// breaks ties).
func byKey(keys []uint64) []int32 {
	slices.Sort(keys)
	perm := make([]int32, len(keys))
	for i, k := range keys {
		perm[i] = int32(uint32(k))
	}
	return perm
}
