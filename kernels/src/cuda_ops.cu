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

typedef struct {
    long long len;   /* elements */
    int nterms;      /* at most FG_CUDA_MAX_TERMS */
    int pad_;
    double coef[FG_CUDA_MAX_TERMS];
    fg_dptr terms[FG_CUDA_MAX_TERMS];
    fg_dptr out;
} fg_combine_args;

/* out[e] = sum_t coef[t] * terms[t][e], left to right in double, for e < len;
 * rounded to fg_store once. */
#define FG_T(t) ((double)((const fg_store*)a.terms[t])[e])
extern "C" __global__ void fg_k_combine(fg_combine_args a) {
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
