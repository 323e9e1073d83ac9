/* fieldgo point source for theory 'coupled_3d' */
/* spec: {"name": "coupled_3d", "fields": ["u", "v"], "params": ["k"], "densities": [], "constraint": "", "gradient": "derived"} */
#ifndef __CUDACC_RTC__
#include <math.h>
#include <stddef.h>
#endif
#ifndef FG_FUNC
#define FG_FUNC static inline
#endif
#define FG_NCOMP 2
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

typedef struct { double k; } fg_params;

FG_FUNC double fg_energy(const fg_site* s, const fg_params* p) {
    (void)s;
    (void)p;
    return 0.5 * (s->dx[0] * s->dx[0]) + 0.5 * (s->dx[1] * s->dx[1]) + s->dx[1] * s->dz[0] * p->k * (0.1 * s->z + 1) + 0.5 * (s->dy[0] * s->dy[0]) + 0.3 * s->dy[0] * s->dz[1] * s->phi[0] + 0.5 * (s->dy[1] * s->dy[1]) + 0.5 * (s->dz[0] * s->dz[0]) + 0.5 * (s->dz[1] * s->dz[1]) + 0.5 * ((-(s->phi[0] * s->phi[0]) - (s->phi[1] * s->phi[1]) + 1) * (-(s->phi[0] * s->phi[0]) - (s->phi[1] * s->phi[1]) + 1));
}

FG_FUNC void fg_partials(const fg_site* s, const fg_params* p,
                         double* de_dphi, double* de_ddx, double* de_ddy, double* de_ddz) {
    (void)s;
    (void)p;
    const double t0 = 0.3 * s->dz[1];
    const double t1 = -2.0 * (s->phi[0] * s->phi[0]) - 2.0 * (s->phi[1] * s->phi[1]) + 2.0;
    const double t2 = p->k * (0.1 * s->z + 1);
    de_dphi[0] = s->dy[0] * t0 - s->phi[0] * t1;
    de_dphi[1] = -s->phi[1] * t1;
    de_ddx[0] = 1.0 * s->dx[0];
    de_ddx[1] = 1.0 * s->dx[1] + s->dz[0] * t2;
    de_ddy[0] = 1.0 * s->dy[0] + s->phi[0] * t0;
    de_ddy[1] = 1.0 * s->dy[1];
    de_ddz[0] = s->dx[1] * t2 + 1.0 * s->dz[0];
    de_ddz[1] = 0.3 * s->dy[0] * s->phi[0] + 1.0 * s->dz[1];
}

FG_FUNC void fg_gradient(const fg_site* s, const fg_params* p, double* out) {
    (void)s;
    (void)p;
    const double t0 = 0.3 * s->phi[0];
    const double t1 = p->k * (0.1 * s->z + 1);
    const double t2 = -2.0 * (s->phi[0] * s->phi[0]) - 2.0 * (s->phi[1] * s->phi[1]) + 2.0;
    out[0] = -0.1 * s->dx[1] * p->k - 1.0 * s->dxx[0] - s->dxz[1] * t1 - 1.0 * s->dyy[0] - s->dyz[1] * t0 - 1.0 * s->dzz[0] - s->phi[0] * t2;
    out[1] = -1.0 * s->dxx[1] - s->dxz[0] * t1 - 0.3 * s->dy[0] * s->dz[0] - 1.0 * s->dyy[1] - s->dyz[0] * t0 - 1.0 * s->dzz[1] - s->phi[1] * t2;
}

FG_FUNC double fg_density(int k, const fg_site* s, const fg_params* p) {
    (void)s;
    (void)p;
    (void)k;
    return 0.0;
}
