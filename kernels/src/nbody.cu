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
 * (core/nbody) masks the same way.
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

/* One interaction: source s on target (xi, yi, zi). */
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
    if (P > 1) {
        /* Fixed-order combination of the P partial sums of each target. */
        V* part = tile;
        V mine;
        mine.x = ax;
        mine.y = ay;
        mine.z = az;
        mine.w = phi;
        part[q * T + tx] = mine;
        __syncthreads();
        if (q == 0) {
#pragma unroll
            for (int r = 1; r < P; r++) {
                const V o = part[r * T + tx];
                ax += o.x;
                ay += o.y;
                az += o.z;
                phi += o.w;
            }
        }
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

/* Entry points: fg_nbody_tiled<P>_<prec>[_pot], fg_nbody_untiled_<prec>[_pot],
 * fg_nbody_kick_drift_<prec>, fg_nbody_kick_<prec>. Launch the tiled ones with
 * blockDim = (256/P, P) and gridDim.x = ceil(n / (256/P)); the others with any
 * 1-D block. */
#define FG_NB_TILED(P, R, SUF)                                                                          \
    extern "C" __global__ void __launch_bounds__(FG_NB_BLOCK) fg_nbody_tiled##P##_##SUF(                \
        const fg_nb_vec<R>::T* __restrict__ body, fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) {   \
        fg_nb_tiled<R, P, false>(body, acc, n, eps2);                                                   \
    }                                                                                                   \
    extern "C" __global__ void __launch_bounds__(FG_NB_BLOCK) fg_nbody_tiled##P##_##SUF##_pot(          \
        const fg_nb_vec<R>::T* __restrict__ body, fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) {   \
        fg_nb_tiled<R, P, true>(body, acc, n, eps2);                                                    \
    }

#define FG_NB_PREC(R, SUF)                                                                              \
    FG_NB_TILED(1, R, SUF)                                                                              \
    FG_NB_TILED(2, R, SUF)                                                                              \
    FG_NB_TILED(4, R, SUF)                                                                              \
    FG_NB_TILED(8, R, SUF)                                                                              \
    extern "C" __global__ void fg_nbody_untiled_##SUF(const fg_nb_vec<R>::T* __restrict__ body,         \
                                                      fg_nb_vec<R>::T* __restrict__ acc, int n, R eps2) { \
        fg_nb_untiled<R, false>(body, acc, n, eps2);                                                    \
    }                                                                                                   \
    extern "C" __global__ void fg_nbody_untiled_##SUF##_pot(const fg_nb_vec<R>::T* __restrict__ body,   \
                                                           fg_nb_vec<R>::T* __restrict__ acc, int n,   \
                                                           R eps2) {                                    \
        fg_nb_untiled<R, true>(body, acc, n, eps2);                                                     \
    }                                                                                                   \
    extern "C" __global__ void fg_nbody_kick_drift_##SUF(fg_nb_vec<R>::T* __restrict__ body,            \
                                                         fg_nb_vec<R>::T* __restrict__ vel,             \
                                                         const fg_nb_vec<R>::T* __restrict__ acc, int n, \
                                                         R h, R dt) {                                   \
        fg_nb_kick_drift<R>(body, vel, acc, n, h, dt);                                                  \
    }                                                                                                   \
    extern "C" __global__ void fg_nbody_kick_##SUF(fg_nb_vec<R>::T* __restrict__ vel,                   \
                                                   const fg_nb_vec<R>::T* __restrict__ acc, int n, R h) { \
        fg_nb_kick<R>(vel, acc, n, h);                                                                  \
    }

FG_NB_PREC(float, f32)
FG_NB_PREC(double, f64)
