package pybind

import (
	"encoding/json"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels/cuda"
)

// simulation is what a simulation handle refers to.
type simulation struct {
	*core.Simulation
	backendNote string
}

func sim(h int64) (*simulation, error) {
	s, err := lookup[*simulation](h)
	if errs.Is(err, errs.Released) {
		return nil, errs.New(errs.Released, "the simulation has been closed")
	}
	return s, err
}

type simOptions struct {
	backendOptions
	Precision string `json:"precision"`
	Gradient  string `json:"gradient"` // "auto", "continuum", "consistent"
}

// NewSimulation compiles a theory (spec JSON and point source, docs/abi.md) for
// a backend and allocates its field on the lattice. options is JSON:
// {"backend", "threads", "precision", "gradient"}; precision "float32" is
// float32 storage (core.Simulation.Precision): float32 memory on the GPU,
// float32 values in float64 memory on the CPU.
// Parameters start at zero: set them with SimSetParams.
func NewSimulation(spec, source string, nx, ny int, hx, hy, ox, oy float64, boundary, options string) (h int64, err error) {
	defer recoverInto(&err)
	lat, err := lattice(nx, ny, hx, hy, ox, oy, boundary)
	if err != nil {
		return 0, bridge(err)
	}
	return newSimulation(spec, source, lat, options)
}

// newSimulation is NewSimulation and NewSimulationOn on a validated lattice.
func newSimulation(spec, source string, lat core.Lattice, options string) (h int64, err error) {
	var o simOptions
	if e := decodeOptions(options, &o); e != nil {
		return 0, bridge(errs.New(errs.Parameter, "bad simulation options: %v", e))
	}
	if o.Precision != "" && o.Precision != core.Float64 && o.Precision != core.Float32 {
		return 0, bridge(errs.New(errs.Parameter, "unknown precision %q: use \"float64\" or \"float32\"", o.Precision))
	}
	theory, err := core.ParseTheory(spec, source)
	if err != nil {
		return 0, bridge(err)
	}
	backend, note, err := selectBackend(o.backendOptions)
	if err != nil {
		return 0, bridge(err)
	}
	form := o.Gradient
	if form == "auto" {
		form = ""
	}
	s, err := core.NewSimulation(backend, theory, lat, make([]float64, len(theory.Spec.Params)), core.Options{Form: form, Precision: o.Precision})
	if err != nil {
		return 0, bridge(err)
	}
	return register(&simulation{Simulation: s, backendNote: note}), nil
}

// ReleaseSimulation closes a simulation. Field views made earlier stay valid.
func ReleaseSimulation(h int64) (err error) {
	defer recoverInto(&err)
	obj, err := unregister(h)
	if err != nil {
		return bridge(errs.New(errs.Released, "the simulation has already been closed"))
	}
	s, ok := obj.(*simulation)
	if !ok {
		return bridge(errs.New(errs.Handle, "handle %d is a %T, not a simulation", h, obj))
	}
	return bridge(s.Close())
}

// SimSetParams sets the dynamic parameters from a JSON list in spec order.
func SimSetParams(h int64, params string) (err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return bridge(err)
	}
	var p []float64
	if e := json.Unmarshal([]byte(params), &p); e != nil {
		return bridge(errs.New(errs.Parameter, "parameters must be a JSON list of numbers: %v", e))
	}
	return bridge(s.SetParams(p))
}

// viewOf returns a new field handle sharing f's memory: releasing the handle
// never frees memory the simulation still uses.
func viewOf(f *core.Field) (int64, error) {
	rec, err := f.Record()
	if err != nil {
		return 0, err
	}
	defer rec.Release()
	lat := f.Lattice()
	v, err := core.FieldFromRecord(rec, &lat)
	if err != nil {
		return 0, err
	}
	return register(v), nil
}

// SimField returns a field handle viewing the simulation's field (which=0) or
// velocity (which=1) without a copy; on a device backend the host copy is
// refreshed first.
func SimField(h int64, which int) (fh int64, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	var f *core.Field
	switch which {
	case 0:
		f, err = s.Field()
	case 1:
		f, err = s.Velocity()
	default:
		err = errs.New(errs.Parameter, "which must be 0 (field) or 1 (velocity), got %d", which)
	}
	if err != nil {
		return 0, bridge(err)
	}
	fh, err = viewOf(f)
	return fh, bridge(err)
}

// SimSetField copies a field (by handle) into the simulation's field.
func SimSetField(h, fh int64) (err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return bridge(err)
	}
	f, err := field(fh)
	if err != nil {
		return bridge(err)
	}
	return bridge(s.SetField(f))
}

// SimFieldWritten tells the simulation its field was written through a
// zero-copy view (the next flow estimates the stiffness anew).
func SimFieldWritten(h int64) (err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return bridge(err)
	}
	s.FieldWritten()
	return nil
}

type minimizeOptions struct {
	Tol        float64 `json:"tol"`
	MaxSteps   int     `json:"max_steps"`
	Method     string  `json:"method"`
	Arrest     string  `json:"arrest"`
	Dt         float64 `json:"dt"`
	CheckEvery int     `json:"check_every"`
}

// SimStartMinimize starts a flow from the current field (options as JSON:
// tol, max_steps, method, arrest, dt, check_every). Advance runs it.
func SimStartMinimize(h int64, options string) (err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return bridge(err)
	}
	var o minimizeOptions
	if e := decodeOptions(options, &o); e != nil {
		return bridge(errs.New(errs.Parameter, "bad minimize options: %v", e))
	}
	return bridge(s.Start(core.FlowConfig{Method: o.Method, Arrest: o.Arrest, Dt: o.Dt, Tol: o.Tol,
		MaxSteps: o.MaxSteps, CheckEvery: o.CheckEvery}))
}

func progressJSON(p core.Progress) string {
	num := func(v float64) any { // JSON has no NaN/Inf
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return v
	}
	b, _ := json.Marshal(map[string]any{"step": p.Step, "energy": num(p.Energy), "max_grad": num(p.MaxGrad),
		"resets": p.Resets, "converged": p.Converged, "done": p.Done})
	return string(b)
}

// SimCancel asks a running SimAdvanceStart call to stop at the next kernel boundary; it
// then fails with CancelledError and the flow can be advanced again.
func SimCancel(h int64) (err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return bridge(err)
	}
	s.Cancel()
	return nil
}

// exportBatch exports rec into a new pair block (see ExportField).
func exportBatch(rec arrow.RecordBatch) uintptr {
	pair := newPair()
	cdata.ExportArrowRecordBatch(rec,
		(*cdata.CArrowArray)(unsafe.Pointer(&pair.array)),
		(*cdata.CArrowSchema)(unsafe.Pointer(&pair.schema)))
	return uintptr(unsafe.Pointer(pair))
}

// SimHistory exports the current flow's history from row `from` on as an Arrow
// RecordBatch in a pair block.
func SimHistory(h int64, from int) (p uintptr, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	rec, err := s.History()
	if err != nil {
		return 0, bridge(err)
	}
	defer rec.Release()
	if from < 0 || int64(from) > rec.NumRows() {
		return 0, bridge(errs.New(errs.Parameter, "history row %d out of range (%d rows)", from, rec.NumRows()))
	}
	part := rec.NewSlice(int64(from), rec.NumRows())
	defer part.Release()
	return exportBatch(part), nil
}

// SimHistoryRows is the number of rows of the current flow's history, -1
// without a flow (a field change ends the flow). A flow's history only
// grows: the same flow with as many rows has the history exported before.
func SimHistoryRows(h int64) (n int, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	n, err = s.HistoryRows()
	return n, bridge(err)
}

// SimEnergy is the energy of the current field.
func SimEnergy(h int64) (e float64, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	e, err = s.Energy()
	return e, bridge(err)
}

// SimIntegral integrates a declared density (or "energy").
func SimIntegral(h int64, name string) (v float64, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	v, err = s.Integral(name)
	return v, bridge(err)
}

// SimDensity returns a declared density (or "energy") as a new field handle.
func SimDensity(h int64, name string) (fh int64, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	f, err := s.Density(name)
	if err != nil {
		return 0, bridge(err)
	}
	return register(f), nil
}

// SimGradient returns dE/dphi per unit area as a new field handle (projected
// onto the constraint's tangent space when project is true).
func SimGradient(h int64, project bool) (fh int64, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return 0, bridge(err)
	}
	f, err := s.Gradient(project)
	if err != nil {
		return 0, bridge(err)
	}
	return register(f), nil
}

// SimDescribe describes the simulation as JSON: backend, lattice, theory spec,
// parameters, gradient form, flow progress, the current evolution.
func SimDescribe(h int64) (info string, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return "", bridge(err)
	}
	d := latticeInfo(s.Lattice())
	for k, v := range map[string]any{
		"backend": s.Backend().Name(), "backend_note": s.backendNote, "precision": s.Precision(),
		"spec": s.Theory().Spec, "params": s.Params(), "gradient": s.Form().String(), "penalty": s.Penalty(),
	} {
		d[k] = v
	}
	d["compile_seconds"], d["compile_cached"] = s.CompileTime().Seconds(), nil
	if c, ok := s.Program().(interface{ Cached() bool }); ok {
		d["compile_cached"] = c.Cached()
	}
	if p, e := s.Progress(); e == nil {
		var st map[string]any
		_ = json.Unmarshal([]byte(progressJSON(p)), &st)
		if cfg, ok := s.Flow(); ok {
			st["dt"], st["method"], st["arrest"], st["tol"] = cfg.Dt, cfg.Method, cfg.Arrest, cfg.Tol
			st["max_steps"], st["check_every"] = cfg.MaxSteps, cfg.CheckEvery
			st["dt_cuts"] = s.DtCuts()
		}
		st["device_flow"] = s.DeviceFlow()
		d["flow"] = st
		d["step"] = p.Step
	}
	if p, e := s.EvolveProgress(); e == nil {
		// The current evolution: its settings (defaults resolved) and where it
		// stands; for adaptive steps also the accepted and rejected steps and
		// the controller's current dt.
		cfg, _ := s.EvolveConfig()
		ev := map[string]any{"method": cfg.Method, "t": p.T, "t_end": p.TEnd, "step": p.Step, "done": p.Done,
			"dt": s.EvolveDt(), "adaptive": cfg.Adaptive}
		if cfg.Adaptive {
			ev["accepted"], ev["rejected"] = p.Step, p.Rejected
			ev["rtol"], ev["atol"], ev["dt_max"], ev["dt_min"] = cfg.Rtol, cfg.Atol, cfg.Dt, cfg.DtMin
		} else {
			ev["steps"] = p.Steps
		}
		// how the steps run: the device flow's description, "" on the host
		ev["device_flow"] = s.DeviceFlow()
		d["evolution"] = ev
	}
	if s.Precision() == core.Float32 {
		// What float32 storage costs: its unit roundoff and the smallest
		// max|grad| a flow can resolve on this lattice (an estimate from the
		// stencil, core.Simulation.GradientFloor).
		floor, err := s.GradientFloor()
		if err != nil {
			return "", bridge(err)
		}
		d["epsilon"], d["gradient_floor"] = s.Epsilon(), floor
	}
	if k, ok := s.Program().(*cuda.Program); ok {
		infos := k.Describe()
		for i := range infos { // the theory's own budget, where the table has one
			infos[i].Budget = cuda.BudgetAs(infos[i].Name, k.Precision(), s.Theory().Spec.Name)
		}
		d["kernels"] = infos
		d["device"] = gpu.b.Device()
	}
	return jsonString(d), nil
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of plain values are marshalled here
	}
	return string(b)
}

// SimSource is the theory's point source.
func SimSource(h int64) (src string, err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return "", bridge(err)
	}
	return s.Theory().Source, nil
}

// SimSave writes the simulation to an Arrow IPC file that LoadSimulation resumes.
func SimSave(h int64, path string) (err error) {
	defer recoverInto(&err)
	s, err := sim(h)
	if err != nil {
		return bridge(err)
	}
	return bridge(s.Save(path))
}

// LoadSimulation resumes a saved simulation on a backend (options JSON as for
// NewSimulation: backend, threads, precision; precision "" keeps the saved
// one, so a float32 run resumes in float32 and needs the CUDA backend).
func LoadSimulation(path, options string) (h int64, err error) {
	defer recoverInto(&err)
	var o simOptions
	if e := decodeOptions(options, &o); e != nil {
		return 0, bridge(errs.New(errs.Parameter, "bad load options: %v", e))
	}
	saved, err := core.SavedSettings(path)
	if err != nil {
		return 0, bridge(err)
	}
	prec := o.Precision
	if prec == "" {
		prec = saved.Precision
	}
	backend, note, err := selectBackend(o.backendOptions)
	if err != nil {
		return 0, bridge(err)
	}
	s, err := core.LoadAs(backend, path, prec)
	if err != nil {
		return 0, bridge(err)
	}
	return register(&simulation{Simulation: s, backendNote: note}), nil
}
