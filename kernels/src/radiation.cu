// Retarded-time Liénard–Wiechert kernels. The same math as core/radiation's
// CPU kernel (kernel.go), function for function: natural cubic splines
// evaluated with
//   S = (a1 + y1 dt1^2) dt1 + (a0 + y0 dt2^3),   y0 = z[i]/(6h), y1 = z[i+1]/(6h),
//   a1 = c1 - c2, a0 = c2 h
// (the spline's (z[i] dt2^3 + z[i+1] dt1^3)/(6h) + c1 dt1 + c2 dt2 with its
// constants formed once per interval on the host: three FMAs per component,
// two of them independent; kernel.go says why), the interval found
// by a cold binary search, a warm-started gallop + bisect, or kept in
// registers while tau stays inside it (coef_reuse); the three share
// fg_rad_cubic, so their cubes are bit-identical. A Newton correction takes
// one reciprocal (fg_rad_newton_step: Newton on the squared light cone), the
// field one reciprocal (fg_rad_lw_dir: X0 from the time), RK4's and the cold
// solve's light cone a square root and two (fg_rad_light_cone), all from the
// hardware estimates (fastmath.cuh: fg_rcp_normal, fg_rsqrt_normal).
//
// Default entry points fg_rad_<method>_<search>_<f64|f32> (method newton |
// rk4, search cold | warm | reuse; no run-time flags inside): a block of B
// threads takes B observers, one each (slot -> observer through perm, an order that
// keeps a warp's observers in similar directions, so their retarded times and
// spline intervals are close), and walks their samples in tiles of `tile`:
// for each particle p = 0, 1, ... in order, each thread advances its walker
// through the tile's samples and adds the fields into its own column of a
// shared-memory tile (the same additions, in the same order, as the CPU
// kernel's cube +=); then the block writes the tile out, each observer's
// `tile` samples contiguous, with no read-modify-write of the cube (it is
// written, not accumulated into). A walker's state between tiles (tau, the
// predictor dtau/dt', its interval or -1 when it has no root, the last
// sample's interval step used as the next search's guess) lives in a small
// global scratch of fg_rad_walk records, P x (gridDim.x * B), coalesced;
// each particle's knot range and charge in one fg_rad_particle record. Blocks claim work
// items from a queue (the grid's first, then the next unclaimed one), so the
// scratch is sized by the grid, not by O. An item
// is B observer slots x one segment of `seg` samples (core/radiation's
// Options.Segment: every walk, in every entry point and on the CPU, starts
// from scratch, the cold solve, at a segment's first sample); the tiled
// kernels run the segments in parallel, so that with few observers the GPU
// still has enough warps (one per 32 observers is 7.75 per SM on the H200
// with 32768 of them, where 16 fit).
//
// The split entry points (below fg_rad_tiled) compute the same cube in two
// launches: the roots per (observer, particle), then the fields per
// (observer, sample): a comparison (slower than the tiles in both precisions
// since these run segments in parallel; gpuradiation.Effective).
//
// Comparison entry points (the benchmark's): "_obs" (one thread per observer
// looping particles, then samples, adding into the cube: the structure before
// the tiles; Newton float64 cold and reuse) and "_cm" (the same reading the
// column-major arrays instead of the interval records). All give the same
// bits as the tiled kernels.
//
// Layout: the knot times t[N] (searched), particle p owning off[p]..off[p+1]-1,
// and one record of FG_RAD_REC = 64 values per knot interval i (interval-major,
// the layout of kernels.RadiationRecordLen in kernels/radiation.go, built on the
// host by core/radiation for its CPU kernel too), so one interval fetch reads a
// few whole cache lines (float64: the state's 36 values in 3 lines of 128 B,
// the acceleration's 16 in the fourth; float32: 2 lines):
//   [0] t[i]  [1] t[i+1]  [2] [3] unused
//   [4+d] y0[d][i]  [12+d] y1[d][i]  [20+d] a1[d][i]  [28+d] a0[d][i]   d < 8
//   [48+d] ay0[d][i]  [52+d] ay1[d][i]  [56+d] aa1[d][i]  [60+d] aa0[d][i]   d < 4
// The same numbers as the column-major arrays (y0, y1, a1, a0: 8 columns of N
// (t, x, y, z, ut, ux, uy, uz); ay0, ay1, aa1, aa0, the acceleration's: 4
// columns (at, ax, ay, az)), which the "_cm" entry points read.
// Observers: ox, oy, oz, r0 = |x_obs| (O each); tp: shifted times
// t_obs - |x_obs|/c, O x S observer-major (the tiled kernels take the same
// times as tp_slot, S x O over the observer slots), both built on the device
// by fg_rad_shift_* from the sample times and the observers' |x_obs|/c. Output: 10 columns of O*S doubles
// (Ex, Ey, Ez, Bx, By, Bz, phi, Ax, Ay, Az), summed over particles (the tiled
// kernels write every value; "_obs"/"_cm" add into a zeroed cube), and
// optionally the retarded lab time per particle.

#ifndef FG_RAD_CU
#define FG_RAD_CU

#define FG_RAD_NSTATE 8
#define FG_RAD_NACCEL 4
#define FG_RAD_NCOMP 10
#define FG_RAD_NFIELD 6  // E, B: the components before the potentials
#define FG_RAD_REC 64
#define FG_RAD_REC_ACCEL 48
// The tiled kernels' shared slot per (sample, observer): the NCOMP sums as
// five double2, so that a particle's additions take five 16-byte loads and
// stores instead of ten 8-byte ones; 80 bytes, 20 words (4 x odd), so a
// quarter-warp's 16-byte accesses hit all 32 banks once. The shifted time of
// each (sample, observer) sits in its own array after the slots.
#define FG_RAD_SLOT2 5

// The tiled kernels' particle p: its knots a .. b-1 (off[p], off[p+1]), their
// times lo = t[a], hi = t[b-1], and its charge, in one 32-byte record (two
// 16-byte loads, no load waiting on another; gpuradiation.particleRecords).
template <typename F> struct __align__(16) fg_rad_particle {
    F lo, hi, q;
    int a, b;
};
// A walker between two tiles: tau, the predictor dtau/dt', its interval (-1:
// no root) and the last sample's interval step (the next search's guess).
template <typename F> struct __align__(16) fg_rad_walk {
    F tau, ifp;
    int idx, step;
};

template <typename F> struct fg_rad_args {
    const F* t;
    const F* y0;
    const F* y1;
    const F* a1;
    const F* a0;      // column-major ("_cm" only)
    const F* ay0;
    const F* ay1;
    const F* aa1;
    const F* aa0;
    const int* off;
    int P;
    int n;
    const F* charge;
    const F* ox;
    const F* oy;
    const F* oz;
    const F* r0;
    int O;
    const F* tp;
    int S;  // the shifted times, O x S (the tiled kernels read tp_slot)
    F c;
    F ic;
    int n_iters;
    int n_substeps;  // ic = 1/c, rounded on the host (a constant operand, not a register)
    double* out;   // FG_RAD_NCOMP * O * S
    double* tret;  // P * O * S, or NULL
    const F* rec;  // N * FG_RAD_REC interval records (interval-major layout)
    const int* perm;  // O: the observer of each slot (tiled kernels), or NULL: identity
    F* w_tau;
    int* w_idx;          // split: the roots, P x S x oc
    fg_rad_walk<F>* w_walk;        // tiled: the walkers between tiles, P x gridDim.x * blockDim.x
    const fg_rad_particle<F>* part;  // tiled: per particle, its knots' range and charge
    int tile;
    int seg;   // tiled: samples per tile; all: samples per segment (1 .. S; S: one walk)
    int o0;
    int oc;      // split: this launch's observer slots o0 .. o0+oc-1
    int* queue;          // tiled: the count of work items claimed past the grid's first (zeroed by the host)
  // tiled: the shifted times sample-major over the observer slots, S x O
  // (fg_rad_shift_slot_*): a warp's lanes read one sample of consecutive
  // slots, 256 contiguous bytes, where each lane's own row of tp took a line
  // of its own (32 per load; x1.04 on 524288 observers).
    const F* tp_slot;
    // tiled: float32's factors per field column (core/radiation's unscale,
    // powers of two), applied as the tile is written; NULL: none
    const double* scale;
};

enum { FG_RAD_COLD = 0,
       FG_RAD_WARM = 1,
       FG_RAD_REUSE = 2 };
enum { FG_RAD_NEWTON = 0,
       FG_RAD_RK4 = 1 };
enum { FG_RAD_INTERVAL_MAJOR = 0,
       FG_RAD_COLUMN_MAJOR = 1 };

// Four components' coefficients on one interval: the position (t, x, y, z),
// the 4-velocity or the acceleration.
template <typename F> struct fg_rad_quad {
    F y0[4], y1[4], a1[4], a0[4];
};

// One interval's position: what coef_reuse keeps in registers. The retarded
// time depends on the position only, so the Newton corrections, RK4 and the
// cold solve evaluate it and its derivative d/dtau (the exact slope of the
// splined light cone); the 4-velocity and the acceleration are fetched once
// per sample, for the field, on the interval the position's search found.
// Half the registers of caching the whole state (166 registers with it, 12
// warps per SM; see docs/performance/radiation.md).
template <typename F> struct fg_rad_interval {
    F t0, t1;
    fg_rad_quad<F> x;
};

// Every reciprocal and square root here has a positive normal argument (rho =
// R c ut kappa >= R c/2 for a massive particle; R^2, R + |x_obs|, df/dtau and
// the Newton step's h, or the step is refused; unless the observer sits on
// the worldline, where the field is infinite and NaN comes out instead of inf), so they take fastmath.cuh's hardware estimates instead
// of the library's slow-path calls (21 in the Newton reuse kernel, which cost
// it registers too). The CPU kernel rounds correctly; the two agree within the
// tests' float64 bound.
// q1 = dt1^2, e2 = dt2^3, formed once per evaluation.
template <typename F>
static __device__ __forceinline__ F fg_rad_cubic(F y0, F y1, F a1, F a0, F dt1, F q1, F e2) {
    return (a1 + y1 * q1) * dt1 + (a0 + y0 * e2);
}

template <typename F> static __device__ __forceinline__ F fg_rad_inf();
template <> __device__ __forceinline__ double fg_rad_inf<double>() { return __longlong_as_double(0x7ff0000000000000LL); }
template <> __device__ __forceinline__ float fg_rad_inf<float>() { return __int_as_float(0x7f800000); }

// Cold search: the largest i in [a, b-2] with t[i] <= tau, or a.
template <typename F> static __device__ __forceinline__ int fg_rad_search(const F* t, int a, int b, F tau) {
    int lo = a, hi = b - 1;
    while (hi - lo > 1) {
        int mid = (int)((unsigned)(lo + hi) >> 1);
        if (__ldg(t + mid) <= tau) lo = mid;
        else hi = mid;
    }
    return lo;
}

// Warm search: check the guess, gallop towards tau, bisect the bracket. The
// knot times around the guess, t[guess-1 .. guess+2], are loaded together
// (one memory round trip; a short-circuit test made two dependent ones, and
// the gallop a third), so that a guess off by one interval either way costs
// no second round trip: in the profile, dependent loads here were ~17% of
// the default kernel's stalls at 1024 knots per period, where ~90% of a
// warp's searches end within one interval of the guess. The index returned
// does not depend on the guess: the largest i in [a, b-2] with t[i] <= tau
// (or a), whatever the guess.
template <typename F> static __device__ __forceinline__ int fg_rad_search_from(const F* t, int a, int b, int guess, F tau) {
    if (guess < a) guess = a;
    else if (guess > b - 2) guess = b - 2;
    const F tm = __ldg(t + (guess > a ? guess - 1 : a)), t0 = __ldg(t + guess), t1 = __ldg(t + guess + 1),
            t2 = __ldg(t + min(guess + 2, b - 1));
    if ((guess == a || t0 <= tau) && (guess == b - 2 || !(t1 <= tau))) return guess;
    int lo, hi;
    if (t0 <= tau) {  // so t1 <= tau and guess < b - 2
        if (guess + 1 == b - 2 || !(t2 <= tau)) return guess + 1;
        lo = guess + 2;
        int step = 1;
        for (;;) {
            int next = lo + step;
            if (next >= b - 1) {
                hi = b - 1;
                break;
            }
            if (__ldg(t + next) <= tau) {
                lo = next;
                step <<= 1;
            } else {
                hi = next;
                break;
            }
        }
    } else {  // tau < t0 and guess > a
        if (guess - 1 == a || tm <= tau) return guess - 1;
        hi = guess - 1;
        int step = 1;
        for (;;) {
            int next = hi - step;
            if (next <= a) {
                lo = a;
                break;
            }
            if (__ldg(t + next) <= tau) {
                lo = next;
                break;
            }
            hi = next;
            step <<= 1;
        }
    }
    while (hi - lo > 1) {
        int mid = (int)((unsigned)(lo + hi) >> 1);
        if (__ldg(t + mid) <= tau) lo = mid;
        else hi = mid;
    }
    return lo;
}

// Four consecutive values of a record, 16-byte aligned, through the read-only
// cache (two 16-byte loads in double, one in float).
static __device__ __forceinline__ void fg_rad_ld4(const double* p, double* v) {
    double2 a = __ldg(reinterpret_cast<const double2*>(p)), b = __ldg(reinterpret_cast<const double2*>(p) + 1);
    v[0] = a.x;
    v[1] = a.y;
    v[2] = b.x;
    v[3] = b.y;
}
static __device__ __forceinline__ void fg_rad_ld4(const float* p, float* v) {
    float4 a = __ldg(reinterpret_cast<const float4*>(p));
    v[0] = a.x;
    v[1] = a.y;
    v[2] = a.z;
    v[3] = a.w;
}

// Record groups of four values (rec's layout, header): g = 1, 3, 5, 7 the
// position's y0, y1, a1, a0; g = 2, 4, 6, 8 the 4-velocity's; the
// acceleration's from FG_RAD_REC_ACCEL, consecutive.
template <typename F> static __device__ __forceinline__ void fg_rad_ld_quad(const F* r, int g0, int dg, fg_rad_quad<F>& q) {
    fg_rad_ld4(r + 4 * g0, q.y0);
    fg_rad_ld4(r + 4 * (g0 + dg), q.y1);
    fg_rad_ld4(r + 4 * (g0 + 2 * dg), q.a1);
    fg_rad_ld4(r + 4 * (g0 + 3 * dg), q.a0);
}

// Column-major: columns c0 .. c0+3 of y0, y1, a1, a0 ("_cm" only).
template <typename F> static __device__ __forceinline__ void fg_rad_cm_quad(const F* y0, const F* y1, const F* a1, const F* a0, int n, int c0, int i, fg_rad_quad<F>& q) {
#pragma unroll
    for (int d = 0; d < 4; d++) {
        int j = (c0 + d) * n + i;
        q.y0[d] = y0[j];
        q.y1[d] = y1[j];
        q.a1[d] = a1[j];
        q.a0[d] = a0[j];
    }
}

template <typename F, int LAYOUT> static __device__ __forceinline__ void fg_rad_fetch(const fg_rad_args<F>& A, fg_rad_interval<F>& iv, int i) {
    if (LAYOUT == FG_RAD_INTERVAL_MAJOR) {
        const F* r = A.rec + (size_t)i * FG_RAD_REC;
        F t[4];
        fg_rad_ld4(r, t);
        iv.t0 = t[0];
        iv.t1 = t[1];
        fg_rad_ld_quad(r, 1, 2, iv.x);
        return;
    }
    iv.t0 = A.t[i];
    iv.t1 = A.t[i + 1];
    fg_rad_cm_quad(A.y0, A.y1, A.a1, A.a0, A.n, 0, i, iv.x);
}

// The 4-velocity's and the acceleration's coefficients on interval i, for the field.
template <typename F, int LAYOUT> static __device__ __forceinline__ void fg_rad_fetch_velocity(const fg_rad_args<F>& A, fg_rad_quad<F>& u, int i) {
    if (LAYOUT == FG_RAD_INTERVAL_MAJOR) {
        fg_rad_ld_quad(A.rec + (size_t)i * FG_RAD_REC, 2, 2, u);
        return;
    }
    fg_rad_cm_quad(A.y0, A.y1, A.a1, A.a0, A.n, 4, i, u);
}
template <typename F, int LAYOUT> static __device__ __forceinline__ void fg_rad_fetch_accel(const fg_rad_args<F>& A, fg_rad_quad<F>& ia, int i) {
    if (LAYOUT == FG_RAD_INTERVAL_MAJOR) {
        fg_rad_ld_quad(A.rec + (size_t)i * FG_RAD_REC + FG_RAD_REC_ACCEL, 0, 1, ia);
        return;
    }
    fg_rad_cm_quad(A.ay0, A.ay1, A.aa1, A.aa0, A.n, 0, i, ia);
}

// The powers of one evaluation at tau on iv: dt1, q1 = dt1^2, e2 = dt2^3 for
// the cubic; Q1 = 3 dt1^2, Q2 = 3 dt2^2 for its derivative.
template <typename F> struct fg_rad_powers { F dt1, q1, e2, Q1, Q2; };
template <typename F> static __device__ __forceinline__ fg_rad_powers<F> fg_rad_powers_at(const fg_rad_interval<F>& iv, F tau) {
    F dt1 = tau - iv.t0, dt2 = iv.t1 - tau;
    F q2 = dt2 * dt2;
    return {dt1, dt1 * dt1, q2 * dt2, 3 * (dt1 * dt1), 3 * q2};
}

// Four components of a cubic at tau.
template <typename F> static __device__ __forceinline__ void fg_rad_eval4(const fg_rad_quad<F>& q, const fg_rad_powers<F>& w, F* v) {
#pragma unroll
    for (int d = 0; d < 4; d++) v[d] = fg_rad_cubic(q.y0[d], q.y1[d], q.a1[d], q.a0[d], w.dt1, w.q1, w.e2);
}

// The position x = (t, x, y, z) at tau and its derivative dx = dx/dtau =
// a1 + 3 y1 dt1^2 - 3 y0 dt2^2 (the spline's own slope; the 4-velocity's
// spline is a different interpolant, within its error of it).
template <typename F> static __device__ __forceinline__ void fg_rad_position(const fg_rad_interval<F>& iv, F tau, F* x, F* dx) {
    const fg_rad_powers<F> w = fg_rad_powers_at(iv, tau);
    fg_rad_eval4(iv.x, w, x);
#pragma unroll
    for (int d = 0; d < 4; d++) dx[d] = (iv.x.a1[d] + iv.x.y1[d] * w.Q1) - iv.x.y0[d] * w.Q2;
}

// Rounded products and sums that the compiler may not fuse: the Newton
// acceptance test decides between two roots, and its inputs must be the same
// bits in every kernel that instantiates it (warm, reuse and cold searches,
// tiled and split), whatever contractions each instantiation's code gets.
static __device__ __forceinline__ double fg_rad_mul(double a, double b) { return __dmul_rn(a, b); }
static __device__ __forceinline__ float fg_rad_mul(float a, float b) { return __fmul_rn(a, b); }
static __device__ __forceinline__ double fg_rad_add(double a, double b) { return __dadd_rn(a, b); }
static __device__ __forceinline__ float fg_rad_add(float a, float b) { return __fadd_rn(a, b); }
static __device__ __forceinline__ double fg_rad_sub(double a, double b) { return __dsub_rn(a, b); }
static __device__ __forceinline__ float fg_rad_sub(float a, float b) { return __fsub_rn(a, b); }

// The position, its derivative and its second derivative d2x/dtau2 =
// 6 (y1 dt1 + y0 dt2) at tau (core/radiation's curvature: the Newton
// advance's acceptance bound, off the usual sample's path), every operation
// rounded on its own like fg_rad_newton_slope's, so no kernel that inlines
// it can fuse its products differently from another.
template <typename F> static __device__ __forceinline__ void fg_rad_position2(const fg_rad_interval<F>& iv, F tau, F* x, F* dx, F* ddx) {
    const F dt1 = fg_rad_sub(tau, iv.t0), dt2 = fg_rad_sub(iv.t1, tau);
    const F q1 = fg_rad_mul(dt1, dt1), q2 = fg_rad_mul(dt2, dt2), e2 = fg_rad_mul(q2, dt2);
    const F Q1 = fg_rad_mul((F)3, q1), Q2 = fg_rad_mul((F)3, q2);
#pragma unroll
    for (int d = 0; d < 4; d++) {
        const F y0 = iv.x.y0[d], y1 = iv.x.y1[d], a1 = iv.x.a1[d], a0 = iv.x.a0[d];
        x[d] = fg_rad_add(fg_rad_mul(fg_rad_add(a1, fg_rad_mul(y1, q1)), dt1), fg_rad_add(a0, fg_rad_mul(y0, e2)));
        dx[d] = fg_rad_sub(fg_rad_add(a1, fg_rad_mul(y1, Q1)), fg_rad_mul(y0, Q2));
        ddx[d] = fg_rad_mul((F)6, fg_rad_add(fg_rad_mul(y1, dt1), fg_rad_mul(y0, dt2)));
    }
}

// The state (t, x, y, z, ut, ux, uy, uz) at the powers w of iv: the position
// from iv, the 4-velocity from its own spline's coefficients u.
template <typename F> static __device__ __forceinline__ void fg_rad_state(const fg_rad_interval<F>& iv, const fg_rad_quad<F>& u, const fg_rad_powers<F>& w, F* st) {
    fg_rad_eval4(iv.x, w, st);
    fg_rad_eval4(u, w, st + 4);
}

// One particle seen by one observer. Its cached interval iv is empty (t0 =
// +inf: no tau is inside it) until a fetch fills it, and again after a cold
// solve that found no root (that left iv on another interval than idx); a
// fetched interval's knots and coefficients are always one record's, so a tau
// inside [t0, t1) may use it (a flag for this took a register and a test
// per locate).
// hint: added to idx as the next warm search's guess (the tiled kernels set
// it to the previous sample's interval step); the search's result does not
// depend on its guess, so neither do the bits.
template <typename F, int SEARCH, int LAYOUT> struct fg_rad_walker {
    const fg_rad_args<F>& A;
    int a, b, idx, hint;
    fg_rad_interval<F> iv;
    __device__ fg_rad_walker(const fg_rad_args<F>& A_, int a_, int b_) : A(A_), a(a_), b(b_), idx(a_), hint(0) { invalidate(); }
    __device__ __forceinline__ void invalidate() { iv.t0 = fg_rad_inf<F>(); }

    __device__ __forceinline__ void locate(F tau) {
        if (SEARCH == FG_RAD_COLD) {
            idx = fg_rad_search(A.t, a, b, tau);
        } else if (SEARCH == FG_RAD_REUSE && iv.t0 <= tau && tau < iv.t1) {
            // The cached interval holds tau. Without fg_rad_search_from's end
            // cases (idx == a or b - 2 extrapolating): every caller but RK4's
            // inner stages passes a tau on the knots, where the two tests differ
            // only at tau == t[b-1], which the search then finds to be the same
            // interval (a refetch of the same record, the same bits).
            return;
        } else {
            idx = fg_rad_search_from(A.t, a, b, idx + hint, tau);
            hint = 0;
        }
        fg_rad_fetch<F, LAYOUT>(A, iv, idx);
    }
    __device__ __forceinline__ void position(F tau, F* x, F* dx) {
        locate(tau);
        fg_rad_position(iv, tau, x, dx);
    }
    __device__ __forceinline__ void position2(F tau, F* x, F* dx, F* ddx) {
        locate(tau);
        fg_rad_position2(iv, tau, x, dx, ddx);
    }
    // The state at tau (the field's; the split solve's predictor).
    __device__ __forceinline__ void state(F tau, F* st) {
        fg_rad_quad<F> u;
        locate(tau);
        fg_rad_fetch_velocity<F, LAYOUT>(A, u, idx);
        fg_rad_state(iv, u, fg_rad_powers_at(iv, tau), st);
    }
    __device__ __forceinline__ void state_accel(F tau, F* st, F* ac) {
        fg_rad_quad<F> u, ia;
        locate(tau);
        fg_rad_fetch_velocity<F, LAYOUT>(A, u, idx);
        fg_rad_fetch_accel<F, LAYOUT>(A, ia, idx);
        const fg_rad_powers<F> w = fg_rad_powers_at(iv, tau);
        fg_rad_state(iv, u, w, st);
        fg_rad_eval4(ia, w, ac);
    }
};

template <typename F> struct fg_rad_observer { F x, y, z, r0, c, ic; };

// Observer o of the arguments (1/c as the CPU forms it: one division, on the host).
template <typename F> static __device__ __forceinline__ fg_rad_observer<F> fg_rad_observer_at(const fg_rad_args<F>& A, int o) {
    return {A.ox[o], A.oy[o], A.oz[o], A.r0[o], A.c, A.ic};
}

// f = t(tau) + (R - |x_obs|)/c - t', fp = df/dtau = dt/dtau - n.(dr/dtau)/c,
// without cancellation, from the position x and its derivative dx.
template <typename F>
static __device__ __forceinline__ void fg_rad_light_cone(const fg_rad_observer<F>& o, const F* x, const F* dx, F tp, F* f, F* fp) {
    F rx = o.x - x[1], ry = o.y - x[2], rz = o.z - x[3];
    F R2 = rx * rx + ry * ry + rz * rz;
    F iR = fg_rsqrt_normal(R2);
    F R = R2 * iR;
    F d = (x[1] * x[1] + x[2] * x[2] + x[3] * x[3] - 2 * (o.x * x[1] + o.y * x[2] + o.z * x[3])) * fg_rcp_normal(R + o.r0);
    *f = x[0] + d * o.ic - tp;
    *fp = dx[0] - (rx * dx[1] + ry * dx[2] + rz * dx[3]) * iR * o.ic;
}

// The Newton correction g/g' of the squared light cone, no square root and
// one reciprocal (core/radiation's newtonStep): X0 = c (t_obs - t) = D +
// |x_obs|, D = c (t' - t), g = X0^2 - R^2 = D (D + 2|x_obs|) - (|r|^2 -
// 2 x_obs.r), g' = -2 h, h = c (dt/dtau) X0 - R_s.(dr/dtau); *ok is false
// unless h > 0 (g falls towards the retarded root, not the advanced one).
template <typename F>
static __device__ __forceinline__ F fg_rad_newton_step(const fg_rad_observer<F>& o, const F* x, const F* dx, F tp, bool* ok) {
    F rx = o.x - x[1], ry = o.y - x[2], rz = o.z - x[3];
    // x - 2 x_obs as one FMA each (NVRTC formed 2 x_obs by an addition first);
    // 2 x_obs is exact, so the bits are the CPU's x - 2*o.x.
    F num = x[1] * fma((F)-2, o.x, x[1]) + x[2] * fma((F)-2, o.y, x[2]) + x[3] * fma((F)-2, o.z, x[3]);
    F D = o.c * (tp - x[0]);
    F X0 = D + o.r0;
    F h = o.c * dx[0] * X0 - (rx * dx[1] + ry * dx[2] + rz * dx[3]);
    *ok = h > 0;
    return fg_quot_normal((F)0.5 * (num - D * (X0 + o.r0)), h);
}

// fg_rad_newton_step's h (g' = -2h) and its derivative hp (g'' = -2hp) from
// the position and its first two derivatives (core/radiation's newtonSlope):
// hp = (c t'' X0 - R_s.r'') - (c^2 t'^2 - |r'|^2), K = g''/(2g') = hp/(2h).
template <typename F>
static __device__ __forceinline__ void fg_rad_newton_slope(const fg_rad_observer<F>& o, const F* x, const F* dx, const F* ddx, F tp, F* h, F* hp) {
    const F rx = fg_rad_sub(o.x, x[1]), ry = fg_rad_sub(o.y, x[2]), rz = fg_rad_sub(o.z, x[3]);
    const F X0 = fg_rad_add(fg_rad_mul(o.c, fg_rad_sub(tp, x[0])), o.r0);
    const F cdt = fg_rad_mul(o.c, dx[0]);
    const F rdx = fg_rad_add(fg_rad_add(fg_rad_mul(rx, dx[1]), fg_rad_mul(ry, dx[2])), fg_rad_mul(rz, dx[3]));
    const F rddx = fg_rad_add(fg_rad_add(fg_rad_mul(rx, ddx[1]), fg_rad_mul(ry, ddx[2])), fg_rad_mul(rz, ddx[3]));
    const F dx2 = fg_rad_add(fg_rad_add(fg_rad_mul(dx[1], dx[1]), fg_rad_mul(dx[2], dx[2])), fg_rad_mul(dx[3], dx[3]));
    *h = fg_rad_sub(fg_rad_mul(cdt, X0), rdx);
    *hp = fg_rad_sub(fg_rad_sub(fg_rad_mul(fg_rad_mul(o.c, ddx[0]), X0), rddx), fg_rad_sub(fg_rad_mul(cdt, cdt), dx2));
}

// The part of the field that depends on the state only: the separation X =
// (X0, R_s), R_s = x_obs - r, X0 = c (t' - t) + |x_obs| (= |R_s| at the
// retarded time: no square root), c ut and 1/rho, rho = X.U = c ut X0 -
// R_s.u_s (= R c ut kappa), and the predictor dtau/dt' = 1/(ut kappa) =
// X0 c/rho. fg_rad_add_fields and the split solve's fg_rad_predictor both
// start with it, so the predictor is the same code, and gives the same bits,
// in both.
template <typename F> struct fg_rad_kin { F rx, ry, rz, X0, cut, irho, iD; };

template <typename F>
static __device__ __forceinline__ void fg_rad_lw_dir(const fg_rad_observer<F>& o, const F* st, F tp, fg_rad_kin<F>& k) {
    k.rx = o.x - st[1];
    k.ry = o.y - st[2];
    k.rz = o.z - st[3];
    k.X0 = o.c * (tp - st[0]) + o.r0;
    k.cut = o.c * st[4];
    k.irho = fg_rcp_normal(k.cut * k.X0 - (k.rx * st[5] + k.ry * st[6] + k.rz * st[7]));
    k.iD = k.X0 * o.c * k.irho;
}

// The predictor alone (the split solve): the state at tau in, dtau/dt' out.
template <typename F> static __device__ __forceinline__ F fg_rad_predictor(const fg_rad_observer<F>& o, const F* st, F tp) {
    fg_rad_kin<F> k;
    fg_rad_lw_dir(o, st, tp, k);
    return k.iD;
}

// q's Liénard–Wiechert fields (core/radiation's lw, same formulas: the
// covariant form) from the state's part k (fg_rad_lw_dir):
// F^{mu nu} = (q/rho^2) (X^mu W^nu - X^nu W^mu), W = A - U (X.A - c^2)/rho,
// E = (q/rho^2) (R_s W^0 - X0 W_s), B = (q/rho^2) W_s x R_s, phi = q c ut/rho,
// A = q u_s/rho: E and B into fld (assigned, not added: a zero-initialised
// accumulator cost one addition per component and changed no sum's bits,
// since the sums start at +0 and so are never -0), q/rho into *qi_out (the
// potentials are its products with c ut and u_s, added by the caller).
template <typename F>
static __device__ __forceinline__ void fg_rad_lw_fields(const fg_rad_observer<F>& o, const F* st, const F* ac, F q,
                                                        const fg_rad_kin<F>& k, F* fld, F* qi_out) {
    const F rx = k.rx, ry = k.ry, rz = k.rz, X0 = k.X0, cut = k.cut, irho = k.irho;
    const F cat = o.c * ac[0];
    const F K = (cat * X0 - (rx * ac[1] + ry * ac[2] + rz * ac[3]) - o.c * o.c) * irho;
    const F qi = q * irho, qi2 = qi * irho;
    const F w0 = qi2 * (cat - K * cut);
    const F wx = qi2 * (ac[1] - K * st[5]), wy = qi2 * (ac[2] - K * st[6]), wz = qi2 * (ac[3] - K * st[7]);
    fld[0] = rx * w0 - X0 * wx;
    fld[1] = ry * w0 - X0 * wy;
    fld[2] = rz * w0 - X0 * wz;
    fld[3] = wy * rz - wz * ry;
    fld[4] = wz * rx - wx * rz;
    fld[5] = wx * ry - wy * rx;
    *qi_out = qi;
}

// |x| as an operand modifier (x < 0 ? -x : x compiled to a negation, a
// compare and two selects); the same values, -0 and NaN included, as far as
// the comparisons that use it can tell.
static __device__ __forceinline__ double fg_rad_abs(double x) { return fabs(x); }
static __device__ __forceinline__ float fg_rad_abs(float x) { return fabsf(x); }
template <typename F> static __device__ __forceinline__ F fg_rad_eps();
template <> __device__ __forceinline__ double fg_rad_eps<double>() { return 0x1p-52; }
template <> __device__ __forceinline__ float fg_rad_eps<float>() { return 0x1p-23f; }

// From scratch: bisection over knots, then safeguarded Newton to convergence,
// through fixed intervals (the same in every search mode), in the walker's own
// interval registers; it leaves the bracketing interval as guess and cache.
template <typename F, int SEARCH, int LAYOUT>
static __device__ bool fg_rad_cold_solve(fg_rad_walker<F, SEARCH, LAYOUT>& w, const fg_rad_observer<F>& o, F tp, F* tau_out) {
    const fg_rad_args<F>& A = w.A;
    fg_rad_interval<F>& iv = w.iv;
    F x[4], dx[4];
    F f, fp;
    int lo = w.a, hi = w.b - 1;
    fg_rad_fetch<F, LAYOUT>(A, iv, lo);
    fg_rad_position(iv, A.t[lo], x, dx);
    fg_rad_light_cone(o, x, dx, tp, &f, &fp);
    if (!(f <= 0)) {
        w.invalidate();
        return false;
    }
    F flo = f;
    fg_rad_fetch<F, LAYOUT>(A, iv, hi - 1);
    fg_rad_position(iv, A.t[hi], x, dx);
    fg_rad_light_cone(o, x, dx, tp, &f, &fp);
    if (!(f >= 0)) {
        w.invalidate();
        return false;
    }
    F fhi = f;
    // The largest knot with f <= 0 (f rises along the knots): interpolation
    // in the knot index (f is near linear in it along a smooth worldline, so a
    // few steps instead of log2 of the knots), a bisection after any step
    // that did not halve the bracket. f at knot j is always evaluated through
    // interval j, so the knot found, and every bit after it, is bisection's.
    bool bisect = false;
    while (hi - lo > 1) {
        const int width = hi - lo;
        int mid;
        if (bisect || !(fhi > flo)) {
            mid = (int)((unsigned)(lo + hi) >> 1);
        } else {
            mid = lo + (int)(-flo / (fhi - flo) * (F)width);
            mid = min(max(mid, lo + 1), hi - 1);
        }
        fg_rad_fetch<F, LAYOUT>(A, iv, mid);
        fg_rad_position(iv, A.t[mid], x, dx);
        fg_rad_light_cone(o, x, dx, tp, &f, &fp);
        if (f <= 0) {
            lo = mid;
            flo = f;
        } else {
            hi = mid;
            fhi = f;
        }
        bisect = !bisect && 2 * (hi - lo) > width;
    }
    fg_rad_fetch<F, LAYOUT>(A, iv, lo);
    w.idx = lo;
    F ta = A.t[lo], tb = A.t[hi];
    F tau = ta + (tb - ta) / 2;
    F tol = 4 * fg_rad_eps<F>() * (fg_rad_abs(ta) + fg_rad_abs(tb));
    for (int it = 0; it < 100; it++) {
        fg_rad_position(iv, tau, x, dx);
        fg_rad_light_cone(o, x, dx, tp, &f, &fp);
        if (f == 0) break;
        if (f < 0) ta = tau;
        else tb = tau;
        F next = tau - f * fg_rcp_normal(fp);
        if (!(next > ta && next < tb)) next = ta + (tb - ta) / 2;
        if (fg_rad_abs(next - tau) <= tol || tb - ta <= tol) {
            tau = next;
            break;
        }
        tau = next;
    }
    *tau_out = tau;
    return true;
}

// The Newton advance's acceptance test after its corrections (core/radiation's
// settled and converged, the same operations): the last step d2 at most
// 2^-20 of its interval's width w (the usual sample: one compare,
// fg_rad_settled), or else (fg_rad_converged_rest, from the light cone's
// slope h and its derivative hp at the final tau, fg_rad_newton_slope) d2 at
// the rounding of tau, or the error bound 8 K d2^2 (K = |hp|/(2h), the
// curvature) below 2^-16 w with 4 K |d2| below 1/2; else the cold solve
// decides the sample. The rest runs on the cold solve's branch, off the
// usual sample's path.
template <typename F> static __device__ __forceinline__ bool fg_rad_settled(F d2, F w) { return fg_rad_abs(d2) <= (F)0x1p-20 * w; }
template <typename F> static __device__ __forceinline__ bool fg_rad_converged_rest(F d2, F w, F tau, F h, F hp) {
    const F a2 = fg_rad_abs(d2);
    if (a2 <= 16 * fg_rad_eps<F>() * (fg_rad_abs(tau) + w)) return true;
    const F p = fg_rad_mul(fg_rad_mul((F)4, fg_rad_abs(hp)), a2);
    return p < h && fg_rad_mul(p, a2) <= fg_rad_mul(fg_rad_mul((F)0x1p-16, w), h);
}

// One sample of one walker: advance tau from the previous sample (have) by
// Newton or RK4, or solve from scratch; false when the observer does not see
// the particle at this sample. The advance is kept only while every iterate
// (Newton) or step (RK4) stays on the particle's knots: one that leaves them
// was evaluated on an extrapolated cubic, and near the end of a worldline
// could end inside the knots but far from any root; the cold solve then
// decides (it brackets the root, or finds none).
template <typename F, int METHOD, int SEARCH, int LAYOUT>
static __device__ __forceinline__ bool fg_rad_advance(fg_rad_walker<F, SEARCH, LAYOUT>& w, const fg_rad_observer<F>& ob, F tp, F tprev,
                                                      F lo, F hi, bool have, F ifp, F* tau_io) {
    const fg_rad_args<F>& A = w.A;
    F tau = *tau_io;
    F x[4], dx[4];
    F d2 = 0, h = 0;  // Newton: the last step; the width of the interval it was taken on
    bool done = false;        // kept, and (Newton) its last step below 2^-20 h or fewer than 2 corrections
    if (have) {
        F dt = tp - tprev;
        if (METHOD == FG_RAD_NEWTON) {
            // One loop for every search. A coef_reuse copy with n = 2
            // unrolled and the range test inside the locate gave other bits
            // than the cold search for one float32 sample in 256000 on the
            // H200 (the same source compiled in another context fuses
            // differently): the searches must agree bit for bit.
            tau += dt * ifp;
            have = tau >= lo && tau <= hi;
            for (int it = 0; have && it < A.n_iters; it++) {
                bool ok;
                w.position(tau, x, dx);
                h = w.iv.t1 - w.iv.t0;
                d2 = fg_rad_newton_step(ob, x, dx, tp, &ok);
                tau -= d2;
                have = ok && tau >= lo && tau <= hi;
            }
            done = have && (A.n_iters < 2 || fg_rad_settled(d2, h));
        } else {
            F hs = dt / (F)A.n_substeps;
            for (int it = 0; have && it < A.n_substeps; it++) {
                F f, d, k1, k2, k3, k4;
                w.position(tau, x, dx);
                fg_rad_light_cone(ob, x, dx, tp, &f, &d);
                k1 = fg_rcp_normal(d);
                w.position(tau + hs / 2 * k1, x, dx);
                fg_rad_light_cone(ob, x, dx, tp, &f, &d);
                k2 = fg_rcp_normal(d);
                w.position(tau + hs / 2 * k2, x, dx);
                fg_rad_light_cone(ob, x, dx, tp, &f, &d);
                k3 = fg_rcp_normal(d);
                w.position(tau + hs * k3, x, dx);
                fg_rad_light_cone(ob, x, dx, tp, &f, &d);
                k4 = fg_rcp_normal(d);
                tau += hs / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
                have = tau >= lo && tau <= hi;
            }
            done = have;
        }
    }
    if (!done) {  // a kept advance is an unsettled Newton one here (RK4's are done)
        if (METHOD == FG_RAD_NEWTON && have) {
            F ddx[4], rho, rhop;
            w.position2(tau, x, dx, ddx);
            fg_rad_newton_slope(ob, x, dx, ddx, tp, &rho, &rhop);
            have = fg_rad_converged_rest(d2, h, tau, rho, rhop);
        }
        if (!have) have = fg_rad_cold_solve(w, ob, tp, &tau);
    }
    *tau_io = tau;
    return have;
}

#define FG_RAD_NAN __longlong_as_double(0x7ff8000000000000LL)

// One particle's fields at one sample, from its state and acceleration at
// tau, added into sum[c * stride] (every structure adds them so, particles in
// order); returns the next sample's predictor dtau/dt'. fg_rad_no_root marks
// a sample whose particle has no root. The stride keeps the caller's integer
// type, so each caller's index arithmetic is what it was. The potentials
// q u/rho are added as one rounding in float64 (fg_rad_acc_pot's fma: NVRTC
// contracted them so anyway, and every structure must add the same bits).
static __device__ __forceinline__ double fg_rad_acc_pot(double sum, double qi, double u) { return fma(qi, u, sum); }
static __device__ __forceinline__ double fg_rad_acc_pot(double sum, float qi, float u) { return sum + (double)(qi * u); }
template <typename F, typename I>
static __device__ __forceinline__ F fg_rad_add_fields(const fg_rad_observer<F>& ob, const F* st, const F* ac, F q, F tp,
                                                      double* sum, I stride) {
    fg_rad_kin<F> k;
    fg_rad_lw_dir(ob, st, tp, k);
    F fld[FG_RAD_NFIELD], qi;
    fg_rad_lw_fields(ob, st, ac, q, k, fld, &qi);
#pragma unroll
    for (int c = 0; c < FG_RAD_NFIELD; c++) sum[c * stride] += (double)fld[c];
    sum[6 * stride] = fg_rad_acc_pot(sum[6 * stride], qi, k.cut);
#pragma unroll
    for (int c = 0; c < 3; c++) sum[(7 + c) * stride] = fg_rad_acc_pot(sum[(7 + c) * stride], qi, st[5 + c]);
    return k.iD;
}
// The same additions into one contiguous, 16-byte aligned slot of the tiled
// kernels' shared sums, two components per shared load and store.
template <typename F>
static __device__ __forceinline__ F fg_rad_add_fields_slot(const fg_rad_observer<F>& ob, const F* st, const F* ac, F q, F tp,
                                                           double2* slot) {
    fg_rad_kin<F> k;
    fg_rad_lw_dir(ob, st, tp, k);
    F fld[FG_RAD_NFIELD], qi;
    fg_rad_lw_fields(ob, st, ac, q, k, fld, &qi);
    double2 v;
    v = slot[3];
    v.x = fg_rad_acc_pot(v.x, qi, k.cut);
    v.y = fg_rad_acc_pot(v.y, qi, st[5]);
    slot[3] = v;
    v = slot[4];
    v.x = fg_rad_acc_pot(v.x, qi, st[6]);
    v.y = fg_rad_acc_pot(v.y, qi, st[7]);
    slot[4] = v;
#pragma unroll
    for (int c = 0; c < 3; c++) {
        v = slot[c];
        v.x += (double)fld[2 * c];
        v.y += (double)fld[2 * c + 1];
        slot[c] = v;
    }
    return k.iD;
}
template <typename I> static __device__ __forceinline__ void fg_rad_no_root(double* sum, I stride) {
    for (int c = 0; c < FG_RAD_NCOMP; c++) sum[c * stride] = FG_RAD_NAN;
}

// The comparison kernels ("_obs", "_cm"): one thread per observer, particles
// outer, samples inner, adding into the (zeroed) cube.
template <typename F, int METHOD, int SEARCH, int LAYOUT>
static __device__ void fg_rad_observer_walk(const fg_rad_args<F>& A, int o) {
    fg_rad_observer<F> ob = fg_rad_observer_at(A, o);
    const F* tps = A.tp + (size_t)o * A.S;
    size_t os = (size_t)A.O * A.S;
    F st[FG_RAD_NSTATE], ac[FG_RAD_NACCEL];
    for (int p = 0; p < A.P; p++) {
        int a = A.off[p], b = A.off[p + 1];
        fg_rad_walker<F, SEARCH, LAYOUT> w(A, a, b);
        F lo = A.t[a], hi = A.t[b - 1];
        F q = A.charge[p];
        F tau = 0, ifp = 1;
        bool have = false;
        for (int s = 0; s < A.S; s++) {
            F tp = tps[s];
            if (s % A.seg == 0) have = false;  // a segment's first sample: from scratch
            have = fg_rad_advance<F, METHOD, SEARCH, LAYOUT>(w, ob, tp, s > 0 ? tps[s - 1] : tp, lo, hi, have, ifp, &tau);
            size_t j = (size_t)o * A.S + s;
            if (!have) {
                fg_rad_no_root(A.out + j, os);
                if (A.tret) A.tret[p * os + j] = FG_RAD_NAN;
                continue;
            }
            w.state_accel(tau, st, ac);
            ifp = fg_rad_add_fields(ob, st, ac, q, tp, A.out + j, os);
            if (A.tret) A.tret[p * os + j] = (double)st[0];
        }
    }
}

// The default kernels: see the header. Dynamic shared memory per block of B
// threads (B observers): one slot of the NCOMP sums per (sample k, observer),
// slot k * B + tid (FG_RAD_SLOT2 double2), then the shifted times tp, F
// [T][B], then int observer[B] (gpuradiation.SharedBytes: the 8 bytes of a tp
// are counted in either precision). Each thread reads and writes only
// its own slots, so the block synchronises only around the
// write-out. A block takes work item blockIdx.x first, then claims the next
// unclaimed one from A.queue (dynamic: a block whose items were light takes
// more, where the grid-stride order gave every block the same count and the
// kernel ended with the blocks that had drawn the heavy ones).
template <typename F, int METHOD, int SEARCH, bool TRET>
static __device__ void fg_rad_tiled(const fg_rad_args<F>& A) {
    extern __shared__ double2 fg_rad_tile_smem[];
    const int B = blockDim.x, tid = threadIdx.x, T = A.tile;
    double2* sums = fg_rad_tile_smem;
    F* stp = reinterpret_cast<F*>(sums + FG_RAD_SLOT2 * T * B);
    int* sobs = reinterpret_cast<int*>(stp + T * B);
    const size_t os = (size_t)A.O * A.S;
    const size_t G = (size_t)gridDim.x * B, g = (size_t)blockIdx.x * B + tid;
    F st[FG_RAD_NSTATE], ac[FG_RAD_NACCEL];
    const int nseg = (A.S + A.seg - 1) / A.seg;  // A.seg in 1 .. S (the host's)
    __shared__ int fg_rad_next_item;
    for (int item = blockIdx.x; item < (A.O + B - 1) / B * nseg;) {
        const int base = item / nseg * B, sb = item % nseg * A.seg, se = min(A.S, sb + A.seg);
        const int slot = base + tid;
        const bool live = slot < A.O;
        const int o = live ? (A.perm ? A.perm[slot] : slot) : -1;
        sobs[tid] = o;
        fg_rad_observer<F> ob = {0, 0, 0, 0, A.c, A.ic};
        if (live) {
            ob.x = A.ox[o];
            ob.y = A.oy[o];
            ob.z = A.oz[o];
            ob.r0 = A.r0[o];
        }
        for (int s0 = sb; s0 < se; s0 += T) {
            const int ns = min(T, se - s0);
            // The previous tile's last shifted time, from the thread's own slot
            // before the staging below overwrites it (a tile before the segment's
            // last is full).
            const F tlast = s0 > sb ? stp[(T - 1) * B + tid] : 0;
            for (int k = 0; k < ns; k++) {
                double2* sk = sums + (k * B + tid) * FG_RAD_SLOT2;
                for (int c = 0; c < FG_RAD_SLOT2; c++) sk[c] = make_double2(0, 0);
                stp[k * B + tid] = live ? A.tp_slot[(size_t)(s0 + k) * A.O + slot] : 0;
            }
            for (int p = 0; live && p < A.P; p++) {
                const fg_rad_particle<F> pr = A.part[p];
                fg_rad_walker<F, SEARCH, FG_RAD_INTERVAL_MAJOR> w(A, pr.a, pr.b);
                fg_rad_walk<F>* ws = A.w_walk + (size_t)p * G + g;
                F tau = 0, ifp = 1;
                bool have = false;
                int step = 0;
                if (s0 > sb) {
                    const fg_rad_walk<F> wk = *ws;
                    tau = wk.tau;
                    ifp = wk.ifp;
                    step = wk.step;
                    have = wk.idx >= 0;
                    // Where the walk stopped: the first locate searches from there
                    // (fetching that interval's record here instead cost a round trip
                    // whenever the next tau had left it: x0.93 at 1024 knots).
                    if (have) w.idx = wk.idx;
                }
                F tprev = tlast;
                // The sample loop walks the thread's slots and its row of retarded
                // times by pointer and counts down (under the register cap NVRTC
                // rebuilt an index or an end bound from the tile's bounds at every
                // sample: 14-24 integer instructions).
                double* tr = TRET ? A.tret + p * os + (size_t)o * A.S + s0 : nullptr;
                double2* sk = sums + tid * FG_RAD_SLOT2;
                const F* tpk = stp + tid;
                for (int left = ns; left > 0; left--, sk += B * FG_RAD_SLOT2, tpk += B) {
                    const F tp = *tpk;
                    const int i0 = w.idx;
                    w.hint = step;
                    have = fg_rad_advance<F, METHOD, SEARCH, FG_RAD_INTERVAL_MAJOR>(w, ob, tp, tprev, pr.lo, pr.hi, have, ifp, &tau);
                    tprev = tp;
                    if (!have) {
                        fg_rad_no_root(reinterpret_cast<double*>(sk), 1);
                        if (TRET) *tr++ = FG_RAD_NAN;
                        continue;
                    }
                    w.state_accel(tau, st, ac);
                    ifp = fg_rad_add_fields_slot(ob, st, ac, pr.q, tp, sk);
                    if (TRET) *tr++ = (double)st[0];
                    step = w.idx - i0;
                }
                *ws = fg_rad_walk<F>{tau, ifp, have ? w.idx : -1, step};
            }
            __syncthreads();
            // Write the tile (streaming stores: the cube passes through L2 once and
            // should not evict the walkers' scratch and the knot records from it):
            // consecutive threads, consecutive samples of one
            // observer (ns values contiguous per observer row), an element's ten
            // components from its indices formed once (per component, the division
            // and the 64-bit index arithmetic cost 25 instructions per sample).
            for (int e = tid; e < B * ns; e += B) {
                const int ol = e / ns, k = e - ol * ns;
                const int oo = sobs[ol];
                if (oo < 0) continue;
                double* dst = A.out + (size_t)oo * A.S + s0 + k;
                const double* src = reinterpret_cast<const double*>(sums + (k * B + ol) * FG_RAD_SLOT2);
#pragma unroll
                for (int c = 0; c < FG_RAD_NCOMP; c++) {
                    double v = src[c];
                    if (A.scale && v == v) v *= __ldg(A.scale + c);  // as fg_rad_unscale: a NaN stays as written
                    __stcs(dst + c * os, v);
                }
            }
            __syncthreads();
        }
        if (tid == 0) fg_rad_next_item = (int)gridDim.x + atomicAdd(A.queue, 1);
        __syncthreads();
        item = fg_rad_next_item;
        __syncthreads();  // every thread has read it before the next item's claim
    }
}

// The shifted times t' = t - |x_obs|/c, built on the device from the sample
// times and each observer's shift |x_obs|/c, both float64 as the CPU kernel
// forms them (core/radiation's DeviceArrays): one float64 subtraction, then
// the rounding to F, which is the CPU kernel's F(t - r0/c) bit for bit. The
// host sends O + S numbers (or O + O x S with a row of times per observer)
// rather than building and transposing the O x S shifted times. times
// holds S values shared by every observer (tstride 0) or one row of S per
// observer (tstride S).
template <typename F>
static __device__ __forceinline__ F fg_rad_shifted(const double* times, int tstride, const double* shift, int o, int s) {
    return (F)__dsub_rn(times[(size_t)o * tstride + s], shift[o]);
}
// tp_slot (the tiled kernels'): S x O over the observer slots, element
// s * O + slot, the slot's observer through perm (NULL: the identity);
// consecutive threads write consecutive slots.
template <typename F>
static __device__ void fg_rad_shift_slots(const double* times, int tstride, const double* shift, const int* perm, int O, int S, F* tp_slot) {
    const size_t n = (size_t)O * S, step = (size_t)gridDim.x * blockDim.x;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += step) {
        const int s = (int)(e / (unsigned)O), slot = (int)(e - (size_t)s * O);
        tp_slot[e] = fg_rad_shifted<F>(times, tstride, shift, perm ? perm[slot] : slot, s);
    }
}
// tp (the split and comparison kernels'): O x S observer-major.
template <typename F>
static __device__ void fg_rad_shift_rows(const double* times, int tstride, const double* shift, int O, int S, F* tp) {
    const size_t n = (size_t)O * S, step = (size_t)gridDim.x * blockDim.x;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += step) {
        const int o = (int)(e / (unsigned)S), s = (int)(e - (size_t)o * S);
        tp[e] = fg_rad_shifted<F>(times, tstride, shift, o, s);
    }
}
extern "C" __global__ void fg_rad_shift_slot_f64(const double* times, int tstride, const double* shift, const int* perm, int O, int S, double* tp) {
    fg_rad_shift_slots<double>(times, tstride, shift, perm, O, S, tp);
}
extern "C" __global__ void fg_rad_shift_slot_f32(const double* times, int tstride, const double* shift, const int* perm, int O, int S, float* tp) {
    fg_rad_shift_slots<float>(times, tstride, shift, perm, O, S, tp);
}
extern "C" __global__ void fg_rad_shift_obs_f64(const double* times, int tstride, const double* shift, int O, int S, double* tp) {
    fg_rad_shift_rows<double>(times, tstride, shift, O, S, tp);
}
extern "C" __global__ void fg_rad_shift_obs_f32(const double* times, int tstride, const double* shift, int O, int S, float* tp) {
    fg_rad_shift_rows<float>(times, tstride, shift, O, S, tp);
}

// The float32 mode's units taken back on the device (core/radiation's
// unscale: the same multiplications by powers of two, so the same bits as on
// the host), before the cube is copied out: column blockIdx.y of n values
// times f[blockIdx.y]. A NaN is left as the kernel wrote it: the host's
// multiplication returns its NaN operand unchanged, the device's could
// return another NaN.
extern "C" __global__ void fg_rad_unscale(double* out, long long n, const double* f) {
    double* col = out + (size_t)blockIdx.y * n;
    const double fk = f[blockIdx.y];
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const double v = col[i];
        if (v == v) col[i] = v * fk;
    }
}

// The split kernels (Device.Variant "_split"): two launches per chunk of oc
// observer slots (o0 ..), through a scratch of the roots, tau (F) and the
// interval that evaluates the field at it (int, -1: no root), both laid out
// [p][s][slot - o0] (P x S x oc), so that both phases read and write it
// coalesced.
//
// Phase A, fg_rad_split_solve (fg_rad_<method>_<search>_<f64|f32>_split):
// one thread per (slot, particle), the slot fastest, walking that pair's S
// samples in order exactly as the tiled kernel's walker does (the same
// fg_rad_advance, warm start, search guess and cold solve; its state between
// tiles is just kept in registers here), the predictor dtau/dt' made by
// fg_rad_predictor from the state at tau (fg_rad_add_fields' own code for it). Its
// roots and intervals are the tiled kernel's: the interval of an evaluation
// is the one whose knots bracket tau, whatever the search and its guess.
template <typename F, int METHOD, int SEARCH>
static __device__ void fg_rad_split_solve(const fg_rad_args<F>& A) {
    const int oc = A.oc;
    const long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= (long long)A.P * oc) return;
    const int p = (int)(gid / oc), j = (int)(gid - (long long)p * oc);
    const int slot = A.o0 + j;
    const int o = A.perm ? A.perm[slot] : slot;
    fg_rad_observer<F> ob = fg_rad_observer_at(A, o);
    const F* tps = A.tp + (size_t)o * A.S;
    const int a = A.off[p], b = A.off[p + 1];
    fg_rad_walker<F, SEARCH, FG_RAD_INTERVAL_MAJOR> w(A, a, b);
    const F lo = A.t[a], hi = A.t[b - 1];
    const size_t base = (size_t)p * A.S * oc + j;
    F* rtau = A.w_tau + base;
    int* ridx = A.w_idx + base;
    F st[FG_RAD_NSTATE];
    F tau = 0, ifp = 1, tprev = 0;
    bool have = false;
    int step = 0;
    for (int s = 0; s < A.S; s++) {
        const F tp = tps[s];
        if (s % A.seg == 0) have = false;  // a segment's first sample: from scratch
        const int i0 = w.idx;
        w.hint = step;
        have = fg_rad_advance<F, METHOD, SEARCH, FG_RAD_INTERVAL_MAJOR>(w, ob, tp, tprev, lo, hi, have, ifp, &tau);
        tprev = tp;
        int idx = -1;
        if (have) {
            w.state(tau, st);  // the tiled kernel's state_accel: the same locate, the same state
            ifp = fg_rad_predictor(ob, st, tp);
            step = w.idx - i0;
            idx = w.idx;
        }
        rtau[(size_t)s * oc] = tau;
        ridx[(size_t)s * oc] = idx;
    }
}

// Phase B, fg_rad_split_field (fg_rad_field_<f64|f32>_split): blocks of
// 32 x T threads, (slot lane, sample), take 32 consecutive slots x T
// consecutive samples; each thread, for p = 0, 1, ... in order, reads its
// root (a warp's 32 lanes read 32 consecutive values), fetches the interval's
// record (state and acceleration), and adds fg_rad_add_fields' fields into register
// sums exactly as the tiled kernel adds them into its shared ones (0, then
// += (double)fld per particle, NaN set where there is no root). The sums go
// out through shared memory, double [NCOMP][T][32] and int observer[32]
// (gpuradiation.SplitSharedBytes), each observer's T samples contiguous.
template <typename F>
static __device__ void fg_rad_split_field(const fg_rad_args<F>& A) {
    extern __shared__ double fg_rad_smem[];
    const int L = blockDim.x, T = blockDim.y, lane = threadIdx.x, k = threadIdx.y;
    const int tid = k * L + lane, NT = L * T;
    double* sums = fg_rad_smem;
    int* sobs = reinterpret_cast<int*>(sums + FG_RAD_NCOMP * T * L);
    const int nsg = (A.S + T - 1) / T;
    const int og = blockIdx.x / nsg, sg = blockIdx.x - og * nsg;
    const int j = og * L + lane, s0 = sg * T, s = s0 + k;
    const int ns = min(T, A.S - s0);
    const int o = j < A.oc ? (A.perm ? A.perm[A.o0 + j] : A.o0 + j) : -1;
    if (k == 0) sobs[lane] = o;
    const size_t os = (size_t)A.O * A.S;
    double sum[FG_RAD_NCOMP];
#pragma unroll
    for (int c = 0; c < FG_RAD_NCOMP; c++) sum[c] = 0;
    if (o >= 0 && s < A.S) {
        fg_rad_observer<F> ob = fg_rad_observer_at(A, o);
        const size_t pstride = (size_t)A.S * A.oc, base = (size_t)s * A.oc + j;
        F st[FG_RAD_NSTATE], ac[FG_RAD_NACCEL];
        for (int p = 0; p < A.P; p++) {
            const int idx = A.w_idx[p * pstride + base];
            if (idx < 0) {
                fg_rad_no_root(sum, 1);
                if (A.tret) A.tret[p * os + (size_t)o * A.S + s] = FG_RAD_NAN;
                continue;
            }
            const F tau = A.w_tau[p * pstride + base];
            const F q = A.charge[p];
            fg_rad_interval<F> iv;
            fg_rad_quad<F> u, ia;
            fg_rad_fetch<F, FG_RAD_INTERVAL_MAJOR>(A, iv, idx);
            fg_rad_fetch_velocity<F, FG_RAD_INTERVAL_MAJOR>(A, u, idx);
            fg_rad_fetch_accel<F, FG_RAD_INTERVAL_MAJOR>(A, ia, idx);
            const fg_rad_powers<F> w = fg_rad_powers_at(iv, tau);
            fg_rad_state(iv, u, w, st);
            fg_rad_eval4(ia, w, ac);
            fg_rad_add_fields(ob, st, ac, q, A.tp[(size_t)o * A.S + s], sum, 1);
            if (A.tret) A.tret[p * os + (size_t)o * A.S + s] = (double)st[0];
        }
    }
#pragma unroll
    for (int c = 0; c < FG_RAD_NCOMP; c++) sums[(c * T + k) * L + lane] = sum[c];
    __syncthreads();
    // Consecutive threads, consecutive samples of one observer.
    for (int c = 0; c < FG_RAD_NCOMP; c++) {
        for (int e = tid; e < L * ns; e += NT) {
            const int ol = e / ns, kk = e - ol * ns;
            const int oo = sobs[ol];
            if (oo >= 0) A.out[c * os + (size_t)oo * A.S + s0 + kk] = sums[(c * T + kk) * L + ol];
        }
    }
}

#define FG_RAD_ENTRY_L(NAME, F, METHOD, SEARCH, LAYOUT)                     \
    extern "C" __global__ void NAME(const fg_rad_args<F> A) {               \
        int o = blockIdx.x * blockDim.x + threadIdx.x;                      \
        if (o < A.O) fg_rad_observer_walk<F, METHOD, SEARCH, LAYOUT>(A, o); \
    }
// The float64 tiled kernels are held to 128 registers on sm_90: registers are
// allocated per SM sub-partition (16384 each), so 128 lets four warps share one
// and 136-168 only three (16 against 12 warps per SM); with the position
// alone in the interval cache they fit (no spill; uncapped the compiler took
// 166-168 for its own scheduling). float32's are below it already (and a cap
// only invites the compiler to use it); sm_80, not measured, is left alone.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FG_RAD_MAXNREG_f64 __maxnreg__(128)
#else
#define FG_RAD_MAXNREG_f64
#endif
#define FG_RAD_MAXNREG_f32
// Every (method, search, precision) once: its tiled kernel
// fg_rad_<method>_<search>_<prec> and its split solve (phase A) ..._split.
#define FG_RAD_EACH(X)                                         \
    X(newton, cold, f64, double, FG_RAD_NEWTON, FG_RAD_COLD)   \
    X(newton, warm, f64, double, FG_RAD_NEWTON, FG_RAD_WARM)   \
    X(newton, reuse, f64, double, FG_RAD_NEWTON, FG_RAD_REUSE) \
    X(rk4, cold, f64, double, FG_RAD_RK4, FG_RAD_COLD)         \
    X(rk4, warm, f64, double, FG_RAD_RK4, FG_RAD_WARM)         \
    X(rk4, reuse, f64, double, FG_RAD_RK4, FG_RAD_REUSE)       \
    X(newton, cold, f32, float, FG_RAD_NEWTON, FG_RAD_COLD)    \
    X(newton, warm, f32, float, FG_RAD_NEWTON, FG_RAD_WARM)    \
    X(newton, reuse, f32, float, FG_RAD_NEWTON, FG_RAD_REUSE)  \
    X(rk4, cold, f32, float, FG_RAD_RK4, FG_RAD_COLD)          \
    X(rk4, warm, f32, float, FG_RAD_RK4, FG_RAD_WARM)          \
    X(rk4, reuse, f32, float, FG_RAD_RK4, FG_RAD_REUSE)
#define FG_RAD_DEFINE(M, S, P, F, METHOD, SEARCH)                                                         \
    extern "C" __global__ void FG_RAD_MAXNREG_##P fg_rad_##M##_##S##_##P(const fg_rad_args<F> A) {        \
        fg_rad_tiled<F, METHOD, SEARCH, false>(A);                                                        \
    }                                                                                                     \
    extern "C" __global__ void FG_RAD_MAXNREG_##P fg_rad_##M##_##S##_##P##_tret(const fg_rad_args<F> A) { \
        fg_rad_tiled<F, METHOD, SEARCH, true>(A);                                                         \
    }                                                                                                     \
    extern "C" __global__ void fg_rad_##M##_##S##_##P##_split(const fg_rad_args<F> A) {                   \
        fg_rad_split_solve<F, METHOD, SEARCH>(A);                                                         \
    }
FG_RAD_EACH(FG_RAD_DEFINE)
// The split field kernels (phase B), one per precision.
extern "C" __global__ void fg_rad_field_f64_split(const fg_rad_args<double> A) { fg_rad_split_field<double>(A); }
extern "C" __global__ void fg_rad_field_f32_split(const fg_rad_args<float> A) { fg_rad_split_field<float>(A); }
// The warm search against the cold one (bench/radiation TestGPUWarmSearchAgrees):
// query i searches particle part[i]'s knots for tau[i] from guess[i] (any
// int: the search clamps it) and writes the warm result minus the cold one.
extern "C" __global__ void fg_rad_search_agree_f64(const double* t, const int* off, const int* part, const int* guess,
                                                   const double* tau, int n, int* diff) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int a = off[part[i]], b = off[part[i] + 1];
    diff[i] = fg_rad_search_from(t, a, b, guess[i], tau[i]) - fg_rad_search(t, a, b, tau[i]);
}
// One thread per observer (the structure before the tiles), for the
// benchmark's comparison only: interval records ("_obs") and the
// column-major arrays ("_cm").
FG_RAD_ENTRY_L(fg_rad_newton_cold_f64_obs, double, FG_RAD_NEWTON, FG_RAD_COLD, FG_RAD_INTERVAL_MAJOR)
FG_RAD_ENTRY_L(fg_rad_newton_reuse_f64_obs, double, FG_RAD_NEWTON, FG_RAD_REUSE, FG_RAD_INTERVAL_MAJOR)
FG_RAD_ENTRY_L(fg_rad_newton_cold_f64_cm, double, FG_RAD_NEWTON, FG_RAD_COLD, FG_RAD_COLUMN_MAJOR)
FG_RAD_ENTRY_L(fg_rad_newton_warm_f64_cm, double, FG_RAD_NEWTON, FG_RAD_WARM, FG_RAD_COLUMN_MAJOR)
FG_RAD_ENTRY_L(fg_rad_newton_reuse_f64_cm, double, FG_RAD_NEWTON, FG_RAD_REUSE, FG_RAD_COLUMN_MAJOR)


#endif
