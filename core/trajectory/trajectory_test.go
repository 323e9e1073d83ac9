package trajectory

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

// oscillator: x = A sin(w t), v = A w cos(w t); two particles, c = 2.
func labSamples(m int) LabSamples {
	s := LabSamples{Off: []int{0}, IDs: []int64{7, 3}, Charge: []float64{1, -2}, Mass: []float64{1}, C: 2, Units: "gaussian"}
	for p, amp := range []float64{1, 0.5} {
		w := 1.5
		for k := 0; k < m; k++ {
			t := 10 * float64(k) / float64(m-1)
			s.T = append(s.T, t)
			s.X = append(s.X, amp*math.Sin(w*t))
			s.Y = append(s.Y, float64(p))
			s.Z = append(s.Z, 0)
			s.Vx = append(s.Vx, amp*w*math.Cos(w*t))
			s.Vy = append(s.Vy, 0)
			s.Vz = append(s.Vz, 0)
		}
		s.Off = append(s.Off, len(s.T))
	}
	return s
}

// tauExact integrates 1/gamma by composite Simpson on a fine grid.
func tauExact(amp, w, c, t float64) float64 {
	n := 4000
	f := func(x float64) float64 { v := amp * w * math.Cos(w*x) / c; return math.Sqrt(1 - v*v) }
	h := t / float64(n)
	s := f(0) + f(t)
	for i := 1; i < n; i++ {
		s += float64(2+2*(i%2)) * f(float64(i)*h)
	}
	return s * h / 3
}

func TestFromLabTime(t *testing.T) {
	errAt := func(m int) float64 {
		rec, err := FromLabTime(labSamples(m))
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Release()
		tr, err := FromRecord(rec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Release()
		if tr.P != 2 || tr.IDs[0] != 7 || tr.IDs[1] != 3 || tr.Charge[1] != -2 || tr.Mass[1] != 1 || tr.C != 2 {
			t.Fatalf("read back %+v", tr)
		}
		worst := 0.0
		for p, amp := range []float64{1, 0.5} {
			for i := tr.Off[p]; i < tr.Off[p+1]; i++ {
				worst = math.Max(worst, math.Abs(tr.Tau[i]-tauExact(amp, 1.5, 2, tr.State[0][i])))
			}
		}
		return worst
	}
	e1, e2 := errAt(101), errAt(201)
	t.Logf("proper time error %.3g (101 samples), %.3g (201)", e1, e2)
	if r := e1 / e2; r < 10 || e2 > 1e-6 {
		t.Fatalf("proper time converges with ratio %.3g (errors %.3g, %.3g): want fourth order", r, e1, e2)
	}
}

func TestValidation(t *testing.T) {
	rec, err := FromLabTime(labSamples(20))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	// edit returns a copy of rec with column name's row i set to v.
	edit := func(name string, i int, v float64) arrow.RecordBatch {
		cols := make([]arrow.Array, rec.NumCols())
		for k := range cols {
			col := rec.Column(k)
			if rec.Schema().Field(k).Name == name {
				b := array.NewFloat64Builder(core.Allocator)
				vals := append([]float64(nil), col.(*array.Float64).Float64Values()...)
				vals[i] = v
				b.AppendValues(vals, nil)
				cols[k] = b.NewArray()
				b.Release()
			} else {
				col.Retain()
				cols[k] = col
			}
		}
		out := array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
		for _, c := range cols {
			c.Release()
		}
		return out
	}
	cases := []struct {
		name string
		col  string
		row  int
		v    float64
	}{
		{"unsorted tau", "tau", 5, 0},
		{"NaN x", "x", 3, math.NaN()},
		{"Inf ut", "ut", 25, math.Inf(1)},
		{"off shell", "ux", 4, 0.3},
		{"negative ut", "ut", 2, -1},
		{"t running back", "t", 5, -1e9}, // ut > 0 everywhere: t must increase with tau
	}
	for _, c := range cases {
		bad := edit(c.col, c.row, c.v)
		_, err := FromRecord(bad, Options{})
		bad.Release()
		if !errs.Is(err, errs.Trajectory) {
			t.Errorf("%s: %v, want TrajectoryError", c.name, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	for _, tol := range []float64{math.NaN(), -1e-6, math.Inf(1)} {
		if _, err := FromRecord(rec, Options{Tolerance: tol}); !errs.Is(err, errs.Parameter) {
			t.Errorf("tolerance %v: %v, want ParameterError", tol, err)
		}
	}
	short := rec.NewSlice(0, 3)
	if _, err := FromRecord(short, Options{}); !errs.Is(err, errs.Trajectory) {
		t.Errorf("3 samples: %v", err)
	}
	short.Release()
	// Particle 7 appears again after particle 3: not contiguous.
	ids := array.NewInt64Builder(core.Allocator)
	for i := 0; i < int(rec.NumRows()); i++ {
		ids.Append([]int64{7, 3, 7}[min(2, i/15)])
	}
	idcol := ids.NewArray()
	ids.Release()
	cols := []arrow.Array{idcol}
	for k := 1; k < int(rec.NumCols()); k++ {
		cols = append(cols, rec.Column(k))
	}
	mixed := array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
	idcol.Release()
	if _, err := FromRecord(mixed, Options{}); !errs.Is(err, errs.Trajectory) {
		t.Errorf("non-contiguous particle: %v", err)
	}
	mixed.Release()
	if _, err := FromLabTime(LabSamples{Off: []int{0, 4}, IDs: []int64{0}, T: []float64{0, 1, 2, 3}, X: make([]float64, 4), Y: make([]float64, 4),
		Z: make([]float64, 4), Vx: []float64{0, 1, 0, 0}, Vy: make([]float64, 4), Vz: make([]float64, 4), Charge: []float64{1}, Mass: []float64{1}, C: 1}); !errs.Is(err, errs.Trajectory) {
		t.Errorf("speed of light: %v", err)
	}
}

// The acceleration derived from the 4-velocity's spline matches the
// analytic one, and the state spline reproduces the table.
func TestSplines(t *testing.T) {
	rec, err := FromLabTime(labSamples(400))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	tr, err := FromRecord(rec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Release()
	st, ac, err := tr.Splines()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	defer ac.Release()
	worst := 0.0
	for i := tr.Off[0] + 40; i < tr.Off[1]-40; i++ {
		tt := tr.State[0][i]
		v := 1.5 * math.Cos(1.5*tt)
		g := 1 / math.Sqrt(1-v*v/4)
		dvdt := -1.5 * 1.5 * math.Sin(1.5*tt)
		// a^x = d(g v)/dtau = g d(g v)/dt = g (g^3 dv/dt).
		want := g * g * g * g * dvdt
		worst = math.Max(worst, math.Abs(ac.Eval(0, 1, tr.Tau[i])-want)/(1+math.Abs(want)))
	}
	t.Logf("derived acceleration error %.2e", worst)
	if worst > 1e-4 {
		t.Fatalf("derived acceleration off by %.3g", worst)
	}
}
