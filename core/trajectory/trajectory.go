// Package trajectory reads, validates and writes particle trajectory tables:
// Arrow RecordBatches with one row per sample and the columns
//
//	particle (int32 or int64)  tau  t  x  y  z  ut  ux  uy  uz   (float64)
//
// and optionally the 4-acceleration du/dtau as at, ax, ay, az. Rows of one
// particle are contiguous and in increasing proper time tau. The state is the
// 4-position (t, x, y, z) and the 4-velocity u = d(t, x, y, z)/dtau, so that
// u.u = c^2 (ut)^2 - |u_s|^2 = c^2. Schema metadata: "units" (free text, default
// "gaussian"), "c" (speed of light in the table's units, default 1), "charge"
// and "mass" (a number for every particle, or a JSON list with one per particle).
package trajectory

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fieldgo/fieldgo/core/spline"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/internal/hostmem"
)

// Column names of a trajectory table.
var (
	StateColumns = []string{"t", "x", "y", "z", "ut", "ux", "uy", "uz"}
	AccelColumns = []string{"at", "ax", "ay", "az"}
)

// Metadata keys.
const (
	MetaUnits  = "units"
	MetaC      = "c"
	MetaCharge = "charge"
	MetaMass   = "mass"
)

// DefaultTolerance is the relative tolerance on |u.u/c^2 - 1|.
const DefaultTolerance = 1e-6

// Trajectories are P particles' samples, read from a table without copying:
// the slices view the table's (C) memory, which the value keeps alive until
// Release.
type Trajectories struct {
	P      int
	Off    []int       // P+1 row offsets
	IDs    []int64     // particle id of each block
	Tau    []float64   // N
	State  [][]float64 // 8 columns of N: t, x, y, z, ut, ux, uy, uz
	Accel  [][]float64 // 4 columns of N, or nil
	Charge []float64   // P
	Mass   []float64   // P
	C      float64
	Units  string

	rec arrow.RecordBatch
}

// Release drops the hold on the table.
func (tr *Trajectories) Release() {
	if tr.rec != nil {
		tr.rec.Release()
		tr.rec = nil
	}
}

// Options of FromRecord.
type Options struct {
	Tolerance float64 // on |u.u/c^2 - 1|; 0: DefaultTolerance
}

func column(rec arrow.RecordBatch, name string, required bool) ([]float64, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		if required {
			return nil, errs.New(errs.Format, "a trajectory table needs a float64 column %q (it has %v)", name, names(rec))
		}
		return nil, nil
	}
	col, ok := rec.Column(idx[0]).(*array.Float64)
	if !ok {
		return nil, errs.New(errs.Layout, "column %q has type %s: trajectory columns are float64", name, rec.Column(idx[0]).DataType())
	}
	if col.NullN() != 0 {
		return nil, errs.New(errs.Trajectory, "column %q has %d nulls", name, col.NullN())
	}
	return col.Float64Values(), nil
}

func names(rec arrow.RecordBatch) []string {
	var out []string
	for _, f := range rec.Schema().Fields() {
		out = append(out, f.Name)
	}
	return out
}

// perParticle reads a metadata value that is a number or a JSON list of P numbers.
func perParticle(md arrow.Metadata, key string, p int, def float64) ([]float64, error) {
	out := make([]float64, p)
	i := md.FindKey(key)
	if i < 0 {
		for k := range out {
			out[k] = def
		}
		return out, nil
	}
	s := md.Values()[i]
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		for k := range out {
			out[k] = v
		}
	} else {
		var list []float64
		if json.Unmarshal([]byte(s), &list) != nil {
			return nil, errs.New(errs.Format, "metadata %q=%q is neither a number nor a JSON list of numbers", key, s)
		}
		if len(list) != p {
			return nil, errs.New(errs.Trajectory, "metadata %q lists %d values for %d particles", key, len(list), p)
		}
		copy(out, list)
	}
	for k, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errs.New(errs.Trajectory, "metadata %q of particle %d is %v", key, k, v)
		}
	}
	return out, nil
}

// FromRecord reads and validates a trajectory table: rows grouped by particle,
// proper time strictly increasing, every value finite, at least
// spline.MinKnots samples per particle, ut > 0 and |u.u/c^2 - 1| within the
// tolerance. Violations are errs.Trajectory naming the particle and row.
func FromRecord(rec arrow.RecordBatch, opt Options) (*Trajectories, error) {
	tol := opt.Tolerance
	if !(tol >= 0) || math.IsInf(tol, 0) {
		return nil, errs.New(errs.Parameter, "tolerance=%v: want a finite number >= 0 (0: the default %g)", tol, DefaultTolerance)
	}
	if tol == 0 {
		tol = DefaultTolerance
	}
	n := int(rec.NumRows())
	idx := rec.Schema().FieldIndices("particle")
	if len(idx) == 0 {
		return nil, errs.New(errs.Format, "a trajectory table needs a column \"particle\" (it has %v)", names(rec))
	}
	pcol := rec.Column(idx[0])
	if pcol.NullN() != 0 {
		return nil, errs.New(errs.Trajectory, "column \"particle\" has nulls")
	}
	var pid func(i int) int64
	switch c := pcol.(type) {
	case *array.Int64:
		pid = func(i int) int64 { return c.Value(i) }
	case *array.Int32:
		pid = func(i int) int64 { return int64(c.Value(i)) }
	default:
		return nil, errs.New(errs.Layout, "column \"particle\" has type %s: use int32 or int64", pcol.DataType())
	}
	tr := &Trajectories{}
	var err error
	if tr.Tau, err = column(rec, "tau", true); err != nil {
		return nil, err
	}
	for _, name := range StateColumns {
		c, err := column(rec, name, true)
		if err != nil {
			return nil, err
		}
		tr.State = append(tr.State, c)
	}
	var accel [][]float64
	for _, name := range AccelColumns {
		c, err := column(rec, name, false)
		if err != nil {
			return nil, err
		}
		if c != nil {
			accel = append(accel, c)
		}
	}
	switch len(accel) {
	case 0:
	case len(AccelColumns):
		tr.Accel = accel
	default:
		return nil, errs.New(errs.Format, "acceleration columns come all four (%v) or not at all", AccelColumns)
	}
	// Particle blocks.
	seen := map[int64]bool{}
	for i := 0; i < n; i++ {
		if i == 0 || pid(i) != pid(i-1) {
			if seen[pid(i)] {
				return nil, errs.New(errs.Trajectory, "particle %d's rows are not contiguous (again at row %d): sort the table by particle, tau", pid(i), i)
			}
			seen[pid(i)] = true
			tr.Off = append(tr.Off, i)
			tr.IDs = append(tr.IDs, pid(i))
		}
	}
	tr.Off = append(tr.Off, n)
	tr.P = len(tr.IDs)
	if tr.P == 0 {
		return nil, errs.New(errs.Trajectory, "the trajectory table is empty")
	}
	md := rec.Schema().Metadata()
	c, err := perParticle(md, MetaC, 1, 1)
	if err != nil {
		return nil, err
	}
	tr.C = c[0]
	if !(tr.C > 0) {
		return nil, errs.New(errs.Trajectory, "the speed of light c=%v must be positive", tr.C)
	}
	if tr.Charge, err = perParticle(md, MetaCharge, tr.P, 1); err != nil {
		return nil, err
	}
	if tr.Mass, err = perParticle(md, MetaMass, tr.P, 1); err != nil {
		return nil, err
	}
	tr.Units = "gaussian"
	if i := md.FindKey(MetaUnits); i >= 0 {
		tr.Units = md.Values()[i]
	}
	if err := tr.validate(tol); err != nil {
		return nil, err
	}
	rec.Retain()
	tr.rec = rec
	return tr, nil
}

func (tr *Trajectories) validate(tol float64) error {
	c2 := tr.C * tr.C
	for p := 0; p < tr.P; p++ {
		a, b := tr.Off[p], tr.Off[p+1]
		if b-a < spline.MinKnots {
			return errs.New(errs.Trajectory, "particle %d has %d samples: a cubic spline needs at least %d", tr.IDs[p], b-a, spline.MinKnots)
		}
		for i := a; i < b; i++ {
			check := func(name string, v float64) error {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return errs.New(errs.Trajectory, "particle %d, row %d: %s is %v", tr.IDs[p], i, name, v)
				}
				return nil
			}
			if err := check("tau", tr.Tau[i]); err != nil {
				return err
			}
			for k, col := range tr.State {
				if err := check(StateColumns[k], col[i]); err != nil {
					return err
				}
			}
			for k, col := range tr.Accel {
				if err := check(AccelColumns[k], col[i]); err != nil {
					return err
				}
			}
			if i > a && !(tr.Tau[i] > tr.Tau[i-1]) {
				return errs.New(errs.Trajectory, "particle %d, row %d: tau=%v does not increase (previous %v)", tr.IDs[p], i, tr.Tau[i], tr.Tau[i-1])
			}
			if i > a && !(tr.State[0][i] > tr.State[0][i-1]) {
				return errs.New(errs.Trajectory, "particle %d, row %d: t=%v does not increase along tau (previous %v): lab time runs forward", tr.IDs[p], i, tr.State[0][i], tr.State[0][i-1])
			}
			ut, ux, uy, uz := tr.State[4][i], tr.State[5][i], tr.State[6][i], tr.State[7][i]
			if !(ut > 0) {
				return errs.New(errs.Trajectory, "particle %d, row %d: ut=%v must be positive (lab time runs forward)", tr.IDs[p], i, ut)
			}
			// u.u/c^2 - 1 = (ut-1)(ut+1) - |u_s|^2/c^2, without forming ut^2 - 1.
			norm := (ut-1)*(ut+1) - (ux*ux+uy*uy+uz*uz)/c2
			if math.Abs(norm) > tol*ut*ut {
				return errs.New(errs.Trajectory, "particle %d, row %d: u.u/c^2 = 1%+.3g, off the mass shell by more than %g (ut=%v, u=(%v, %v, %v), c=%v)",
					tr.IDs[p], i, norm, tol, ut, ux, uy, uz, tr.C)
			}
		}
	}
	return nil
}

// Splines builds the state spline (8 components against tau) and the
// acceleration spline du/dtau on the same knots: from the table's at..az
// columns when present, otherwise from the derivative of the 4-velocity's
// spline at the knots.
func (tr *Trajectories) Splines() (state, accel *spline.Spline, err error) {
	state, err = spline.New(tr.Tau, tr.Off, tr.State)
	if err != nil {
		return nil, nil, err
	}
	a := tr.Accel
	if a == nil {
		a = state.KnotDerivatives()[4:8]
	}
	accel, err = spline.NewOnKnots(state, tr.Tau, tr.Off, a)
	if err != nil {
		state.Release()
		return nil, nil, err
	}
	return state, accel, nil
}

// Metadata is the schema metadata of a trajectory table.
func Metadata(units string, c float64, charge, mass []float64) arrow.Metadata {
	list := func(v []float64) string {
		if len(v) == 1 {
			return strconv.FormatFloat(v[0], 'g', -1, 64)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	return arrow.NewMetadata([]string{MetaUnits, MetaC, MetaCharge, MetaMass},
		[]string{units, strconv.FormatFloat(c, 'g', -1, 64), list(charge), list(mass)})
}

// Schema is the schema of a trajectory table (without acceleration columns).
func Schema(md arrow.Metadata) *arrow.Schema {
	fields := []arrow.Field{{Name: "particle", Type: arrow.PrimitiveTypes.Int64}, {Name: "tau", Type: arrow.PrimitiveTypes.Float64}}
	for _, n := range StateColumns {
		fields = append(fields, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float64})
	}
	return arrow.NewSchema(fields, &md)
}

// LabSamples are trajectories sampled in lab time with 3-velocities: for each
// particle (rows Off[p] .. Off[p+1]-1, ids IDs) the lab time t, position and
// velocity.
type LabSamples struct {
	Off          []int
	IDs          []int64
	T, X, Y, Z   []float64
	Vx, Vy, Vz   []float64
	Charge, Mass []float64 // one value, or one per particle
	C            float64
	Units        string
}

// FromLabTime converts lab-time samples into a trajectory table in C memory:
// gamma = 1/sqrt(1 - v^2/c^2), u = gamma (1, v), and the proper time
// tau = integral of dt/gamma from each particle's first sample (tau = 0 there),
// integrated exactly, interval by interval, on the cubic through the four
// nearest samples (fourth order in the sample spacing, uniform or not; a
// natural spline's ends would make it third). Speeds at or above c, unsorted or non-finite
// times are errs.Trajectory.
func FromLabTime(s LabSamples) (arrow.RecordBatch, error) {
	n := len(s.T)
	for _, col := range [][]float64{s.X, s.Y, s.Z, s.Vx, s.Vy, s.Vz} {
		if len(col) != n {
			return nil, errs.New(errs.Shape, "lab samples: columns of %d and %d rows", n, len(col))
		}
	}
	if len(s.Off) < 2 || len(s.IDs) != len(s.Off)-1 {
		return nil, errs.New(errs.Shape, "lab samples: %d offsets for %d particle ids", len(s.Off), len(s.IDs))
	}
	if !(s.C > 0) {
		return nil, errs.New(errs.Trajectory, "the speed of light c=%v must be positive", s.C)
	}
	p := len(s.IDs)
	for _, v := range [][]float64{s.Charge, s.Mass} {
		if len(v) != 1 && len(v) != p {
			return nil, errs.New(errs.Trajectory, "charge and mass: one value or one per particle (%d), got %d", p, len(v))
		}
	}
	for _, col := range [][]float64{s.X, s.Y, s.Z} {
		for i, v := range col {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errs.New(errs.Trajectory, "lab samples, row %d: a position is %v", i, v)
			}
		}
	}
	invGamma := make([]float64, n)
	for i := 0; i < n; i++ {
		b2 := (s.Vx[i]*s.Vx[i] + s.Vy[i]*s.Vy[i] + s.Vz[i]*s.Vz[i]) / (s.C * s.C)
		if !(b2 < 1) {
			return nil, errs.New(errs.Trajectory, "row %d: speed %v is not below c=%v", i, math.Sqrt(b2)*s.C, s.C)
		}
		invGamma[i] = math.Sqrt((1 - b2))
	}
	if err := checkKnotsOf(s.T, s.Off); err != nil {
		return nil, err
	}
	md := Metadata(s.Units, s.C, s.Charge, s.Mass)
	b := array.NewRecordBuilder(hostmem.Allocator, Schema(md))
	defer b.Release()
	b.Reserve(n)
	ids := b.Field(0).(*array.Int64Builder)
	cols := make([]*array.Float64Builder, 9)
	for k := range cols {
		cols[k] = b.Field(k + 1).(*array.Float64Builder)
	}
	for q := 0; q < p; q++ {
		tau := 0.0
		for i := s.Off[q]; i < s.Off[q+1]; i++ {
			if i > s.Off[q] {
				tau += cubicIntegral(s.T, invGamma, s.Off[q], s.Off[q+1], i-1)
			}
			g := 1 / invGamma[i]
			ids.Append(s.IDs[q])
			for k, v := range []float64{tau, s.T[i], s.X[i], s.Y[i], s.Z[i], g, g * s.Vx[i], g * s.Vy[i], g * s.Vz[i]} {
				cols[k].Append(v)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// checkKnotsOf validates sample times as spline knots would be.
func checkKnotsOf(t []float64, off []int) error {
	one := make([]float64, len(t))
	sp, err := spline.New(t, off, [][]float64{one})
	if err != nil {
		return err
	}
	return sp.Release()
}

// cubicIntegral integrates, over [t[i], t[i+1]], the cubic through the four
// samples nearest the interval (within [a, b)), by two-point Gauss–Legendre,
// which is exact for cubics.
func cubicIntegral(t, y []float64, a, b, i int) float64 {
	j0 := min(max(i-1, a), b-4)
	h := t[i+1] - t[i]
	mid := (t[i] + t[i+1]) / 2
	g := h / (2 * math.Sqrt(3))
	lag := func(x float64) float64 {
		s := 0.0
		for j := j0; j < j0+4; j++ {
			l := y[j]
			for m := j0; m < j0+4; m++ {
				if m != j {
					l *= (x - t[m]) / (t[j] - t[m])
				}
			}
			s += l
		}
		return s
	}
	return h / 2 * (lag(mid-g) + lag(mid+g))
}
