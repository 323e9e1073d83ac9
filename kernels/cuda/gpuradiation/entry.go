package gpuradiation

import "github.com/fieldgo/fieldgo/kernels"

// EntryPoint is the kernels/src/radiation.cu entry point of the tiled,
// obs, column-major and split-solve kernels for k, before the variant's
// suffix (Device.Variant, Tret): fg_rad_<newton|rk4>_<cold|warm|reuse>_<f64|f32>.
// The cold search ignores CoefReuse (as on the CPU).
func EntryPoint(k kernels.RadiationKernel) string {
	s := "warm"
	switch {
	case k.Search == kernels.ColdSearch:
		s = "cold"
	case k.CoefReuse:
		s = "reuse"
	}
	return "fg_rad_" + k.Method.String() + "_" + s + "_" + suffix(k.Precision)
}

// suffix is the entry points' precision: "f64" or "f32".
func suffix(p kernels.Precision) string {
	if p == kernels.Float32 {
		return "f32"
	}
	return "f64"
}
