/* Baby Skyrme model, written by hand after docs/abi.md (what the tracer emits):
 *   e = 1/2 (|n_x|^2 + |n_y|^2) + kappa^2/2 |n_x x n_y|^2 + mass^2 (1 - n3)
 * with |a x b|^2 = (a.a)(b.b) - (a.b)^2. */
#ifndef FG_FUNC
#define FG_FUNC static inline
#endif
#define FG_NCOMP 3
#define FG_NPARAMS 2
#define FG_NDENS 3

typedef struct {
    double phi[FG_NCOMP];
    double dx[FG_NCOMP], dy[FG_NCOMP];
    double dxx[FG_NCOMP], dyy[FG_NCOMP], dxy[FG_NCOMP];
    double x, y;
} fg_site;

typedef struct {
    double kappa;
    double mass;
} fg_params;

static inline double bs_dot(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

FG_FUNC double fg_energy(const fg_site* s, const fg_params* p) {
    double aa = bs_dot(s->dx, s->dx), bb = bs_dot(s->dy, s->dy), ab = bs_dot(s->dx, s->dy);
    double k2 = p->kappa * p->kappa;
    return 0.5 * (aa + bb) + 0.5 * k2 * (aa * bb - ab * ab) + p->mass * p->mass * (1.0 - s->phi[2]);
}

FG_FUNC void fg_partials(const fg_site* s, const fg_params* p, double* de_dphi, double* de_ddx, double* de_ddy) {
    const double *a = s->dx, *b = s->dy;
    double aa = bs_dot(a, a), bb = bs_dot(b, b), ab = bs_dot(a, b);
    double k2 = p->kappa * p->kappa;
    for (int c = 0; c < 3; c++) {
        de_dphi[c] = 0.0;
        de_ddx[c] = a[c] + k2 * (bb * a[c] - ab * b[c]);
        de_ddy[c] = b[c] + k2 * (aa * b[c] - ab * a[c]);
    }
    de_dphi[2] = -p->mass * p->mass;
}

/* out = de/dn - d_x(de/da) - d_y(de/db), a = n_x, b = n_y:
 *   d_x(de/da) = n_xx + k2 [2 (b.n_xy) a + (b.b) n_xx - (n_xx.b + a.n_xy) b - (a.b) n_xy]
 *   d_y(de/db) = n_yy + k2 [2 (a.n_xy) b + (a.a) n_yy - (n_xy.b + a.n_yy) a - (a.b) n_xy] */
FG_FUNC void fg_gradient(const fg_site* s, const fg_params* p, double* out) {
    const double *a = s->dx, *b = s->dy, *xx = s->dxx, *yy = s->dyy, *xy = s->dxy;
    double aa = bs_dot(a, a), bb = bs_dot(b, b), ab = bs_dot(a, b);
    double bxy = bs_dot(b, xy), axy = bs_dot(a, xy), xxb = bs_dot(xx, b), ayy = bs_dot(a, yy);
    double k2 = p->kappa * p->kappa;
    for (int c = 0; c < 3; c++) {
        double dxa = xx[c] + k2 * (2.0 * bxy * a[c] + bb * xx[c] - (xxb + axy) * b[c] - ab * xy[c]);
        double dyb = yy[c] + k2 * (2.0 * axy * b[c] + aa * yy[c] - (bxy + ayy) * a[c] - ab * xy[c]);
        out[c] = -dxa - dyb;
    }
    out[2] -= p->mass * p->mass;
}

FG_FUNC double fg_density_charge(const fg_site* s, const fg_params* p) {
    (void)p;
    const double *n = s->phi, *a = s->dx, *b = s->dy;
    double cx = a[1] * b[2] - a[2] * b[1], cy = a[2] * b[0] - a[0] * b[2], cz = a[0] * b[1] - a[1] * b[0];
    return (n[0] * cx + n[1] * cy + n[2] * cz) / (4.0 * 3.14159265358979323846);
}

FG_FUNC double fg_density_skyrme(const fg_site* s, const fg_params* p) {
    double aa = bs_dot(s->dx, s->dx), bb = bs_dot(s->dy, s->dy), ab = bs_dot(s->dx, s->dy);
    return 0.5 * p->kappa * p->kappa * (aa * bb - ab * ab);
}

FG_FUNC double fg_density_potential(const fg_site* s, const fg_params* p) {
    return p->mass * p->mass * (1.0 - s->phi[2]);
}

FG_FUNC double fg_density(int k, const fg_site* s, const fg_params* p) {
    switch (k) {
    case 0: return fg_density_charge(s, p);
    case 1: return fg_density_skyrme(s, p);
    case 2: return fg_density_potential(s, p);
    }
    return 0.0;
}
