/* The CUDA field engine's tiled stencil and the arrested Newton flow on the
 * device (see cuda_site.cu for the parts).
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
 * coefficient is multiplied by the device's arrest decision) and the RK4
 * update with the unit-vector constraint: stages 2-4 and the update in one
 * kernel (fg_k_stages234) where it can launch, else stages 2-3 by fg_k_tile
 * and stage 4 with the update by fg_k_tile_up, else stages 2-4 by fg_k_tile
 * and the update by fg_k_update (docs/decisions/0002, 0014). Every kernel
 * first reads the control block and returns at once once the flow has
 * stopped, so the host can launch many steps ahead without reading anything. */

#define FG_HALO 2
#define FG_TW (FG_CHUNK + 2 * FG_HALO)

/* The end of an RK4 step at one site: phi' and v' from phi, v and the four
 * stage gradients a0..a3 (fg_k_combine's arithmetic, left to right from 0),
 * then the unit-vector constraint (project, sites of S) like fg_k_constrain.
 * h = -dt^2/6, q6 = -dt/6, q3 = -dt/3, as the host computes them. Component
 * k of g1 is g1[k * s1 + o1] (g2 likewise): the field planes for the fused
 * stage 4 (fg_k_tile_up: s = n, o = idx), shared memory for fg_k_stages234;
 * fg_k_update writes the same expressions out. */
template <class T1, class T2>
static __device__ __forceinline__ void fg_rk4_site(double dt, int project, double kv, double h, double q6,
                                                   double q3, int n, int idx, bool in_s, const fg_store* phi,
                                                   const fg_store* vel, const fg_store* __restrict__ g0,
                                                   const T1* __restrict__ g1, int s1, int o1,
                                                   const T2* __restrict__ g2, int s2, int o2,
                                                   const double* a3, fg_store* phio, fg_store* velo) {
    const double cv = kv * dt;
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
    if (project && in_s) {
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

typedef struct {
    fg_grid grid;
    fg_dptr params;
    fg_dptr ctl;        /* the device flow's fg_flowctl; 0 outside one (Gradient, the autotune) */
    int rpt;            /* rows per thread: the tile is blockDim.y * rpt rows high */
    int project;        /* project gradients onto the unit-vector tangent space */
    int stage;          /* in a flow: 1 the stage-1 gradient and its chunk partials, 2..4 RK4 stages */
    int nterms;         /* the field the tile loads: sum of coef[t] * terms[t], t < nterms (1..3) */
    int want_energy;
    int pad_;
    double coef[3];     /* coef[1] is multiplied by the flow's arrest decision kv */
    fg_dptr terms[3];
    fg_dptr out;        /* the gradient */
    fg_dptr vel;        /* 0: no power */
    fg_dptr part;       /* chunk partials (stage <= 1): 3 planes of ny * nchunk */
} fg_tile_args;

/* Stage 4 of a flow with the RK4 update fused: the tile's field is stage 4's
 * trial (tile.terms: phi, v, g1); phi' and v' go into the other buffer pair
 * instead of the stage gradient (tile.out unused). */
typedef struct {
    fg_tile_args tile;
    fg_dptr g0, g2;              /* the gradients of stages 1 and 3 */
    fg_dptr phi_out, vel_out;
    double h, q6, q3;            /* -dt^2/6, -dt/6, -dt/3 */
    double dt;
} fg_tile_up_args;

static __device__ __forceinline__ const fg_tile_args& fg_tile_part(const fg_tile_args& a) { return a; }
static __device__ __forceinline__ const fg_tile_args& fg_tile_part(const fg_tile_up_args& a) { return a.tile; }

/* FUSE: stage 4 with the RK4 update (fg_k_tile_up); else fg_k_tile. */
template <bool FUSE, class A>
static __device__ __forceinline__ void fg_tile_body(const A& args) {
    extern __shared__ __align__(16) double fg_tile[];  /* 16: the fill stores pairs */
    const fg_tile_args& a = fg_tile_part(args);
    if (fg_halted(a.ctl, a.stage)) return;
    const int TY = (int)blockDim.y * a.rpt;
    const int plane = (TY + 2 * FG_HALO) * FG_TW;
    const int nchunk = (int)a.grid.nchunk;
    const int cx = (int)blockIdx.x % nchunk, cy = (int)blockIdx.x / nchunk;
    const int x0 = cx * FG_CHUNK, y0 = cy * TY;
    const fg_geo g = fg_geo_of(a.grid);
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
                if constexpr (!FUSE) fg_zero_site(out, n, idx);
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
                    s.dxy[k] = FG_DMIX(P[FG_TW + 1], P[-FG_TW + 1], P[FG_TW - 1], P[-FG_TW - 1], P[2 * FG_TW + 2],
                                       P[-2 * FG_TW + 2], P[2 * FG_TW - 2], P[-2 * FG_TW - 2]) *
                               g.ixy;
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
                    if constexpr (!FUSE) out[k * n + idx] = (fg_store)v;
                    mx = isfinite(v) ? fmax(mx, fabs(v)) : FG_NAN;
                    if (vel) pw += (double)__ldg(vel + k * n + idx) * v;
                }
                m = mx;
            }
            if constexpr (FUSE)
                fg_rk4_site(args.dt, a.project, kv, args.h, args.q6, args.q3, n, idx, in_s, T0, T1,
                            (const fg_store*)args.g0, T2, n, idx, (const fg_store*)args.g2, n, idx, gr,
                            (fg_store*)args.phi_out, (fg_store*)args.vel_out);
        }
        if (a.stage <= 1) {
            fg_chunk_store(a.part, a.grid.ny * a.grid.nchunk, (long long)j * a.grid.nchunk + cx, e, m, pw);
        } else if (m != m && a.ctl) {   /* no control block: the autotune's launches */
            ((volatile fg_flowctl*)a.ctl)->nonfinite = a.stage;
        }
    }
}

extern "C" __global__ void fg_k_tile(fg_tile_args a) { fg_tile_body<false>(a); }

extern "C" __global__ void fg_k_tile_up(fg_tile_up_args a) { fg_tile_body<true>(a); }

/* Stages 2-4 of a flow in one kernel (fg_k_stages234). Only
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
 * layout), G2 (T). A non-finite gradient records its stage, the earliest
 * across blocks (a CAS minimum), so the host names it like the separate
 * kernels. */
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


typedef struct {
    fg_grid grid;
    fg_dptr params;
    fg_dptr ctl;              /* the device flow's fg_flowctl; 0 outside one (the autotune) */
    int rpt;                  /* rows per thread: the tile is blockDim.y * rpt rows high */
    int project;              /* project gradients onto the unit-vector tangent space */
    fg_dptr phi, vel, g0;     /* the step's field, velocity and stage-1 gradient */
    fg_dptr phi_out, vel_out; /* the other buffer pair */
    double one;               /* 1, the field's coefficient in every trial */
    double trial_v2;          /* dt/2: the velocity's in the trials of stages 2 and 3 (times kv) */
    double trial_g3;          /* -dt^2/4: g0's in stage 3's */
    double trial_v4;          /* dt: the velocity's in stage 4's (times kv) */
    double trial_g4;          /* -dt^2/2: g1's in stage 4's */
    double h, q6, q3;         /* the update's: -dt^2/6, -dt/6, -dt/3 */
    double dt;
} fg_stages234_args;

extern "C" __global__ void fg_k_stages234(fg_stages234_args a) {
    extern __shared__ __align__(16) double fg_sm[];
    if (fg_halted(a.ctl, 2)) return;
    const int TY = (int)blockDim.y * a.rpt;
    const int nchunk = (int)a.grid.nchunk;
    const int cx = (int)blockIdx.x % nchunk, cy = (int)blockIdx.x / nchunk;
    const int x0 = cx * FG_CHUNK, y0 = cy * TY;
    const fg_geo g = fg_geo_of(a.grid);
    const int nx = (int)g.nx, ny = (int)g.ny, n = (int)g.n;
    double kv = 1.0;
    if (a.ctl) kv = ((const volatile fg_flowctl*)a.ctl)->kv;
    const fg_store* __restrict__ phi = (const fg_store*)a.phi;
    const fg_store* __restrict__ vel = (const fg_store*)a.vel;
    const fg_store* __restrict__ g0 = (const fg_store*)a.g0;
    /* c0 = 1 is a runtime value (a.one), as the tile kernel's fill has it:
     * the same expression shape, so the compiler contracts the same products
     * into FMAs and the trials keep their bits. */
    const double c0 = a.one, c2v = a.trial_v2 * kv, c3g = a.trial_g3, c4v = a.trial_v4 * kv, c4g = a.trial_g4;
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
            fg_site_grad(a.project, s, p, gr);
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
            fg_site_grad(a.project, s, p, gr);
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
    fg_store* phio = (fg_store*)a.phi_out;
    fg_store* velo = (fg_store*)a.vel_out;
    const double h = a.h, q6 = a.q6, q3 = a.q3;
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
            fg_site_grad(a.project, s, p, gr);
#pragma unroll
            for (int k = 0; k < FG_NCOMP; k++)
                if (!isfinite(gr[k]) && !nf) nf = 4;
        }
        const int c1i = (ty + FG_HALO) * FG_TW + lx, c2i = ty * FG_CHUNK + (int)threadIdx.x;
        fg_rk4_site(a.dt, a.project, kv, h, q6, q3, n, j * nx + i, in_s, phi, vel, g0, G1, planeB, c1i, G2, planeC, c2i, gr,
                    phio, velo);
    }
    fg_nonfinite_min(a.ctl, nf);
}

typedef struct {
    fg_grid grid;
    fg_dptr ctl;              /* fg_flowctl */
    fg_dptr phi, vel;         /* updated in place */
    fg_dptr g0, g1, g2, g3;   /* the four stage gradients */
    double dt;
    double h, q6, q3;         /* -dt^2/6, -dt/6, -dt/3 */
    int project;              /* the unit-vector constraint */
    int pad_;
} fg_update_args;

/* The end of an RK4 step, one thread per site, for theories whose fused
 * stage 4 (fg_k_tile_up) cannot launch: phi and v in place from the four
 * stage gradients, fg_rk4_site's arithmetic (written out: kept in 64-bit
 * indexing, it holds fewer registers), then the unit-vector constraint like
 * fg_k_constrain. The step counters are committed by the next decision. */
extern "C" __global__ void fg_k_update(fg_update_args a) {
    if (fg_halted(a.ctl, 5)) return;
    volatile fg_flowctl* c = (volatile fg_flowctl*)a.ctl;
    const double kv = c->kv;
    const fg_grid& G = a.grid;
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
    for (int k = 0; k < FG_NCOMP; k++) {
        const long long e = (long long)k * G.n + idx;
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
    const long long j = idx / G.nx, i = idx - j * G.nx;
    if (a.project && (G.periodic || (i >= 2 && i < G.nx - 2 && j >= 2 && j < G.ny - 2))) {
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
        const long long e = (long long)k * G.n + idx;
        phi[e] = (fg_store)u[k];
        vel[e] = (fg_store)w[k];
    }
}
