/* fieldgo point source for theory 'gpe_line' */
/* spec: {"name": "gpe_line", "fields": ["psi_re", "psi_im"], "params": ["g", "w", "c"], "densities": ["density"], "constraint": "", "gradient": "derived"} */
#ifndef __CUDACC_RTC__
#include <math.h>
#include <stddef.h>
#endif
#ifndef FG_FUNC
#define FG_FUNC static inline
#endif
#define FG_NCOMP 2
#define FG_NPARAMS 3
#define FG_NDENS 1

typedef struct {
    double phi[FG_NCOMP];
    double dx[FG_NCOMP], dy[FG_NCOMP];
    double dxx[FG_NCOMP], dyy[FG_NCOMP], dxy[FG_NCOMP];
    double x, y;
} fg_site;

typedef struct {
    double g;
    double w;
    double c;
} fg_params;

FG_FUNC double fg_energy(const fg_site* s, const fg_params* p) {
    (void)s;
    (void)p;
    const double t0 = (s->phi[0] * s->phi[0]) + (s->phi[1] * s->phi[1]);
    return 0.5 * (s->dx[0] * s->dx[0]) + 0.5 * (s->dx[1] * s->dx[1]) + 0.5 * p->g * ((-p->c + t0) * (-p->c + t0)) + 0.5 * (p->w * p->w) * t0 * (s->x * s->x);
}

FG_FUNC void fg_partials(const fg_site* s, const fg_params* p,
                         double* de_dphi, double* de_ddx, double* de_ddy) {
    (void)s;
    (void)p;
    const double t0 = 1.0 * (p->w * p->w) * (s->x * s->x);
    const double t1 = 2.0 * p->g * (-p->c + (s->phi[0] * s->phi[0]) + (s->phi[1] * s->phi[1]));
    de_dphi[0] = s->phi[0] * t0 + s->phi[0] * t1;
    de_dphi[1] = s->phi[1] * t0 + s->phi[1] * t1;
    de_ddx[0] = 1.0 * s->dx[0];
    de_ddx[1] = 1.0 * s->dx[1];
    de_ddy[0] = 0;
    de_ddy[1] = 0;
}

FG_FUNC void fg_gradient(const fg_site* s, const fg_params* p, double* out) {
    (void)s;
    (void)p;
    const double t0 = 1.0 * (p->w * p->w) * (s->x * s->x);
    const double t1 = 2.0 * p->g * (-p->c + (s->phi[0] * s->phi[0]) + (s->phi[1] * s->phi[1]));
    out[0] = -1.0 * s->dxx[0] + s->phi[0] * t0 + s->phi[0] * t1;
    out[1] = -1.0 * s->dxx[1] + s->phi[1] * t0 + s->phi[1] * t1;
}

FG_FUNC double fg_density_density(const fg_site* s, const fg_params* p) {
    (void)s;
    (void)p;
    return (s->phi[0] * s->phi[0]) + (s->phi[1] * s->phi[1]);
}

FG_FUNC double fg_density(int k, const fg_site* s, const fg_params* p) {
    (void)s;
    (void)p;
    switch (k) {
    case 0: return fg_density_density(s, p);
    default: return 0.0;
    }
}
