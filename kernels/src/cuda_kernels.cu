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
    g.nx = a.nx; g.ny = a.ny; g.n = a.n; g.periodic = a.periodic;
    g.hx = a.hx; g.hy = a.hy; g.ox = a.ox; g.oy = a.oy;
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
static __device__ __forceinline__ void fg_fill(const double* __restrict__ phi, const fg_geo& g, int i, int j,
                                              bool second, fg_site* s) {
    /* 32-bit index arithmetic: the runtime refuses fields of 2^31 values or
     * more, and 64-bit integer math costs twice the instructions. */
    const int nx = (int)g.nx, ny = (int)g.ny, n = (int)g.n;
    const int r0 = j * nx, rm1 = fg_wrapi(j - 1, ny) * nx, rm2 = fg_wrapi(j - 2, ny) * nx;
    const int rp1 = fg_wrapi(j + 1, ny) * nx, rp2 = fg_wrapi(j + 2, ny) * nx;
    const int m2 = fg_wrapi(i - 2, nx), m1 = fg_wrapi(i - 1, nx), p1 = fg_wrapi(i + 1, nx), p2 = fg_wrapi(i + 2, nx);
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        const double* f = phi + k * n;
        double f0 = __ldg(f + r0 + i);
        double xm2 = __ldg(f + r0 + m2), xm1 = __ldg(f + r0 + m1), xp1 = __ldg(f + r0 + p1), xp2 = __ldg(f + r0 + p2);
        double ym2 = __ldg(f + rm2 + i), ym1 = __ldg(f + rm1 + i), yp1 = __ldg(f + rp1 + i), yp2 = __ldg(f + rp2 + i);
        s->phi[k] = f0;
        s->dx[k] = FG_D1(xm2, xm1, xp1, xp2) * g.ix;
        s->dy[k] = FG_D1(ym2, ym1, yp1, yp2) * g.iy;
        if (second) {
            s->dxx[k] = FG_D2(xm2, xm1, f0, xp1, xp2) * g.ixx;
            s->dyy[k] = FG_D2(ym2, ym1, f0, yp1, yp2) * g.iyy;
            double dm2 = FG_D1(__ldg(f + rm2 + m2), __ldg(f + rm2 + m1), __ldg(f + rm2 + p1), __ldg(f + rm2 + p2));
            double dm1 = FG_D1(__ldg(f + rm1 + m2), __ldg(f + rm1 + m1), __ldg(f + rm1 + p1), __ldg(f + rm1 + p2));
            double dp1 = FG_D1(__ldg(f + rp1 + m2), __ldg(f + rp1 + m1), __ldg(f + rp1 + p1), __ldg(f + rp1 + p2));
            double dp2 = FG_D1(__ldg(f + rp2 + m2), __ldg(f + rp2 + m1), __ldg(f + rp2 + p1), __ldg(f + rp2 + p2));
            s->dxy[k] = FG_D1(dm2, dm1, dp1, dp2) * g.ixy;
        } else {
            s->dxx[k] = 0.0; s->dyy[k] = 0.0; s->dxy[k] = 0.0;
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
    const double* phi = (const double*)a.phi;
    if (a.project) {
        double gn = 0.0, nn = 0.0;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) {
            double p = __ldg(phi + k * (int)g.n + idx);
            gn += gr[k] * p; nn += p * p;
        }
        double t = gn / nn;
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) gr[k] -= t * __ldg(phi + k * (int)g.n + idx);
    }
    double* out = (double*)a.out;
    const double* vel = (const double*)a.vel;
    double p = 0.0, mx = 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        double v = gr[k];
        out[k * (int)g.n + idx] = v;
        mx = isfinite(v) ? fmax(mx, fabs(v)) : FG_NAN;
        if (vel) p += __ldg(vel + k * (int)g.n + idx) * v;
    }
    *m = fg_maxnan(*m, mx);
    *pw = p;
}

static __device__ __forceinline__ void fg_zero_site(const fg_cargs& a, int n, int idx) {
    double* out = (double*)a.out;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) out[k * n + idx] = 0.0;
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
            fg_fill((const double*)a.phi, g, i, j, true, &s);
            double gr[FG_NCOMP];
            fg_gradient(&s, p, gr);
            if (a.want_energy) e = fg_energy(&s, p) * (g.hx * g.hy);
            fg_finish(a, g, idx, gr, &m, &pw);
        }
    }
    fg_chunk_store(a.part, a.ny * a.nchunk, (long long)j * a.nchunk + i / FG_CHUNK, e, m, pw);
}

/* The undivided doubler differences d4x, d4y of component k at (i, j). */
static __device__ __forceinline__ void fg_d4(const double* __restrict__ f, const fg_geo& g, int i, int j,
                                             double* qx, double* qy) {
    const int nx = (int)g.nx, ny = (int)g.ny, r0 = j * nx;
    *qx = FG_D4(__ldg(f + r0 + fg_wrapi(i - 2, nx)), __ldg(f + r0 + fg_wrapi(i - 1, nx)), __ldg(f + r0 + i),
                __ldg(f + r0 + fg_wrapi(i + 1, nx)), __ldg(f + r0 + fg_wrapi(i + 2, nx)));
    *qy = FG_D4(__ldg(f + fg_wrapi(j - 2, ny) * nx + i), __ldg(f + fg_wrapi(j - 1, ny) * nx + i), __ldg(f + r0 + i),
                __ldg(f + fg_wrapi(j + 1, ny) * nx + i), __ldg(f + fg_wrapi(j + 2, ny) * nx + i));
}

/* Consistent form, fused: the exact gradient of the discrete energy divided
 * by hx*hy. The CPU computes it in two passes through a buffer of partials;
 * here each site recomputes the partials of its eight stencil neighbours in
 * registers (they are zero off S), so nothing but the field is read:
 *   g = de/dphi - D_x[de/ddx] - D_y[de/ddy] + c/(hx hy) (d4x[d4x phi] + d4y[d4y phi]). */
extern "C" __global__ void fg_k_consistent(fg_cargs a) {
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
            const double* phi = (const double*)a.phi;
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
                    ax[k] = 0.0; ay[k] = 0.0;
                    bx[k] = 6.0 * qx; by[k] = 6.0 * qy;   /* the centre of d4[d4 phi] */
                }
                e = fg_energy(&s, p) * (g.hx * g.hy) + 0.5 * a.penalty * q;
            }
            /* Neighbours at offsets -2, -1, +1, +2 along x (dir 0) and y (dir 1).
             * D1 weights (+1, -8, +8, -1) of de/dd{x,y}; D4 weights (1, -4, -4, 1). */
#pragma unroll 1
            for (int t = 0; t < 8; t++) {
                const int dir = t >> 2;
                const int off = (t & 3) < 2 ? (t & 3) - 2 : (t & 3) - 1;
                const double w1 = off == -2 ? 1.0 : off == -1 ? -8.0 : off == 1 ? 8.0 : -1.0;
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
                    if (dir == 0) { ax[k] += w1 * ddx[k]; bx[k] += w4 * qx; }
                    else          { ay[k] += w1 * ddy[k]; by[k] += w4 * qy; }
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
            fg_fill((const double*)a.phi, g, i, j, true, &s);
            v = a.density < 0 ? fg_energy(&s, p) : fg_density(a.density, &s, p);
        }
        if (a.out) ((double*)a.out)[idx] = v;
    }
    fg_chunk_store(a.part, a.ny * a.nchunk, (long long)j * a.nchunk + i / FG_CHUNK, v * (g.hx * g.hy), 0.0, 0.0);
}

/* Level 2: one warp per row combines the row's chunk partials. part: chunk
 * partials (3 planes of ny*nchunk); out: row partials (3 planes of ny). */
extern "C" __global__ void fg_k_rows(fg_cargs a) {
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
        R[j] = e; R[a.ny + j] = m; R[2 * a.ny + j] = pw;
    }
}

/* Level 3: one block of FG_FINAL_THREADS combines the row partials (part, 3
 * planes of ny) into out[0..2] = energy, max, power. */
extern "C" __global__ void fg_k_final(fg_cargs a) {
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
    se[t] = e; sm[t] = m; sp[t] = pw;
    __syncthreads();
    for (int s = FG_FINAL_THREADS / 2; s > 0; s >>= 1) {
        if (t < s) {
            se[t] += se[t + s];
            sm[t] = fg_maxnan(sm[t], sm[t + s]);
            sp[t] += sp[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        double* out = (double*)a.out;
        out[0] = se[0]; out[1] = sm[0]; out[2] = sp[0];
    }
}

/* out[e] = sum_t coef[t] * terms[t][e], left to right, for e < len. */
extern "C" __global__ void fg_k_combine(fg_cargs a) {
    double* out = (double*)a.out;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride) {
        double v;
        switch (a.nterms) {
        case 0: v = 0.0; break;
        case 1: v = a.coef[0] * ((const double*)a.terms[0])[e]; break;
        case 2: v = a.coef[0] * ((const double*)a.terms[0])[e] + a.coef[1] * ((const double*)a.terms[1])[e]; break;
        case 3:
            v = a.coef[0] * ((const double*)a.terms[0])[e] + a.coef[1] * ((const double*)a.terms[1])[e] +
                a.coef[2] * ((const double*)a.terms[2])[e];
            break;
        default:
            v = 0.0;
            for (int t = 0; t < a.nterms; t++) v += a.coef[t] * ((const double*)a.terms[t])[e];
        }
        out[e] = v;
    }
}

/* Unit-vector constraint: normalise phi and project vel (may be 0) onto the
 * tangent space, at sites that are not held. */
extern "C" __global__ void fg_k_constrain(fg_cargs a) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= a.n) return;
    const long long j = idx / a.nx, i = idx - j * a.nx;
    if (!a.periodic && (i < 2 || i >= a.nx - 2 || j < 2 || j >= a.ny - 2)) return;
    double* phi = (double*)a.phi;
    double* vel = (double*)a.vel;
    double u[FG_NCOMP];
    double nn = 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) { u[k] = phi[(long long)k * a.n + idx]; nn += u[k] * u[k]; }
    const double inv = 1.0 / sqrt(nn);
    double vp = 0.0;
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) {
        u[k] *= inv;
        phi[(long long)k * a.n + idx] = u[k];
        if (vel) vp += vel[(long long)k * a.n + idx] * u[k];
    }
    if (vel) {
#pragma unroll
        for (int k = 0; k < FG_NCOMP; k++) vel[(long long)k * a.n + idx] -= vp * u[k];
    }
}

/* The smallest index e < len whose value is not finite, into *out (an
 * unsigned long long preset to all ones). atomicMin is order independent. */
extern "C" __global__ void fg_k_nonfinite(fg_cargs a) {
    const double* x = (const double*)a.phi;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride) {
        if (!isfinite(x[e])) {
            atomicMin((unsigned long long*)a.out, (unsigned long long)e);
            return;
        }
    }
}
