/* Fourth-order central differences, as soliton_solver computes them:
 *   d_x  f = (-f[i+2] + 8 f[i+1] - 8 f[i-1] + f[i-2]) / (12 hx)
 *   d_xx f = (-f[i+2] + 16 f[i+1] - 30 f[i] + 16 f[i-1] - f[i-2]) / (12 hx^2)
 *   d_xy f = (16 S1 - S2) / (48 hx hy), Sa = f[i+a, j+a] - f[i+a, j-a] - f[i-a, j+a] + f[i-a, j-a]
 * and the doubler stencil d4 = [1, -4, 6, -4, 1] (undivided). The mixed derivative is the
 * diagonal differences at distances 1 and 2 combined to cancel their h^2 error: fourth
 * order from 8 values, where the product of two first-derivative stencils (soliton_solver's
 * d_xy) reads 16. The stencils' loads bound the gradient kernels (docs/performance/gpu.md).
 * FG_DMIX's arguments are the values at (+1, +1), (+1, -1), (-1, +1), (-1, -1) and then
 * at (+2, +2), (+2, -2), (-2, +2), (-2, -2), the first offset along the first axis. */
#ifndef FG_STENCIL_H
#define FG_STENCIL_H

#define FG_D1(m2, m1, p1, p2) (-(p2) + 8.0 * (p1) - 8.0 * (m1) + (m2))
#define FG_D2(m2, m1, c, p1, p2) (-(p2) + 16.0 * (p1) - 30.0 * (c) + 16.0 * (m1) - (m2))
#define FG_DMIX(pp1, pm1, mp1, mm1, pp2, pm2, mp2, mm2) \
    (16.0 * ((pp1) - (pm1) - (mp1) + (mm1)) - ((pp2) - (pm2) - (mp2) + (mm2)))
#define FG_D4(m2, m1, c, p1, p2) ((m2) - 4.0 * (m1) + 6.0 * (c) - 4.0 * (p1) + (p2))

#endif
