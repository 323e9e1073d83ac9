/* The CUDA field engine's reductions (see cuda_site.cu for the parts).
 *
 * Reductions are deterministic and independent of the launch configuration:
 *   1. each warp combines its chunk's 32 sites with a fixed shuffle tree
 *      (lane order) and writes one partial per (row, chunk);
 *   2. fg_k_rows: one warp per row combines that row's chunk partials
 *      (lane l takes chunks l, l+32, ... in order, then the same tree);
 *   3. fg_k_final: one block of exactly FG_FINAL_THREADS combines the rows
 *      (thread t takes rows t, t+256, ... in order, then a fixed
 *      shared-memory tree); in a device flow fg_k_decide does the same.
 * The order is a function of (nx, ny) alone: the bits do not change with
 * block size, grid size or run. Max is NaN as soon as any value is not
 * finite, like the CPU kernels. */

/* fg_chunk_store combines a warp's 32 sites with a fixed tree and writes the
 * chunk's partials (energy, max, power) at slot of part's three planes. */
static __device__ __forceinline__ void fg_chunk_store(fg_dptr part, long long plane, long long slot,
                                                      double e, double m, double pw) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        e += __shfl_down_sync(FG_FULL, e, off);
        m = fg_maxnan(m, __shfl_down_sync(FG_FULL, m, off));
        pw += __shfl_down_sync(FG_FULL, pw, off);
    }
    if ((threadIdx.x & 31) == 0) {
        double* P = (double*)part;
        P[slot] = e;
        P[plane + slot] = m;
        P[2 * plane + slot] = pw;
    }
}

/* Whether the device flow whose control block is ctl (0: no flow) has stopped
 * before this kernel, stage (1..5) of a step: a stop from fg_k_decide, or a
 * non-finite gradient in an earlier stage of this step (a stage never halts
 * on its own flag, so what it writes does not depend on timing). */
static __device__ __forceinline__ bool fg_halted(fg_dptr ctl, int stage) {
    if (!ctl) return false;
    volatile fg_flowctl* c = (volatile fg_flowctl*)ctl;
    const int nf = c->nonfinite;
    if (c->stop != 0) return true;
    if (nf == 0) return false;
    if (stage <= 1) {
        /* A later step (a graph holds two): the step before went non-finite
         * in a stage 2-4, so nothing of this step may run — its stages 2-4
         * would not halt on nf alone (nf < stage is false for nf = 4, and
         * for every nf in fg_k_stages234), and with ping-pong buffers they
         * would write the pair holding the last good state. */
        c->stop = FG_STOP_HALTED;
        return true;
    }
    return nf < stage;
}

typedef struct {
    long long ny, nchunk;
    fg_dptr part;   /* chunk partials: 3 planes (energy, max, power) of ny*nchunk */
    fg_dptr out;    /* row partials: 3 planes of ny */
    fg_dptr ctl;    /* the device flow's fg_flowctl (a step's stage 1), 0 outside one */
} fg_rows_args;

/* Level 2: one warp per row combines the row's chunk partials. */
extern "C" __global__ void fg_k_rows(fg_rows_args a) {
    if (fg_halted(a.ctl, 1)) return;
    const long long j = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (j >= a.ny) return;   /* whole warps: block sizes are multiples of 32 */
    const double* P = (const double*)a.part;
    const long long plane = a.ny * a.nchunk;
    double e = 0.0, m = 0.0, pw = 0.0;
    for (long long c = lane; c < a.nchunk; c += 32) {
        const long long k = j * a.nchunk + c;
        e += P[k];
        m = fg_maxnan(m, P[plane + k]);
        pw += P[2 * plane + k];
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        e += __shfl_down_sync(FG_FULL, e, off);
        m = fg_maxnan(m, __shfl_down_sync(FG_FULL, m, off));
        pw += __shfl_down_sync(FG_FULL, pw, off);
    }
    if (lane == 0) {
        double* R = (double*)a.out;
        R[j] = e;
        R[a.ny + j] = m;
        R[2 * a.ny + j] = pw;
    }
}

/* Level 3: the fixed-tree combine of the row partials (rows, 3 planes of ny) by one
 * block of FG_FINAL_THREADS: thread 0 gets energy, max and power. */
static __device__ __forceinline__ void fg_reduce_rows(long long ny, fg_dptr rows, double* E, double* M, double* PW) {
    __shared__ double se[FG_FINAL_THREADS], sm[FG_FINAL_THREADS], sp[FG_FINAL_THREADS];
    const int t = threadIdx.x;
    if (blockDim.x != FG_FINAL_THREADS) __trap();
    const double* R = (const double*)rows;
    double e = 0.0, m = 0.0, pw = 0.0;
    for (long long j = t; j < ny; j += FG_FINAL_THREADS) {
        e += R[j];
        m = fg_maxnan(m, R[ny + j]);
        pw += R[2 * ny + j];
    }
    se[t] = e;
    sm[t] = m;
    sp[t] = pw;
    __syncthreads();
    for (int s = FG_FINAL_THREADS / 2; s > 0; s >>= 1) {
        if (t < s) {
            se[t] += se[t + s];
            sm[t] = fg_maxnan(sm[t], sm[t + s]);
            sp[t] += sp[t + s];
        }
        __syncthreads();
    }
    *E = se[0];
    *M = sm[0];
    *PW = sp[0];
}

typedef struct {
    long long ny;
    fg_dptr rows;   /* row partials: 3 planes of ny */
    fg_dptr out;    /* 3 doubles: energy, max, power */
} fg_final_args;

extern "C" __global__ void fg_k_final(fg_final_args a) {
    double e, m, pw;
    fg_reduce_rows(a.ny, a.rows, &e, &m, &pw);
    if (threadIdx.x == 0) {
        double* out = (double*)a.out;
        out[0] = e;
        out[1] = m;
        out[2] = pw;
    }
}

/* Program.Dot and MaxAbs, two levels sharing one argument block. */
typedef struct {
    long long len;   /* elements of x and y */
    fg_dptr x, y;    /* fg_store[len]; MaxAbs reads x alone */
    fg_dptr part;    /* one double per FG_DOT_CHUNK elements */
    fg_dptr out;     /* the result: one double */
} fg_dot_args;

/* Level 1: one warp per FG_DOT_CHUNK consecutive elements; lane l folds
 * elements l, l+32, ... of the chunk in order (Dot: x * y summed; MaxAbs:
 * |x|, NaN if any is NaN), the warp combines the lanes with a fixed shuffle
 * tree and writes part[chunk]. Whole warps leave together, so any block size
 * of whole warps gives the same bits. */
template <bool MAXABS>
static __device__ __forceinline__ void fg_chunk_fold(const fg_dot_args& a) {
    const long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    const long long nchunk = (a.len + FG_DOT_CHUNK - 1) / FG_DOT_CHUNK;
    if (w >= nchunk) return;
    const fg_store* x = (const fg_store*)a.x;
    const fg_store* y = (const fg_store*)a.y;
    const long long e1 = min((w + 1) * FG_DOT_CHUNK, a.len);
    double s = 0.0;
    for (long long e = w * FG_DOT_CHUNK + lane; e < e1; e += 32) {
        if (MAXABS) s = fg_maxnan(s, fabs((double)x[e]));
        else s += (double)x[e] * (double)y[e];
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const double o = __shfl_down_sync(FG_FULL, s, off);
        s = MAXABS ? fg_maxnan(s, o) : s + o;
    }
    if (lane == 0) ((double*)a.part)[w] = s;
}

/* Level 2: one block of exactly FG_FINAL_THREADS; thread t folds partials t,
 * t+256, ... in order, then a fixed shared-memory tree; out[0]. */
template <bool MAXABS>
static __device__ __forceinline__ void fg_chunk_final(const fg_dot_args& a) {
    __shared__ double sh[FG_FINAL_THREADS];
    const int t = threadIdx.x;
    if (blockDim.x != FG_FINAL_THREADS) __trap();
    const long long nchunk = (a.len + FG_DOT_CHUNK - 1) / FG_DOT_CHUNK;
    const double* P = (const double*)a.part;
    double s = 0.0;
    for (long long c = t; c < nchunk; c += FG_FINAL_THREADS) s = MAXABS ? fg_maxnan(s, P[c]) : s + P[c];
    sh[t] = s;
    __syncthreads();
    for (int k = FG_FINAL_THREADS / 2; k > 0; k >>= 1) {
        if (t < k) sh[t] = MAXABS ? fg_maxnan(sh[t], sh[t + k]) : sh[t] + sh[t + k];
        __syncthreads();
    }
    if (t == 0) ((double*)a.out)[0] = sh[0];
}

extern "C" __global__ void fg_k_dot(fg_dot_args a) { fg_chunk_fold<false>(a); }
extern "C" __global__ void fg_k_dot_final(fg_dot_args a) { fg_chunk_final<false>(a); }
extern "C" __global__ void fg_k_maxabs(fg_dot_args a) { fg_chunk_fold<true>(a); }
extern "C" __global__ void fg_k_maxabs_final(fg_dot_args a) { fg_chunk_final<true>(a); }


/* The device flow's decision: the reductions' last level of a step's stage 1 and the
 * arrest and stop tests (the planar flow, cuda_flow.cu, and the grid unit's,
 * cuda_site3d.cu, share it). */

/* A flow's decision from its stage-1 reductions (one thread): commit the
 * step decided before (it was taken: nothing stopped the flow since), stop
 * on a non-finite energy or gradient, record the step, stop when converged,
 * else the arrest; the step is then pending until the next decision (or the
 * host at the end of a run) commits it. */
typedef struct {
    long long ny;
    fg_dptr rows;       /* stage 1's row partials: 3 planes of ny */
    fg_dptr ctl;        /* fg_flowctl */
    fg_dptr ring;       /* fg_flowrec[ringcap]: one record per step evaluated */
    long long ringcap;
    double tol;         /* convergence: max|grad| < tol */
    int arrest_test;    /* 0: arrest when v.g > 0, 1: when the energy rose, 2: never (evolve's dynamics) */
    int pad_;
} fg_decide_args;

static __device__ __forceinline__ void fg_decide_apply(const fg_decide_args& a, double E, double M, double P) {
    volatile fg_flowctl* c = (volatile fg_flowctl*)a.ctl;
    if (c->pending) {
        c->step = c->step + 1;
        c->taken = c->taken + 1;
        if (c->arrest) c->resets = c->resets + 1;
        c->prev_energy = c->energy1;
        c->pending = 0;
    }
    if (M != M || E != E || isinf(E)) {
        c->stop = FG_STOP_NONFINITE;
        return;
    }
    const long long r = c->nrec;
    fg_flowrec* ring = (fg_flowrec*)a.ring;
    fg_flowrec rec;
    rec.step = c->step;
    rec.resets = c->resets;
    rec.energy = E;
    rec.max_grad = M;
    ring[r % a.ringcap] = rec;
    c->nrec = r + 1;
    c->energy1 = E;
    if (M < a.tol) {
        c->stop = FG_STOP_CONVERGED;
        return;
    }
    const int arrest = a.arrest_test == 2 ? 0 : a.arrest_test == 1 ? (E > c->prev_energy)
                                                                   : (P > 0.0);
    c->arrest = arrest;
    c->kv = arrest ? 0.0 : 1.0;
    c->pending = 1;
}

/* The lowest RK4 stage (2..4) whose gradient went non-finite, kept in the control block. */
static __device__ __forceinline__ void fg_nonfinite_min(fg_dptr ctl, int nf) {
    if (!nf || !ctl) return;
    int* p = &((fg_flowctl*)ctl)->nonfinite;
    int cur = atomicAdd(p, 0);
    while (cur == 0 || cur > nf) {
        const int prev = atomicCAS(p, cur, nf);
        if (prev == cur) break;
        cur = prev;
    }
}

/* The last reduction level of a flow's stage 1 (fg_k_final's order exactly),
 * then the decisions the host loop made: stop on a non-finite energy or
 * gradient, record the step, stop when converged, else the arrest. */
extern "C" __global__ void fg_k_decide(fg_decide_args a) {
    if (fg_halted(a.ctl, 1)) return;   /* uniform over the block */
    double e, m, pw;
    fg_reduce_rows(a.ny, a.rows, &e, &m, &pw);
    if (threadIdx.x == 0) fg_decide_apply(a, e, m, pw);
}

/* sum_t coef[t] * terms[t][e] over fg_store terms, left to right in double:
 * fg_k_combine's value and CombineDots', one expression per term count so
 * that the compiler's contraction into fused multiply-adds is the same in
 * both. */
static __device__ __forceinline__ double fg_sum_terms(int nterms, const double* coef, const fg_dptr* terms, long long e) {
#define FG_T(t) ((double)((const fg_store*)terms[t])[e])
    switch (nterms) {
    case 0: return 0.0;
    case 1: return coef[0] * FG_T(0);
    case 2: return coef[0] * FG_T(0) + coef[1] * FG_T(1);
    case 3: return coef[0] * FG_T(0) + coef[1] * FG_T(1) + coef[2] * FG_T(2);
    default: {
        double v = 0.0;
        for (int t = 0; t < nterms; t++) v += coef[t] * FG_T(t);
        return v;
    }
    }
#undef FG_T
}

/* Program.CombineDots: fg_k_combine's sum (rounded to fg_store once), then
 * fg_k_project's projection when phi is set and the site is not held, the
 * same bits in out as the two kernels; with the products out.out and out.y
 * (y 0: not formed). The planar kernel (cuda_ops.cu) and the grid unit's
 * (cuda_site3d.cu) differ only in their grids' held test. One warp per FG_DOT_CHUNK consecutive sites; lane l takes sites l,
 * l+32, ... of the chunk with all their components and folds them in order,
 * the warp combines the lanes with a fixed shuffle tree into part[2 chunk]
 * and part[2 chunk + 1]: any block size of whole warps gives the same bits. */
typedef struct {
    long long sites;   /* sites of the grid; the buffers hold FG_NCOMP columns of them */
    int nterms;        /* at most FG_CUDA_MAX_TERMS */
    int pad_;
    double coef[FG_CUDA_MAX_TERMS];
    fg_dptr terms[FG_CUDA_MAX_TERMS];
    fg_dptr phi;       /* 0: no projection */
    fg_dptr out;
    fg_dptr y;         /* 0: out.y is not formed */
    fg_dptr part;      /* two doubles per chunk */
    fg_dptr res;       /* out.out, out.y */
} fg_cdots_args;

template <typename HELD>
static __device__ __forceinline__ void fg_combine_dots(const fg_cdots_args& a, HELD held) {
    const long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    const long long n = a.sites;
    const long long nchunk = (n + FG_DOT_CHUNK - 1) / FG_DOT_CHUNK;
    if (w >= nchunk) return;
    const fg_store* phi = (const fg_store*)a.phi;
    const fg_store* y = (const fg_store*)a.y;
    fg_store* out = (fg_store*)a.out;
    const long long e1 = min((w + 1) * FG_DOT_CHUNK, n);
    double oo = 0.0, oy = 0.0;
    for (long long idx = w * FG_DOT_CHUNK + lane; idx < e1; idx += 32) {
        double r[FG_NCOMP];
#pragma unroll
        for (int c = 0; c < FG_NCOMP; c++) r[c] = (double)(fg_store)fg_sum_terms(a.nterms, a.coef, a.terms, c * n + idx);
        if (phi && !held(idx)) {
            double nn = 0.0, xp = 0.0;
#pragma unroll
            for (int c = 0; c < FG_NCOMP; c++) {
                if (FG_AUX(c)) continue;
                const double u = phi[c * n + idx];
                nn += u * u;
                xp += r[c] * u;
            }
            const double cc = xp / nn;
#pragma unroll
            for (int c = 0; c < FG_NCOMP; c++)
                if (!FG_AUX(c)) r[c] = (double)(fg_store)(r[c] - cc * (double)phi[c * n + idx]);
        }
#pragma unroll
        for (int c = 0; c < FG_NCOMP; c++) {
            out[c * n + idx] = (fg_store)r[c];
            oo += r[c] * r[c];
            if (y) oy += r[c] * (double)y[c * n + idx];
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        oo += __shfl_down_sync(FG_FULL, oo, off);
        oy += __shfl_down_sync(FG_FULL, oy, off);
    }
    if (lane == 0) {
        ((double*)a.part)[2 * w] = oo;
        ((double*)a.part)[2 * w + 1] = oy;
    }
}

/* Level 2: one block of exactly FG_FINAL_THREADS; thread t folds the chunks
 * t, t+256, ... in order, then a fixed shared-memory tree; res[0], res[1]. */
extern "C" __global__ void fg_k_combine_dots_final(fg_cdots_args a) {
    __shared__ double sh[2][FG_FINAL_THREADS];
    const int t = threadIdx.x;
    if (blockDim.x != FG_FINAL_THREADS) __trap();
    const long long nchunk = (a.sites + FG_DOT_CHUNK - 1) / FG_DOT_CHUNK;
    const double* P = (const double*)a.part;
    double oo = 0.0, oy = 0.0;
    for (long long c = t; c < nchunk; c += FG_FINAL_THREADS) {
        oo += P[2 * c];
        oy += P[2 * c + 1];
    }
    sh[0][t] = oo;
    sh[1][t] = oy;
    __syncthreads();
    for (int k = FG_FINAL_THREADS / 2; k > 0; k >>= 1) {
        if (t < k) {
            sh[0][t] += sh[0][t + k];
            sh[1][t] += sh[1][t + k];
        }
        __syncthreads();
    }
    if (t == 0) {
        ((double*)a.res)[0] = sh[0][0];
        ((double*)a.res)[1] = sh[1][0];
    }
}

/* Program.Rate (kernels.RateKind): the rate of a first-order evolution from
 * the field n and its gradient g at one site, cpu_kernels.c.tmpl's fg_k_rate
 * expression for expression; fg_k_rate (planar, cuda_ops.cu) and the grid unit's kernel (cuda_site3d.cu)
 * launch it with their held test. */
typedef struct {
    long long sites;   /* sites of the grid; the buffers hold FG_NCOMP columns of them */
    int kind;          /* 0: Landau-Lifshitz, 1: Schrodinger */
    int pad_;
    double c1, c2;
    fg_dptr phi, grad, out;
} fg_rate_core;

template <typename HELD>
static __device__ __forceinline__ void fg_rate(const fg_rate_core& a, HELD held) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long n = a.sites;
    if (idx >= n) return;
    const fg_store* phi = (const fg_store*)a.phi;
    const fg_store* g = (const fg_store*)a.grad;
    fg_store* out = (fg_store*)a.out;
    int ix[3] = {0, 0, 0}, m = 0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++)
        if (!FG_AUX(k) && m < 3) ix[m++] = k;
    double r[FG_NCOMP];
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) r[k] = 0.0;
    if (!held(idx)) {
        if (a.kind == 0 && m == 3) {
            const double n0 = phi[ix[0] * n + idx], n1 = phi[ix[1] * n + idx], n2 = phi[ix[2] * n + idx];
            const double g0 = g[ix[0] * n + idx], g1 = g[ix[1] * n + idx], g2 = g[ix[2] * n + idx];
            const double a0 = n1 * g2 - n2 * g1, a1 = n2 * g0 - n0 * g2, a2 = n0 * g1 - n1 * g0;
            const double b0 = n1 * a2 - n2 * a1, b1 = n2 * a0 - n0 * a2, b2 = n0 * a1 - n1 * a0;
            r[ix[0]] = a.c1 * a0 + a.c2 * b0;
            r[ix[1]] = a.c1 * a1 + a.c2 * b1;
            r[ix[2]] = a.c1 * a2 + a.c2 * b2;
        } else if (a.kind == 1) {
#pragma unroll
            for (int k = 0; k + 1 < FG_NCOMP; k += 2) {
                if (FG_AUX(k) || FG_AUX(k + 1)) continue;
                const double gu = g[k * n + idx], gv = g[(k + 1) * n + idx];
                r[k] = a.c2 * gu + a.c1 * gv;
                r[k + 1] = a.c2 * gv - a.c1 * gu;
            }
        }
    }
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) out[k * n + idx] = (fg_store)r[k];
}

/* core.CentripetalProgram.AddCentripetal: out += (|w|^2/|p|^2) p at one site
 * that is not held, over the components that are not auxiliary (0 where
 * w = 0): the centripetal term of a unit-vector field's acceleration, the
 * expressions of core's host loop (centripetalStage). fg_k_centripetal
 * (planar, cuda_ops.cu) and the grid unit's kernel (cuda_site3d.cu) launch
 * it with their held test. */
typedef struct {
    long long sites;   /* sites of the grid; the buffers hold FG_NCOMP columns of them */
    fg_dptr p, w, out;
} fg_centripetal_core;

template <typename HELD>
static __device__ __forceinline__ void fg_centripetal(const fg_centripetal_core& a, HELD held) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long n = a.sites;
    if (idx >= n || held(idx)) return;
    const fg_store* p = (const fg_store*)a.p;
    const fg_store* w = (const fg_store*)a.w;
    fg_store* out = (fg_store*)a.out;
    double ww = 0.0, pp = 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        if (FG_AUX(k)) continue;
        const double wk = w[k * n + idx], pk = p[k * n + idx];
        ww += wk * wk;
        pp += pk * pk;
    }
    const double f = ww != 0.0 ? ww / pp : 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        if (FG_AUX(k)) continue;
        const double term = (double)(fg_store)(f * (double)p[k * n + idx]);
        out[k * n + idx] = (fg_store)((double)out[k * n + idx] + term);
    }
}
