/* The CUDA field engine's whole-field operations (see cuda_site.cu for the
 * parts): the untiled gradients and densities, one thread per site, and the
 * elementwise kernels of Program's Combine, Constrain, Project, FillRandom,
 * FirstNonFinite and the float32 transfers. */

/* fg_k_continuum and fg_k_consistent: the gradient of phi into out, with its
 * chunk partials. */
typedef struct {
    fg_grid grid;
    fg_dptr params;   /* FG_NPARAMS doubles */
    fg_dptr phi;
    fg_dptr vel;      /* 0: no power */
    fg_dptr out;
    fg_dptr part;     /* 3 * ny * nchunk chunk partials: energy, max, power */
    int project;      /* project gradients onto the unit-vector tangent space */
    int want_energy;
    double penalty;   /* fg_k_consistent: the doubler penalty coefficient c */
} fg_gradient_args;

/* Continuum Euler–Lagrange gradient: fg_gradient at every site of S. */
extern "C" __global__ void fg_k_continuum(fg_gradient_args a) {
    int i, j;
    if (!fg_site_of(a.grid, &i, &j)) return;
    const fg_geo g = fg_geo_of(a.grid);
    double e = 0.0, m = 0.0, pw = 0.0;
    if (i < g.nx) {
        const int idx = j * (int)g.nx + i;
        if (!fg_in_s(g, i, j)) {
            fg_zero_site((fg_store*)a.out, (int)g.n, idx);
        } else {
            const fg_params* p = (const fg_params*)a.params;
            fg_site s;
            fg_fill((const fg_store*)a.phi, g, i, j, true, &s);
            double gr[FG_NCOMP];
            fg_gradient(&s, p, gr);
            if (a.want_energy) e = fg_energy(&s, p) * (g.hx * g.hy);
            fg_finish(a.project, (const fg_store*)a.phi, (fg_store*)a.out, (const fg_store*)a.vel, g, idx, gr, &m,
                      &pw);
        }
    }
    fg_chunk_store(a.part, a.grid.ny * a.grid.nchunk, (long long)j * a.grid.nchunk + i / FG_CHUNK, e, m, pw);
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
extern "C" __global__ void fg_k_consistent(fg_gradient_args a) {
#if FG_NCOMP <= FG_CONSISTENT_MAX_NCOMP
    int i, j;
    if (!fg_site_of(a.grid, &i, &j)) return;
    const fg_geo g = fg_geo_of(a.grid);
    double e = 0.0, m = 0.0, pw = 0.0;
    if (i < g.nx) {
        const int idx = j * (int)g.nx + i;
        if (!fg_in_s(g, i, j)) {
            fg_zero_site((fg_store*)a.out, (int)g.n, idx);
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
            fg_finish(a.project, (const fg_store*)a.phi, (fg_store*)a.out, (const fg_store*)a.vel, g, idx, gr, &m,
                      &pw);
        }
    }
    fg_chunk_store(a.part, a.grid.ny * a.grid.nchunk, (long long)j * a.grid.nchunk + i / FG_CHUNK, e, m, pw);
#endif
}

typedef struct {
    fg_grid grid;
    fg_dptr params;
    fg_dptr phi;
    fg_dptr out;    /* 0: none, only the integral */
    fg_dptr part;   /* chunk partials, 3 planes of ny * nchunk: the sums in the first */
    int density;    /* -1: energy density, k >= 0: fg_density(k) */
    int pad_;
} fg_density_args;

/* Density k (or the energy density for k < 0) on S, zero off S; partial sums
 * of value*hx*hy in the energy plane. */
extern "C" __global__ void fg_k_density(fg_density_args a) {
    int i, j;
    if (!fg_site_of(a.grid, &i, &j)) return;
    const fg_geo g = fg_geo_of(a.grid);
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
    fg_chunk_store(a.part, a.grid.ny * a.grid.nchunk, (long long)j * a.grid.nchunk + i / FG_CHUNK, v * (g.hx * g.hy),
                   0.0, 0.0);
}

/* Program.CombineDots on the planar grid (cuda_elem.cu's fg_combine_dots). */
typedef struct {
    fg_cdots_args d;
    fg_grid grid;
} fg_combine_dots_args;

struct fg_held2 {
    const fg_grid& G;
    __device__ bool operator()(long long idx) const {
        const long long j = idx / G.nx, i = idx - j * G.nx;
        return !G.periodic && (i < 2 || i >= G.nx - 2 || j < 2 || j >= G.ny - 2);
    }
};

extern "C" __global__ void fg_k_combine_dots(fg_combine_dots_args a) { fg_combine_dots(a.d, fg_held2{a.grid}); }

/* Program.Rate on the planar grid (cuda_reduce.cu's fg_rate), one thread per site. */
typedef struct {
    fg_rate_core r;
    fg_grid grid;
} fg_rate_args;

extern "C" __global__ void fg_k_rate(fg_rate_args a) { fg_rate(a.r, fg_held2{a.grid}); }

/* core.CentripetalProgram on the planar grid (cuda_reduce.cu's fg_centripetal). */
typedef struct {
    fg_centripetal_core c;
    fg_grid grid;
} fg_centripetal_args;

extern "C" __global__ void fg_k_centripetal(fg_centripetal_args a) { fg_centripetal(a.c, fg_held2{a.grid}); }
