/* fieldgo point source for theory 'sine_gordon' */
/* spec: {"name": "sine_gordon", "fields": ["u"], "params": [], "densities": [], "constraint": "", "gradient": "derived"} */
#ifndef __CUDACC_RTC__
#include <math.h>
#include <stddef.h>
#endif
#ifndef FG_FUNC
#define FG_FUNC static inline
#endif
#define FG_NCOMP 1
#define FG_NPARAMS 0
#define FG_NDENS 0

typedef struct {
    double phi[FG_NCOMP];
    double dx[FG_NCOMP], dy[FG_NCOMP];
    double dxx[FG_NCOMP], dyy[FG_NCOMP], dxy[FG_NCOMP];
    double x, y;
} fg_site;

typedef struct { double unused_; } fg_params;

FG_FUNC double fg_energy(const fg_site* s, const fg_params* p) {
    (void)s;
    (void)p;
    return 0.5 * (s->dx[0] * s->dx[0]) - cos(s->phi[0]) + 1;
}

FG_FUNC void fg_partials(const fg_site* s, const fg_params* p,
                         double* de_dphi, double* de_ddx, double* de_ddy) {
    (void)s;
    (void)p;
    de_dphi[0] = sin(s->phi[0]);
    de_ddx[0] = 1.0 * s->dx[0];
    de_ddy[0] = 0;
}

FG_FUNC void fg_gradient(const fg_site* s, const fg_params* p, double* out) {
    (void)s;
    (void)p;
    out[0] = -1.0 * s->dxx[0] + sin(s->phi[0]);
}

FG_FUNC double fg_density(int k, const fg_site* s, const fg_params* p) {
    (void)s;
    (void)p;
    (void)k;
    return 0.0;
}
