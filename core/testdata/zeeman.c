/* fieldgo point source for theory 'zeeman' */
/* spec: {"name": "zeeman", "fields": ["nx", "ny", "nz"], "params": ["b"], "densities": [], "constraint": "unit_vector", "gradient": "derived"} */
#ifndef __CUDACC_RTC__
#include <math.h>
#include <stddef.h>
#endif
#ifndef FG_FUNC
#define FG_FUNC static inline
#endif
#define FG_NCOMP 3
#define FG_NPARAMS 1
#define FG_NDENS 0

typedef struct {
    double phi[FG_NCOMP];
    double dx[FG_NCOMP], dy[FG_NCOMP];
    double dxx[FG_NCOMP], dyy[FG_NCOMP], dxy[FG_NCOMP];
    double x, y;
} fg_site;

typedef struct { double b; } fg_params;

FG_FUNC double fg_energy(const fg_site* s, const fg_params* p) {
    (void)s;
    (void)p;
    return 0.5 * (s->dx[0] * s->dx[0]) + 0.5 * (s->dx[1] * s->dx[1]) + 0.5 * (s->dx[2] * s->dx[2]) + 0.5 * (s->dy[0] * s->dy[0]) + 0.5 * (s->dy[1] * s->dy[1]) + 0.5 * (s->dy[2] * s->dy[2]) - p->b * s->phi[2];
}

FG_FUNC void fg_partials(const fg_site* s, const fg_params* p,
                         double* de_dphi, double* de_ddx, double* de_ddy) {
    (void)s;
    (void)p;
    de_dphi[0] = 0;
    de_dphi[1] = 0;
    de_dphi[2] = -p->b;
    de_ddx[0] = 1.0 * s->dx[0];
    de_ddx[1] = 1.0 * s->dx[1];
    de_ddx[2] = 1.0 * s->dx[2];
    de_ddy[0] = 1.0 * s->dy[0];
    de_ddy[1] = 1.0 * s->dy[1];
    de_ddy[2] = 1.0 * s->dy[2];
}

FG_FUNC void fg_gradient(const fg_site* s, const fg_params* p, double* out) {
    (void)s;
    (void)p;
    out[0] = -1.0 * s->dxx[0] - 1.0 * s->dyy[0];
    out[1] = -1.0 * s->dxx[1] - 1.0 * s->dyy[1];
    out[2] = -1.0 * s->dxx[2] - 1.0 * s->dyy[2] - p->b;
}

FG_FUNC double fg_density(int k, const fg_site* s, const fg_params* p) {
    (void)s;
    (void)p;
    (void)k;
    return 0.0;
}
