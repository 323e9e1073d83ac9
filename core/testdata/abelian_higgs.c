/* Abelian Higgs model, psi = psi1 + i psi2, D_i psi = d_i psi - i A_i psi:
 *   e = 1/2 |D psi|^2 + 1/2 B^2 + lambda/8 (1 - |psi|^2)^2,  B = d_x A2 - d_y A1.
 * At lambda = 1 (critical coupling) E = pi |N|. Written by hand after docs/abi.md. */
#ifndef FG_FUNC
#define FG_FUNC static inline
#endif
#define FG_NCOMP 4
#define FG_NPARAMS 1
#define FG_NDENS 1

typedef struct {
    double phi[FG_NCOMP];
    double dx[FG_NCOMP], dy[FG_NCOMP];
    double dxx[FG_NCOMP], dyy[FG_NCOMP], dxy[FG_NCOMP];
    double x, y;
} fg_site;

typedef struct { double lambda; } fg_params;

/* Components: 0 psi1, 1 psi2, 2 A1, 3 A2. */
FG_FUNC double fg_energy(const fg_site* s, const fg_params* p) {
    const double *f = s->phi, *dx = s->dx, *dy = s->dy;
    double ux = dx[0] + f[2] * f[1], vx = dx[1] - f[2] * f[0];
    double uy = dy[0] + f[3] * f[1], vy = dy[1] - f[3] * f[0];
    double b = dx[3] - dy[2];
    double w = 1.0 - f[0] * f[0] - f[1] * f[1];
    return 0.5 * (ux * ux + vx * vx + uy * uy + vy * vy) + 0.5 * b * b + 0.125 * p->lambda * w * w;
}

FG_FUNC void fg_partials(const fg_site* s, const fg_params* p, double* de_dphi, double* de_ddx, double* de_ddy) {
    const double *f = s->phi, *dx = s->dx, *dy = s->dy;
    double ux = dx[0] + f[2] * f[1], vx = dx[1] - f[2] * f[0];
    double uy = dy[0] + f[3] * f[1], vy = dy[1] - f[3] * f[0];
    double b = dx[3] - dy[2];
    double w = 1.0 - f[0] * f[0] - f[1] * f[1];
    de_dphi[0] = -f[2] * vx - f[3] * vy - 0.5 * p->lambda * w * f[0];
    de_dphi[1] = f[2] * ux + f[3] * uy - 0.5 * p->lambda * w * f[1];
    de_dphi[2] = ux * f[1] - vx * f[0];
    de_dphi[3] = uy * f[1] - vy * f[0];
    de_ddx[0] = ux;
    de_ddx[1] = vx;
    de_ddx[2] = 0.0;
    de_ddx[3] = b;
    de_ddy[0] = uy;
    de_ddy[1] = vy;
    de_ddy[2] = -b;
    de_ddy[3] = 0.0;
}

FG_FUNC void fg_gradient(const fg_site* s, const fg_params* p, double* out) {
    const double *f = s->phi, *dx = s->dx, *dy = s->dy, *xx = s->dxx, *yy = s->dyy, *xy = s->dxy;
    double ux = dx[0] + f[2] * f[1], vx = dx[1] - f[2] * f[0];
    double uy = dy[0] + f[3] * f[1], vy = dy[1] - f[3] * f[0];
    double w = 1.0 - f[0] * f[0] - f[1] * f[1];
    double dxux = xx[0] + dx[2] * f[1] + f[2] * dx[1];
    double dyuy = yy[0] + dy[3] * f[1] + f[3] * dy[1];
    double dxvx = xx[1] - dx[2] * f[0] - f[2] * dx[0];
    double dyvy = yy[1] - dy[3] * f[0] - f[3] * dy[0];
    double dxb = xx[3] - xy[2];
    double dyb = xy[3] - yy[2];
    out[0] = -f[2] * vx - f[3] * vy - 0.5 * p->lambda * w * f[0] - dxux - dyuy;
    out[1] = f[2] * ux + f[3] * uy - 0.5 * p->lambda * w * f[1] - dxvx - dyvy;
    out[2] = ux * f[1] - vx * f[0] + dyb;
    out[3] = uy * f[1] - vy * f[0] - dxb;
}

/* The winding number density B / 2 pi. */
FG_FUNC double fg_density_flux(const fg_site* s, const fg_params* p) {
    (void)p;
    return (s->dx[3] - s->dy[2]) / (2.0 * 3.14159265358979323846);
}

FG_FUNC double fg_density(int k, const fg_site* s, const fg_params* p) {
    return k == 0 ? fg_density_flux(s, p) : 0.0;
}
