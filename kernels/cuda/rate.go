package cuda

import (
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// rateCore is fg_rate_core (cuda_reduce.cu): Program.Rate's arguments
// shared by the planar and the grid unit's kernel.
type rateCore struct {
	Sites int64   `c:"sites"`
	Kind  int32   `c:"kind"`
	_     int32   // pad_
	C1    float64 `c:"c1"`
	C2    float64 `c:"c2"`
	Phi   uint64  `c:"phi"`
	Grad  uint64  `c:"grad"`
	Out   uint64  `c:"out"`
}

// rateArgs is fg_rate_args (fg_k_rate, the planar unit).
type rateArgs struct {
	R    rateCore `c:"r"`
	Grid gridArgs `c:"grid"`
}

var _ = registerArgs[rateArgs]("fg_k_rate")

// ndRateArgs is fg_nd_rate_args (fg_k_nd_rate, the grid unit).
type ndRateArgs struct {
	R    rateCore  `c:"r"`
	Grid grid3Args `c:"grid"`
}

var _ = registerArgs[ndRateArgs]("fg_k_nd_rate")

// Rate writes the first-order rate of kind from the field phi and its
// gradient grad into out (kernels.Program.Rate), one thread per site:
// fg_k_rate on the planar grid, fg_k_nd_rate on the grid unit's.
func (p *Program) Rate(g kernels.Grid, kind kernels.RateKind, phi, grad, out kernels.Buffer, c1, c2 float64) error {
	if kind != kernels.RateLandauLifshitz && kind != kernels.RateSchrodinger {
		return errs.New(errs.Parameter, "unknown rate kind %d", int(kind))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.onDevice(func() error {
		grid, bufs, err := p.outputPass(g, []string{"field", "gradient", "rate"}, phi, grad, out)
		if err != nil {
			return err
		}
		r := rateCore{Sites: int64(g.Sites()), Kind: int32(kind), C1: c1, C2: c2,
			Phi: uint64(bufs[0].d), Grad: uint64(bufs[1].d), Out: uint64(bufs[2].d)}
		return p.siteLaunch(g, "rate", g.Sites(), func() any { return &rateArgs{R: r, Grid: grid} },
			func() any { return &ndRateArgs{R: r, Grid: grid3Of(g)} })
	})
}

// centripetalCore is fg_centripetal_core (cuda_reduce.cu).
type centripetalCore struct {
	Sites int64  `c:"sites"`
	P     uint64 `c:"p"`
	W     uint64 `c:"w"`
	Out   uint64 `c:"out"`
}

// centripetalArgs is fg_centripetal_args (fg_k_centripetal, the planar unit).
type centripetalArgs struct {
	C    centripetalCore `c:"c"`
	Grid gridArgs        `c:"grid"`
}

var _ = registerArgs[centripetalArgs]("fg_k_centripetal")

// ndCentripetalArgs is fg_nd_centripetal_args (fg_k_nd_centripetal, the grid unit).
type ndCentripetalArgs struct {
	C    centripetalCore `c:"c"`
	Grid grid3Args       `c:"grid"`
}

var _ = registerArgs[ndCentripetalArgs]("fg_k_nd_centripetal")

// AddCentripetal adds the centripetal term of a unit-vector field's
// acceleration, out += (|w|^2/|p|^2) p at every site that is not held over
// the components that are not auxiliary (core.CentripetalProgram): the
// unit-vector RK4 of core's evolution then forms it on the device instead of
// downloading p and w and uploading the term every stage.
func (p *Program) AddCentripetal(g kernels.Grid, pb, w, out kernels.Buffer) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.onDevice(func() error {
		grid, bufs, err := p.outputPass(g, []string{"field", "velocity", "acceleration"}, pb, w, out)
		if err != nil {
			return err
		}
		c := centripetalCore{Sites: int64(g.Sites()), P: uint64(bufs[0].d), W: uint64(bufs[1].d), Out: uint64(bufs[2].d)}
		return p.siteLaunch(g, "centripetal", g.Sites(), func() any { return &centripetalArgs{C: c, Grid: grid} },
			func() any { return &ndCentripetalArgs{C: c, Grid: grid3Of(g)} })
	})
}

// outputPass prepares g for a per-site pass and resolves its field-sized
// buffers (named for the errors), the last one the output, which must be
// neither of the others (p.mu held, the context current).
func (p *Program) outputPass(g kernels.Grid, names []string, bs ...kernels.Buffer) (gridArgs, []*buffer, error) {
	grid, err := p.prepare(g, make([]float64, p.unit.NParams))
	if err != nil {
		return grid, nil, err
	}
	bufs := make([]*buffer, len(bs))
	for k, b := range bs {
		if bufs[k], err = p.field(names[k], b, g, false); err != nil {
			return grid, nil, err
		}
	}
	last := len(bufs) - 1
	for _, b := range bufs[:last] {
		if b == bufs[last] {
			return grid, nil, errs.New(errs.Shape, "the %s must be a buffer of its own, not one of the inputs", names[last])
		}
	}
	return grid, bufs, nil
}

// siteLaunch launches a kernel over threads threads: fg_k_<name> with the
// block planar() on the planar grid, fg_k_nd_<name> with nd() on the grid
// unit's (p.mu held, the context current, prepare done).
func (p *Program) siteLaunch(g kernels.Grid, name string, threads int, planar, nd func() any) error {
	if p.onGrid(g) {
		ks, err := p.gridKernels()
		if err != nil {
			return err
		}
		k := "fg_k_nd_" + name
		bs := ks[k].info.BlockSize
		return p.launchGrid(k, (threads+bs-1)/bs, nd())
	}
	k := "fg_k_" + name
	bs := p.k[k].info.BlockSize
	return p.launch(k, (threads+bs-1)/bs, planar())
}
