package radiation

import (
	"math"
	"reflect"
	"testing"
)

// recordingDevice checks what Fields hands a Device and fills the cube with
// ones (a device writes every value).
type recordingDevice struct {
	t    *testing.T
	jobs []*DeviceJob
}

func (d *recordingDevice) String() string { return "recording" }
func (d *recordingDevice) Run(job *DeviceJob) error {
	d.jobs = append(d.jobs, job)
	for i := range job.Out {
		job.Out[i] = 1
	}
	for i := range job.Tret {
		job.Tret[i] = 1
	}
	return nil
}

// TestDeviceJobShiftedTimes: the device gets the sample times and one shift
// |x_obs|/c per observer, from which F(times - shift) is exactly the shifted
// time the CPU kernel forms (F(t - r0/c) in the kernel's units), for times
// shared by every observer and a row per observer, in both precisions; in
// float32 the device takes the cube back to the given units (DeviceJob.Scale,
// unscale's factors), and the host does not scale it again.
func TestDeviceJobShiftedTimes(t *testing.T) {
	c := 3e10 // centimetres and seconds: float32's units are not 1
	src := source(t, c, []float64{4.8e-10}, -2e-9, 2e-9, 64, helix(c, 1, 1e10, 0, 0))
	obs := Observers{X: []float64{50, 0, -30.5}, Y: []float64{0, 70, 12}, Z: []float64{1, -3, 40}}
	S := 5
	shared := []float64{1e-9, 1.1e-9, 1.2e-9, 1.3e-9, 1.4e-9}
	rows := make([]float64, len(obs.X)*S)
	for i := range rows {
		rows[i] = 1e-9 + 1e-11*float64(i)
	}
	for _, prec := range []Precision{Float64, Float32} {
		for _, times := range [][]float64{shared, rows} {
			dev := &recordingDevice{t: t}
			opt := DefaultOptions()
			opt.Precision, opt.Device, opt.Retarded = prec, dev, true
			cube, err := Fields(src, obs, times, S, opt)
			if err != nil {
				t.Fatal(err)
			}
			job := dev.jobs[0]
			u := givenUnits
			if prec == Float32 {
				u = float32Units(src)
			}
			ssrc, sobs, stimes := u.scale(src, obs, times)
			for o := range obs.X {
				x, y, z := sobs.X[o], sobs.Y[o], sobs.Z[o]
				r0 := math.Sqrt(x*x + y*y + z*z)
				for s := 0; s < S; s++ {
					ts := stimes[s]
					if len(times) != S {
						ts = stimes[o*S+s]
					}
					want := ts - r0/ssrc.C
					var got, jt, js float64
					if prec == Float32 {
						jt, js = job.F32.Times[s], job.F32.Shift[o]
						if len(job.F32.Times) != S {
							jt = job.F32.Times[o*S+s]
						}
						got, want = float64(float32(jt-js)), float64(float32(want))
					} else {
						jt, js = job.F64.Times[s], job.F64.Shift[o]
						if len(job.F64.Times) != S {
							jt = job.F64.Times[o*S+s]
						}
						got = jt - js
					}
					if math.Float64bits(got) != math.Float64bits(want) {
						t.Fatalf("%v, %d times: observer %d sample %d: the device's shifted time %v, the CPU kernel's %v", prec, len(times), o, s, got, want)
					}
				}
			}
			if prec == Float64 && job.Scale != nil {
				t.Fatalf("float64: column factors %v, want none", job.Scale)
			}
			if prec == Float32 {
				f := u.factors(len(cube.Columns))
				if len(job.Scale) != len(f) {
					t.Fatalf("float32: %d column factors, want %d", len(job.Scale), len(f))
				}
				for k := range f {
					if job.Scale[k] != f[k] || f[k] == 1 {
						t.Fatalf("float32: column %d factor %v, want unscale's %v (not 1 in these units)", k, job.Scale[k], f[k])
					}
				}
			}
			for k, col := range cube.Data {
				for i, v := range col {
					if v != 1 {
						t.Fatalf("%v: column %d value %d is %v: the host changed the device's cube", prec, k, i, v)
					}
				}
			}
			cube.Release()
		}
	}
}

// TestPreparedMatchesFreshPreparation: with a Prepared, a device job holds
// the same bits as one prepared from scratch, in both precisions; a repeated
// call reuses the arrays (the same memory), and observers changed in place
// (the same slices, one coordinate moved) are prepared again.
func TestPreparedMatchesFreshPreparation(t *testing.T) {
	c := 3e10
	src := source(t, c, []float64{4.8e-10}, -2e-9, 2e-9, 64, helix(c, 1, 1e10, 0, 0))
	obs := Observers{X: []float64{50, 0, -30.5}, Y: []float64{0, 70, 12}, Z: []float64{1, -3, 40}}
	times := []float64{1e-9, 1.1e-9, 1.2e-9}
	prep := &Prepared{}
	run := func(prec Precision, p *Prepared) *DeviceJob {
		dev := &recordingDevice{t: t}
		opt := DefaultOptions()
		opt.Precision, opt.Device, opt.Prepared = prec, dev, p
		cube, err := Fields(src, obs, times, len(times), opt)
		if err != nil {
			t.Fatal(err)
		}
		cube.Release()
		return dev.jobs[0]
	}
	same := func(what string, a, b any) {
		t.Helper()
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s differs from a fresh preparation", what)
		}
	}
	check := func(prec Precision) {
		t.Helper()
		fresh, got := run(prec, nil), run(prec, prep)
		same("the job's observers", [3][]float64{fresh.OX, fresh.OY, fresh.OZ}, [3][]float64{got.OX, got.OY, got.OZ})
		if prec == Float32 {
			same("the float32 arrays", fresh.F32, got.F32)
		} else {
			same("the float64 arrays", fresh.F64, got.F64)
		}
	}
	for _, prec := range []Precision{Float64, Float32, Float64, Float64, Float32, Float32} {
		check(prec)
	}
	a, b := run(Float64, prep), run(Float64, prep)
	if &a.F64.Rec[0] != &b.F64.Rec[0] || &a.F64.Shift[0] != &b.F64.Shift[0] {
		t.Fatal("a repeated call prepared the knots or the observers again")
	}
	obs.Y[1] = 71 // in place: the Prepared must compare contents, not slices
	check(Float64)
	obs.Z[2] = 41
	check(Float32)
	obs.Z[2] = 42
	check(Float32)
}
