/* The CUDA field engine on lines, 3D lattices and boundaries set per axis
 * (kernels.Grid that is not Planar, and every grid of a point source with
 * FG_DIM 3): the site kernels of the second translation unit, which kernels/cuda
 * compiles after the point source, cuda_args.h, stencil.h, cuda_site.cu,
 * cuda_reduce.cu and cuda_elem.cu (the elementwise kernels and the reductions
 * are shared with the planar unit, whose source does not change).
 *
 * The math is cpu_kernels.c.tmpl's site for site: the same fourth-order
 * stencils along every axis the grid has (d_xz = d_z of the d_x stencil, d_yz
 * = d_z of the d_y stencil), none along an axis it lacks; a fixed axis holds
 * its two outer layers, which carry no energy and get a zero gradient; a
 * periodic axis wraps. Site (i, j, k) is at (k*ny + j)*nx + i, line r = k*ny + j.
 *
 * Layout and reductions: one thread per site of a line along x padded to whole
 * chunks of FG_CHUNK sites (one warp), as in the planar fg_k_continuum; the
 * chunk partials are the planar ones with the lines as rows, combined by
 * fg_k_rows and fg_k_final over ny*nz rows, so the order depends on the grid
 * alone. The stencil reads global memory through the read-only cache (L1/L2);
 * consecutive blocks take consecutive lines, so the y and z neighbours of a
 * block's sites are mostly in L2 from the blocks around it. */

#ifndef FG_DIM
#define FG_DIM 2
#endif

/* The lattice as the kernels of this file read it (kernels.Grid). */
typedef struct {
    long long nx, ny, nz;
    long long n;        /* nx*ny*nz */
    long long lines;    /* ny*nz */
    long long nchunk;   /* chunks per line: ceil(nx/FG_CHUNK) */
    int dims;           /* axes: 1, 2 or 3 */
    int wrap[3];        /* axis x, y, z is periodic, else fixed */
    int free_edges;     /* the free boundary: no site held (cuda_free.cu's kernels) */
    int pad_;
    double hx, hy, hz, ox, oy, oz;
} fg_grid3;

typedef struct {
    int nx, ny, nz, n, dims;
    int wx, wy, wz;
    double hx, hy, hz, ox, oy, oz;
    double cell;                    /* hx, hx*hy or hx*hy*hz */
    double ix, iy, iz;              /* 1/(12h) */
    double ixx, iyy, izz;           /* 1/(12h^2) */
    double ixy, ixz, iyz;           /* 1/(48 h h') */
} fg_geo3;

static __device__ __forceinline__ fg_geo3 fg_geo3_of(const fg_grid3& a) {
    fg_geo3 g;
    g.nx = (int)a.nx;
    g.ny = (int)a.ny;
    g.nz = (int)a.nz;
    g.n = (int)a.n;
    g.dims = a.dims;
    g.wx = a.wrap[0];
    g.wy = a.wrap[1];
    g.wz = a.wrap[2];
    g.hx = a.hx;
    g.hy = a.hy;
    g.hz = a.hz;
    g.ox = a.ox;
    g.oy = a.oy;
    g.oz = a.oz;
    g.cell = a.dims == 1 ? a.hx : (a.dims == 2 ? a.hx * a.hy : a.hx * a.hy * a.hz);
    g.ix = 1.0 / (12.0 * a.hx);
    g.iy = 1.0 / (12.0 * a.hy);
    g.iz = 1.0 / (12.0 * a.hz);
    g.ixx = 1.0 / (12.0 * a.hx * a.hx);
    g.iyy = 1.0 / (12.0 * a.hy * a.hy);
    g.izz = 1.0 / (12.0 * a.hz * a.hz);
    g.ixy = 1.0 / (48.0 * a.hx * a.hy);
    g.ixz = 1.0 / (48.0 * a.hx * a.hz);
    g.iyz = 1.0 / (48.0 * a.hy * a.hz);
    return g;
}

/* Whether site idx is held: in the two outer layers of a fixed axis; none
 * on the free boundary. */
struct fg_held3_idx {
    const fg_grid3& G;
    __device__ bool operator()(long long idx) const {
        if (G.free_edges) return false;
        const long long line = idx / G.nx, i = idx - line * G.nx;
        const long long j = line % G.ny, k = line / G.ny;
        return (!G.wrap[0] && (i < 2 || i >= G.nx - 2)) || (G.dims >= 2 && !G.wrap[1] && (j < 2 || j >= G.ny - 2)) ||
               (G.dims == 3 && !G.wrap[2] && (k < 2 || k >= G.nz - 2));
    }
};

/* Whether site (i, j, k) is held: in the two outer layers of a fixed axis. */
static __device__ __forceinline__ bool fg_held3(const fg_geo3& g, int i, int j, int k) {
    if (!g.wx && (i < 2 || i >= g.nx - 2)) return true;
    if (g.dims >= 2 && !g.wy && (j < 2 || j >= g.ny - 2)) return true;
    if (g.dims == 3 && !g.wz && (k < 2 || k >= g.nz - 2)) return true;
    return false;
}

/* fg_fill3 evaluates the site struct at (i, j, k), a site that is not held;
 * second derivatives only when asked. cpu_kernels.c.tmpl's fg_fill and
 * fg_fill_z, expression for expression. */
static __device__ __forceinline__ void fg_fill3(const fg_store* __restrict__ phi, const fg_geo3& g, int i, int j,
                                                int k, bool second, fg_site* s) {
    const int nx = g.nx, plane = g.nx * g.ny;
    const int m2 = fg_wrapi(i - 2, nx), m1 = fg_wrapi(i - 1, nx), p1 = fg_wrapi(i + 1, nx), p2 = fg_wrapi(i + 2, nx);
    int yo[5], zo[5];
#pragma unroll
    for (int m = 0; m < 5; m++) {
        yo[m] = (g.dims >= 2 ? fg_wrapi(j + m - 2, g.ny) : j) * nx;
        zo[m] = (g.dims == 3 ? fg_wrapi(k + m - 2, g.nz) : k) * plane;
    }
    const int r0 = zo[2] + yo[2];
#pragma unroll
    for (int c = 0; c < FG_NCOMP; c++) {
        const fg_store* f = phi + c * g.n;
        const double f0 = fg_ld(f + r0 + i);
        const double xm2 = fg_ld(f + r0 + m2), xm1 = fg_ld(f + r0 + m1), xp1 = fg_ld(f + r0 + p1),
                     xp2 = fg_ld(f + r0 + p2);
        s->phi[c] = f0;
        s->dx[c] = FG_D1(xm2, xm1, xp1, xp2) * g.ix;
        if (g.dims >= 2) {
            const double ym2 = fg_ld(f + zo[2] + yo[0] + i), ym1 = fg_ld(f + zo[2] + yo[1] + i);
            const double yp1 = fg_ld(f + zo[2] + yo[3] + i), yp2 = fg_ld(f + zo[2] + yo[4] + i);
            s->dy[c] = FG_D1(ym2, ym1, yp1, yp2) * g.iy;
            if (second) {
                s->dxx[c] = FG_D2(xm2, xm1, f0, xp1, xp2) * g.ixx;
                s->dyy[c] = FG_D2(ym2, ym1, f0, yp1, yp2) * g.iyy;
                s->dxy[c] = FG_DMIX(fg_ld(f + zo[2] + yo[3] + p1), fg_ld(f + zo[2] + yo[1] + p1),
                                    fg_ld(f + zo[2] + yo[3] + m1), fg_ld(f + zo[2] + yo[1] + m1),
                                    fg_ld(f + zo[2] + yo[4] + p2), fg_ld(f + zo[2] + yo[0] + p2),
                                    fg_ld(f + zo[2] + yo[4] + m2), fg_ld(f + zo[2] + yo[0] + m2)) *
                            g.ixy;
            } else {
                s->dxx[c] = 0.0;
                s->dyy[c] = 0.0;
                s->dxy[c] = 0.0;
            }
        } else {
            s->dy[c] = 0.0;
            s->dxx[c] = second ? FG_D2(xm2, xm1, f0, xp1, xp2) * g.ixx : 0.0;
            s->dyy[c] = 0.0;
            s->dxy[c] = 0.0;
        }
#if FG_DIM == 3
        if (g.dims == 3) {
            const double zm2 = fg_ld(f + zo[0] + yo[2] + i), zm1 = fg_ld(f + zo[1] + yo[2] + i);
            const double zp1 = fg_ld(f + zo[3] + yo[2] + i), zp2 = fg_ld(f + zo[4] + yo[2] + i);
            s->dz[c] = FG_D1(zm2, zm1, zp1, zp2) * g.iz;
            if (second) {
                s->dzz[c] = FG_D2(zm2, zm1, f0, zp1, zp2) * g.izz;
                s->dxz[c] = FG_DMIX(fg_ld(f + zo[3] + yo[2] + p1), fg_ld(f + zo[1] + yo[2] + p1),
                                    fg_ld(f + zo[3] + yo[2] + m1), fg_ld(f + zo[1] + yo[2] + m1),
                                    fg_ld(f + zo[4] + yo[2] + p2), fg_ld(f + zo[0] + yo[2] + p2),
                                    fg_ld(f + zo[4] + yo[2] + m2), fg_ld(f + zo[0] + yo[2] + m2)) *
                            g.ixz;
                s->dyz[c] = FG_DMIX(fg_ld(f + zo[3] + yo[3] + i), fg_ld(f + zo[1] + yo[3] + i),
                                    fg_ld(f + zo[3] + yo[1] + i), fg_ld(f + zo[1] + yo[1] + i),
                                    fg_ld(f + zo[4] + yo[4] + i), fg_ld(f + zo[0] + yo[4] + i),
                                    fg_ld(f + zo[4] + yo[0] + i), fg_ld(f + zo[0] + yo[0] + i)) *
                            g.iyz;
            } else {
                s->dzz[c] = 0.0;
                s->dxz[c] = 0.0;
                s->dyz[c] = 0.0;
            }
        } else {
            s->dz[c] = 0.0;
            s->dzz[c] = 0.0;
            s->dxz[c] = 0.0;
            s->dyz[c] = 0.0;
        }
#endif
    }
    s->x = g.ox + (double)i * g.hx;
    s->y = g.oy + (double)j * g.hy;
#if FG_DIM == 3
    s->z = g.oz + (double)k * g.hz;
#endif
}

/* Thread -> site (i, line) of the chunk-padded lines: a warp is one 32-site
 * chunk of one line, and a block of W warps is one chunk of W consecutive lines
 * (block b: chunk b % nchunk of lines (b / nchunk) * W ...), so the stencil's
 * neighbours in y are mostly the block's own loads (L1) rather than another
 * SM's. Each warp's chunk partials go to the same slot as in any other
 * mapping. Returns false for whole warps past the last line. */
static __device__ __forceinline__ bool fg_line_site(const fg_grid3& a, int* i, int* line) {
    const unsigned nch = (unsigned)a.nchunk, W = blockDim.x / FG_CHUNK;
    const unsigned c = blockIdx.x % nch, r = (blockIdx.x / nch) * W + threadIdx.x / FG_CHUNK;
    *line = (int)r;
    *i = (int)(c * FG_CHUNK + threadIdx.x % FG_CHUNK);
    return r < (unsigned)a.lines;
}

/* fg_k_nd_continuum: the continuum gradient of phi into out, with its chunk
 * partials (as fg_k_continuum). */
typedef struct {
    fg_grid3 grid;
    fg_dptr params;   /* FG_NPARAMS doubles */
    fg_dptr phi;
    fg_dptr vel;      /* 0: no power */
    fg_dptr out;
    fg_dptr part;     /* 3 planes of lines * nchunk chunk partials: energy, max, power */
    int project;      /* project gradients onto the unit-vector tangent space */
    int want_energy;
} fg_nd_gradient_args;

/* The continuum gradient's body; in a device flow (ctl set), stage 2..4 of a
 * step records a non-finite gradient in the control block. */
static __device__ __forceinline__ void fg_nd_continuum(const fg_nd_gradient_args& a, fg_dptr ctl, int stage) {
    int i, line;
    if (!fg_line_site(a.grid, &i, &line)) return;
    const fg_geo3 g = fg_geo3_of(a.grid);
    double e = 0.0, m = 0.0, pw = 0.0;
    int nf = 0;
    if (i < g.nx) {
        const int j = line % g.ny, k = line / g.ny;
        const int idx = line * g.nx + i;
        fg_store* out = (fg_store*)a.out;
        if (fg_held3(g, i, j, k)) {
            fg_zero_site(out, g.n, idx);
        } else {
            const fg_params* p = (const fg_params*)a.params;
            fg_site s;
            fg_fill3((const fg_store*)a.phi, g, i, j, k, true, &s);
            double gr[FG_NCOMP];
            fg_gradient(&s, p, gr);
            if (a.want_energy) e = fg_energy(&s, p) * g.cell;
            fg_site_project(a.project, s, gr);
            const fg_store* vel = (const fg_store*)a.vel;
            double mx = 0.0;
#pragma unroll
            for (int c = 0; c < FG_NCOMP; c++) {
                const double v = gr[c];
                out[c * g.n + idx] = (fg_store)v;
                mx = fg_maxnan(mx, isfinite(v) ? fabs(v) : FG_NAN);
                if (vel) pw += fg_ld(vel + c * g.n + idx) * v;
            }
            m = mx;
            if (stage >= 2 && !(mx == mx)) nf = stage;
        }
    }
    fg_chunk_store(a.part, a.grid.lines * a.grid.nchunk, (long long)line * a.grid.nchunk + i / FG_CHUNK, e, m, pw);
    fg_nonfinite_min(ctl, nf);
}

extern "C" __global__ void fg_k_nd_continuum(fg_nd_gradient_args a) { fg_nd_continuum(a, 0, 0); }

/* ---- The device flow on these grids (kernels.Stepper) ----
 *
 * A step is ten launches that the host captures into a CUDA graph: stage 1
 * (fg_k_nd_stage: the gradient at phi with energy, max and power), fg_k_rows
 * and fg_k_decide (the arrest and stop tests, cuda_reduce.cu), then for
 * stages 2..4 the trial field (fg_k_nd_trial, the velocity's coefficient
 * times the decision kv) and its gradient (fg_k_nd_stage), and the RK4
 * update in place (fg_k_nd_update). The trials and the update are the host
 * loop's Combine and Constrain (core/flow.go), term for term. Every kernel
 * returns at once once the flow has stopped. */
typedef struct {
    fg_nd_gradient_args g;
    fg_dptr ctl;      /* fg_flowctl */
    int stage;        /* 1..4 */
    int pad_;
} fg_nd_stage_args;

extern "C" __global__ void fg_k_nd_stage(fg_nd_stage_args a) {
    if (fg_halted(a.ctl, a.stage)) return;   /* uniform over the launch */
    fg_nd_continuum(a.g, a.ctl, a.stage);
}

typedef struct {
    long long len;    /* values: FG_NCOMP columns of the grid's sites */
    fg_dptr ctl;
    int stage;        /* 2..4 */
    int nterms;       /* 2 or 3 */
    double coef[3];   /* phi, v (times kv), a stage gradient */
    fg_dptr terms[3];
    fg_dptr out;
} fg_nd_trial_args;

/* A stage's trial field: fg_k_combine's sum with the velocity's coefficient
 * multiplied by the arrest decision kv in {0, 1}, written as fg_sum_terms'
 * expressions for two and three terms (its coefficients in a local array
 * would be indexed at run time, a stack frame). */
extern "C" __global__ void fg_k_nd_trial(fg_nd_trial_args a) {
    if (fg_halted(a.ctl, a.stage)) return;
    const double kv = ((const volatile fg_flowctl*)a.ctl)->kv;
    const double c0 = a.coef[0], c1 = a.coef[1] * kv, c2 = a.coef[2];
    const fg_store* t0 = (const fg_store*)a.terms[0];
    const fg_store* t1 = (const fg_store*)a.terms[1];
    const fg_store* t2 = (const fg_store*)a.terms[2];
    fg_store* out = (fg_store*)a.out;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.len; e += stride) {
        double v;
        if (a.nterms == 2) v = c0 * (double)t0[e] + c1 * (double)t1[e];
        else v = c0 * (double)t0[e] + c1 * (double)t1[e] + c2 * (double)t2[e];
        out[e] = (fg_store)v;
    }
}

typedef struct {
    fg_grid3 grid;
    fg_dptr ctl;              /* fg_flowctl */
    fg_dptr phi, vel;         /* updated in place */
    fg_dptr g0, g1, g2, g3;   /* the four stage gradients */
    double dt;
    double h, q6, q3;         /* -dt^2/6, -dt/6, -dt/3 */
    int project;              /* the unit-vector constraint */
    int pad_;
} fg_nd_update_args;

/* The end of an RK4 step, one thread per site: cuda_flow.cu's fg_k_update
 * with this file's held test. The arithmetic is written out in both: one
 * shared inline function raised fg_k_update's registers from 48 to 52-56
 * (Abelian Higgs, NVRTC 13.5), past its budget. */
extern "C" __global__ void fg_k_nd_update(fg_nd_update_args a) {
    if (fg_halted(a.ctl, 5)) return;
    const double kv = ((const volatile fg_flowctl*)a.ctl)->kv;
    const fg_grid3& G = a.grid;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= G.n) return;
    fg_store* phi = (fg_store*)a.phi;
    fg_store* vel = (fg_store*)a.vel;
    const fg_store* g0 = (const fg_store*)a.g0;
    const fg_store* g1 = (const fg_store*)a.g1;
    const fg_store* g2 = (const fg_store*)a.g2;
    const fg_store* g3 = (const fg_store*)a.g3;
    const double cv = kv * a.dt, h = a.h, q6 = a.q6, q3 = a.q3;
    double u[FG_NCOMP], w[FG_NCOMP];
#pragma unroll
    for (int c = 0; c < FG_NCOMP; c++) {
        const long long e = (long long)c * G.n + idx;
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
        u[c] = x;
        w[c] = y;
    }
    if (a.project && !fg_held3_idx{G}(idx)) {
        double nn = 0.0;
#pragma unroll
        for (int c = 0; c < FG_NCOMP; c++) nn += u[c] * u[c];
        const double inv = 1.0 / sqrt(nn);
        double vp = 0.0;
#pragma unroll
        for (int c = 0; c < FG_NCOMP; c++) {
            u[c] *= inv;
            vp += w[c] * u[c];
        }
#pragma unroll
        for (int c = 0; c < FG_NCOMP; c++) w[c] -= vp * u[c];
    }
#pragma unroll
    for (int c = 0; c < FG_NCOMP; c++) {
        const long long e = (long long)c * G.n + idx;
        phi[e] = (fg_store)u[c];
        vel[e] = (fg_store)w[c];
    }
}

typedef struct {
    fg_grid3 grid;
    fg_dptr params;
    fg_dptr phi;
    fg_dptr out;    /* 0: none, only the integral */
    fg_dptr part;   /* chunk partials, 3 planes of lines * nchunk: the sums in the first */
    int density;    /* -1: energy density, k >= 0: fg_density(k) */
    int pad_;
} fg_nd_density_args;

/* Density k (or the energy density for k < 0) on the sites that are not held,
 * zero on the others; partial sums of value * cell in the energy plane. */
extern "C" __global__ void fg_k_nd_density(fg_nd_density_args a) {
    int i, line;
    if (!fg_line_site(a.grid, &i, &line)) return;
    const fg_geo3 g = fg_geo3_of(a.grid);
    double v = 0.0;
    if (i < g.nx) {
        const int j = line % g.ny, k = line / g.ny;
        const int idx = line * g.nx + i;
        if (!fg_held3(g, i, j, k)) {
            const fg_params* p = (const fg_params*)a.params;
            fg_site s;
            fg_fill3((const fg_store*)a.phi, g, i, j, k, true, &s);
            v = a.density < 0 ? fg_energy(&s, p) : fg_density(a.density, &s, p);
        }
        if (a.out) ((fg_store*)a.out)[idx] = (fg_store)v;
    }
    fg_chunk_store(a.part, a.grid.lines * a.grid.nchunk, (long long)line * a.grid.nchunk + i / FG_CHUNK, v * g.cell,
                   0.0, 0.0);
}

/* fg_k_nd_constrain and fg_k_nd_project: fg_k_constrain and fg_k_project on
 * this file's grids, one thread per site. */
typedef struct {
    fg_grid3 grid;
    fg_dptr phi;
    fg_dptr x;   /* constrain: the velocity (0: none); project: projected in place */
} fg_nd_site_args;


/* The site of thread idx (false past the last site or on a held one). */
static __device__ __forceinline__ bool fg_free_site3(const fg_grid3& G, long long* idx) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= G.n) return false;
    *idx = t;
    return !fg_held3_idx{G}(t);
}

/* Unit-vector constraint: normalise phi and project the velocity x (may be
 * 0) onto the tangent space, at sites that are not held. */
extern "C" __global__ void fg_k_nd_constrain(fg_nd_site_args a) {
    long long idx;
    if (!fg_free_site3(a.grid, &idx)) return;
    const long long n = a.grid.n;
    fg_store* phi = (fg_store*)a.phi;
    fg_store* vel = (fg_store*)a.x;
    double u[FG_NCOMP];
    double nn = 0.0;
#pragma unroll
    for (int c = 0; c < FG_NCOMP; c++) {
        u[c] = phi[c * n + idx];
        if (!FG_AUX(c)) nn += u[c] * u[c];
    }
    const double inv = 1.0 / sqrt(nn);
    double vp = 0.0;
#pragma unroll
    for (int c = 0; c < FG_NCOMP; c++) {
        if (FG_AUX(c)) continue;
        u[c] *= inv;
        phi[c * n + idx] = (fg_store)u[c];
        if (vel) vp += (double)vel[c * n + idx] * u[c];
    }
    if (vel) {
#pragma unroll
        for (int c = 0; c < FG_NCOMP; c++)
            if (!FG_AUX(c)) vel[c * n + idx] = (fg_store)((double)vel[c * n + idx] - vp * u[c]);
    }
}

/* x less its part along phi/|phi| (phi read only), at sites that are not held. */
extern "C" __global__ void fg_k_nd_project(fg_nd_site_args a) {
    long long idx;
    if (!fg_free_site3(a.grid, &idx)) return;
    const long long n = a.grid.n;
    const fg_store* phi = (const fg_store*)a.phi;
    fg_store* x = (fg_store*)a.x;
    double nn = 0.0, xp = 0.0;
#pragma unroll
    for (int c = 0; c < FG_NCOMP; c++) {
        if (FG_AUX(c)) continue;
        const double u = phi[c * n + idx];
        nn += u * u;
        xp += (double)x[c * n + idx] * u;
    }
    const double cc = xp / nn;
#pragma unroll
    for (int c = 0; c < FG_NCOMP; c++)
        if (!FG_AUX(c)) x[c * n + idx] = (fg_store)((double)x[c * n + idx] - cc * (double)phi[c * n + idx]);
}

/* Program.Rate on this file's grids (cuda_reduce.cu's fg_rate), one thread per site. */
typedef struct {
    fg_rate_core r;
    fg_grid3 grid;
} fg_nd_rate_args;

extern "C" __global__ void fg_k_nd_rate(fg_nd_rate_args a) { fg_rate(a.r, fg_held3_idx{a.grid}); }

/* core.CentripetalProgram on this file's grids (cuda_reduce.cu's fg_centripetal). */
typedef struct {
    fg_centripetal_core c;
    fg_grid3 grid;
} fg_nd_centripetal_args;

extern "C" __global__ void fg_k_nd_centripetal(fg_nd_centripetal_args a) { fg_centripetal(a.c, fg_held3_idx{a.grid}); }

/* ---- The consistent form: fg_k_nd_partials, then fg_k_nd_consistent ----
 *
 * cpu_kernels.c.tmpl's fg_k_partials and fg_k_consistent, site for site, in
 * two passes through a work buffer of nb * FG_NCOMP double columns (nb = 7
 * on a 3D grid: de/dphi, de/ddx, de/ddy, d4x phi, d4y phi, de/ddz, d4z phi;
 * 5 otherwise, the y blocks zero on a line). Pass 1 writes them on the sites
 * that are not held (zero on the others) with the energy's chunk partials,
 * cell * e + (c/2) w (d4x^2 + d4y^2 + d4z^2) (w: fg_pen_weight3); pass 2
 * applies the transposed stencils,
 *   g = de/dphi - D_x[de/ddx] - D_y[de/ddy] - D_z[de/ddz]
 *       + (c/A) (d4x[d4x phi] + d4y[d4y phi] + d4z[d4z phi])
 * over the axes the grid has (A: fg_pen_area3), projects and stores it, with
 * the max and power partials. A planar source's work column de/ddz is zero. */
typedef struct {
    fg_grid3 grid;
    fg_dptr params;
    fg_dptr phi;
    fg_dptr vel;      /* 0: no power */
    fg_dptr out;
    fg_dptr part;     /* 3 planes of lines * nchunk: pass 1 the energy, pass 2 max and power */
    fg_dptr work;     /* nb * FG_NCOMP * n doubles */
    int project;
    int pad_;
    double penalty;   /* the doubler penalty coefficient c */
} fg_nd_consistent_args;

/* A of the penalty's gradient c/A: hx^2 on a line, hx*hy otherwise. */
static __device__ __forceinline__ double fg_pen_area3(const fg_geo3& g) {
    return g.dims == 1 ? g.hx * g.hx : g.hx * g.hy;
}
/* The penalty's weight w = cell/A (1 on a plane). */
static __device__ __forceinline__ double fg_pen_weight3(const fg_geo3& g) {
    return g.dims == 2 ? 1.0 : g.cell / fg_pen_area3(g);
}

/* The neighbour offsets of fg_fill3: x columns m2..p2 (wrapped), line
 * offsets yo[] of rows j-2..j+2 and plane offsets zo[] of k-2..k+2. */
static __device__ __forceinline__ void fg_offsets3(const fg_geo3& g, int i, int j, int k, int* xo, int* yo, int* zo) {
    xo[0] = fg_wrapi(i - 2, g.nx);
    xo[1] = fg_wrapi(i - 1, g.nx);
    xo[2] = fg_wrapi(i + 1, g.nx);
    xo[3] = fg_wrapi(i + 2, g.nx);
#pragma unroll
    for (int m = 0; m < 5; m++) {
        yo[m] = (g.dims >= 2 ? fg_wrapi(j + m - 2, g.ny) : j) * g.nx;
        zo[m] = (g.dims == 3 ? fg_wrapi(k + m - 2, g.nz) : k) * g.nx * g.ny;
    }
}

extern "C" __global__ void fg_k_nd_partials(fg_nd_consistent_args a) {
    int i, line;
    if (!fg_line_site(a.grid, &i, &line)) return;
    const fg_geo3 g = fg_geo3_of(a.grid);
    double e = 0.0;
    if (i < g.nx) {
        const int j = line % g.ny, k = line / g.ny;
        const int idx = line * g.nx + i;
        const long long n = g.n;
        double* w = (double*)a.work;
        if (fg_held3(g, i, j, k)) {
            const int nb = g.dims == 3 ? 7 : 5;
            for (int b = 0; b < nb * FG_NCOMP; b++) w[b * n + idx] = 0.0;
        } else {
            const fg_params* p = (const fg_params*)a.params;
            const fg_store* phi = (const fg_store*)a.phi;
            fg_site s;
            fg_fill3(phi, g, i, j, k, false, &s);
            double dphi[FG_NCOMP], ddx[FG_NCOMP], ddy[FG_NCOMP];
#if FG_DIM == 3
            double ddz[FG_NCOMP];
            fg_partials(&s, p, dphi, ddx, ddy, ddz);
#else
            fg_partials(&s, p, dphi, ddx, ddy);
#endif
            const double en = fg_energy(&s, p);
            int xo[4], yo[5], zo[5];
            fg_offsets3(g, i, j, k, xo, yo, zo);
            const int r0 = zo[2] + yo[2];
            double qsum = 0.0;
#pragma unroll
            for (int c = 0; c < FG_NCOMP; c++) {
                const fg_store* f = phi + c * n;
                const double qx = FG_D4(fg_ld(f + r0 + xo[0]), fg_ld(f + r0 + xo[1]), fg_ld(f + idx), fg_ld(f + r0 + xo[2]),
                                        fg_ld(f + r0 + xo[3]));
                double qy = 0.0;
                if (g.dims >= 2)
                    qy = FG_D4(fg_ld(f + zo[2] + yo[0] + i), fg_ld(f + zo[2] + yo[1] + i), fg_ld(f + idx),
                               fg_ld(f + zo[2] + yo[3] + i), fg_ld(f + zo[2] + yo[4] + i));
                double qq = qx * qx + qy * qy;
                if (g.dims == 3) {
                    const double qz = FG_D4(fg_ld(f + zo[0] + yo[2] + i), fg_ld(f + zo[1] + yo[2] + i), fg_ld(f + idx),
                                            fg_ld(f + zo[3] + yo[2] + i), fg_ld(f + zo[4] + yo[2] + i));
                    qq += qz * qz;
#if FG_DIM == 3
                    w[(5 * FG_NCOMP + c) * n + idx] = ddz[c];
#else
                    w[(5 * FG_NCOMP + c) * n + idx] = 0.0;
#endif
                    w[(6 * FG_NCOMP + c) * n + idx] = qz;
                }
                qsum += qq;
                w[c * n + idx] = dphi[c];
                w[(FG_NCOMP + c) * n + idx] = ddx[c];
                w[(2 * FG_NCOMP + c) * n + idx] = g.dims >= 2 ? ddy[c] : 0.0;
                w[(3 * FG_NCOMP + c) * n + idx] = qx;
                w[(4 * FG_NCOMP + c) * n + idx] = qy;
            }
            e = en * g.cell + 0.5 * a.penalty * qsum * fg_pen_weight3(g);
        }
    }
    fg_chunk_store(a.part, a.grid.lines * a.grid.nchunk, (long long)line * a.grid.nchunk + i / FG_CHUNK, e, 0.0, 0.0);
}

extern "C" __global__ void fg_k_nd_consistent(fg_nd_consistent_args a) {
    int i, line;
    if (!fg_line_site(a.grid, &i, &line)) return;
    const fg_geo3 g = fg_geo3_of(a.grid);
    double m = 0.0, pw = 0.0;
    if (i < g.nx) {
        const int j = line % g.ny, k = line / g.ny;
        const int idx = line * g.nx + i;
        const long long n = g.n;
        fg_store* out = (fg_store*)a.out;
        if (fg_held3(g, i, j, k)) {
            fg_zero_site(out, g.n, idx);
        } else {
            const double* w = (const double*)a.work;
            const fg_store* phi = (const fg_store*)a.phi;
            const double pen = a.penalty / fg_pen_area3(g);
            int xo[4], yo[5], zo[5];
            fg_offsets3(g, i, j, k, xo, yo, zo);
            const int r0 = zo[2] + yo[2];
            double gr[FG_NCOMP];
#pragma unroll
            for (int c = 0; c < FG_NCOMP; c++) {
                const double* ex = w + (FG_NCOMP + c) * n;
                const double* ey = w + (2 * FG_NCOMP + c) * n;
                const double* qx = w + (3 * FG_NCOMP + c) * n;
                const double* qy = w + (4 * FG_NCOMP + c) * n;
                double v = w[c * n + idx];
                v -= FG_D1(ex[r0 + xo[0]], ex[r0 + xo[1]], ex[r0 + xo[2]], ex[r0 + xo[3]]) * g.ix;
                if (g.dims >= 2)
                    v -= FG_D1(ey[zo[2] + yo[0] + i], ey[zo[2] + yo[1] + i], ey[zo[2] + yo[3] + i], ey[zo[2] + yo[4] + i]) * g.iy;
                if (g.dims == 3) {
                    const double* ez = w + (5 * FG_NCOMP + c) * n;
                    v -= FG_D1(ez[zo[0] + yo[2] + i], ez[zo[1] + yo[2] + i], ez[zo[3] + yo[2] + i], ez[zo[4] + yo[2] + i]) * g.iz;
                }
                if (pen != 0.0) {
                    double q = FG_D4(qx[r0 + xo[0]], qx[r0 + xo[1]], qx[idx], qx[r0 + xo[2]], qx[r0 + xo[3]]);
                    if (g.dims >= 2)
                        q += FG_D4(qy[zo[2] + yo[0] + i], qy[zo[2] + yo[1] + i], qy[idx], qy[zo[2] + yo[3] + i],
                                   qy[zo[2] + yo[4] + i]);
                    if (g.dims == 3) {
                        const double* qz = w + (6 * FG_NCOMP + c) * n;
                        q += FG_D4(qz[zo[0] + yo[2] + i], qz[zo[1] + yo[2] + i], qz[idx], qz[zo[3] + yo[2] + i],
                                   qz[zo[4] + yo[2] + i]);
                    }
                    v += pen * q;
                }
                gr[c] = v;
            }
            /* fg_finish of the CPU template: the projection reads the field. */
            if (a.project) {
                double gn = 0.0, nn = 0.0;
#pragma unroll
                for (int c = 0; c < FG_NCOMP; c++) {
                    if (FG_AUX(c)) continue;
                    const double u = fg_ld(phi + c * n + idx);
                    gn += gr[c] * u;
                    nn += u * u;
                }
                const double t = gn / nn;
#pragma unroll
                for (int c = 0; c < FG_NCOMP; c++)
                    if (!FG_AUX(c)) gr[c] -= t * fg_ld(phi + c * n + idx);
            }
            const fg_store* vel = (const fg_store*)a.vel;
#pragma unroll
            for (int c = 0; c < FG_NCOMP; c++) {
                const double v = FG_AUX(c) ? -gr[c] : gr[c];
                out[c * n + idx] = (fg_store)v;
                m = fg_maxnan(m, isfinite(v) ? fabs(v) : FG_NAN);
                if (vel) pw += fg_ld(vel + c * n + idx) * v;
            }
        }
    }
    /* The max and power partials; the energy's are pass 1's. */
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        m = fg_maxnan(m, __shfl_down_sync(FG_FULL, m, off));
        pw += __shfl_down_sync(FG_FULL, pw, off);
    }
    if ((threadIdx.x & 31) == 0) {
        const long long plane = a.grid.lines * a.grid.nchunk, slot = (long long)line * a.grid.nchunk + i / FG_CHUNK;
        double* P = (double*)a.part;
        P[plane + slot] = m;
        P[2 * plane + slot] = pw;
    }
}

/* Program.CombineDots on this file's grids (cuda_reduce.cu's fg_combine_dots). */
typedef struct {
    fg_cdots_args d;
    fg_grid3 grid;
} fg_nd_combine_dots_args;

extern "C" __global__ void fg_k_nd_combine_dots(fg_nd_combine_dots_args a) { fg_combine_dots(a.d, fg_held3_idx{a.grid}); }
