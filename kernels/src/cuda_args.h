/* What the CUDA field engine's kernels and the host share: the constants of
 * the reduction order and the device flow's control block, read by the host
 * through cgo in kernels/cuda. Plain C with fixed-size fields; device
 * pointers are unsigned long long (CUdeviceptr) on both sides. Each kernel's
 * own argument block is declared beside it (cuda_site.cu). */
#ifndef FG_CUDA_ARGS_H
#define FG_CUDA_ARGS_H

/* Terms of one Combine. */
#define FG_CUDA_MAX_TERMS 8
/* Sites of one reduction chunk: a warp's 32 consecutive sites of one row. */
#define FG_CHUNK 32
/* Threads of the single block that combines per-row partials. Part of the
 * definition of the reduction order, never taken from the occupancy API. */
#define FG_FINAL_THREADS 256

typedef unsigned long long fg_dptr;

/* Elements of one Dot partial (kernels.DotBlock): summed in index order by
 * lanes, then a warp's fixed tree. */
#define FG_DOT_CHUNK 2048

/* Why a device flow stopped (fg_flowctl.stop). */
#define FG_STOP_CONVERGED 1
#define FG_STOP_NONFINITE 2   /* stage-1 energy or gradient not finite */
#define FG_STOP_HALTED 3      /* a stage 2-4 of the step before was not finite (fg_flowctl.nonfinite) */

/* The state of a device flow, in device memory: written by the stage-1
 * reduction's last level (fg_k_decide), read by every flow kernel,
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
