/* fieldgo point source for theory 'phi4' */
/* spec: {"name": "phi4", "fields": ["u"], "params": ["lam"], "densities": [], "constraint": "", "gradient": "derived"} */
#ifndef __CUDACC_RTC__
#include <math.h>
#include <stddef.h>
#endif
#ifndef FG_FUNC
#define FG_FUNC static inline
#endif
#define FG_NCOMP 1
#define FG_NPARAMS 1
#define FG_NDENS 0
#define FG_DIM 3                  /* the site has z derivatives */

typedef struct {
    double phi[FG_NCOMP];
    double dx[FG_NCOMP], dy[FG_NCOMP], dz[FG_NCOMP];
    double dxx[FG_NCOMP], dyy[FG_NCOMP], dzz[FG_NCOMP];
    double dxy[FG_NCOMP], dxz[FG_NCOMP], dyz[FG_NCOMP];
    double x, y, z;
} fg_site;

typedef struct { double lam; } fg_params;

FG_FUNC double fg_energy(const fg_site* s, const fg_params* p) {
    (void)s;
    (void)p;
    return 0.5 * (s->dx[0] * s->dx[0]) + 0.5 * (s->dy[0] * s->dy[0]) + 0.5 * (s->dz[0] * s->dz[0]) + 0.5 * p->lam * ((1 - (s->phi[0] * s->phi[0])) * (1 - (s->phi[0] * s->phi[0])));
}

FG_FUNC void fg_partials(const fg_site* s, const fg_params* p,
                         double* de_dphi, double* de_ddx, double* de_ddy, double* de_ddz) {
    (void)s;
    (void)p;
    de_dphi[0] = -2.0 * p->lam * s->phi[0] * (1 - (s->phi[0] * s->phi[0]));
    de_ddx[0] = 1.0 * s->dx[0];
    de_ddy[0] = 1.0 * s->dy[0];
    de_ddz[0] = 1.0 * s->dz[0];
}

FG_FUNC void fg_gradient(const fg_site* s, const fg_params* p, double* out) {
    (void)s;
    (void)p;
    out[0] = -1.0 * s->dxx[0] - 1.0 * s->dyy[0] - 1.0 * s->dzz[0] - 2.0 * p->lam * s->phi[0] * (1 - (s->phi[0] * s->phi[0]));
}

FG_FUNC double fg_density(int k, const fg_site* s, const fg_params* p) {
    (void)s;
    (void)p;
    (void)k;
    return 0.0;
}
