/* fg_cargs: the argument block of every CUDA kernel, passed by value. Shared
 * verbatim between the NVRTC translation unit and the cgo caller in
 * kernels/cuda, so it is plain C with fixed-size fields; device pointers are
 * unsigned long long (CUdeviceptr) on both sides. */
#ifndef FG_CUDA_ARGS_H
#define FG_CUDA_ARGS_H

#define FG_CUDA_MAX_TERMS 8
/* Sites of one reduction chunk: a warp's 32 consecutive sites of one row. */
#define FG_CHUNK 32
/* Threads of the single block that combines per-row partials. Part of the
 * definition of the reduction order, never taken from the occupancy API. */
#define FG_FINAL_THREADS 256

typedef unsigned long long fg_dptr;

typedef struct {
    long long nx, ny;
    long long n;          /* nx*ny */
    long long nchunk;     /* chunks per row: ceil(nx/FG_CHUNK) */
    int periodic;         /* else fixed: the outer two layers are held */
    int project;          /* project gradients onto the unit-vector tangent space */
    int want_energy;
    int density;          /* -1: energy density, k >= 0: fg_density(k) */
    double hx, hy, ox, oy;
    double penalty;       /* doubler penalty coefficient c */
    fg_dptr params;       /* FG_NPARAMS doubles on the device */
    fg_dptr phi;
    fg_dptr vel;          /* 0: none */
    fg_dptr out;          /* 0: none (density) */
    fg_dptr part;         /* 3 * ny * nchunk chunk partials: energy, max, power */
    int nterms;
    int pad_;
    long long len;        /* elements, for combine and non-finite scan */
    double coef[FG_CUDA_MAX_TERMS];
    fg_dptr terms[FG_CUDA_MAX_TERMS];
    /* The tiled stencil kernel and the fused flow on the device. */
    fg_dptr ctl;          /* fg_flowctl of a device flow; 0 outside one */
    fg_dptr ring;         /* fg_flowrec[ringcap]: one record per step evaluated */
    long long ringcap;
    int stage;            /* in a flow: 1 stage-1 gradient and its reduction, 2..4 RK4 stages, 5 update */
    int rpt;              /* fg_k_tile: rows per thread (tile height = blockDim.y * rpt) */
    int energy_arrest;    /* arrest when the energy rose (else when v.g > 0) */
    int pad2_;
    double tol;           /* convergence: max|grad| < tol */
    double dt;
    /* A flow's stage 1 finishes its own reduction (last-block-done,
     * fixed order) and stage 4 takes the RK4 update (ping-pong buffers). */
    fg_dptr cnt;          /* fold: unsigned counters, one per tile row band plus one, zero between launches */
    fg_dptr rows;         /* fold: row partials (3 planes of ny) */
    int fold;             /* fg_k_tile stage 1: reduce and decide in the last block */
    int pad3_;            /* fg_k_tile_up (stage 4 fused with the RK4 update) writes terms[5], terms[6]
                             (phi', v'), from terms[0..2] = phi, v, G1 (the loader's), terms[3] = G0,
                             terms[4] = G2 and coef[3..5] = -dt^2/6, -dt/6, -dt/3; no gradient is stored */
    unsigned long long seed; /* fg_k_random */
} fg_cargs;

/* Elements of one Dot partial (kernels.DotBlock): summed in index order by
 * lanes, then a warp's fixed tree. */
#define FG_DOT_CHUNK 2048

/* Why a device flow stopped (fg_flowctl.stop). */
#define FG_STOP_CONVERGED 1
#define FG_STOP_NONFINITE 2   /* stage-1 energy or gradient not finite */
#define FG_STOP_HALTED 3      /* a stage 2-4 of the step before was not finite (fg_flowctl.nonfinite) */

/* The state of a device flow, in device memory: written by the stage-1
 * reduction's last level (fg_k_decide or the folded stage 1), read by every flow kernel,
 * so the arrest decision and the stop test never need the host. */
typedef struct {
    long long step;       /* the flow's step number */
    long long resets;     /* velocity resets by the arrest test */
    long long taken;      /* steps taken since the host last set the block */
    long long nrec;       /* records written to the ring */
    int stop;             /* FG_STOP_*, 0 while running */
    int nonfinite;        /* RK4 stage 2..4 whose gradient was not finite, 0 if none */
    int arrest;           /* this step's arrest decision */
    int pending;          /* a step was decided and not yet committed: the next decision (or the host,
                             at the end of a run) commits it unless a later stage went non-finite */
    double kv;            /* 0 when arrested, else 1: multiplies the velocity */
    double prev_energy;   /* stage-1 energy of the previous step (energy arrest) */
    double energy1;       /* stage-1 energy of this step */
} fg_flowctl;

/* One step's stage-1 reductions, as the host history sees them. */
typedef struct {
    long long step, resets;
    double energy, max_grad;
} fg_flowrec;

#endif
