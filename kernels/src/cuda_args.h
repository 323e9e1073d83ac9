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
} fg_cargs;

#endif
