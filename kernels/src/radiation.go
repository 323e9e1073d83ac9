package src

import _ "embed"

// RadiationCUDA is the retarded-time Liénard–Wiechert kernel source (a block
// of 32 observers walking their samples in shared-memory tiles, particles
// added in order), the GPU twin of core/radiation's CPU kernel. Its entry
// points are RadiationKernels.
//
// It starts with fastmath.cuh.
var RadiationCUDA = fastMath + radiationCU

//go:embed radiation.cu
var radiationCU string

// RadiationKernels are the extern "C" entry points of RadiationCUDA:
// fg_rad_<newton|rk4>_<cold|warm|reuse>_<f64|f32> (the tiled kernels, on
// interval-major spline records; with the suffix _tret they also write the
// retarded times), the two phases fg_rad_<method>_<search>_<prec>_split
// (roots per observer and particle) and fg_rad_field_<prec>_split (fields per
// observer and sample), and for the benchmark's comparisons
// fg_rad_newton_<cold|warm|reuse>_f64_cm (the column-major layout) and
// fg_rad_newton_<cold|reuse>_f64_obs (one thread per observer, no tiles),
// and for the tests fg_rad_search_agree_f64 (the warm search against the cold);
// and the helpers the launches take around them: fg_rad_shift_<slot|obs>_<prec>
// (the shifted times from the sample times and the observers' |x_obs|/c) and
// fg_rad_unscale (the float32 mode's units taken back).
var RadiationKernels = func() []string {
	var out []string
	for _, p := range []string{"f64", "f32"} {
		for _, m := range []string{"newton", "rk4"} {
			for _, s := range []string{"cold", "warm", "reuse"} {
				k := "fg_rad_" + m + "_" + s + "_" + p
				out = append(out, k, k+"_tret", k+"_split")
			}
		}
		out = append(out, "fg_rad_field_"+p+"_split", "fg_rad_shift_slot_"+p, "fg_rad_shift_obs_"+p)
	}
	for _, s := range []string{"cold", "warm", "reuse"} {
		out = append(out, "fg_rad_newton_"+s+"_f64_cm")
	}
	return append(out, "fg_rad_newton_cold_f64_obs", "fg_rad_newton_reuse_f64_obs", "fg_rad_search_agree_f64", "fg_rad_unscale")
}()
