package src

import _ "embed"

// RadiationCUDA is the retarded-time Liénard–Wiechert kernel source (one
// thread per observer), the GPU twin of core/radiation's CPU kernel. Its entry
// points are RadiationKernels.
//
//go:embed radiation.cu
var RadiationCUDA string

// RadiationKernels are the extern "C" entry points of RadiationCUDA:
// fg_rad_<newton|rk4>_<cold|warm|reuse>_<f64|f32>.
var RadiationKernels = func() []string {
	var out []string
	for _, p := range []string{"f64", "f32"} {
		for _, m := range []string{"newton", "rk4"} {
			for _, s := range []string{"cold", "warm", "reuse"} {
				out = append(out, "fg_rad_"+m+"_"+s+"_"+p)
			}
		}
	}
	return out
}()
