package pybind

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
)

// Time evolution (core/evolve.go): Python sets the velocity, starts an
// evolution, advances it in chunks of about 50 ms (so Ctrl-C and progress
// work, as for a flow) and after each chunk takes the new history rows and
// snapshots.

// SimSetVelocity copies a field (by handle) into the simulation's velocity.
func SimSetVelocity(h, fh int64) (err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return bridge(err)
	}
	f, err := field(fh)
	if err != nil {
		return bridge(err)
	}
	return bridge(s.SetVelocity(f))
}

type evolveOptions struct {
	Method      string  `json:"method"`
	T           float64 `json:"t"`
	Dt          float64 `json:"dt"`
	RecordEvery int     `json:"record_every"`
	Snapshots   bool    `json:"snapshots"`
	Gamma       float64 `json:"gamma"`
	Alpha       float64 `json:"alpha"`
	KeepNorm    bool    `json:"keep_norm"`
	Adaptive    bool    `json:"adaptive"`
	Rtol        float64 `json:"rtol"`
	Atol        float64 `json:"atol"`
	DtMin       float64 `json:"dt_min"`
	RecordDt    float64 `json:"record_dt"`
}

// SimStartEvolve starts an evolution (options as JSON: method, t, dt,
// record_every, snapshots; gamma, alpha for "llg", keep_norm for "gpe" and
// "gpe_imaginary"; adaptive, rtol, atol, dt_min, record_dt for adaptive
// steps, "rk45" or a first-order method with adaptive); SimAdvanceEvolveStart
// runs it.
func SimStartEvolve(h int64, options string) (err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return bridge(err)
	}
	var o evolveOptions
	if e := decodeOptions(options, &o); e != nil {
		return bridge(errs.New(errs.Parameter, "bad evolve options: %v", e))
	}
	return bridge(s.StartEvolve(core.EvolveConfig{Method: o.Method, T: o.T, Dt: o.Dt, RecordEvery: o.RecordEvery, Snapshots: o.Snapshots,
		Gamma: o.Gamma, Alpha: o.Alpha, KeepNorm: o.KeepNorm, Adaptive: o.Adaptive, Rtol: o.Rtol, Atol: o.Atol, DtMin: o.DtMin,
		RecordDt: o.RecordDt}))
}

func evolveProgressJSON(p core.EvolveProgress, dt float64) string {
	energy := any(p.Energy)
	if math.IsNaN(p.Energy) || math.IsInf(p.Energy, 0) {
		energy = nil
	}
	st := map[string]any{"step": p.Step, "steps": p.Steps, "t": p.T, "t_end": p.TEnd, "energy": energy, "done": p.Done, "dt": dt}
	if p.Adaptive {
		// steps is 0: an adaptive evolution's count is not known ahead
		st["adaptive"], st["rejected"] = true, p.Rejected
	}
	b, _ := json.Marshal(st)
	return string(b)
}

// SimEvolveHistory exports the current evolution's history from row from on
// (step, t, kinetic, potential, energy, momentum_x.. or, for first-order
// methods, norm or m_x, m_y, m_z, then integrals) in a pair block.
func SimEvolveHistory(h int64, from int) (p uintptr, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	rec, err := s.EvolveHistoryFrom(from)
	if err != nil {
		return 0, bridge(err)
	}
	defer rec.Release()
	return exportBatch(rec), nil
}

// SimEvolveSnapshot exports the oldest snapshot not yet taken as a
// RecordBatch in a pair block (one float64 column per component, the
// lattice in the schema metadata, "t" and "step" as exact decimal strings),
// or 0 when there is none.
func SimEvolveSnapshot(h int64) (p uintptr, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	sn, ok := s.TakeSnapshot()
	if !ok {
		return 0, nil
	}
	defer sn.Field.Release()
	rec, err := sn.Field.Record()
	if err != nil {
		return 0, bridge(err)
	}
	defer rec.Release()
	md := rec.Schema().Metadata()
	keys := append(md.Keys(), "t", "step")
	vals := append(md.Values(), strconv.FormatFloat(sn.T, 'g', -1, 64), strconv.Itoa(sn.Step))
	meta := arrow.NewMetadata(keys, vals)
	out := array.NewRecordBatch(arrow.NewSchema(rec.Schema().Fields(), &meta), rec.Columns(), rec.NumRows())
	defer out.Release()
	return exportBatch(out), nil
}

// SimTime is the simulation's clock (core.Simulation.Time).
func SimTime(h int64) (t float64, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	return s.Time(), nil
}

// SimEvolveStatus is the current evolution's progress as JSON (as
// SimAdvanceEvolveStart's call returns it) without advancing it.
func SimEvolveStatus(h int64) (status string, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return "", bridge(err)
	}
	p, err := s.EvolveProgress()
	if err != nil {
		return "", bridge(err)
	}
	return evolveProgressJSON(p, s.EvolveDt()), nil
}
