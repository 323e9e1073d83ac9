package kernels

// RandomValue is the value FillRandom stores at element e: splitmix64 of
// seed + (e+1)*golden, its top 53 bits as a uniform double in [-1, 1). The
// arithmetic is exact, so every backend produces the same bits.
func RandomValue(seed uint64, e int) float64 {
	z := seed + uint64(e+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11)*0x1p-52 - 1
}

// DotBlock is the fixed block of elements whose products a backend sums in
// index order into one partial of Dot; the partials are then combined in a
// fixed order of their own.
const DotBlock = 2048
