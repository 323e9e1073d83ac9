/* fg_args: the argument block of every CPU kernel. Shared verbatim between the
 * generated translation unit and the cgo caller in kernels/cpu, so keep it plain
 * C with fixed-size fields. */
#ifndef FG_CPU_ARGS_H
#define FG_CPU_ARGS_H

#define FG_MAX_TERMS 8

typedef struct {
    long nx, ny, nz;  /* nz = 1 on a plane; ny = nz = 1 on a line */
    int dims;         /* axes of the grid: 1, 2 or 3 */
    int wrap[3];      /* axis x, y, z is periodic (else fixed, or free) */
    int free_edges;   /* natural boundary: no site held, in-box stencils at the edges;
                         neither: fixed, the outer two layers are held */
    int project;      /* project gradients onto the unit-vector tangent space */
    int want_energy;
    int density;      /* -1: energy density, k >= 0: fg_density(k) */
    double hx, hy, hz, ox, oy, oz;
    double penalty;   /* doubler penalty coefficient c */
    const double* params;
    const double* phi;
    const double* vel;   /* may be NULL */
    double* out;
    double* work;
    double* row_energy;  /* per line along x: index k*ny + j */
    double* row_max;
    double* row_power;
    int nterms;
    double coef[FG_MAX_TERMS];
    const double* terms[FG_MAX_TERMS];
    int rate;            /* fg_k_rate: the kernels.RateKind */
} fg_args;

/* A kernel processes rows [lo, hi) (or elements, for fg_k_combine). */
typedef void (*fg_kernel)(const fg_args* a, long lo, long hi);

#endif
