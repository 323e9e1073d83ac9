/* Direct-summation N-body on the GPU: softened inverse-square accelerations
 * and potentials (G = 1), and the leapfrog's kick and drift. A standalone
 * translation unit: no point source, no fg_cargs.
 *
 *   a_i   =  sum_{j != i} m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^{3/2}
 *   phi_i = -sum_{j != i} m_j             / (|x_j - x_i|^2 + eps^2)^{1/2}
 *
 * Bodies are packed (x, y, z, m) in one 16-byte (float) or 32-byte (double)
 * record, so a source is one or two vector loads; accelerations come back
 * packed (ax, ay, az, phi) the same way (phi is 0 in the kernels without
 * potentials).
 *
 * fg_nbody_tiled<P>: one thread per target reads every source and writes
 * only its own target: no atomics, no reductions between targets. A block
 * of FG_NB_BLOCK = 256 threads is T = 256/P targets times P threads per
 * target. The block stages FG_NB_BLOCK sources at a time in shared memory
 * (each thread loads one), then thread (t, q) runs target t over the q-th
 * slice of T sources of the tile. With P > 1 (for small N, when N threads
 * would not fill the GPU) the P partial sums of a target are combined in a
 * fixed order (q = 0, 1, ..., P-1) through shared memory, so the result is
 * the same bit for bit on every run. T >= 32, so the threads of a warp read
 * the same shared-memory source (a broadcast).
 *
 * The self term is not skipped by a branch: for j == i the kernel selects mass
 * 0 and squared separation 1, so the term is exactly zero even without
 * softening (an unsoftened run gives 0, not 0/0 = NaN). The CPU solver
 * (core/nbody) masks the same way. Only the one T-source slice that holds
 * the target's own index runs the masked loop; every other slice runs an
 * unrolled loop with no compare and no select (the term order, and so the
 * result, is the same). With eps^2 a normal number the reciprocal square
 * root skips the library's special-case handling (fg_rsqrt_normal: the
 * same bits in float, a third-order Newton step from the hardware estimate
 * in double); an unsoftened run keeps the library's rsqrtf / rsqrt. With
 * two targets per thread (the "x2" kernels) each shared-memory source read
 * serves two targets, with four ("x4", float only: the double build needs
 * 156-168 registers) four.
 *
 * What bounds the float kernels on an H200 (docs/performance/nbody.md): the
 * mask-free loop issues 13.4 instructions an interaction with x4 (3 FADD,
 * 6 FFMA, 3 FMUL, one MUFU.RSQ, a quarter LDS.128, loop overhead), and an
 * FP32 stream with one MUFU.RSQ per 12-13 FP32 instructions issues at 85-89%
 * of the 128 lanes an SM has per clock (the MUFU probe benchmark), so x4's
 * 7.6 interactions per SM and clock are 97% of that mix's ceiling.
 *
 * fg_nbody_untiled: the same sum with every source read from global memory
 * (through the read-only cache), for the tiled kernel's benchmark.
 *
 * Precision: float and double builds of every kernel (templates, "_f32" and
 * "_f64" entry points). No fast math: rsqrtf (2 ulp) and rsqrt (1 ulp) are
 * the reciprocal square roots of the CUDA math library, denormals are kept;
 * FMA contraction is allowed (it only lowers the rounding error bound
 * k u sum_j |a_ij| the tests use, core/nbody.ErrorBoundK). Flop count by
 * convention: 20 per interaction (float), 30 (double, the rsqrt's Newton
 * steps). */

#define FG_NB_BLOCK 256

struct __align__(16) fg_nb_f4 { float x, y, z, w; };
struct __align__(32) fg_nb_d4 { double x, y, z, w; };

template <typename R> struct fg_nb_vec;
template <> struct fg_nb_vec<float> { typedef fg_nb_f4 T; };
template <> struct fg_nb_vec<double> { typedef fg_nb_d4 T; };

static __device__ __forceinline__ float fg_nb_rsqrt(float x) { return rsqrtf(x); }
static __device__ __forceinline__ double fg_nb_rsqrt(double x) { return rsqrt(x); }
static __device__ __forceinline__ float fg_nb_fma(float a, float b, float c) { return fmaf(a, b, c); }
static __device__ __forceinline__ double fg_nb_fma(double a, double b, double c) { return fma(a, b, c); }

/* Reciprocal square roots for a normal, finite argument (the tiled kernel's
 * path when eps^2 is a normal number, so that every r^2 = |dx|^2 + eps^2 is):
 * fg_rsqrt_normal of fastmath.cuh (prepended to this file), the hardware
 * estimate with one third-order correction in double (~1.5 ulp, 5 double
 * operations against the library rsqrt's ~13) and rsqrtf's own bits in float.
 * Not for r^2 = +inf (coordinates beyond ~1e154), where the library returns 0
 * and this NaN. */
template <typename R> static __device__ __forceinline__ R fg_nb_min_normal();
template <> __device__ __forceinline__ float fg_nb_min_normal<float>() { return 0x1p-126f; }
template <> __device__ __forceinline__ double fg_nb_min_normal<double>() { return 0x1p-1022; }

/* One interaction: source s on target (xi, yi, zi); the masked form (for
 * the untiled kernel and fg_nbody_tiled1_legacy, which the benchmark sets
 * against the split loop). */
template <typename R, bool POT>
static __device__ __forceinline__ void fg_nb_term(R xi, R yi, R zi, const typename fg_nb_vec<R>::T& s, bool self,
                                                  R eps2, R& ax, R& ay, R& az, R& phi) {
    const R dx = s.x - xi, dy = s.y - yi, dz = s.z - zi;
    R r2 = dx * dx + dy * dy + dz * dz + eps2;
    const R m = self ? R(0) : s.w;
    r2 = self ? R(1) : r2;
    const R inv = fg_nb_rsqrt(r2);
    const R f = m * inv * inv * inv;
    ax += f * dx;
    ay += f * dy;
    az += f * dz;
    if (POT) phi -= m * inv;
}

/* One interaction in the tiled kernel: r^2 = ((eps^2 + dx^2) + dy^2) + dz^2
 * as three FMAs, inv = r^-1/2 (FAST: fg_rsqrt_normal), m inv^3 as
 * (m inv)(inv inv), three FMA accumulations. MASK selects mass 0 and r^2 = 1
 * for the target's own index (only the one slice that holds it pays for the
 * compare and the selects): the term is then exactly +0. */
template <typename R, bool POT, bool FAST, bool MASK>
static __device__ __forceinline__ void fg_nb_term2(R xi, R yi, R zi, const typename fg_nb_vec<R>::T& s, bool self,
                                                   R eps2, R& ax, R& ay, R& az, R& phi) {
    const R dx = s.x - xi, dy = s.y - yi, dz = s.z - zi;
    R r2 = fg_nb_fma(dz, dz, fg_nb_fma(dy, dy, fg_nb_fma(dx, dx, eps2)));
    R m = s.w;
    if (MASK) {
        m = self ? R(0) : m;
        r2 = self ? R(1) : r2;
    }
    const R inv = FAST ? fg_rsqrt_normal(r2) : fg_nb_rsqrt(r2);
    const R minv = m * inv;
    const R f = minv * (inv * inv);
    ax = fg_nb_fma(f, dx, ax);
    ay = fg_nb_fma(f, dy, ay);
    az = fg_nb_fma(f, dz, az);
    if (POT) phi -= minv;
}


/* The tiled kernel, NT targets per thread (targets first + t T + tx, t < NT:
 * each source read from shared memory serves NT targets). Source slices are
 * T-aligned and so are the block's targets, so the slice [j0, j0 + T) holds
 * target t's own index exactly when j0 == first + t T: that slice runs the
 * masked loop, every other full slice the mask-free unrolled one. The order
 * of the terms (j ascending within a slice, slices in order, then the P
 * partial sums in order) is the same in both, so the result does not depend
 * on which loop ran. */
template <typename R, int P, int NT, bool POT, bool FAST>
static __device__ __forceinline__ void fg_nb_tiled_nt(const typename fg_nb_vec<R>::T* __restrict__ body,
                                                      typename fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2,
                                                      typename fg_nb_vec<R>::T* tile) {
    typedef typename fg_nb_vec<R>::T V;
    constexpr int T = FG_NB_BLOCK / P; /* blockDim = (T, P) */
    constexpr int FG_NB_UNROLL = 32;   /* interactions per unrolled step: 16 sources x 2 targets, 8 x 4 */
    static_assert(T >= 32, "a warp must read one source at a time");
    const int tx = threadIdx.x, q = threadIdx.y;
    const int first = blockIdx.x * (NT * T);
    int ti[NT];
    R px[NT], py[NT], pz[NT], ax[NT], ay[NT], az[NT], phi[NT];
#pragma unroll
    for (int t = 0; t < NT; t++) {
        ti[t] = first + t * T + tx;
        /* Targets past n compute on body n-1 and write nothing. */
        const V me = body[ti[t] < n ? ti[t] : n - 1];
        px[t] = me.x;
        py[t] = me.y;
        pz[t] = me.z;
        ax[t] = ay[t] = az[t] = phi[t] = 0;
    }
    for (int base = 0; base < n; base += FG_NB_BLOCK) {
        const int j = base + q * T + tx;
        if (j < n) {
            tile[q * T + tx] = body[j];
        }
        __syncthreads();
        const int j0 = base + q * T;
        const int cnt = min(T, n - j0);
        const V* slice = tile + q * T;
        const bool own = j0 >= first && j0 < first + NT * T; /* uniform over the warp */
        if (cnt == T && !own) {
#pragma unroll(FG_NB_UNROLL / NT) /* a constant expression: nvcc does not expand a macro here */
            for (int k = 0; k < T; k++) {
                const V s = slice[k];
#pragma unroll
                for (int t = 0; t < NT; t++) {
                    fg_nb_term2<R, POT, FAST, false>(px[t], py[t], pz[t], s, false, eps2, ax[t], ay[t], az[t], phi[t]);
                }
            }
        } else {
            for (int k = 0; k < cnt; k++) {
                const V s = slice[k];
#pragma unroll
                for (int t = 0; t < NT; t++) {
                    fg_nb_term2<R, POT, FAST, true>(px[t], py[t], pz[t], s, j0 + k == ti[t], eps2, ax[t], ay[t], az[t], phi[t]);
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int t = 0; t < NT; t++) {
        if (P > 1) {
            /* Fixed-order combination of the P partial sums of target t. */
            if (t > 0) {
                __syncthreads();
            }
            V* part = tile;
            V mine;
            mine.x = ax[t];
            mine.y = ay[t];
            mine.z = az[t];
            mine.w = phi[t];
            part[q * T + tx] = mine;
            __syncthreads();
            if (q == 0) {
#pragma unroll
                for (int r = 1; r < P; r++) {
                    const V o = part[r * T + tx];
                    ax[t] += o.x;
                    ay[t] += o.y;
                    az[t] += o.z;
                    phi[t] += o.w;
                }
            }
        }
        if (q == 0 && ti[t] < n) {
            V out;
            out.x = ax[t];
            out.y = ay[t];
            out.z = az[t];
            out.w = phi[t];
            acc[ti[t]] = out;
        }
    }
}

/* MODE 0: the production kernel (FAST rsqrt when eps^2 is normal, the
 * library's otherwise: an unsoftened run keeps rsqrt's 0 and denormal
 * handling); MODE 1: always the library's (benchmark comparison). */
template <typename R, int P, int NT, bool POT, int MODE>
static __device__ __forceinline__ void fg_nb_tiled2(const typename fg_nb_vec<R>::T* __restrict__ body,
                                                    typename fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) {
    __shared__ typename fg_nb_vec<R>::T tile[FG_NB_BLOCK];
    if (MODE == 0 && eps2 >= fg_nb_min_normal<R>()) {
        fg_nb_tiled_nt<R, P, NT, POT, true>(body, acc, n, eps2, tile);
    } else {
        fg_nb_tiled_nt<R, P, NT, POT, false>(body, acc, n, eps2, tile);
    }
}

/* The tiled kernel without the split loop (every term masked, library
 * rsqrt): fg_nbody_tiled1_legacy_<prec>, for the benchmark only. */
template <typename R, int P, bool POT>
static __device__ __forceinline__ void fg_nb_tiled(const typename fg_nb_vec<R>::T* __restrict__ body,
                                                   typename fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) {
    typedef typename fg_nb_vec<R>::T V;
    constexpr int T = FG_NB_BLOCK / P; /* targets per block; blockDim = (T, P) */
    static_assert(T >= 32, "a warp must read one source at a time");
    __shared__ V tile[FG_NB_BLOCK];
    const int tx = threadIdx.x, q = threadIdx.y;
    const int i = blockIdx.x * T + tx;
    /* Targets past n (the last block) compute on body n-1 and write nothing. */
    const V me = body[i < n ? i : n - 1];
    R ax = 0, ay = 0, az = 0, phi = 0;
    for (int base = 0; base < n; base += FG_NB_BLOCK) {
        const int j = base + q * T + tx;
        if (j < n) {
            tile[q * T + tx] = body[j];
        }
        __syncthreads();
        const int j0 = base + q * T; /* first source of this thread's slice */
        const int cnt = min(T, n - j0);
        const V* slice = tile + q * T;
        if (cnt == T) {
#pragma unroll 8
            for (int k = 0; k < T; k++) {
                fg_nb_term<R, POT>(me.x, me.y, me.z, slice[k], j0 + k == i, eps2, ax, ay, az, phi);
            }
        } else {
            for (int k = 0; k < cnt; k++) {
                fg_nb_term<R, POT>(me.x, me.y, me.z, slice[k], j0 + k == i, eps2, ax, ay, az, phi);
            }
        }
        __syncthreads();
    }
    if (q == 0 && i < n) {
        V out;
        out.x = ax;
        out.y = ay;
        out.z = az;
        out.w = phi;
        acc[i] = out;
    }
}

template <typename R, bool POT>
static __device__ __forceinline__ void fg_nb_untiled(const typename fg_nb_vec<R>::T* __restrict__ body,
                                                     typename fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) {
    typedef typename fg_nb_vec<R>::T V;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const V me = body[i];
    R ax = 0, ay = 0, az = 0, phi = 0;
#pragma unroll 4
    for (int j = 0; j < n; j++) {
        fg_nb_term<R, POT>(me.x, me.y, me.z, body[j], j == i, eps2, ax, ay, az, phi);
    }
    V out;
    out.x = ax;
    out.y = ay;
    out.z = az;
    out.w = phi;
    acc[i] = out;
}

/* Leapfrog: v += h a, then x += dt v (the first half-kick and the drift,
 * fused); fg_nbody_kick is the second half-kick. Masses (w) are untouched. */
template <typename R>
static __device__ __forceinline__ void fg_nb_kick_drift(typename fg_nb_vec<R>::T* __restrict__ body,
                                                        typename fg_nb_vec<R>::T* __restrict__ vel,
                                                        const typename fg_nb_vec<R>::T* __restrict__ acc, int n,
                                                        R h, R dt) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    typename fg_nb_vec<R>::T v = vel[i], b = body[i];
    const typename fg_nb_vec<R>::T a = acc[i];
    v.x += h * a.x;
    v.y += h * a.y;
    v.z += h * a.z;
    b.x += dt * v.x;
    b.y += dt * v.y;
    b.z += dt * v.z;
    vel[i] = v;
    body[i] = b;
}

template <typename R>
static __device__ __forceinline__ void fg_nb_kick(typename fg_nb_vec<R>::T* __restrict__ vel,
                                                  const typename fg_nb_vec<R>::T* __restrict__ acc, int n, R h) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    typename fg_nb_vec<R>::T v = vel[i];
    const typename fg_nb_vec<R>::T a = acc[i];
    v.x += h * a.x;
    v.y += h * a.y;
    v.z += h * a.z;
    vel[i] = v;
}

/* Entry points: fg_nbody_tiled<P>x2_<prec>[_pot] (two targets per thread:
 * the production kernels in double and below 2^15 bodies in float),
 * fg_nbody_tiled<P>x4_f32[_pot] (four targets per thread: the production
 * float kernels from 2^15 bodies), fg_nbody_tiled<P>_<prec> (one target per thread,
 * no potentials: benchmark only; NVRTC 13.0 spilled its float64 potential
 * variant, so there is none), fg_nbody_untiled_<prec>[_pot], fg_nbody_kick_drift_<prec>,
 * fg_nbody_kick_<prec>; for the benchmark fg_nbody_tiled1_lib_<prec> (the
 * split loop with the library rsqrt) and fg_nbody_tiled1_legacy_<prec> (the
 * kernel without the split loop). Launch the tiled ones with blockDim =
 * (256/P, P) and gridDim.x = ceil(n / (NT 256/P)), NT = 1, 2 or 4; the others
 * with any 1-D block. fg_nbody_rsqrt_check_<prec> evaluates the library and
 * the fast reciprocal square roots (and, in double, the raw estimate) on an
 * array, for the tests. */
#define FG_NB_TILED(P, R, SUF)                                                                        \
    extern "C" __global__ void __launch_bounds__(FG_NB_BLOCK) fg_nbody_tiled##P##_##SUF(              \
        const fg_nb_vec<R>::T* __restrict__ body, fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) { \
        fg_nb_tiled2<R, P, 1, false, 0>(body, acc, n, eps2);                                          \
    }                                                                                                 \
    extern "C" __global__ void __launch_bounds__(FG_NB_BLOCK) fg_nbody_tiled##P##x2_##SUF(            \
        const fg_nb_vec<R>::T* __restrict__ body, fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) { \
        fg_nb_tiled2<R, P, 2, false, 0>(body, acc, n, eps2);                                          \
    }                                                                                                 \
    extern "C" __global__ void __launch_bounds__(FG_NB_BLOCK) fg_nbody_tiled##P##x2_##SUF##_pot(      \
        const fg_nb_vec<R>::T* __restrict__ body, fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) { \
        fg_nb_tiled2<R, P, 2, true, 0>(body, acc, n, eps2);                                           \
    }

/* Four targets per thread: float only (the double build needs 156-168
 * registers, one block per SM). */
#define FG_NB_TILED4(P)                                                                      \
    extern "C" __global__ void __launch_bounds__(FG_NB_BLOCK) fg_nbody_tiled##P##x4_f32(     \
        const fg_nb_f4* __restrict__ body, fg_nb_f4* __restrict__ acc, int n, float eps2) {  \
        fg_nb_tiled2<float, P, 4, false, 0>(body, acc, n, eps2);                             \
    }                                                                                        \
    extern "C" __global__ void __launch_bounds__(FG_NB_BLOCK) fg_nbody_tiled##P##x4_f32_pot( \
        const fg_nb_f4* __restrict__ body, fg_nb_f4* __restrict__ acc, int n, float eps2) {  \
        fg_nb_tiled2<float, P, 4, true, 0>(body, acc, n, eps2);                              \
    }

#define FG_NB_PREC(R, SUF)                                                                                \
    FG_NB_TILED(1, R, SUF)                                                                                \
    FG_NB_TILED(2, R, SUF)                                                                                \
    FG_NB_TILED(4, R, SUF)                                                                                \
    FG_NB_TILED(8, R, SUF)                                                                                \
    extern "C" __global__ void __launch_bounds__(FG_NB_BLOCK) fg_nbody_tiled1_lib_##SUF(                  \
        const fg_nb_vec<R>::T* __restrict__ body, fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) {     \
        fg_nb_tiled2<R, 1, 1, false, 1>(body, acc, n, eps2);                                              \
    }                                                                                                     \
    extern "C" __global__ void __launch_bounds__(FG_NB_BLOCK) fg_nbody_tiled1_legacy_##SUF(               \
        const fg_nb_vec<R>::T* __restrict__ body, fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) {     \
        fg_nb_tiled<R, 1, false>(body, acc, n, eps2);                                                     \
    }                                                                                                     \
    extern "C" __global__ void fg_nbody_untiled_##SUF(const fg_nb_vec<R>::T* __restrict__ body,           \
                                                      fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) { \
        fg_nb_untiled<R, false>(body, acc, n, eps2);                                                      \
    }                                                                                                     \
    extern "C" __global__ void fg_nbody_untiled_##SUF##_pot(const fg_nb_vec<R>::T* __restrict__ body,     \
                                                            fg_nb_vec<R>::T* __restrict__ acc, int n,     \
                                                            R eps2) {                                     \
        fg_nb_untiled<R, true>(body, acc, n, eps2);                                                       \
    }                                                                                                     \
    extern "C" __global__ void fg_nbody_kick_drift_##SUF(fg_nb_vec<R>::T* __restrict__ body,              \
                                                         fg_nb_vec<R>::T* __restrict__ vel,               \
                                                         const fg_nb_vec<R>::T* __restrict__ acc, int n,  \
                                                         R h, R dt) {                                     \
        fg_nb_kick_drift<R>(body, vel, acc, n, h, dt);                                                    \
    }                                                                                                     \
    extern "C" __global__ void fg_nbody_kick_##SUF(fg_nb_vec<R>::T* __restrict__ vel,                     \
                                                   const fg_nb_vec<R>::T* __restrict__ acc, int n, R h) { \
        fg_nb_kick<R>(vel, acc, n, h);                                                                    \
    }

extern "C" __global__ void fg_nbody_rsqrt_check_f32(const float* __restrict__ x, float* __restrict__ lib,
                                                    float* __restrict__ fast, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        lib[i] = fg_nb_rsqrt(x[i]);
        fast[i] = fg_rsqrt_normal(x[i]);
    }
}

extern "C" __global__ void fg_nbody_rsqrt_check_f64(const double* __restrict__ x, double* __restrict__ lib,
                                                    double* __restrict__ fast, double* __restrict__ est, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        lib[i] = fg_nb_rsqrt(x[i]);
        fast[i] = fg_rsqrt_normal(x[i]);
        est[i] = fg_rsqrt_estimate(x[i]);
    }
}

/* fastmath.cuh's reciprocal (used by the radiation kernels) beside the
 * library's correctly rounded 1/x, for TestGPURcpNormal: this module is the
 * one with the check kernels. */
extern "C" __global__ void fg_nbody_rcp_check_f32(const float* __restrict__ x, float* __restrict__ lib,
                                                  float* __restrict__ fast, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        lib[i] = 1.0f / x[i];
        fast[i] = fg_rcp_normal(x[i]);
    }
}

extern "C" __global__ void fg_nbody_rcp_check_f64(const double* __restrict__ x, double* __restrict__ lib,
                                                  double* __restrict__ fast, double* __restrict__ est, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        lib[i] = 1.0 / x[i];
        fast[i] = fg_rcp_normal(x[i]);
        est[i] = fg_rcp_estimate(x[i]);
    }
}

FG_NB_PREC(float, f32)
FG_NB_PREC(double, f64)
FG_NB_TILED4(1)
FG_NB_TILED4(2)
FG_NB_TILED4(4)
FG_NB_TILED4(8)
