/* Reciprocal square root and reciprocal of a positive normal number from the
 * hardware estimates, without the CUDA library's range tests and slow-path
 * calls: for kernels whose arguments are known to be positive, finite and
 * normal (the N-body tiled kernel's r^2 with a normal softening, the radiation
 * kernels' distances, ut * kappa and light-cone derivatives). Prepended to the
 * translation units that use them (kernels/src/fastmath.go).
 *
 * float: the approximate instructions alone. rsqrt.approx.ftz.f32 is the
 *   MUFU.RSQ that rsqrtf issues; rsqrtf without flush-to-zero adds only a
 *   rescaling of denormal arguments around it, so for normal arguments the two
 *   are the same bits (gpunbody TestGPURsqrtNormal checks it).
 *   rcp.approx.ftz.f32: within 1 ulp.
 * double: the estimate y from the high word (MUFU.RSQ64H / MUFU.RCP64H,
 *   relative error d of about 2^-22, measured by TestGPURsqrtNormal) and one
 *   third-order Newton (Householder) correction:
 *     rsqrt: e = 1 - x y^2,  y' = y + y e (1/2 + 3/8 e)   (truncation (5/16) e^3)
 *     rcp:   e = 1 - x y,    y' = y + y (e + e^2)        (truncation e^3)
 *   e^3 ~ 2^-66 is below the roundings: y' is within about 1.5 ulp (the
 *   rounding of y^2 or x y enters e as u/2, the last FMA rounds once). 5 and 3
 *   double operations, against the library's ~13 with its special cases
 *   (0, inf, denormals). For x = +inf or 0 these give NaN where the library
 *   gives 0 or inf. */
#ifndef FG_FASTMATH_CUH
#define FG_FASTMATH_CUH
static __device__ __forceinline__ float fg_rsqrt_normal(float x) {
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
static __device__ __forceinline__ double fg_rsqrt_estimate(double x) {
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    return y;
}
static __device__ __forceinline__ double fg_rsqrt_normal(double x) {
    const double y = fg_rsqrt_estimate(x);
    const double e = fma(-x, y * y, 1.0);
    return fma(y, e * fma(e, 0.375, 0.5), y);
}
static __device__ __forceinline__ float fg_rcp_normal(float x) {
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
static __device__ __forceinline__ double fg_rcp_estimate(double x) {
    double y;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    return y;
}
static __device__ __forceinline__ double fg_rcp_normal(double x) {
    const double y = fg_rcp_estimate(x);
    const double e = fma(-x, y, 1.0);
    return fma(y, fma(e, e, e), y);
}
// a / b for a positive normal b: the estimate y of 1/b and the same
// correction applied to the quotient, q = q0 + q0 (e + e^2) with q0 = a y,
// e = 1 - b y, so that q0 and e are formed side by side (one dependent
// operation less than a * fg_rcp_normal(b); within about 1.5 ulp likewise).
static __device__ __forceinline__ float fg_quot_normal(float a, float b) { return a * fg_rcp_normal(b); }
static __device__ __forceinline__ double fg_quot_normal(double a, double b) {
    const double y = fg_rcp_estimate(b);
    const double q0 = a * y, e = fma(-b, y, 1.0);
    return fma(q0, fma(e, e, e), q0);
}
#endif
