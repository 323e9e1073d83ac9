/* fieldgo point source for theory 'sigma4_3d' (hand-written, the ABI of docs/abi.md) */
/* spec: {"name": "sigma4_3d", "fields": ["n0", "n1", "n2", "n3"], "params": ["m2"], "densities": ["kinetic"], "constraint": "unit_vector", "gradient": "derived"} */
/* The O(4) sigma model in three dimensions with a pion-mass-like potential:
 * e = |d n|^2 / 2 + m2 (1 - n0), n a unit 4-vector; density 0 is |d n|^2 / 2. */
#ifndef __CUDACC_RTC__
#include <math.h>
#include <stddef.h>
#endif
#ifndef FG_FUNC
#define FG_FUNC static inline
#endif
#define FG_NCOMP 4
#define FG_NPARAMS 1
#define FG_NDENS 1
#define FG_DIM 3                  /* the site has z derivatives */

typedef struct {
    double phi[FG_NCOMP];
    double dx[FG_NCOMP], dy[FG_NCOMP], dz[FG_NCOMP];
    double dxx[FG_NCOMP], dyy[FG_NCOMP], dzz[FG_NCOMP];
    double dxy[FG_NCOMP], dxz[FG_NCOMP], dyz[FG_NCOMP];
    double x, y, z;
} fg_site;

typedef struct { double m2; } fg_params;

FG_FUNC double fg_density_kinetic(const fg_site* s, const fg_params* p) {
    (void)p;
    double k = 0.0;
    for (int a = 0; a < FG_NCOMP; a++) k += s->dx[a] * s->dx[a] + s->dy[a] * s->dy[a] + s->dz[a] * s->dz[a];
    return 0.5 * k;
}

FG_FUNC double fg_energy(const fg_site* s, const fg_params* p) {
    return fg_density_kinetic(s, p) + p->m2 * (1.0 - s->phi[0]);
}

FG_FUNC void fg_partials(const fg_site* s, const fg_params* p,
                         double* de_dphi, double* de_ddx, double* de_ddy, double* de_ddz) {
    for (int a = 0; a < FG_NCOMP; a++) {
        de_dphi[a] = a == 0 ? -p->m2 : 0.0;
        de_ddx[a] = s->dx[a];
        de_ddy[a] = s->dy[a];
        de_ddz[a] = s->dz[a];
    }
}

FG_FUNC void fg_gradient(const fg_site* s, const fg_params* p, double* out) {
    for (int a = 0; a < FG_NCOMP; a++) out[a] = -(s->dxx[a] + s->dyy[a] + s->dzz[a]) + (a == 0 ? -p->m2 : 0.0);
}

FG_FUNC double fg_density(int k, const fg_site* s, const fg_params* p) {
    return k == 0 ? fg_density_kinetic(s, p) : 0.0;
}
