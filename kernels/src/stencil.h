/* Fourth-order central differences, as soliton_solver computes them:
 *   d_x  f = (-f[i+2] + 8 f[i+1] - 8 f[i-1] + f[i-2]) / (12 hx)
 *   d_xx f = (-f[i+2] + 16 f[i+1] - 30 f[i] + 16 f[i-1] - f[i-2]) / (12 hx^2)
 *   d_xy f = d_y of the d_x stencil (the product of the two first-derivative stencils)
 * and the doubler stencil d4 = [1, -4, 6, -4, 1] (undivided). */
#ifndef FG_STENCIL_H
#define FG_STENCIL_H

#define FG_D1(m2, m1, p1, p2) (-(p2) + 8.0 * (p1) - 8.0 * (m1) + (m2))
#define FG_D2(m2, m1, c, p1, p2) (-(p2) + 16.0 * (p1) - 30.0 * (c) + 16.0 * (m1) - (m2))
#define FG_D4(m2, m1, c, p1, p2) ((m2) - 4.0 * (m1) + 6.0 * (c) - 4.0 * (p1) + (p2))

#endif
