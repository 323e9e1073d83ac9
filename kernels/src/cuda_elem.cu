
typedef struct {
    long long len;   /* elements */
    int nterms;      /* at most FG_CUDA_MAX_TERMS */
    int pad_;
    double coef[FG_CUDA_MAX_TERMS];
    fg_dptr terms[FG_CUDA_MAX_TERMS];
    fg_dptr out;
} fg_combine_args;

/* out[e] = sum_t coef[t] * terms[t][e] (fg_sum_terms), for e < len; rounded to
 * fg_store once. */
extern "C" __global__ void fg_k_combine(fg_combine_args a) {
    fg_store* out = (fg_store*)a.out;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride)
        out[e] = (fg_store)fg_sum_terms(a.nterms, a.coef, a.terms, e);
}

/* fg_k_widen and fg_k_narrow: len values from in to out. */
typedef struct {
    long long len;
    fg_dptr in, out;
} fg_convert_args;

/* Host transfers of a float32 Program (buffer Upload/Download): out[e] =
 * in[e] for e < len, from fg_store to double (widen) or rounded from
 * double to fg_store (narrow, round to nearest). A float64 Program copies
 * directly and never launches them. */
extern "C" __global__ void fg_k_widen(fg_convert_args a) {
    const fg_store* x = (const fg_store*)a.in;
    double* out = (double*)a.out;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride) out[e] = (double)x[e];
}

extern "C" __global__ void fg_k_narrow(fg_convert_args a) {
    const double* x = (const double*)a.in;
    fg_store* out = (fg_store*)a.out;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride) out[e] = (fg_store)x[e];
}

typedef struct {
    fg_grid grid;
    fg_dptr phi;
    fg_dptr vel;   /* 0: none */
} fg_constrain_args;

/* Unit-vector constraint: normalise phi and project vel (may be 0) onto the
 * tangent space, at sites that are not held. */
extern "C" __global__ void fg_k_constrain(fg_constrain_args a) {
    const fg_grid& G = a.grid;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= G.n) return;
    const long long j = idx / G.nx, i = idx - j * G.nx;
    if (!G.periodic && (i < 2 || i >= G.nx - 2 || j < 2 || j >= G.ny - 2)) return;
    fg_store* phi = (fg_store*)a.phi;
    fg_store* vel = (fg_store*)a.vel;
    double u[FG_NCOMP];
    double nn = 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        u[k] = phi[(long long)k * G.n + idx];
        if (!FG_AUX(k)) nn += u[k] * u[k];
    }
    const double inv = 1.0 / sqrt(nn);
    double vp = 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        if (FG_AUX(k)) continue;
        u[k] *= inv;
        phi[(long long)k * G.n + idx] = (fg_store)u[k];
        if (vel) vp += (double)vel[(long long)k * G.n + idx] * u[k];
    }
    if (vel) {
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++)
            if (!FG_AUX(k)) vel[(long long)k * G.n + idx] = (fg_store)((double)vel[(long long)k * G.n + idx] - vp * u[k]);
    }
}

typedef struct {
    long long len;
    fg_dptr out;
    unsigned long long seed;
} fg_random_args;

/* Program.FillRandom: out[e] = kernels.RandomValue(seed, e) (splitmix64; exact
 * arithmetic, the CPU's bits), rounded to fg_store. */
extern "C" __global__ void fg_k_random(fg_random_args a) {
    fg_store* out = (fg_store*)a.out;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride) {
        unsigned long long z = a.seed + (unsigned long long)(e + 1) * 0x9e3779b97f4a7c15ULL;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        out[e] = (fg_store)((double)(z >> 11) * 0x1p-52 - 1.0);
    }
}

typedef struct {
    fg_grid grid;
    fg_dptr phi;
    fg_dptr x;   /* projected in place */
} fg_project_args;

/* Program.Project: x less its part along phi/|phi| (phi read only), at
 * sites that are not held: the tangent projection of a unit-vector field. */
extern "C" __global__ void fg_k_project(fg_project_args a) {
    const fg_grid& G = a.grid;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= G.n) return;
    const long long j = idx / G.nx, i = idx - j * G.nx;
    if (!G.periodic && (i < 2 || i >= G.nx - 2 || j < 2 || j >= G.ny - 2)) return;
    const fg_store* phi = (const fg_store*)a.phi;
    fg_store* x = (fg_store*)a.x;
    double nn = 0.0, xp = 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        if (FG_AUX(k)) continue;
        const double u = phi[(long long)k * G.n + idx];
        nn += u * u;
        xp += (double)x[(long long)k * G.n + idx] * u;
    }
    const double c = xp / nn;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++)
        if (!FG_AUX(k))
            x[(long long)k * G.n + idx] = (fg_store)((double)x[(long long)k * G.n + idx] - c * (double)phi[(long long)k * G.n + idx]);
}

typedef struct {
    long long len;
    fg_dptr x;
    fg_dptr out;   /* one unsigned long long */
} fg_nonfinite_args;

/* The smallest index e < len whose value is not finite, into *out (an
 * unsigned long long preset to all ones). atomicMin is order independent. */
extern "C" __global__ void fg_k_nonfinite(fg_nonfinite_args a) {
    const fg_store* x = (const fg_store*)a.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride) {
        if (!isfinite(x[e])) {
            atomicMin((unsigned long long*)a.out, (unsigned long long)e);
            return;
        }
    }
}
