package radiation

import (
	"github.com/fieldgo/fieldgo/internal/par"
	"math"

	"github.com/fieldgo/fieldgo/core/spline"
	"github.com/fieldgo/fieldgo/kernels"
)

// float is float64, or float32 in single-precision mode.
type float = spline.Float

func sqrt[F float](x F) F { return F(math.Sqrt(float64(x))) } // correctly rounded for float32 too

// knots are the state and acceleration splines in the kernel's precision,
// column-major with stride n (kernels/src/radiation.cu reads the same numbers,
// laid out as interval records). Per interval i (knots i, i+1, width h =
// h[i+1]) the spline's cubic
//
//	S = (z[i] dt2^3 + z[i+1] dt1^3)/(6h) + c1 dt1 + c2 dt2,   dt1 + dt2 = h,
//
// is kept as y0 = z[i]/(6h), y1 = z[i+1]/(6h), a1 = c1 - c2 and a0 = c2 h =
// u[i] - z[i] h^2/6 (u the knot values), formed in float64 on the host and
// rounded once, and evaluated as
//
//	S = (a1 + y1 dt1^2) dt1 + (a0 + y0 dt2^3)
//
// the same polynomial with no division and three fused multiply-adds per
// component on the GPU, two of them independent (c1 dt1 + c2 dt2 took a
// multiplication more, and dt1^3 one more per evaluation: on the H200 the
// cubics were ~40% of the kernel's float64 instructions, and ncu counted half
// of them unfused). Only the last two operations round at the scale of S, as
// in the c1, c2 form (a0 + a1 dt1 + y1 dt1^3 + y0 dt2^3 in that order rounds
// three times there: float32's error at gamma = 5 grew 1.5-2.7x). The last
// knot of a particle has no interval (zeros).
//
// rec holds the same numbers interval-major, one RecordLen-value record per
// knot interval, which the kernels read (CPU and GPU): the layout is the
// device contract's (kernels.RadiationRecordLen), built here by records.
type knots[F float] struct {
	n                  int
	off                []int
	t, h               []F
	y0, y1, a1, a0     []F // 8 columns: t, x, y, z, ut, ux, uy, uz
	ay0, ay1, aa1, aa0 []F // 4 columns: at, ax, ay, az
	rec                []F // n records of RecordLen
	// collide is checkKnots' verdict, made once with the knots: kept knots
	// serve many calls and never change.
	collide error
}

// RecordLen is the values per knot interval of the interval-major records
// and RecordAccel where the acceleration's 16 start (the layout of
// kernels.RadiationRecordLen, FG_RAD_REC in radiation.cu).
const (
	RecordLen   = kernels.RadiationRecordLen
	RecordAccel = kernels.RadiationRecordAccel
)

// records lays the column arrays out interval-major (rec's layout).
func (k *knots[F]) records() []F {
	n := k.n
	r := make([]F, n*RecordLen)
	par.For(n, 2048, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := r[i*RecordLen : (i+1)*RecordLen]
			v[0] = k.t[i]
			if i+1 < n {
				v[1] = k.t[i+1]
			}
			for d := 0; d < nState; d++ {
				j := d*n + i
				v[4+d], v[12+d], v[20+d], v[28+d] = k.y0[j], k.y1[j], k.a1[j], k.a0[j]
			}
			for d := 0; d < nAccel; d++ {
				j := d*n + i
				v[RecordAccel+d], v[RecordAccel+4+d], v[RecordAccel+8+d], v[RecordAccel+12+d] = k.ay0[j], k.ay1[j], k.aa1[j], k.aa0[j]
			}
		}
	})
	return r
}

// quad holds the four position components' (t, x, y, z) coefficients on one
// interval.
type quad[F float] struct {
	y0, y1, a1, a0 [4]F
}

// interval holds one interval's position: what coef_reuse keeps in registers
// while tau stays inside. The retarded time depends on the position only, so
// the Newton corrections, RK4 and the cold solve evaluate the position and
// its derivative (position); the 4-velocity's and the acceleration's
// coefficients are fetched once per sample, for the field, on the interval
// the position's search found (the GPU kernel's registers: half of caching
// the whole state).
type interval[F float] struct {
	t0, t1 F
	x      quad[F]
}

const (
	nState = 8
	nAccel = 4
)

func (k *knots[F]) record(i int) *[RecordLen]F { return (*[RecordLen]F)(k.rec[i*RecordLen:]) }

// fetch reads interval i's knot times and position: groups 1, 3, 5, 7 of its
// record (the 4-velocity's are 2, 4, 6, 8).
func (k *knots[F]) fetch(iv *interval[F], i int) {
	r := k.record(i)
	iv.t0, iv.t1 = r[0], r[1]
	iv.x = quad[F]{y0: [4]F(r[4:]), y1: [4]F(r[12:]), a1: [4]F(r[20:]), a0: [4]F(r[28:])}
}

// cubic is the one polynomial evaluation every path shares, with q1 = dt1^2
// and e2 = dt2^3 formed once per evaluation: cold, warm and cached searches
// differ only in how they find the interval, so their results are
// bit-identical.
func cubic[F float](y0, y1, a1, a0, dt1, q1, e2 F) F {
	return (a1+y1*q1)*dt1 + (a0 + y0*e2)
}

// position evaluates x = (t, x, y, z) at tau and its derivative dx/dtau =
// a1 + 3 y1 dt1^2 - 3 y0 dt2^2: the spline's own slope, which makes the
// Newton corrections exact Newton steps on the splined light cone (the
// 4-velocity's spline is a different interpolant, within its error of it).
func (iv *interval[F]) position(tau F, x, dx *[4]F) {
	dt1, dt2 := tau-iv.t0, iv.t1-tau
	q1, q2 := dt1*dt1, dt2*dt2
	e2, Q1, Q2 := q2*dt2, 3*q1, 3*q2
	q := &iv.x
	for d := 0; d < 4; d++ { // the loop of eval and the derivative's, fused (the CPU's time)
		y0, y1, a1 := q.y0[d], q.y1[d], q.a1[d]
		x[d] = cubic(y0, y1, a1, q.a0[d], dt1, q1, e2)
		dx[d] = (a1 + y1*Q1) - y0*Q2
	}
}

// walker evaluates one particle's splines for one observer, keeping the
// previous interval as the search's guess.
type walker[F float] struct {
	k      *knots[F]
	a, b   int // the particle's knots
	search Search
	reuse  bool
	idx    int
	valid  bool // iv holds interval idx (coef_reuse)
	iv     interval[F]
}

// locate makes iv the interval of tau.
func (w *walker[F]) locate(tau F) {
	switch {
	case w.search == Cold:
		w.idx = spline.Search(w.k.t, w.a, w.b, tau)
	case w.reuse && w.valid && spline.In(w.k.t, w.a, w.b, w.idx, tau):
		return
	default:
		w.idx = spline.SearchFrom(w.k.t, w.a, w.b, w.idx, tau)
	}
	w.k.fetch(&w.iv, w.idx)
	w.valid = w.reuse
}

func (w *walker[F]) position(tau F, x, dx *[4]F) {
	w.locate(tau)
	w.iv.position(tau, x, dx)
}

// curvature evaluates the position and its first two derivatives at tau
// (d2x/dtau2 = 6 (y1 dt1 + y0 dt2), the spline's own: continuous across
// knots) for converged's bound; the walker is left on tau's interval, which
// the field's evaluation then finds cached.
func (w *walker[F]) curvature(tau F, x, dx, ddx *[4]F) {
	w.locate(tau)
	iv := &w.iv
	iv.position(tau, x, dx)
	dt1, dt2 := tau-iv.t0, iv.t1-tau
	for d := 0; d < 4; d++ {
		ddx[d] = 6 * (iv.x.y1[d]*dt1 + iv.x.y0[d]*dt2)
	}
}

// stateAccel evaluates the state (t, x, y, z, ut, ux, uy, uz) and the
// acceleration at tau for the field: the position from the walker's
// interval, the 4-velocity's (record groups 2, 4, 6, 8) and the
// acceleration's coefficients read from the record of the interval the
// position's search found.
func (w *walker[F]) stateAccel(tau F, st *[nState]F, ac *[nAccel]F) {
	w.locate(tau)
	r, iv := w.k.record(w.idx), &w.iv
	dt1, dt2 := tau-iv.t0, iv.t1-tau
	q1, e2 := dt1*dt1, dt2*dt2*dt2
	for d := 0; d < 4; d++ {
		st[d] = cubic(iv.x.y0[d], iv.x.y1[d], iv.x.a1[d], iv.x.a0[d], dt1, q1, e2)
		st[4+d] = cubic(r[8+d], r[16+d], r[24+d], r[32+d], dt1, q1, e2)
		ac[d] = cubic(r[RecordAccel+d], r[RecordAccel+4+d], r[RecordAccel+8+d], r[RecordAccel+12+d], dt1, q1, e2)
	}
}

// observer is one observer in the kernel's precision: its position, |x_obs|,
// and c.
type observer[F float] struct {
	x, y, z, r0 F
	c, ic       F // c and 1/c
}

// newObserver rounds an observer at (x, y, z), r0 = |x_obs| (the caller's, in
// float64: it also shifts the sample times), to F, with 1/c formed in F.
func newObserver[F float](x, y, z, r0, c float64) observer[F] {
	return observer[F]{x: F(x), y: F(y), z: F(z), r0: F(r0), c: F(c), ic: 1 / F(c)}
}

// lightCone is the retarded-time condition in shifted time: with t' = t_obs -
// |x_obs|/c, f = t(tau) + (R - |x_obs|)/c - t', where R - |x_obs| =
// (|r|^2 - 2 x_obs.r) / (R + |x_obs|) has no cancellation, from the position
// x and its derivative dx: fp = df/dtau = dt/dtau - n.(dr/dtau)/c (= ut (1 -
// n.beta) for the true worldline).
func (o *observer[F]) lightCone(x, dx *[4]F, tp F) (f, fp F) {
	rx, ry, rz := o.x-x[1], o.y-x[2], o.z-x[3]
	R := sqrt(rx*rx + ry*ry + rz*rz)
	iR := 1 / R
	d := (x[1]*x[1] + x[2]*x[2] + x[3]*x[3] - 2*(o.x*x[1]+o.y*x[2]+o.z*x[3])) * (1 / (R + o.r0))
	f = x[0] + d*o.ic - tp
	fp = dx[0] - (rx*dx[1]+ry*dx[2]+rz*dx[3])*iR*o.ic
	return f, fp
}

// newtonStep is the Newton correction g/g' of the light cone squared, with
// X0 = c (t_obs - t(tau)) = D + |x_obs|, D = c (t' - t(tau)):
//
//	g = X0^2 - R^2 = D (D + 2 |x_obs|) - (|r|^2 - 2 x_obs.r),   g' = -2 h,
//	h = c (dt/dtau) X0 - R_s.(dr/dtau)
//
// (R^2 - |x_obs|^2 = |r|^2 - 2 x_obs.r without cancellation, as in
// lightCone). g = 0 with X0 > 0 is lightCone's f = 0, and Newton on g is as
// quadratic, with no square root: one reciprocal
// (docs/performance/radiation.md). g is not monotonic (it vanishes again at the
// advanced root X0 = -R), so a step counts only from where g falls, h > 0 (h
// is rho = X.U of the splined position, R c ut kappa > 0 on the light cone);
// ok is false otherwise, NaN included, and the caller solves from scratch.
func (o *observer[F]) newtonStep(x, dx *[4]F, tp F) (step F, ok bool) {
	rx, ry, rz := o.x-x[1], o.y-x[2], o.z-x[3]
	num := x[1]*(x[1]-2*o.x) + x[2]*(x[2]-2*o.y) + x[3]*(x[3]-2*o.z)
	D := o.c * (tp - x[0])
	X0 := D + o.r0
	h := o.c*dx[0]*X0 - (rx*dx[1] + ry*dx[2] + rz*dx[3])
	return (num - D*(X0+o.r0)) * (1 / (h + h)), h > 0
}

// newtonSlope is newtonStep's h (g' = -2h) and its derivative hp = dh/dtau
// (g” = -2hp) from the position and its first two derivatives:
//
//	hp = (c (d2t/dtau2) X0 - R_s.(d2r/dtau2)) - (c^2 (dt/dtau)^2 - |dr/dtau|^2)
//
// (X.A - c^2 on the true worldline, the numerator lw forms for the field).
// The Newton step's curvature is K = g”/(2 g') = hp/(2h).
func (o *observer[F]) newtonSlope(x, dx, ddx *[4]F, tp F) (h, hp F) {
	rx, ry, rz := o.x-x[1], o.y-x[2], o.z-x[3]
	X0 := o.c*(tp-x[0]) + o.r0
	cdt := o.c * dx[0]
	h = cdt*X0 - (rx*dx[1] + ry*dx[2] + rz*dx[3])
	hp = (o.c*ddx[0]*X0 - (rx*ddx[1] + ry*ddx[2] + rz*ddx[3])) - (cdt*cdt - (dx[1]*dx[1] + dx[2]*dx[2] + dx[3]*dx[3]))
	return h, hp
}

// lw adds q's Liénard–Wiechert fields at the observer to acc (Ex, Ey, Ez, Bx,
// By, Bz, phi, Ax, Ay, Az), Gaussian units, in the covariant form: with the
// separation X = x_obs - x(tau) = (X0, R_s) (X0 = c (t_obs - t) = c (t' - t)
// + |x_obs|, R_s = x_obs - r; null at the retarded time: X0 = |R_s| = R), the
// 4-velocity U = (c ut, u_s), its derivative A = (c a_t, a_s) and rho = X.U =
// c ut X0 - R_s.u_s = R c ut kappa (kappa = 1 - n.beta), the potential q U/rho
// gives
//
//	F^{mu nu} = (q/rho^2) (X^mu W^nu - X^nu W^mu),  W = A - U (X.A - c^2)/rho,
//	E = (q/rho^2) (R_s W^0 - X0 W_s),  B = (q/rho^2) W_s x R_s (= n x E),
//	phi = q c ut/rho,  A = q u_s/rho
//
// — the textbook q (n - beta)/(gamma^2 kappa^3 R^2) + q n x ((n - beta) x
// beta')/(c kappa^3 R) without forming n, beta or beta' (56 operations
// instead of 82), and with X0 from the time, not a square root (X0 - R is
// the light cone's residual, c f, which the solve has made a rounding). One reciprocal; dtau/dt' = 1/(ut kappa) = X0 c/rho is
// returned for the next sample's prediction. The GPU kernel
// (kernels/src/radiation.cu, fg_rad_lw_dir and fg_rad_lw_fields) has the same
// formulas, with a hardware-estimate reciprocal within ~1.5 ulp.
func (o *observer[F]) lw(st *[nState]F, ac *[nAccel]F, q, tp F, acc *[NComp]F) (ifp F) {
	rx, ry, rz := o.x-st[1], o.y-st[2], o.z-st[3]
	X0 := o.c*(tp-st[0]) + o.r0
	cut := o.c * st[4]
	irho := 1 / (cut*X0 - (rx*st[5] + ry*st[6] + rz*st[7]))
	cat := o.c * ac[0]
	K := (cat*X0 - (rx*ac[1] + ry*ac[2] + rz*ac[3]) - o.c*o.c) * irho // (X.A - c^2)/rho
	qi := q * irho
	qi2 := qi * irho
	w0 := qi2 * (cat - K*cut)
	wx, wy, wz := qi2*(ac[1]-K*st[5]), qi2*(ac[2]-K*st[6]), qi2*(ac[3]-K*st[7])
	acc[0] += rx*w0 - X0*wx
	acc[1] += ry*w0 - X0*wy
	acc[2] += rz*w0 - X0*wz
	acc[3] += wy*rz - wz*ry
	acc[4] += wz*rx - wx*rz
	acc[5] += wx*ry - wy*rx
	acc[6] += qi * cut
	acc[7] += qi * st[5]
	acc[8] += qi * st[6]
	acc[9] += qi * st[7]
	return X0 * o.c * irho
}

// coldSolve finds the retarded proper time of sample time tp from scratch:
// bisection over the knots (f increases with tau), then safeguarded Newton on
// the bracketing interval to convergence. It evaluates through fixed
// intervals, not the walker's search, so every search mode starts alike; it
// leaves the bracketing interval in the walker (registers on the GPU: no
// second interval is needed), a valid cache entry and guess in every mode. ok
// is false when the observer sees the particle before its first or after its
// last knot.
func (w *walker[F]) coldSolve(o *observer[F], tp F) (tau F, ok bool) {
	iv := &w.iv
	var x, dx [4]F
	k := w.k
	w.valid = false
	fAt := func(i, j int) F { // f at knot j through interval i
		k.fetch(iv, i)
		iv.position(k.t[j], &x, &dx)
		f, _ := o.lightCone(&x, &dx, tp)
		return f
	}
	lo, hi := w.a, w.b-1
	flo, fhi := fAt(lo, lo), fAt(hi-1, hi)
	if !(flo <= 0) || !(fhi >= 0) {
		return 0, false
	}
	// The largest knot with f <= 0 (f rises along the knots): interpolation
	// in the knot index (f is near linear in it along a smooth worldline: a
	// few steps instead of log2 of the knots), a bisection after any step
	// that did not halve the bracket. f at knot j is always evaluated
	// through interval j, so the knot found is bisection's (the GPU's
	// fg_rad_cold_solve takes the same steps).
	bisect := false
	for hi-lo > 1 {
		width := hi - lo
		var mid int
		if bisect || !(fhi > flo) {
			mid = int(uint(lo+hi) >> 1)
		} else {
			mid = lo + int(-flo/(fhi-flo)*F(width))
			mid = min(max(mid, lo+1), hi-1)
		}
		if f := fAt(mid, mid); f <= 0 {
			lo, flo = mid, f
		} else {
			hi, fhi = mid, f
		}
		bisect = !bisect && 2*(hi-lo) > width
	}
	k.fetch(iv, lo)
	w.idx, w.valid = lo, w.reuse
	a, b := k.t[lo], k.t[hi]
	tau = a + (b-a)/2
	tol := 4 * epsilon[F]() * (abs(a) + abs(b))
	for it := 0; it < 100; it++ {
		iv.position(tau, &x, &dx)
		f, fp := o.lightCone(&x, &dx, tp)
		if f == 0 {
			break
		}
		if f < 0 {
			a = tau
		} else {
			b = tau
		}
		next := tau - f/fp
		if !(next > a && next < b) {
			next = a + (b-a)/2
		}
		if abs(next-tau) <= tol || b-a <= tol {
			tau = next
			break
		}
		tau = next
	}
	return tau, true
}

// settled is the Newton advance's acceptance test for the usual sample: the
// last step d2 at most 2^-20 of the width w of the interval it was taken on
// (one compare on the GPU's path). converged's bound covers it whenever the
// curvature K of the light cone (below) has K w <= 2^17, which any spline
// that resolves the worldline meets by orders of magnitude (measured K w:
// at most 0.006 at beta = 0.99 with 4096 knots per period, 0.07 at beta =
// 0.8 with 64).
func settled[F float](d2, w F) bool { return abs(d2) <= 0x1p-20*w }

// converged is the Newton advance's acceptance test after its corrections,
// from the last step d2, the width w of the interval it was taken on, and
// the light cone's slope h and its derivative hp at the final tau
// (newtonSlope; the caller evaluates them only for a sample that is not
// settled). The step taken from x1 to tau leaves the error
//
//	e2 = K e1^2,   e1 = d2 + e2 (x1's error),   K = g''(xi)/(2 g'(x1))
//
// with xi between x1 and the root: exact, whatever the corrections before.
// With K at most twice |hp|/(2h) (the curvature at tau) within 2|d2| of it,
// 4 |hp| |d2| < h gives 4 K |d2| <= 1, so |e1| <= 2 |d2| (the smaller root
// of K e1^2 - e1 + d2 = 0) and |e2| <= 8 (|hp|/(2h)) d2^2, which the test
// holds below NewtonTolerance w. The curvature varies on the scale of the
// received pulse (tens of knot intervals at beta = 0.99 with 4096 knots
// per period), the last step over a fraction of one. A test on the ratio
// |d2|^3/d1^2 would assume the same K over the first step too, which at the
// pulse spans the curvature's change: it lets 1.5-36x the bound through. A
// step at the rounding of tau passes; anything else, NaN included, and the
// cold solve decides the sample. kernels/src/radiation.cu does the same test
// in two parts: fg_rad_settled, then fg_rad_converged_rest.
func converged[F float](d2, w, tau, h, hp F) bool {
	a2 := abs(d2)
	if a2 <= 0x1p-20*w || a2 <= 16*epsilon[F]()*(abs(tau)+w) {
		return true
	}
	p := 4 * abs(hp) * a2
	return p < h && p*a2 <= F(NewtonTolerance)*w*h
}

// NewtonTolerance is converged's bound on the error a Newton advance leaves,
// in units of the knot interval: 2^-16.
const NewtonTolerance = 0x1p-16

func abs[F float](x F) F {
	if x < 0 {
		return -x
	}
	return x
}

func epsilon[F float]() F {
	var x F
	switch any(x).(type) {
	case float32:
		return F(0x1p-23)
	}
	return F(0x1p-52)
}

// cancelEvery is how many samples run between polls of Options.Cancel: an
// observer can take ~0.1 s (RK4 with hundreds of substeps over thousands of
// samples), and Ctrl-C must return within 100 ms.
const cancelEvery = 64

// run walks one segment of an observer's samples (tps, shifted times) for
// every particle, the first from scratch, and adds the fields to out (NComp
// columns of O*S, index base + s), and the retarded lab times to tret (P
// columns) when tret is not nil; false when Options.Cancel stopped it (the
// cube is then abandoned).
func run[F float](k *knots[F], ob observer[F], tps []F, charge []F, opt *Options, out [][]float64, tret [][]float64, base int) bool {
	var acc [NComp]F
	var st [nState]F
	var x, dx, ddx [4]F
	var ac [nAccel]F
	S := len(tps)
	nan := F(math.NaN())
	for p := 0; p+1 < len(k.off); p++ {
		w := walker[F]{k: k, a: k.off[p], b: k.off[p+1], search: opt.Search, reuse: opt.CoefReuse && opt.Search != Cold, idx: k.off[p]}
		lo, hi := k.t[w.a], k.t[w.b-1]
		q := charge[p]
		var tau F
		ifp := F(1)
		have := false
		for s := 0; s < S; s++ {
			if s%cancelEvery == 0 && opt.Cancel != nil && opt.Cancel.Load() {
				return false
			}
			tp := tps[s]
			if have {
				// Kept only while every iterate (Newton) or step (RK4)
				// stays on the knots: one evaluated on the extrapolated
				// cubic beyond them can end inside far from any root near
				// the end of a worldline; the cold solve decides then.
				dt := tp - tps[s-1]
				switch opt.Method {
				case Newton:
					tau += dt * ifp // predictor: dtau/dt_obs at the previous sample
					have = tau >= lo && tau <= hi
					var d2, h F // the last step; the width of the interval it was taken on
					for it := 0; have && it < opt.NIters; it++ {
						w.position(tau, &x, &dx)
						step, ok := ob.newtonStep(&x, &dx, tp)
						tau -= step
						d2, h = step, w.iv.t1-w.iv.t0
						have = ok && tau >= lo && tau <= hi
					}
					if have && opt.NIters >= 2 && !settled(d2, h) {
						w.curvature(tau, &x, &dx, &ddx)
						rho, rhop := ob.newtonSlope(&x, &dx, &ddx, tp)
						have = converged(d2, h, tau, rho, rhop)
					}
				case RK4:
					h := dt / F(opt.NSubsteps)
					g := func(at F) F {
						w.position(at, &x, &dx)
						_, d := ob.lightCone(&x, &dx, tp)
						return 1 / d
					}
					for it := 0; have && it < opt.NSubsteps; it++ {
						k1 := g(tau)
						k2 := g(tau + h/2*k1)
						k3 := g(tau + h/2*k2)
						k4 := g(tau + h*k3)
						tau += h / 6 * (k1 + 2*k2 + 2*k3 + k4)
						have = tau >= lo && tau <= hi
					}
				}
			}
			if !have {
				tau, have = w.coldSolve(&ob, tp)
			}
			j := base + s
			if !have {
				for c := range out {
					out[c][j] = float64(nan)
				}
				if tret != nil {
					tret[p][j] = float64(nan)
				}
				continue
			}
			acc = [NComp]F{}
			w.stateAccel(tau, &st, &ac)
			ifp = ob.lw(&st, &ac, q, tp, &acc)
			for c := range out {
				out[c][j] += float64(acc[c])
			}
			if tret != nil {
				tret[p][j] = float64(st[0])
			}
		}
	}
	return true
}
