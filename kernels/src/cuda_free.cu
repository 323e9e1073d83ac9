/* The free boundary (kernels.Grid.Free) in the grid unit, after cuda_site3d.cu:
 * cpu_kernels.c.tmpl's fg_k_partials_free, fg_k_consistent_free and
 * fg_k_density_free, expression for expression, on lines, planes and 3D
 * lattices, with cuda_site3d.cu's layout (one thread per site of a
 * chunk-padded line) and chunk partials. No site is held and the energy sums
 * over every site; a derivative reads the five in-box sites of its window (the
 * centred fourth-order stencils where they fit, the edge rows of
 * FG_FREE3_D1/FG_FREE3_D2 near the edges) and the gradient is the exact
 * gradient of that energy, with the transposed stencils (fg_free3_dT), so the
 * free boundary runs the consistent form only: the continuum form's
 * expression at an edge site is the derivative of no energy. The
 * cpu_kernels.c.tmpl comment has the reasons for the edge stencils' order. */

/* Row i - w(i) of a table: the weights times 12 h (first derivative) or
 * 12 h^2 (second), those of cpu_kernels.c.tmpl's FG_FREE_D1 and FG_FREE_D2. */
static __device__ const double FG_FREE3_D1[5][5] = {
    {-12.0, 12.0, 0.0, 0.0, 0.0},
    {-6.0, 0.0, 6.0, 0.0, 0.0},
    {1.0, -8.0, 0.0, 8.0, -1.0},
    {0.0, 0.0, -6.0, 0.0, 6.0},
    {0.0, 0.0, 0.0, -12.0, 12.0},
};
static __device__ const double FG_FREE3_D2[5][5] = {
    {12.0, -24.0, 12.0, 0.0, 0.0},
    {12.0, -24.0, 12.0, 0.0, 0.0},
    {-1.0, 16.0, -30.0, 16.0, -1.0},
    {0.0, 0.0, 12.0, -24.0, 12.0},
    {0.0, 0.0, 12.0, -24.0, 12.0},
};

/* The first site of site i's five-site window on a line of n sites. */
static __device__ __forceinline__ int fg_free3_win(int i, int n) { return i < 2 ? 0 : (i > n - 3 ? n - 5 : i - 2); }

/* Table T applied at site i of the line f (stride apart). */
static __device__ __forceinline__ double fg_free3_apply(const double (*T)[5], const fg_store* f, int stride, int i,
                                                        int n) {
    const int w = fg_free3_win(i, n);
    const double* t = T[i - w];
    const fg_store* g = f + w * stride;
    return t[0] * fg_ld(g) + t[1] * fg_ld(g + stride) + t[2] * fg_ld(g + 2 * stride) + t[3] * fg_ld(g + 3 * stride) +
           t[4] * fg_ld(g + 4 * stride);
}

/* First derivative (times 12 h) at i: the central stencil inside. */
static __device__ __forceinline__ double fg_free3_d1(const fg_store* f, int stride, int i, int n) {
    if (i >= 2 && i <= n - 3)
        return FG_D1(fg_ld(f + (i - 2) * stride), fg_ld(f + (i - 1) * stride), fg_ld(f + (i + 1) * stride),
                     fg_ld(f + (i + 2) * stride));
    return fg_free3_apply(FG_FREE3_D1, f, stride, i, n);
}

/* sum_s D1[s, t] e[s], the transpose of fg_free3_d1 at t (times 12 h): -D1
 * where only central rows reach t. */
static __device__ __forceinline__ double fg_free3_dT(const double* e, int stride, int t, int n) {
    if (t >= 5 && t <= n - 6)
        return -FG_D1(e[(t - 2) * stride], e[(t - 1) * stride], e[(t + 1) * stride], e[(t + 2) * stride]);
    double v = 0.0;
    const int s0 = t - 4 < 0 ? 0 : t - 4, s1 = t + 4 > n - 1 ? n - 1 : t + 4;
    for (int s = s0; s <= s1; s++) {
        const int w = fg_free3_win(s, n), m = t - w;
        if (m >= 0 && m <= 4) v += FG_FREE3_D1[s - w][m] * e[s * stride];
    }
    return v;
}

/* The undivided d4 difference at i where the centred window fits, else 0. */
static __device__ __forceinline__ double fg_free3_q(const fg_store* f, int stride, int i, int n) {
    if (i < 2 || i > n - 3) return 0.0;
    return FG_D4(fg_ld(f + (i - 2) * stride), fg_ld(f + (i - 1) * stride), fg_ld(f + i * stride),
                 fg_ld(f + (i + 1) * stride), fg_ld(f + (i + 2) * stride));
}

/* sum_s d4[s, t] q[s] with q zero outside the box (d4 is symmetric); the
 * terms in the CPU's order, s = t-2 .. t+2. */
static __device__ __forceinline__ double fg_free3_qT(const double* q, int stride, int t, int n) {
    double v = 0.0;
    if (t - 2 >= 0) v += 1.0 * q[(t - 2) * stride];
    if (t - 1 >= 0) v += -4.0 * q[(t - 1) * stride];
    v += 6.0 * q[t * stride];
    if (t + 1 < n) v += -4.0 * q[(t + 1) * stride];
    if (t + 2 < n) v += 1.0 * q[(t + 2) * stride];
    return v;
}

/* The first derivative (times 12 h') along the axis of stride st of the first
 * derivative along the inner axis: a mixed derivative (fg_free_mixed). */
static __device__ __forceinline__ double fg_free3_mixed(const fg_store* f, int st, int t, int n, int inner,
                                                        int istride, int ii, int ni) {
    const int w = fg_free3_win(t, n);
    const double* tab = FG_FREE3_D1[t - w];
    double v = 0.0;
    for (int m = 0; m < 5; m++)
        if (tab[m] != 0.0) v += tab[m] * fg_free3_d1(f + (w + m) * st + inner, istride, ii, ni);
    return v;
}

/* fg_fill_free: the site struct at (i, j, k) with the free boundary's
 * stencils; dxy is Dy of Dx, dxz Dz of Dx, dyz Dz of Dy. */
static __device__ __forceinline__ void fg_fill_free3(const fg_store* __restrict__ phi, const fg_geo3& g, int i, int j,
                                                     int k, bool second, fg_site* s) {
    const int nx = g.nx, ny = g.ny, sz = g.nx * g.ny;
#pragma unroll
    for (int c = 0; c < FG_NCOMP; c++) {
        const fg_store* f = phi + (long long)c * g.n;
        const fg_store* row = f + k * sz + j * nx;
        const fg_store* col = f + k * sz + i;
        s->phi[c] = fg_ld(row + i);
        s->dx[c] = fg_free3_d1(row, 1, i, nx) * g.ix;
        s->dy[c] = g.dims >= 2 ? fg_free3_d1(col, nx, j, ny) * g.iy : 0.0;
        if (second) {
            s->dxx[c] = fg_free3_apply(FG_FREE3_D2, row, 1, i, nx) / (12.0 * g.hx * g.hx);
            if (g.dims >= 2) {
                s->dyy[c] = fg_free3_apply(FG_FREE3_D2, col, nx, j, ny) / (12.0 * g.hy * g.hy);
                s->dxy[c] = fg_free3_mixed(f + k * sz, nx, j, ny, 0, 1, i, nx) / (144.0 * g.hx * g.hy);
            } else {
                s->dyy[c] = 0.0;
                s->dxy[c] = 0.0;
            }
        } else {
            s->dxx[c] = 0.0;
            s->dyy[c] = 0.0;
            s->dxy[c] = 0.0;
        }
#if FG_DIM == 3
        if (g.dims == 3) {
            const fg_store* pil = f + j * nx + i;
            s->dz[c] = fg_free3_d1(pil, sz, k, g.nz) * g.iz;
            if (second) {
                s->dzz[c] = fg_free3_apply(FG_FREE3_D2, pil, sz, k, g.nz) / (12.0 * g.hz * g.hz);
                s->dxz[c] = fg_free3_mixed(f, sz, k, g.nz, j * nx, 1, i, nx) / (144.0 * g.hx * g.hz);
                s->dyz[c] = fg_free3_mixed(f, sz, k, g.nz, i, nx, j, ny) / (144.0 * g.hy * g.hz);
            } else {
                s->dzz[c] = s->dxz[c] = s->dyz[c] = 0.0;
            }
        } else {
            s->dz[c] = s->dzz[c] = s->dxz[c] = s->dyz[c] = 0.0;
        }
#endif
    }
    s->x = g.ox + (double)i * g.hx;
    s->y = g.oy + (double)j * g.hy;
#if FG_DIM == 3
    s->z = g.oz + (double)k * g.hz;
#endif
}

/* Pass 1: fg_k_nd_partials at every site with the free stencils, into the
 * same work columns, with the energy's chunk partials. */
extern "C" __global__ void fg_k_nd_partials_free(fg_nd_consistent_args a) {
    int i, line;
    if (!fg_line_site(a.grid, &i, &line)) return;
    const fg_geo3 g = fg_geo3_of(a.grid);
    double e = 0.0;
    if (i < g.nx) {
        const int j = line % g.ny, k = line / g.ny;
        const int idx = line * g.nx + i, nx = g.nx, sz = g.nx * g.ny;
        const long long n = g.n;
        double* w = (double*)a.work;
        const fg_params* p = (const fg_params*)a.params;
        const fg_store* phi = (const fg_store*)a.phi;
        fg_site s;
        fg_fill_free3(phi, g, i, j, k, false, &s);
        double dphi[FG_NCOMP], ddx[FG_NCOMP], ddy[FG_NCOMP];
#if FG_DIM == 3
        double ddz[FG_NCOMP];
        fg_partials(&s, p, dphi, ddx, ddy, ddz);
#else
        fg_partials(&s, p, dphi, ddx, ddy);
#endif
        const double en = fg_energy(&s, p);
        double qsum = 0.0;
#pragma unroll
        for (int c = 0; c < FG_NCOMP; c++) {
            const fg_store* f = phi + c * n;
            const double qx = fg_free3_q(f + line * nx, 1, i, nx);
            const double qy = g.dims >= 2 ? fg_free3_q(f + k * sz + i, nx, j, g.ny) : 0.0;
            double qq = qx * qx + qy * qy;
            if (g.dims == 3) {
                const double qz = fg_free3_q(f + j * nx + i, sz, k, g.nz);
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
    fg_chunk_store(a.part, a.grid.lines * a.grid.nchunk, (long long)line * a.grid.nchunk + i / FG_CHUNK, e, 0.0, 0.0);
}

/* Pass 2: the transposed free stencils over pass 1's columns, then
 * fg_k_nd_consistent's projection, store and max and power partials. */
extern "C" __global__ void fg_k_nd_consistent_free(fg_nd_consistent_args a) {
    int i, line;
    if (!fg_line_site(a.grid, &i, &line)) return;
    const fg_geo3 g = fg_geo3_of(a.grid);
    double m = 0.0, pw = 0.0;
    if (i < g.nx) {
        const int j = line % g.ny, k = line / g.ny;
        const int idx = line * g.nx + i, nx = g.nx, sz = g.nx * g.ny;
        const int rowo = line * nx, colo = k * sz + i, pilo = j * nx + i;
        const long long n = g.n;
        fg_store* out = (fg_store*)a.out;
        const double* w = (const double*)a.work;
        const fg_store* phi = (const fg_store*)a.phi;
        const double pen = a.penalty / fg_pen_area3(g);
        double gr[FG_NCOMP];
#pragma unroll
        for (int c = 0; c < FG_NCOMP; c++) {
            double v = w[c * n + idx];
            v += fg_free3_dT(w + (FG_NCOMP + c) * n + rowo, 1, i, nx) * g.ix;
            if (g.dims >= 2) v += fg_free3_dT(w + (2 * FG_NCOMP + c) * n + colo, nx, j, g.ny) * g.iy;
            if (g.dims == 3) v += fg_free3_dT(w + (5 * FG_NCOMP + c) * n + pilo, sz, k, g.nz) * g.iz;
            if (pen != 0.0) {
                double q = fg_free3_qT(w + (3 * FG_NCOMP + c) * n + rowo, 1, i, nx);
                if (g.dims >= 2) q += fg_free3_qT(w + (4 * FG_NCOMP + c) * n + colo, nx, j, g.ny);
                if (g.dims == 3) q += fg_free3_qT(w + (6 * FG_NCOMP + c) * n + pilo, sz, k, g.nz);
                v += pen * q;
            }
            gr[c] = v;
        }
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

/* Density k (or the energy density for k < 0) at every site with the free
 * stencils; partial sums of value * cell in the energy plane. */
extern "C" __global__ void fg_k_nd_density_free(fg_nd_density_args a) {
    int i, line;
    if (!fg_line_site(a.grid, &i, &line)) return;
    const fg_geo3 g = fg_geo3_of(a.grid);
    double v = 0.0;
    if (i < g.nx) {
        const int j = line % g.ny, k = line / g.ny;
        const fg_params* p = (const fg_params*)a.params;
        fg_site s;
        fg_fill_free3((const fg_store*)a.phi, g, i, j, k, true, &s);
        v = a.density < 0 ? fg_energy(&s, p) : fg_density(a.density, &s, p);
        if (a.out) ((fg_store*)a.out)[line * g.nx + i] = (fg_store)v;
    }
    fg_chunk_store(a.part, a.grid.lines * a.grid.nchunk, (long long)line * a.grid.nchunk + i / FG_CHUNK, v * g.cell,
                   0.0, 0.0);
}
