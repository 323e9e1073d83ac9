/* The CUDA field engine's site code, first of its four parts (cuda_site.cu,
 * cuda_reduce.cu, cuda_ops.cu, cuda_flow.cu; appended in that order after the
 * point source, cuda_args.h and stencil.h): the storage type, the lattice
 * geometry and one site's stencil, gradient and store, the same math as
 * cpu_kernels.c.tmpl site for site.
 *
 * Layout: one thread per site of a row padded to whole chunks (FG_CHUNK = 32
 * sites, one warp), thread x = memory x, so a warp reads 32 consecutive
 * doubles. Every block size the runtime picks is a multiple of 32, so a warp is
 * always exactly one chunk of one row.
 *
 * Each kernel takes one argument block by value, a struct declared beside it
 * and named after it (fg_k_tile takes fg_tile_args); its Go twin in
 * kernels/cuda (args.go) has the same layout, checked against this source by
 * TestArgumentLayouts with NVRTC.
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

/* The lattice, as every site kernel's argument block carries it. */
typedef struct {
    long long nx, ny;
    long long n;        /* nx*ny */
    long long nchunk;   /* chunks per row: ceil(nx/FG_CHUNK) */
    int periodic;       /* else fixed: the outer two layers are held */
    int pad_;
    double hx, hy, ox, oy;
} fg_grid;

typedef struct {
    long long nx, ny, n;
    int periodic;
    double hx, hy, ox, oy;
    double ix, iy, ixx, iyy, ixy;   /* 1/(12hx), 1/(12hy), 1/(12hx^2), 1/(12hy^2), 1/(48hxhy) */
} fg_geo;

static __device__ __forceinline__ fg_geo fg_geo_of(const fg_grid& a) {
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
    g.ixy = 1.0 / (48.0 * a.hx * a.hy);
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
            s->dxy[k] = FG_DMIX(fg_ld(f + rp1 + p1), fg_ld(f + rm1 + p1), fg_ld(f + rp1 + m1), fg_ld(f + rm1 + m1),
                                fg_ld(f + rp2 + p2), fg_ld(f + rm2 + p2), fg_ld(f + rp2 + m2), fg_ld(f + rm2 + m2)) *
                        g.ixy;
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

/* fg_finish projects (project: onto the unit-vector tangent space at phi),
 * stores into out and reduces one site's gradient gr; vel (may be null) gives
 * the power v.g. */
static __device__ __forceinline__ void fg_finish(int project, const fg_store* phi, fg_store* out,
                                                 const fg_store* vel, const fg_geo& g, int idx, double* gr, double* m,
                                                 double* pw) {
    if (project) {
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

static __device__ __forceinline__ void fg_zero_site(fg_store* out, int n, int idx) {
#pragma unroll
    for (int k = 0; k < FG_NCOMP; k++) out[k * n + idx] = (fg_store)0;
}

/* Thread -> site of the chunk-padded row grid. Returns false for whole warps
 * past the last row. */
static __device__ __forceinline__ bool fg_site_of(const fg_grid& a, int* i, int* j) {
    const unsigned w = (unsigned)a.nchunk * FG_CHUNK;
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned jj = t / w;
    *j = jj;
    *i = t - jj * w;
    return jj < (unsigned)a.ny;
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

/* The site struct of (i, j) from shared planes: P is the site's value of
 * component 0, component k at P + k * cs, rows W apart; the 17-point stencil
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
        s->dxy[k] = FG_DMIX(P[W + 1], P[-W + 1], P[W - 1], P[-W - 1], P[2 * W + 2], P[-2 * W + 2], P[2 * W - 2],
                            P[-2 * W - 2]) *
                    g.ixy;
    }
    s->x = g.ox + (double)i * g.hx;
    s->y = g.oy + (double)j * g.hy;
}

/* A site's gradient gr projected onto the tangent space (project) and its
 * auxiliary components flipped (saddle form), as in fg_finish. */
static __device__ __forceinline__ void fg_site_project(int project, const fg_site& s, double* gr) {
    if (project) {
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
static __device__ __forceinline__ void fg_site_grad(int project, const fg_site& s, const fg_params* p, double* gr) {
    fg_gradient(&s, p, gr);
    fg_site_project(project, s, gr);
}
