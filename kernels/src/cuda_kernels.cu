/* CUDA kernels, appended after the point source, cuda_args.h and stencil.h;
 * the same math as cpu_kernels.c.tmpl, site for site.
 *
 * Layout: one thread per site of a row padded to whole chunks (FG_CHUNK = 32
 * sites, one warp), thread x = memory x, so a warp reads 32 consecutive
 * doubles. Every block size the runtime picks is a multiple of 32, so a warp is
 * always exactly one chunk of one row.
 *
 * Reductions are deterministic and independent of the launch configuration:
 *   1. each warp combines its chunk's 32 sites with a fixed shuffle tree
 *      (lane order) and writes one partial per (row, chunk);
 *   2. fg_k_rows: one warp per row combines that row's chunk partials
 *      (lane l takes chunks l, l+32, ... in order, then the same tree);
 *   3. fg_k_final: one block of exactly FG_FINAL_THREADS combines the rows
 *      (thread t takes rows t, t+256, ... in order, then a fixed
 *      shared-memory tree).
 * The order is a function of (nx, ny) alone: the bits do not change with
 * block size, grid size or run. Max is NaN as soon as any value is not
 * finite, like the CPU kernels.
 *
 * The discrete energy sums over the sites S where every stencil fits: all
 * sites when periodic, 2 <= i < nx-2 and 2 <= j < ny-2 when fixed. The
 * gradient is zero on held sites. */

/* Auxiliary components (docs/abi.md, cpu_kernels.c.tmpl): gradient stored with
 * the sign flipped (saddle form), left out of the unit-vector constraint. */
#ifndef FG_AUX
#define FG_AUX(k) 0
#endif

/* Storage precision (docs/performance/gpu.md, "float32 storage"): the element
 * type of every field-sized buffer a Program owns — the field, the velocity,
 * the stage gradients, the trial and checkpoint copies, density and gradient
 * outputs. The Go side defines FG_STORE_FLOAT32 in the translation unit's
 * prelude for a float32 Program, so the CUBIN cache key covers it. Values are
 * loaded into double registers: the site arithmetic (the point functions),
 * the RK4 combination, the shared-memory tile and every reduction stay in
 * float64, and results are rounded to fg_store once, when stored. */
#ifdef FG_STORE_FLOAT32
typedef float fg_store;
#else
typedef double fg_store;
#endif

/* A stored value, read through the read-only cache, widened to double. */
static __device__ __forceinline__ double fg_ld(const fg_store* p) { return (double)__ldg(p); }

#define FG_NAN __longlong_as_double(0x7ff8000000000000LL)
#define FG_FULL 0xffffffffu

typedef struct {
    long long nx, ny, n;
    int periodic;
    double hx, hy, ox, oy;
    double ix, iy, ixx, iyy, ixy;   /* 1/(12hx), 1/(12hy), 1/(12hx^2), 1/(12hy^2), 1/(144hxhy) */
} fg_geo;

static __device__ __forceinline__ fg_geo fg_geo_of(const fg_cargs& a) {
    fg_geo g;
    g.nx = a.nx;
    g.ny = a.ny;
    g.n = a.n;
    g.periodic = a.periodic;
    g.hx = a.hx;
    g.hy = a.hy;
    g.ox = a.ox;
    g.oy = a.oy;
    g.ix = 1.0 / (12.0 * a.hx);
    g.iy = 1.0 / (12.0 * a.hy);
    g.ixx = 1.0 / (12.0 * a.hx * a.hx);
    g.iyy = 1.0 / (12.0 * a.hy * a.hy);
    g.ixy = 1.0 / (144.0 * a.hx * a.hy);
    return g;
}

static __device__ __forceinline__ int fg_wrapi(int k, int n) {
    return k < 0 ? k + n : (k >= n ? k - n : k);
}

static __device__ __forceinline__ bool fg_in_s(const fg_geo& g, int i, int j) {
    return g.periodic || (i >= 2 && i < g.nx - 2 && j >= 2 && j < g.ny - 2);
}

/* fg_fill evaluates the site struct at (i, j) (which must be in S, or any
 * site when periodic); second derivatives only when asked. Same expressions
 * as the CPU template's fg_fill. */
static __device__ __forceinline__ void fg_fill(const fg_store* __restrict__ phi, const fg_geo& g, int i, int j,
                                               bool second, fg_site* s) {
    /* 32-bit index arithmetic: the runtime refuses fields of 2^31 values or
     * more, and 64-bit integer math costs twice the instructions. */
    const int nx = (int)g.nx, ny = (int)g.ny, n = (int)g.n;
    const int r0 = j * nx, rm1 = fg_wrapi(j - 1, ny) * nx, rm2 = fg_wrapi(j - 2, ny) * nx;
    const int rp1 = fg_wrapi(j + 1, ny) * nx, rp2 = fg_wrapi(j + 2, ny) * nx;
    const int m2 = fg_wrapi(i - 2, nx), m1 = fg_wrapi(i - 1, nx), p1 = fg_wrapi(i + 1, nx), p2 = fg_wrapi(i + 2, nx);
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        const fg_store* f = phi + k * n;
        double f0 = fg_ld(f + r0 + i);
        double xm2 = fg_ld(f + r0 + m2), xm1 = fg_ld(f + r0 + m1), xp1 = fg_ld(f + r0 + p1), xp2 = fg_ld(f + r0 + p2);
        double ym2 = fg_ld(f + rm2 + i), ym1 = fg_ld(f + rm1 + i), yp1 = fg_ld(f + rp1 + i), yp2 = fg_ld(f + rp2 + i);
        s->phi[k] = f0;
        s->dx[k] = FG_D1(xm2, xm1, xp1, xp2) * g.ix;
        s->dy[k] = FG_D1(ym2, ym1, yp1, yp2) * g.iy;
        if (second) {
            s->dxx[k] = FG_D2(xm2, xm1, f0, xp1, xp2) * g.ixx;
            s->dyy[k] = FG_D2(ym2, ym1, f0, yp1, yp2) * g.iyy;
            double dm2 = FG_D1(fg_ld(f + rm2 + m2), fg_ld(f + rm2 + m1), fg_ld(f + rm2 + p1), fg_ld(f + rm2 + p2));
            double dm1 = FG_D1(fg_ld(f + rm1 + m2), fg_ld(f + rm1 + m1), fg_ld(f + rm1 + p1), fg_ld(f + rm1 + p2));
            double dp1 = FG_D1(fg_ld(f + rp1 + m2), fg_ld(f + rp1 + m1), fg_ld(f + rp1 + p1), fg_ld(f + rp1 + p2));
            double dp2 = FG_D1(fg_ld(f + rp2 + m2), fg_ld(f + rp2 + m1), fg_ld(f + rp2 + p1), fg_ld(f + rp2 + p2));
            s->dxy[k] = FG_D1(dm2, dm1, dp1, dp2) * g.ixy;
        } else {
            s->dxx[k] = 0.0;
            s->dyy[k] = 0.0;
            s->dxy[k] = 0.0;
        }
    }
    s->x = g.ox + (double)i * g.hx;
    s->y = g.oy + (double)j * g.hy;
}

static __device__ __forceinline__ double fg_maxnan(double x, double y) {
    return (x != x || y != y) ? FG_NAN : fmax(x, y);
}

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

/* fg_finish projects, stores and reduces one site's gradient gr. */
static __device__ __forceinline__ void fg_finish(const fg_cargs& a, const fg_geo& g, int idx, double* gr,
                                                 double* m, double* pw) {
    const fg_store* phi = (const fg_store*)a.phi;
    if (a.project) {
        double gn = 0.0, nn = 0.0;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) {
            if (FG_AUX(k)) continue;
            double p = (double)__ldg(phi + k * (int)g.n + idx);
            gn += gr[k] * p;
            nn += p * p;
        }
        double t = gn / nn;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++)
            if (!FG_AUX(k)) gr[k] -= t * (double)__ldg(phi + k * (int)g.n + idx);
    }
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++)
        if (FG_AUX(k)) gr[k] = -gr[k];
    fg_store* out = (fg_store*)a.out;
    const fg_store* vel = (const fg_store*)a.vel;
    double p = 0.0, mx = 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        double v = gr[k];
        out[k * (int)g.n + idx] = (fg_store)v;
        mx = isfinite(v) ? fmax(mx, fabs(v)) : FG_NAN;
        if (vel) p += (double)__ldg(vel + k * (int)g.n + idx) * v;
    }
    *m = fg_maxnan(*m, mx);
    *pw = p;
}

static __device__ __forceinline__ void fg_zero_site(const fg_cargs& a, int n, int idx) {
    fg_store* out = (fg_store*)a.out;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) out[k * n + idx] = (fg_store)0;
}

/* Thread -> site of the chunk-padded row grid. Returns false for whole warps
 * past the last row. */
static __device__ __forceinline__ bool fg_site_of(const fg_cargs& a, int* i, int* j) {
    const unsigned w = (unsigned)a.nchunk * FG_CHUNK;
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned jj = t / w;
    *j = jj;
    *i = t - jj * w;
    return jj < (unsigned)a.ny;
}

/* Continuum Euler–Lagrange gradient: fg_gradient at every site of S. */
extern "C" __global__ void fg_k_continuum(fg_cargs a) {
    int i, j;
    if (!fg_site_of(a, &i, &j)) return;
    const fg_geo g = fg_geo_of(a);
    double e = 0.0, m = 0.0, pw = 0.0;
    if (i < g.nx) {
        const int idx = j * (int)g.nx + i;
        if (!fg_in_s(g, i, j)) {
            fg_zero_site(a, (int)g.n, idx);
        } else {
            const fg_params* p = (const fg_params*)a.params;
            fg_site s;
            fg_fill((const fg_store*)a.phi, g, i, j, true, &s);
            double gr[FG_NCOMP];
            fg_gradient(&s, p, gr);
            if (a.want_energy) e = fg_energy(&s, p) * (g.hx * g.hy);
            fg_finish(a, g, idx, gr, &m, &pw);
        }
    }
    fg_chunk_store(a.part, a.ny * a.nchunk, (long long)j * a.nchunk + i / FG_CHUNK, e, m, pw);
}

/* The undivided doubler differences d4x, d4y of component k at (i, j). */
static __device__ __forceinline__ void fg_d4(const fg_store* __restrict__ f, const fg_geo& g, int i, int j,
                                             double* qx, double* qy) {
    const int nx = (int)g.nx, ny = (int)g.ny, r0 = j * nx;
    *qx = FG_D4(fg_ld(f + r0 + fg_wrapi(i - 2, nx)), fg_ld(f + r0 + fg_wrapi(i - 1, nx)), fg_ld(f + r0 + i),
                fg_ld(f + r0 + fg_wrapi(i + 1, nx)), fg_ld(f + r0 + fg_wrapi(i + 2, nx)));
    *qy = FG_D4(fg_ld(f + fg_wrapi(j - 2, ny) * nx + i), fg_ld(f + fg_wrapi(j - 1, ny) * nx + i), fg_ld(f + r0 + i),
                fg_ld(f + fg_wrapi(j + 1, ny) * nx + i), fg_ld(f + fg_wrapi(j + 2, ny) * nx + i));
}

/* Consistent form, fused: the exact gradient of the discrete energy divided
 * by hx*hy. The CPU computes it in two passes through a buffer of partials;
 * here each site recomputes the partials of its eight stencil neighbours in
 * registers (they are zero off S), so nothing but the field is read:
 *   g = de/dphi - D_x[de/ddx] - D_y[de/ddy] + c/(hx hy) (d4x[d4x phi] + d4y[d4y phi]). */
/* One thread holds every component's partials at its 8 neighbours: beyond 8
 * components that no longer fits 255 registers without spilling (10 components
 * spill 32-40 bytes), so larger theories get an empty kernel and the Go side
 * refuses the consistent form for them (the continuum form is the default). */
#define FG_CONSISTENT_MAX_NCOMP 8
extern "C" __global__ void fg_k_consistent(fg_cargs a) {
#if FG_NCOMP <= FG_CONSISTENT_MAX_NCOMP
    int i, j;
    if (!fg_site_of(a, &i, &j)) return;
    const fg_geo g = fg_geo_of(a);
    double e = 0.0, m = 0.0, pw = 0.0;
    if (i < g.nx) {
        const int idx = j * (int)g.nx + i;
        if (!fg_in_s(g, i, j)) {
            fg_zero_site(a, (int)g.n, idx);
        } else {
            const fg_params* p = (const fg_params*)a.params;
            const fg_store* phi = (const fg_store*)a.phi;
            const double pen = a.penalty / (g.hx * g.hy);
            double gr[FG_NCOMP], ax[FG_NCOMP], ay[FG_NCOMP], bx[FG_NCOMP], by[FG_NCOMP];
            {
                fg_site s;
                fg_fill(phi, g, i, j, false, &s);
                double dphi[FG_NCOMP], ddx[FG_NCOMP], ddy[FG_NCOMP];
                fg_partials(&s, p, dphi, ddx, ddy);
                double q = 0.0;
#pragma unroll
                for (int k = 0; k < FG_NCOMP; k++) {
                    double qx, qy;
                    fg_d4(phi + k * (int)g.n, g, i, j, &qx, &qy);
                    q += qx * qx + qy * qy;
                    gr[k] = dphi[k];
                    ax[k] = 0.0;
                    ay[k] = 0.0;
                    bx[k] = 6.0 * qx;
                    by[k] = 6.0 * qy;   /* the centre of d4[d4 phi] */
                }
                e = fg_energy(&s, p) * (g.hx * g.hy) + 0.5 * a.penalty * q;
            }
            /* Neighbours at offsets -2, -1, +1, +2 along x (dir 0) and y (dir 1).
             * D1 weights (+1, -8, +8, -1) of de/dd{x,y}; D4 weights (1, -4, -4, 1). */
#pragma unroll 1
            for (int t = 0; t < 8; t++) {
                const int dir = t >> 2;
                const int off = (t & 3) < 2 ? (t & 3) - 2 : (t & 3) - 1;
                const double w1 = off == -2 ? 1.0 : off == -1 ? -8.0
                                                : off == 1    ? 8.0
                                                              : -1.0;
                const double w4 = (off == -2 || off == 2) ? 1.0 : -4.0;
                int ni = i, nj = j;
                if (dir == 0) ni = g.periodic ? fg_wrapi(i + off, (int)g.nx) : i + off;
                else nj = g.periodic ? fg_wrapi(j + off, (int)g.ny) : j + off;
                if (!fg_in_s(g, ni, nj)) continue;
                fg_site s;
                fg_fill(phi, g, ni, nj, false, &s);
                double dphi[FG_NCOMP], ddx[FG_NCOMP], ddy[FG_NCOMP];
                fg_partials(&s, p, dphi, ddx, ddy);
#pragma unroll
                for (int k = 0; k < FG_NCOMP; k++) {
                    double qx, qy;
                    fg_d4(phi + k * (int)g.n, g, ni, nj, &qx, &qy);
                    if (dir == 0) {
                        ax[k] += w1 * ddx[k];
                        bx[k] += w4 * qx;
                    } else {
                        ay[k] += w1 * ddy[k];
                        by[k] += w4 * qy;
                    }
                }
            }
#pragma unroll
            for (int k = 0; k < FG_NCOMP; k++) {
                double v = gr[k];
                v -= ax[k] * g.ix;
                v -= ay[k] * g.iy;
                if (pen != 0.0) v += pen * (bx[k] + by[k]);
                gr[k] = v;
            }
            fg_finish(a, g, idx, gr, &m, &pw);
        }
    }
    fg_chunk_store(a.part, a.ny * a.nchunk, (long long)j * a.nchunk + i / FG_CHUNK, e, m, pw);
#endif
}

/* Density k (or the energy density for k < 0) on S, zero off S; partial sums
 * of value*hx*hy in the energy plane. */
extern "C" __global__ void fg_k_density(fg_cargs a) {
    int i, j;
    if (!fg_site_of(a, &i, &j)) return;
    const fg_geo g = fg_geo_of(a);
    double v = 0.0;
    if (i < g.nx) {
        const int idx = j * (int)g.nx + i;
        if (fg_in_s(g, i, j)) {
            const fg_params* p = (const fg_params*)a.params;
            fg_site s;
            fg_fill((const fg_store*)a.phi, g, i, j, true, &s);
            v = a.density < 0 ? fg_energy(&s, p) : fg_density(a.density, &s, p);
        }
        if (a.out) ((fg_store*)a.out)[idx] = (fg_store)v;
    }
    fg_chunk_store(a.part, a.ny * a.nchunk, (long long)j * a.nchunk + i / FG_CHUNK, v * (g.hx * g.hy), 0.0, 0.0);
}

/* Level 2: one warp per row combines the row's chunk partials. part: chunk
 * partials (3 planes of ny*nchunk); out: row partials (3 planes of ny). */
static __device__ __forceinline__ bool fg_halted(const fg_cargs& a);

extern "C" __global__ void fg_k_rows(fg_cargs a) {
    if (fg_halted(a)) return;
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

/* Level 3: the fixed-tree combine of the row partials (part, 3 planes of ny) by one
 * block of FG_FINAL_THREADS: thread 0 gets energy, max and power. */
static __device__ __forceinline__ void fg_reduce_rows(const fg_cargs& a, double* E, double* M, double* PW) {
    __shared__ double se[FG_FINAL_THREADS], sm[FG_FINAL_THREADS], sp[FG_FINAL_THREADS];
    const int t = threadIdx.x;
    if (blockDim.x != FG_FINAL_THREADS) __trap();
    const double* R = (const double*)a.part;
    double e = 0.0, m = 0.0, pw = 0.0;
    for (long long j = t; j < a.ny; j += FG_FINAL_THREADS) {
        e += R[j];
        m = fg_maxnan(m, R[a.ny + j]);
        pw += R[2 * a.ny + j];
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

/* out[0..2] = energy, max, power. */
extern "C" __global__ void fg_k_final(fg_cargs a) {
    double e, m, pw;
    fg_reduce_rows(a, &e, &m, &pw);
    if (threadIdx.x == 0) {
        double* out = (double*)a.out;
        out[0] = e;
        out[1] = m;
        out[2] = pw;
    }
}

/* out[e] = sum_t coef[t] * terms[t][e], left to right in double, for e < len;
 * rounded to fg_store once. */
#define FG_T(t) ((double)((const fg_store*)a.terms[t])[e])
extern "C" __global__ void fg_k_combine(fg_cargs a) {
    fg_store* out = (fg_store*)a.out;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride) {
        double v;
        switch (a.nterms) {
        case 0: v = 0.0; break;
        case 1: v = a.coef[0] * FG_T(0); break;
        case 2: v = a.coef[0] * FG_T(0) + a.coef[1] * FG_T(1); break;
        case 3: v = a.coef[0] * FG_T(0) + a.coef[1] * FG_T(1) + a.coef[2] * FG_T(2); break;
        default:
            v = 0.0;
            for (int t = 0; t < a.nterms; t++) v += a.coef[t] * FG_T(t);
        }
        out[e] = (fg_store)v;
    }
}
#undef FG_T

/* Host transfers of a float32 Program (buffer Upload/Download): out[e] =
 * terms[0][e] for e < len, from fg_store to double (widen) or rounded from
 * double to fg_store (narrow, round to nearest). A float64 Program copies
 * directly and never launches them. */
extern "C" __global__ void fg_k_widen(fg_cargs a) {
    const fg_store* x = (const fg_store*)a.terms[0];
    double* out = (double*)a.out;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride) out[e] = (double)x[e];
}

extern "C" __global__ void fg_k_narrow(fg_cargs a) {
    const double* x = (const double*)a.terms[0];
    fg_store* out = (fg_store*)a.out;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride) out[e] = (fg_store)x[e];
}

/* Unit-vector constraint: normalise phi and project vel (may be 0) onto the
 * tangent space, at sites that are not held. */
extern "C" __global__ void fg_k_constrain(fg_cargs a) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= a.n) return;
    const long long j = idx / a.nx, i = idx - j * a.nx;
    if (!a.periodic && (i < 2 || i >= a.nx - 2 || j < 2 || j >= a.ny - 2)) return;
    fg_store* phi = (fg_store*)a.phi;
    fg_store* vel = (fg_store*)a.vel;
    double u[FG_NCOMP];
    double nn = 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        u[k] = phi[(long long)k * a.n + idx];
        if (!FG_AUX(k)) nn += u[k] * u[k];
    }
    const double inv = 1.0 / sqrt(nn);
    double vp = 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        if (FG_AUX(k)) continue;
        u[k] *= inv;
        phi[(long long)k * a.n + idx] = (fg_store)u[k];
        if (vel) vp += (double)vel[(long long)k * a.n + idx] * u[k];
    }
    if (vel) {
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++)
            if (!FG_AUX(k)) vel[(long long)k * a.n + idx] = (fg_store)((double)vel[(long long)k * a.n + idx] - vp * u[k]);
    }
}

/* Program.Dot and MaxAbs, level 1: one warp per FG_DOT_CHUNK consecutive
 * elements; lane l folds elements l, l+32, ... of the chunk in order (Dot:
 * terms[0] * terms[1] summed; MaxAbs: |terms[0]|, NaN if any is NaN), the
 * warp combines the lanes with a fixed shuffle tree and writes part[chunk].
 * Whole warps leave together, so any block size of whole warps gives the
 * same bits. */
template <bool MAXABS>
static __device__ __forceinline__ void fg_chunk_fold(const fg_cargs& a) {
    const long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    const long long nchunk = (a.len + FG_DOT_CHUNK - 1) / FG_DOT_CHUNK;
    if (w >= nchunk) return;
    const fg_store* x = (const fg_store*)a.terms[0];
    const fg_store* y = (const fg_store*)a.terms[1];
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
static __device__ __forceinline__ void fg_chunk_final(const fg_cargs& a) {
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

extern "C" __global__ void fg_k_dot(fg_cargs a) { fg_chunk_fold<false>(a); }
extern "C" __global__ void fg_k_dot_final(fg_cargs a) { fg_chunk_final<false>(a); }
extern "C" __global__ void fg_k_maxabs(fg_cargs a) { fg_chunk_fold<true>(a); }
extern "C" __global__ void fg_k_maxabs_final(fg_cargs a) { fg_chunk_final<true>(a); }

/* Program.FillRandom: out[e] = kernels.RandomValue(seed, e) (splitmix64; exact
 * arithmetic, the CPU's bits), rounded to fg_store. */
extern "C" __global__ void fg_k_random(fg_cargs a) {
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

/* Program.Project: vel less its part along phi/|phi| (phi read only), at
 * sites that are not held: the tangent projection of a unit-vector field. */
extern "C" __global__ void fg_k_project(fg_cargs a) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= a.n) return;
    const long long j = idx / a.nx, i = idx - j * a.nx;
    if (!a.periodic && (i < 2 || i >= a.nx - 2 || j < 2 || j >= a.ny - 2)) return;
    const fg_store* phi = (const fg_store*)a.phi;
    fg_store* x = (fg_store*)a.vel;
    double nn = 0.0, xp = 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        if (FG_AUX(k)) continue;
        const double u = phi[(long long)k * a.n + idx];
        nn += u * u;
        xp += (double)x[(long long)k * a.n + idx] * u;
    }
    const double c = xp / nn;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++)
        if (!FG_AUX(k))
            x[(long long)k * a.n + idx] = (fg_store)((double)x[(long long)k * a.n + idx] - c * (double)phi[(long long)k * a.n + idx]);
}

/* The smallest index e < len whose value is not finite, into *out (an
 * unsigned long long preset to all ones). atomicMin is order independent. */
extern "C" __global__ void fg_k_nonfinite(fg_cargs a) {
    const fg_store* x = (const fg_store*)a.phi;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride) {
        if (!isfinite(x[e])) {
            atomicMin((unsigned long long*)a.out, (unsigned long long)e);
            return;
        }
    }
}

/* ---------------------------------------------------------------------------
 * The shared-memory tiled stencil and the arrested Newton flow fused on the
 * device.
 *
 * fg_k_tile is the continuum gradient over a tile of 32 x TY sites (blockDim
 * (32, BY), TY = BY * rpt rows, each thread one site per BY-th row): the block
 * loads the tile and a 2-site halo of every component once, with coalesced
 * reads, into shared memory, then every site takes its 25-point stencil from
 * there. What it loads is the linear combination sum_t coef[t] * terms[t]
 * (up to 3 terms, left to right like fg_k_combine): the RK4 trial fields are
 * never written to global memory. A warp is still one 32-site chunk of one
 * row, so its chunk partials are those of fg_k_continuum, bit for bit, and
 * the same reduction kernels finish them.
 *
 * In a flow (a.ctl != 0), each step is: fg_k_tile stage 1 (gradient at phi,
 * energy, max, power), fg_k_rows, fg_k_decide (the last reduction level, then
 * the arrest and the stop test, written to the control block), fg_k_tile
 * stages 2..4 (trials from phi, v and the earlier gradients; the velocity
 * coefficient is multiplied by the device's arrest decision), fg_k_update
 * (the RK4 combination of phi and v and the unit-vector constraint). Every
 * kernel first reads the control block and returns at once once the flow has
 * stopped, so the host can launch many steps ahead without reading anything.
 * ------------------------------------------------------------------------- */

#define FG_HALO 2
#define FG_TW (FG_CHUNK + 2 * FG_HALO)

/* Whether the flow has stopped before this kernel: a stop from fg_k_decide,
 * or a non-finite gradient in an earlier stage of this step (a stage never
 * halts on its own flag, so what it writes does not depend on timing). */
static __device__ __forceinline__ bool fg_halted(const fg_cargs& a) {
    if (!a.ctl) return false;
    volatile fg_flowctl* c = (volatile fg_flowctl*)a.ctl;
    const int nf = c->nonfinite;
    if (c->stop != 0) return true;
    if (nf == 0) return false;
    if (a.stage <= 1) {
        /* A later step (a graph holds two): the step before went non-finite
         * in a stage 2-4, so nothing of this step may run — its stages 2-4
         * would not halt on nf alone (nf < stage is false for nf = 4, and
         * for every nf in fg_k_stages234), and with ping-pong buffers they
         * would write the pair holding the last good state. */
        c->stop = FG_STOP_HALTED;
        return true;
    }
    return nf < a.stage;
}

/* The end of an RK4 step at one site: phi' and v' from phi, v and the four
 * stage gradients a0..a3 (fg_k_combine's arithmetic, left to right from 0),
 * then the unit-vector constraint (a.project, sites of S) like fg_k_constrain.
 * h = -dt^2/6, q6 = -dt/6, q3 = -dt/3, as the host computes them. Component
 * k of g1 is g1[k * s1 + o1] (g2 likewise): the field planes for the fused
 * stage 4 (fg_k_tile_up: s = n, o = idx), shared memory for fg_k_stages234;
 * fg_k_update writes the same expressions out. */
template <class T1, class T2>
static __device__ __forceinline__ void fg_rk4_site(const fg_cargs& a, double kv, double h, double q6, double q3,
                                                   int n, int idx, bool in_s, const fg_store* phi,
                                                   const fg_store* vel, const fg_store* __restrict__ g0,
                                                   const T1* __restrict__ g1, int s1, int o1,
                                                   const T2* __restrict__ g2, int s2, int o2,
                                                   const double* a3, fg_store* phio, fg_store* velo) {
    const double cv = kv * a.dt;
    double u[FG_NCOMP], w[FG_NCOMP];
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        const int e = k * n + idx;
        const double f = phi[e], v = vel[e], a0 = g0[e], a1 = g1[k * s1 + o1], a2 = g2[k * s2 + o2];
        double x = 0.0;
        x += 1.0 * f;
        x += cv * v;
        x += h * a0;
        x += h * a1;
        x += h * a2;
        double y = 0.0;
        y += kv * v;
        y += q6 * a0;
        y += q3 * a1;
        y += q3 * a2;
        y += q6 * a3[k];
        u[k] = x;
        w[k] = y;
    }
    if (a.project && in_s) {
        double nn = 0.0;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) nn += u[k] * u[k];
        const double inv = 1.0 / sqrt(nn);
        double vp = 0.0;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) {
            u[k] *= inv;
            vp += w[k] * u[k];
        }
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) w[k] -= vp * u[k];
    }
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        const int e = k * n + idx;
        phio[e] = (fg_store)u[k];
        velo[e] = (fg_store)w[k];
    }
}

/* A flow's decision from its stage-1 reductions (one thread): commit the
 * step decided before (it was taken: nothing stopped the flow since), stop
 * on a non-finite energy or gradient, record the step, stop when converged,
 * else the arrest; the step is then pending until the next decision (or the
 * host at the end of a run) commits it. */
static __device__ __forceinline__ void fg_decide_apply(const fg_cargs& a, double E, double M, double P) {
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
    const int arrest = a.energy_arrest ? (E > c->prev_energy) : (P > 0.0);
    c->arrest = arrest;
    c->kv = arrest ? 0.0 : 1.0;
    c->pending = 1;
}

/* fg_k_decide's combine of one plane of row partials (a sum, or the max
 * for MAX) by one warp: lane l plays fg_k_decide's threads l + 32 q, q < 8,
 * takes their rows in their order, then the same tree: s = 128, 64, 32
 * across the lane's slots, s = 16 .. 1 across lanes. Lane 0 gets the result. */
template <bool MAX>
static __device__ __forceinline__ double fg_fold_final(const double* R, int ny, int lane) {
#define FG_FQ (FG_FINAL_THREADS / 32)
    double v[FG_FQ];
#pragma unroll
    for (int q = 0; q < FG_FQ; q++) {
        double x = 0.0;
        for (int j = lane + 32 * q; j < ny; j += FG_FINAL_THREADS)
            x = MAX ? fg_maxnan(x, __ldcg(R + j)) : x + __ldcg(R + j);
        v[q] = x;
    }
#pragma unroll
    for (int s = FG_FQ / 2; s > 0; s >>= 1) {
#pragma unroll
        for (int q = 0; q < s; q++) v[q] = MAX ? fg_maxnan(v[q], v[q + s]) : v[q] + v[q + s];
    }
#undef FG_FQ
    double x = v[0];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const double y = __shfl_down_sync(FG_FULL, x, off);
        x = MAX ? fg_maxnan(x, y) : x + y;
    }
    return x;
}

/* Stage 1 of a flow finishing its own reduction (a.fold), after every warp
 * of the block stored its chunk partials: the last block of each tile row
 * band (a counter per band) combines the band's rows exactly like fg_k_rows;
 * the last of those (one more counter) combines the rows exactly like
 * fg_k_decide, with one warp holding FG_FINAL_THREADS / 32 of fg_k_decide's
 * threads per lane, and decides. The bits are those of fg_k_rows + fg_k_decide
 * whichever block comes last. Counters are reset by the block that saw them
 * full, so they are zero between launches. */
static __device__ __forceinline__ void fg_fold(const fg_cargs& a, int cy, int TY) {
    __shared__ int fg_last;
    unsigned* cnt = (unsigned*)a.cnt;
    const int nchunk = (int)a.nchunk, ny = (int)a.ny;
    const int tid = (int)threadIdx.y * 32 + (int)threadIdx.x, lane = (int)threadIdx.x;
    __threadfence();
    __syncthreads();
    if (tid == 0) {
        const unsigned prev = atomicAdd(cnt + cy, 1u);
        fg_last = prev == (unsigned)(nchunk - 1);
        if (fg_last) cnt[cy] = 0;
    }
    __syncthreads();
    if (!fg_last) return;
    __threadfence();
    const double* P = (const double*)a.part;
    double* R = (double*)a.rows;
    const int plane = ny * nchunk;
    const int jend = min(cy * TY + TY, ny);
    for (int j = cy * TY + (int)threadIdx.y; j < jend; j += (int)blockDim.y) {
        double e = 0.0, m = 0.0, pw = 0.0;
        for (int c = lane; c < nchunk; c += 32) {
            const int k = j * nchunk + c;
            e += __ldcg(P + k);
            m = fg_maxnan(m, __ldcg(P + plane + k));
            pw += __ldcg(P + 2 * plane + k);
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            e += __shfl_down_sync(FG_FULL, e, off);
            m = fg_maxnan(m, __shfl_down_sync(FG_FULL, m, off));
            pw += __shfl_down_sync(FG_FULL, pw, off);
        }
        if (lane == 0) {
            R[j] = e;
            R[ny + j] = m;
            R[2 * ny + j] = pw;
        }
    }
    __threadfence();
    __syncthreads();
    const int nband = (int)gridDim.x / nchunk;
    if (tid == 0) {
        const unsigned prev = atomicAdd(cnt + nband, 1u);
        fg_last = prev == (unsigned)(nband - 1);
        if (fg_last) cnt[nband] = 0;
    }
    __syncthreads();
    if (!fg_last || threadIdx.y != 0) return;
    __threadfence();
    /* One plane at a time, to hold few registers. */
    const double E = fg_fold_final<false>(R, ny, lane);
    const double M = fg_fold_final<true>(R + ny, ny, lane);
    const double Pw = fg_fold_final<false>(R + 2 * ny, ny, lane);
    if (lane == 0) fg_decide_apply(a, E, M, Pw);
}

/* The global site of tile element t (a (TY + 4) x FG_TW plane from (x0, y0)
 * less the halo): wrapped when periodic; false when it lies outside a fixed
 * domain. */
static __device__ __forceinline__ bool fg_tile_site(const fg_geo& g, int x0, int y0, int t, int* idx) {
    const int nx = (int)g.nx, ny = (int)g.ny;
    const int ly = t / FG_TW, lx = t - ly * FG_TW;
    int gi = x0 - FG_HALO + lx, gj = y0 - FG_HALO + ly;
    bool ok = true;
    if (g.periodic) {
        gi = ((gi % nx) + nx) % nx;
        gj = ((gj % ny) + ny) % ny;
    } else {
        ok = gi >= 0 && gi < nx && gj >= 0 && gj < ny;
    }
    *idx = gj * nx + gi;
    return ok;
}

/* The tile fill is latency-bound (docs/performance/gpu.md): cp.async (sm_80+,
 * float64 storage) copies global to shared memory without holding a register
 * per value in flight, so a thread issues its whole share of the tile at once.
 * Used for one-term fills only: staging the RK4 trial fields' three terms the
 * same way and combining them in shared memory measured no faster
 * (x0.94-1.01 of the register fill, against x0.93-0.94 for this). */
#if !defined(FG_STORE_FLOAT32) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define FG_TILE_ASYNC 1
/* 8 bytes from global src to the shared address dst. */
static __device__ __forceinline__ void fg_cp_async8(unsigned dst, const double* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(src) : "memory");
}
/* 16 bytes (an aligned pair of doubles). */
static __device__ __forceinline__ void fg_cp_async16(unsigned dst, const double* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
static __device__ __forceinline__ void fg_cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

/* The one-term fill: W = 2 copies pairs of one row (see fg_tile_body), 1
 * single elements; out-of-domain elements are zeros. One source pointer and
 * one shared address, stepped per component, so that the unrolled copies do
 * not keep FG_NCOMP addresses live. */
template <int W>
static __device__ __forceinline__ void fg_tile_copy(double* tile, const fg_geo& g, int x0, int y0, int plane, int n,
                                                    const double* T0, int tid, int nth) {
    const unsigned base = (unsigned)__cvta_generic_to_shared(tile);
    for (int t = W * tid; t < plane; t += W * nth) {
        int idx;
        if (!fg_tile_site(g, x0, y0, t, &idx)) {
#pragma unroll
            for (int k = 0; k < FG_NCOMP; k++)
                for (int w = 0; w < W; w++) tile[k * plane + t + w] = 0.0;
            continue;
        }
        const double* src = T0 + idx;
        unsigned d = base + 8u * (unsigned)t;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++, src += n, d += 8u * (unsigned)plane) {
            if (W == 2) fg_cp_async16(d, src);
            else fg_cp_async8(d, src);
        }
    }
}
#endif

/* Two stored values of one row (16-byte aligned in float64 storage, 8 in float32). */
#ifdef FG_STORE_FLOAT32
typedef float2 fg_store2;
#else
typedef double2 fg_store2;
#endif
static __device__ __forceinline__ fg_store2 fg_ldg2(const fg_store* p) { return __ldg((const fg_store2*)p); }

/* The site struct of (i, j) from shared planes: P is the site's value of
 * component 0, component k at P + k * cs, rows W apart; the 25-point stencil
 * of fg_fill, the expressions of fg_tile_body (which keeps its own inline
 * copy: routed through these and fg_site_project, Baby Skyrme and Abelian
 * Higgs kept their bits and step times on the H200, but NVRTC allocated up to
 * 116 registers for fg_k_tile_up of traced theories, over their budgets,
 * 2026-11-30). */
static __device__ __forceinline__ void fg_plane_site(const double* P0, int W, int cs, const fg_geo& g, int i, int j,
                                                     fg_site* s) {
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        const double* P = P0 + k * cs;
        const double f0 = P[0];
        const double xm2 = P[-2], xm1 = P[-1], xp1 = P[1], xp2 = P[2];
        const double ym2 = P[-2 * W], ym1 = P[-W], yp1 = P[W], yp2 = P[2 * W];
        s->phi[k] = f0;
        s->dx[k] = FG_D1(xm2, xm1, xp1, xp2) * g.ix;
        s->dy[k] = FG_D1(ym2, ym1, yp1, yp2) * g.iy;
        s->dxx[k] = FG_D2(xm2, xm1, f0, xp1, xp2) * g.ixx;
        s->dyy[k] = FG_D2(ym2, ym1, f0, yp1, yp2) * g.iyy;
        const double* R2 = P - 2 * W;
        const double* R1 = P - W;
        const double* Q1 = P + W;
        const double* Q2 = P + 2 * W;
        const double dm2 = FG_D1(R2[-2], R2[-1], R2[1], R2[2]);
        const double dm1 = FG_D1(R1[-2], R1[-1], R1[1], R1[2]);
        const double dp1 = FG_D1(Q1[-2], Q1[-1], Q1[1], Q1[2]);
        const double dp2 = FG_D1(Q2[-2], Q2[-1], Q2[1], Q2[2]);
        s->dxy[k] = FG_D1(dm2, dm1, dp1, dp2) * g.ixy;
    }
    s->x = g.ox + (double)i * g.hx;
    s->y = g.oy + (double)j * g.hy;
}

/* A site's gradient gr projected onto the tangent space (a.project) and its
 * auxiliary components flipped (saddle form), as in fg_finish. */
static __device__ __forceinline__ void fg_site_project(const fg_cargs& a, const fg_site& s, double* gr) {
    if (a.project) {
        double gn = 0.0, nn = 0.0;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) {
            if (FG_AUX(k)) continue;
            gn += gr[k] * s.phi[k];
            nn += s.phi[k] * s.phi[k];
        }
        const double tt = gn / nn;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++)
            if (!FG_AUX(k)) gr[k] -= tt * s.phi[k];
    }
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++)
        if (FG_AUX(k)) gr[k] = -gr[k];
}

/* The flow's gradient at a site of S: fg_gradient, then fg_site_project. */
static __device__ __forceinline__ void fg_site_grad(const fg_cargs& a, const fg_site& s, const fg_params* p, double* gr) {
    fg_gradient(&s, p, gr);
    fg_site_project(a, s, gr);
}

/* FUSE: stage 4 with the RK4 update (fg_k_tile_up); else fg_k_tile. */
template <bool FUSE>
static __device__ __forceinline__ void fg_tile_body(const fg_cargs& a) {
    extern __shared__ __align__(16) double fg_tile[];  /* 16: the fill stores pairs */
    if (fg_halted(a)) return;
    const int TY = (int)blockDim.y * a.rpt;
    const int plane = (TY + 2 * FG_HALO) * FG_TW;
    const int nchunk = (int)a.nchunk;
    const int cx = (int)blockIdx.x % nchunk, cy = (int)blockIdx.x / nchunk;
    const int x0 = cx * FG_CHUNK, y0 = cy * TY;
    const fg_geo g = fg_geo_of(a);
    const int nx = (int)g.nx, ny = (int)g.ny, n = (int)g.n;
    double kv = 1.0;
    if (a.ctl) kv = ((const volatile fg_flowctl*)a.ctl)->kv;
    const double c0 = a.coef[0], c1 = a.coef[1] * kv, c2 = a.coef[2];
    const fg_store* __restrict__ T0 = (const fg_store*)a.terms[0];
    const fg_store* __restrict__ T1 = (const fg_store*)a.terms[1];
    const fg_store* __restrict__ T2 = (const fg_store*)a.terms[2];
    const int nterms = a.nterms;
    const int tid = (int)threadIdx.y * FG_CHUNK + (int)threadIdx.x, nth = FG_CHUNK * (int)blockDim.y;
    /* With rows of even length and 16-byte aligned terms, the tile's elements
     * go in pairs: t even starts a pair of one row (FG_TW and the plane are
     * even), and its sites (gi, gi + 1) are contiguous and aligned in global
     * memory (gi even; the periodic wrap maps even to even) and inside or
     * outside a fixed domain together. Half the loads, half the index
     * arithmetic; each element's value is the same expression. */
    const bool pairs = (g.nx & 1) == 0 &&
                       (((unsigned long long)T0 | (unsigned long long)T1 | (unsigned long long)T2) & (2 * sizeof(fg_store) - 1)) == 0;
#ifdef FG_TILE_ASYNC
    if (nterms == 1 && c0 == 1.0) {
        /* One term with coefficient 1 (a flow's stage 1, a gradient): the
         * values themselves (1.0 * x == x), copied straight to shared memory. */
        if (pairs) fg_tile_copy<2>(fg_tile, g, x0, y0, plane, n, T0, tid, nth);
        else fg_tile_copy<1>(fg_tile, g, x0, y0, plane, n, T0, tid, nth);
        fg_cp_async_wait_all();
    } else
#endif
        if (pairs) {
        for (int t = 2 * tid; t < plane; t += 2 * nth) {
            int idx;
            const bool ok = fg_tile_site(g, x0, y0, t, &idx);
#pragma unroll
            for (int k = 0; k < FG_NCOMP; k++) {
                double2 v = make_double2(0.0, 0.0);
                if (ok) {
                    const int e = k * n + idx;
                    fg_store2 u = fg_ldg2(T0 + e);
                    v.x = c0 * (double)u.x;
                    v.y = c0 * (double)u.y;
                    if (nterms > 1) {
                        u = fg_ldg2(T1 + e);
                        v.x += c1 * (double)u.x;
                        v.y += c1 * (double)u.y;
                    }
                    if (nterms > 2) {
                        u = fg_ldg2(T2 + e);
                        v.x += c2 * (double)u.x;
                        v.y += c2 * (double)u.y;
                    }
                }
                *(double2*)(fg_tile + k * plane + t) = v;
            }
        }
    } else
        for (int t = tid; t < plane; t += nth) {
            int idx;
            const bool ok = fg_tile_site(g, x0, y0, t, &idx);
#pragma unroll
            for (int k = 0; k < FG_NCOMP; k++) {
                double v = 0.0;
                if (ok) {
                    const int e = k * n + idx;
                    v = c0 * (double)__ldg(T0 + e);
                    if (nterms > 1) v += c1 * (double)__ldg(T1 + e);
                    if (nterms > 2) v += c2 * (double)__ldg(T2 + e);
                }
                fg_tile[k * plane + t] = v;
            }
        }
    __syncthreads();
    const int i = x0 + (int)threadIdx.x, lx = (int)threadIdx.x + FG_HALO;
    const fg_params* p = (const fg_params*)a.params;
    fg_store* out = (fg_store*)a.out;
    const fg_store* vel = (const fg_store*)a.vel;
#pragma unroll 1
    for (int r = 0; r < a.rpt; r++) {
        const int ty = (int)threadIdx.y + r * (int)blockDim.y;
        const int j = y0 + ty;
        if (j >= ny) break;   /* whole warps: a warp is one row */
        double e = 0.0, m = 0.0, pw = 0.0;
        if (i < nx) {
            const int idx = j * nx + i;
            const bool in_s = fg_in_s(g, i, j);
            double gr[FG_NCOMP];
            if (!in_s) {
#pragma unroll
                for (int k = 0; k < FG_NCOMP; k++) gr[k] = 0.0;
                if (!FUSE) fg_zero_site(a, n, idx);
            } else {
                fg_site s;
                const int ly = ty + FG_HALO;
#pragma unroll
                for (int k = 0; k < FG_NCOMP; k++) {
                    const double* P = fg_tile + k * plane + ly * FG_TW + lx;
                    const double f0 = P[0];
                    const double xm2 = P[-2], xm1 = P[-1], xp1 = P[1], xp2 = P[2];
                    const double ym2 = P[-2 * FG_TW], ym1 = P[-FG_TW], yp1 = P[FG_TW], yp2 = P[2 * FG_TW];
                    s.phi[k] = f0;
                    s.dx[k] = FG_D1(xm2, xm1, xp1, xp2) * g.ix;
                    s.dy[k] = FG_D1(ym2, ym1, yp1, yp2) * g.iy;
                    s.dxx[k] = FG_D2(xm2, xm1, f0, xp1, xp2) * g.ixx;
                    s.dyy[k] = FG_D2(ym2, ym1, f0, yp1, yp2) * g.iyy;
                    const double* R2 = P - 2 * FG_TW;
                    const double* R1 = P - FG_TW;
                    const double* Q1 = P + FG_TW;
                    const double* Q2 = P + 2 * FG_TW;
                    const double dm2 = FG_D1(R2[-2], R2[-1], R2[1], R2[2]);
                    const double dm1 = FG_D1(R1[-2], R1[-1], R1[1], R1[2]);
                    const double dp1 = FG_D1(Q1[-2], Q1[-1], Q1[1], Q1[2]);
                    const double dp2 = FG_D1(Q2[-2], Q2[-1], Q2[1], Q2[2]);
                    s.dxy[k] = FG_D1(dm2, dm1, dp1, dp2) * g.ixy;
                }
                s.x = g.ox + (double)i * g.hx;
                s.y = g.oy + (double)j * g.hy;
                fg_gradient(&s, p, gr);
                if (a.want_energy) e = fg_energy(&s, p) * (g.hx * g.hy);
                if (a.project) {
                    double gn = 0.0, nn = 0.0;
#pragma unroll
                    for (int k = 0; k < FG_NCOMP; k++) {
                        if (FG_AUX(k)) continue;
                        gn += gr[k] * s.phi[k];
                        nn += s.phi[k] * s.phi[k];
                    }
                    const double tt = gn / nn;
#pragma unroll
                    for (int k = 0; k < FG_NCOMP; k++)
                        if (!FG_AUX(k)) gr[k] -= tt * s.phi[k];
                }
                /* Auxiliary components flow upward (saddle form), as in fg_finish. */
#pragma unroll
                for (int k = 0; k < FG_NCOMP; k++)
                    if (FG_AUX(k)) gr[k] = -gr[k];
                double mx = 0.0;
#pragma unroll
                for (int k = 0; k < FG_NCOMP; k++) {
                    const double v = gr[k];
                    if (!FUSE) out[k * n + idx] = (fg_store)v;
                    mx = isfinite(v) ? fmax(mx, fabs(v)) : FG_NAN;
                    if (vel) pw += (double)__ldg(vel + k * n + idx) * v;
                }
                m = mx;
            }
            if (FUSE)
                fg_rk4_site(a, kv, a.coef[3], a.coef[4], a.coef[5], n, idx, in_s, T0, T1, (const fg_store*)a.terms[3],
                            T2, n, idx, (const fg_store*)a.terms[4], n, idx, gr, (fg_store*)a.terms[5],
                            (fg_store*)a.terms[6]);
        }
        if (a.stage <= 1) {
            fg_chunk_store(a.part, a.ny * a.nchunk, (long long)j * a.nchunk + cx, e, m, pw);
        } else if (m != m && a.ctl) {   /* no control block: the autotune's launches */
            ((volatile fg_flowctl*)a.ctl)->nonfinite = a.stage;
        }
    }
    if (!FUSE && a.fold) fg_fold(a, cy, TY);
}

extern "C" __global__ void fg_k_tile(fg_cargs a) { fg_tile_body<false>(a); }

/* Stage 4 of a flow with the RK4 update fused (cuda_args.h, fuse): phi' and
 * v' into the other buffer pair instead of the stage gradient. */
extern "C" __global__ void fg_k_tile_up(fg_cargs a) { fg_tile_body<true>(a); }

/* ---------------------------------------------------------------------------
 * Stages 2-4 of a flow in one kernel (fg_k_stages234). Only
 * stage 1 ends in a global reduction (the arrest decision kv); the later
 * stages need their trial fields on a tile plus a halo and nothing global:
 *   trial2 = phi + (dt/2) kv v, trial3 = trial2's terms - (dt^2/4) g0,
 *   trial4 = phi + dt kv v - (dt^2/2) g1,
 * and the update needs g0..g3 at the site. So one block per 32 x TY tile T
 * loads phi and v on T plus a 4-site halo and g0 on T plus 2, computes g1 on
 * T plus 2 (the halo recomputed), g2 and g3 on T, and writes phi', v' (the
 * ping-pong pair, like fg_k_tile_up): the field planes read and written per
 * step fall from ~18 to ~8. Every value is the expression the separate
 * kernels compute: g1 and g2 are rounded to fg_store as their stores round
 * them. Shared memory (dynamic): plane A (T+4, FG_WA wide: stage 2's trial,
 * then the T+2 trials of stages 3 and 4 in FG_TW layout), G1 (T+2, FG_TW
 * layout), G2 (T). terms: 0 phi, 1 v, 2 g0, 5 phi', 6 v'; coef: 0 dt/2,
 * 1 -dt^2/4, 2 dt, 3 -dt^2/2 (the trials), 4 -dt^2/6, 5 -dt/6, 6 -dt/3 (the
 * update), 7 1. A non-finite gradient records its stage, the earliest across
 * blocks (a CAS minimum), so the host names it like the separate kernels.
 * ------------------------------------------------------------------------- */
#define FG_H4 4
#define FG_WA (FG_CHUNK + 2 * FG_H4)

/* The site (gi, gj) of a tile plane, wrapped when periodic; false outside a
 * fixed domain. */
static __device__ __forceinline__ bool fg_wrap_site(const fg_geo& g, int gi, int gj, int* i, int* j) {
    const int nx = (int)g.nx, ny = (int)g.ny;
    if (g.periodic) {
        gi = ((gi % nx) + nx) % nx;
        gj = ((gj % ny) + ny) % ny;
    } else if (gi < 0 || gi >= nx || gj < 0 || gj >= ny) {
        return false;
    }
    *i = gi;
    *j = gj;
    return true;
}

static __device__ __forceinline__ void fg_nonfinite_min(const fg_cargs& a, int nf) {
    if (!nf || !a.ctl) return;
    int* p = &((fg_flowctl*)a.ctl)->nonfinite;
    int cur = atomicAdd(p, 0);
    while (cur == 0 || cur > nf) {
        const int prev = atomicCAS(p, cur, nf);
        if (prev == cur) break;
        cur = prev;
    }
}

extern "C" __global__ void fg_k_stages234(fg_cargs a) {
    extern __shared__ __align__(16) double fg_sm[];
    if (fg_halted(a)) return;
    const int TY = (int)blockDim.y * a.rpt;
    const int nchunk = (int)a.nchunk;
    const int cx = (int)blockIdx.x % nchunk, cy = (int)blockIdx.x / nchunk;
    const int x0 = cx * FG_CHUNK, y0 = cy * TY;
    const fg_geo g = fg_geo_of(a);
    const int nx = (int)g.nx, ny = (int)g.ny, n = (int)g.n;
    double kv = 1.0;
    if (a.ctl) kv = ((const volatile fg_flowctl*)a.ctl)->kv;
    const fg_store* __restrict__ phi = (const fg_store*)a.terms[0];
    const fg_store* __restrict__ vel = (const fg_store*)a.terms[1];
    const fg_store* __restrict__ g0 = (const fg_store*)a.terms[2];
    /* c0 = 1 is a runtime value (coef[7]), as the separate kernels' fill has
     * it: the same expression shape, so the compiler contracts the same
     * products into FMAs and the trials keep their bits. */
    const double c0 = a.coef[7], c2v = a.coef[0] * kv, c3g = a.coef[1], c4v = a.coef[2] * kv, c4g = a.coef[3];
    const int planeA = (TY + 2 * FG_H4) * FG_WA, planeB = (TY + 2 * FG_HALO) * FG_TW, planeC = TY * FG_CHUNK;
    double* A = fg_sm;
    double* G1 = A + FG_NCOMP * planeA;
    double* G2 = G1 + FG_NCOMP * planeB;
    const int tid = (int)threadIdx.y * FG_CHUNK + (int)threadIdx.x, nth = FG_CHUNK * (int)blockDim.y;
    const fg_params* p = (const fg_params*)a.params;
    int nf = 0;

    /* Stage 2's trial on T+4. */
    for (int t = tid; t < planeA; t += nth) {
        const int ly = t / FG_WA, lx = t - ly * FG_WA;
        int i = 0, j = 0;
        const bool ok = fg_wrap_site(g, x0 - FG_H4 + lx, y0 - FG_H4 + ly, &i, &j);
        const int idx = j * nx + i;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) {
            double v = 0.0;
            if (ok) {
                const int e = k * n + idx;
                v = c0 * (double)__ldg(phi + e);
                v += c2v * (double)__ldg(vel + e);
            }
            A[k * planeA + t] = v;
        }
    }
    __syncthreads();
    /* g1 on T+2, from the trial's own values (the halo recomputed). */
    for (int t = tid; t < planeB; t += nth) {
        const int ly = t / FG_TW, lx = t - ly * FG_TW;
        int i = 0, j = 0;
        double gr[FG_NCOMP];
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) gr[k] = 0.0;
        if (fg_wrap_site(g, x0 - FG_HALO + lx, y0 - FG_HALO + ly, &i, &j) && fg_in_s(g, i, j)) {
            fg_site s;
            fg_plane_site(A + (ly + FG_H4 - FG_HALO) * FG_WA + lx + FG_H4 - FG_HALO, FG_WA, planeA, g, i, j, &s);
            fg_site_grad(a, s, p, gr);
            /* The tile's own sites name a non-finite stage 2 (each site once). */
            const bool own = lx >= FG_HALO && lx < FG_CHUNK + FG_HALO && ly >= FG_HALO && ly < TY + FG_HALO &&
                             x0 + lx - FG_HALO < nx && y0 + ly - FG_HALO < ny;
#pragma unroll
            for (int k = 0; k < FG_NCOMP; k++)
                if (own && !isfinite(gr[k])) nf = 2;
        }
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) G1[k * planeB + t] = (double)(fg_store)gr[k];
    }
    __syncthreads();
    /* Stage 3's trial on T+2 (A's memory, FG_TW layout), then g2 on T. */
    for (int t = tid; t < planeB; t += nth) {
        int idx;
        const bool ok = fg_tile_site(g, x0, y0, t, &idx);
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) {
            double v = 0.0;
            if (ok) {
                const int e = k * n + idx;
                v = c0 * (double)__ldg(phi + e);
                v += c2v * (double)__ldg(vel + e);
                v += c3g * (double)__ldg(g0 + e);
            }
            A[k * planeB + t] = v;
        }
    }
    __syncthreads();
    const int i = x0 + (int)threadIdx.x, lx = (int)threadIdx.x + FG_HALO;
#pragma unroll 1
    for (int r = 0; r < a.rpt; r++) {
        const int ty = (int)threadIdx.y + r * (int)blockDim.y, j = y0 + ty;
        double gr[FG_NCOMP];
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) gr[k] = 0.0;
        if (j < ny && i < nx && fg_in_s(g, i, j)) {
            fg_site s;
            fg_plane_site(A + (ty + FG_HALO) * FG_TW + lx, FG_TW, planeB, g, i, j, &s);
            fg_site_grad(a, s, p, gr);
#pragma unroll
            for (int k = 0; k < FG_NCOMP; k++)
                if (!isfinite(gr[k]) && !nf) nf = 3;
        }
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) G2[k * planeC + ty * FG_CHUNK + (int)threadIdx.x] = (double)(fg_store)gr[k];
    }
    __syncthreads();
    /* Stage 4's trial on T+2: phi, v and g1 (from G1, the same layout). */
    for (int t = tid; t < planeB; t += nth) {
        int idx;
        const bool ok = fg_tile_site(g, x0, y0, t, &idx);
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) {
            double v = 0.0;
            if (ok) {
                const int e = k * n + idx;
                v = c0 * (double)__ldg(phi + e);
                v += c4v * (double)__ldg(vel + e);
                v += c4g * G1[k * planeB + t];
            }
            A[k * planeB + t] = v;
        }
    }
    __syncthreads();
    /* g3 on T and the update (fg_rk4_site's arithmetic, a1 and a2 from shared memory). */
    fg_store* phio = (fg_store*)a.terms[5];
    fg_store* velo = (fg_store*)a.terms[6];
    const double h = a.coef[4], q6 = a.coef[5], q3 = a.coef[6];
#pragma unroll 1
    for (int r = 0; r < a.rpt; r++) {
        const int ty = (int)threadIdx.y + r * (int)blockDim.y, j = y0 + ty;
        if (j >= ny) break;
        if (i >= nx) continue;
        const bool in_s = fg_in_s(g, i, j);
        double gr[FG_NCOMP];
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) gr[k] = 0.0;
        if (in_s) {
            fg_site s;
            fg_plane_site(A + (ty + FG_HALO) * FG_TW + lx, FG_TW, planeB, g, i, j, &s);
            fg_site_grad(a, s, p, gr);
#pragma unroll
            for (int k = 0; k < FG_NCOMP; k++)
                if (!isfinite(gr[k]) && !nf) nf = 4;
        }
        const int c1i = (ty + FG_HALO) * FG_TW + lx, c2i = ty * FG_CHUNK + (int)threadIdx.x;
        fg_rk4_site(a, kv, h, q6, q3, n, j * nx + i, in_s, phi, vel, g0, G1, planeB, c1i, G2, planeC, c2i, gr,
                    phio, velo);
    }
    fg_nonfinite_min(a, nf);
}

/* The last reduction level of a flow's stage 1 (fg_k_final's order exactly),
 * then the decisions the host loop made: stop on a non-finite energy or
 * gradient, record the step, stop when converged, else the arrest. */
extern "C" __global__ void fg_k_decide(fg_cargs a) {
    if (fg_halted(a)) return;   /* uniform over the block */
    double e, m, pw;
    fg_reduce_rows(a, &e, &m, &pw);
    if (threadIdx.x == 0) fg_decide_apply(a, e, m, pw);
}

/* The end of an RK4 step, one thread per site (the flow without a fused
 * stage 4): phi and v in place from the four stage gradients (terms[0..3]),
 * fg_rk4_site's arithmetic (written out: kept in 64-bit indexing, it holds
 * fewer registers), then the unit-vector constraint (a.project) like
 * fg_k_constrain. coef[0] = -dt^2/6, coef[1] = -dt/6, coef[2] = -dt/3. The
 * step counters are committed by the next decision. */
extern "C" __global__ void fg_k_update(fg_cargs a) {
    if (fg_halted(a)) return;
    volatile fg_flowctl* c = (volatile fg_flowctl*)a.ctl;
    const double kv = c->kv;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= a.n) return;
    fg_store* phi = (fg_store*)a.phi;
    fg_store* vel = (fg_store*)a.vel;
    const fg_store* g0 = (const fg_store*)a.terms[0];
    const fg_store* g1 = (const fg_store*)a.terms[1];
    const fg_store* g2 = (const fg_store*)a.terms[2];
    const fg_store* g3 = (const fg_store*)a.terms[3];
    const double cv = kv * a.dt, h = a.coef[0], q6 = a.coef[1], q3 = a.coef[2];
    double u[FG_NCOMP], w[FG_NCOMP];
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        const long long e = (long long)k * a.n + idx;
        const double f = phi[e], v = vel[e], a0 = g0[e], a1 = g1[e], a2 = g2[e], a3 = g3[e];
        double x = 0.0;
        x += 1.0 * f;
        x += cv * v;
        x += h * a0;
        x += h * a1;
        x += h * a2;
        double y = 0.0;
        y += kv * v;
        y += q6 * a0;
        y += q3 * a1;
        y += q3 * a2;
        y += q6 * a3;
        u[k] = x;
        w[k] = y;
    }
    const long long j = idx / a.nx, i = idx - j * a.nx;
    if (a.project && (a.periodic || (i >= 2 && i < a.nx - 2 && j >= 2 && j < a.ny - 2))) {
        double nn = 0.0;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) nn += u[k] * u[k];
        const double inv = 1.0 / sqrt(nn);
        double vp = 0.0;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) {
            u[k] *= inv;
            vp += w[k] * u[k];
        }
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) w[k] -= vp * u[k];
    }
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        const long long e = (long long)k * a.n + idx;
        phi[e] = (fg_store)u[k];
        vel[e] = (fg_store)w[k];
    }
}
