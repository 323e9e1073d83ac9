package core_test

import (
	"errors"
	"math"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fieldgo/fieldgo/core"
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// stepperBackend gives the CPU backend's Programs the device flow's contract
// (kernels.Stepper) for evolve's RK4 (FlowSpec.NoArrest), run on the host
// with the Program's own kernels in stepRK4's order: core's path through a
// device flow (the chunks up to each record, the step count and clock, the
// records, a divergence's step and stage) is then checked without a GPU
// against the host loop, bit for bit.
type stepperBackend struct{ kernels.Backend }

func (b stepperBackend) Compile(u kernels.Unit) (kernels.Program, error) {
	p, err := b.Backend.Compile(u)
	if err != nil {
		return nil, err
	}
	return &stepperProgram{Program: p}, nil
}

type stepperProgram struct {
	kernels.Program
	flows int
}

func (p *stepperProgram) NewFlow(spec kernels.FlowSpec) (kernels.Flow, error) {
	if !spec.NoArrest || spec.UnitVector || spec.Tol != 0 {
		return nil, errors.New("the test flow runs evolve's RK4 only")
	}
	p.flows++
	return &hostFlow{p: p.Program, spec: spec}, nil
}

type hostFlow struct {
	p    kernels.Program
	spec kernels.FlowSpec
}

func (f *hostFlow) Run(st kernels.FlowState, maxSteps, _ int, cancel *atomic.Bool) (kernels.FlowResult, error) {
	res := kernels.FlowResult{State: st}
	T := func(c float64, x kernels.Buffer) kernels.Term { return kernels.Term{Coef: c, X: x} }
	sp, g, dt := f.spec, f.spec.G, f.spec.Dt
	phi, v := sp.Phi, sp.Vel
	for res.Taken < maxSteps {
		if cancel.Load() {
			res.Cancelled = true
			break
		}
		shifts := [4][]kernels.Term{nil, {T(dt/2, v)}, {T(dt/2, v), T(-dt*dt/4, g[0])}, {T(dt, v), T(-dt*dt/2, g[1])}}
		for k, shift := range shifts {
			r, err := f.p.Gradient(kernels.GradientArgs{Grid: sp.Grid, Form: sp.Form, Penalty: sp.Penalty,
				Params: sp.Params, Phi: phi, Shift: shift, Out: g[k]})
			if err != nil {
				return res, err
			}
			if math.IsNaN(r.MaxGrad) {
				res.Stop, res.Stage = kernels.FlowNonFinite, k+1
				return res, nil
			}
		}
		h := dt * dt / 6
		if err := f.p.Combine(phi, T(1, phi), T(dt, v), T(-h, g[0]), T(-h, g[1]), T(-h, g[2])); err != nil {
			return res, err
		}
		if err := f.p.Combine(v, T(1, v), T(-dt/6, g[0]), T(-dt/3, g[1]), T(-dt/3, g[2]), T(-dt/6, g[3])); err != nil {
			return res, err
		}
		res.Taken++
		res.State.Step++
	}
	return res, nil
}

func (f *hostFlow) Describe() string { return "host test flow" }
func (f *hostFlow) Close() error     { return nil }

func TestEvolveThroughADeviceFlowIsTheHostLoop(t *testing.T) {
	kink := func(x float64) float64 { return 4 * math.Atan(math.Exp(x)) }
	bump := func(x float64) float64 { return 0.4 * math.Exp(-x*x) }
	newLine := func(b kernels.Backend) *core.Simulation {
		lat, err := core.NewLatticeND([]int{160}, []float64{0.1}, []float64{-7.95}, []core.Boundary{core.Periodic})
		require.NoError(t, err)
		s, err := core.NewSimulation(b, sineGordon(t), lat, nil, core.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		setLine(t, s, false, kink)
		setLine(t, s, true, bump)
		return s
	}
	cfg := core.EvolveConfig{T: 1.3, Dt: 0.01, RecordEvery: 7} // 130 steps: records at 7, 14, ..., 126 and 130
	host := newLine(backend(0))
	hh, err := host.Evolve(cfg)
	require.NoError(t, err)
	defer hh.Release()
	require.Empty(t, host.DeviceFlow())

	sb := stepperBackend{backend(0)}
	dev := newLine(sb)
	require.NoError(t, dev.StartEvolve(cfg))
	for {
		p, err := dev.AdvanceEvolve(5, 0) // chunks that end between records
		require.NoError(t, err)
		if p.Done {
			break
		}
	}
	hd, err := dev.EvolveHistory()
	require.NoError(t, err)
	defer hd.Release()
	require.Equal(t, "host test flow", dev.DeviceFlow())
	require.Equal(t, host.Time(), dev.Time())
	require.Equal(t, host.EvolveRecords(), dev.EvolveRecords())
	require.Equal(t, hh.NumRows(), hd.NumRows())
	require.Len(t, dev.EvolveRecords(), 20) // t = 0, 18 records every 7 steps, the end
	fh, err := host.Field()
	require.NoError(t, err)
	fd, err := dev.Field()
	require.NoError(t, err)
	require.Equal(t, fh.Comp(0), fd.Comp(0))

	// A step too long for the lattice: the same divergence, named at the same
	// step, stage and site, with the last record's field kept.
	over := core.EvolveConfig{T: 400, Dt: 0.5, RecordEvery: 100000}
	bad := []*core.Simulation{newLine(backend(0)), newLine(sb)}
	var msgs []string
	for _, s := range bad {
		_, err := s.Evolve(over)
		require.True(t, errs.Is(err, errs.Divergence), err)
		msgs = append(msgs, err.Error())
	}
	require.Equal(t, msgs[0], msgs[1])
	require.Contains(t, msgs[1], "RK4 stage")
}
