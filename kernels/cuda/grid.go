package cuda

import (
	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
)

// The field engine on lines, 3D lattices and boundaries set per axis: the
// site kernels of the second translation unit (kernels/src cuda_site3d.cu,
// TranslationUnitGridAs). Program's operations route here for every grid
// that is not planar and, for a point source with z derivatives, for every
// grid (onGrid). Combine, Dot, MaxAbs, FillRandom and FirstNonFinite need no
// grid and run the kernels of the Program's own module, which both units
// have; so do the reductions' last two levels (fg_k_rows over the lines,
// fg_k_final). The free boundary runs there on every grid, planes included
// (cuda_free.cu): the planar unit has no free stencils.

// onGrid reports whether g runs on the second unit's kernels.
func (p *Program) onGrid(g kernels.Grid) bool { return p.unit.ThreeD || !g.Planar() || g.Free }

// grid3Of is g as cuda_site3d.cu reads it (fg_grid3).
func grid3Of(g kernels.Grid) grid3Args {
	a := grid3Args{Nx: int64(g.Nx), Ny: int64(g.Ny), Nz: int64(g.Planes()), N: int64(g.Sites()), Lines: int64(g.Lines()),
		Nchunk: int64((g.Nx + chunk - 1) / chunk), Dims: int32(g.Dim()), Free: flag(g.Free),
		Hx: g.Hx, Hy: g.Hy, Hz: g.Hz, Ox: g.Ox, Oy: g.Oy, Oz: g.Oz}
	for ax := range a.Wrap {
		a.Wrap[ax] = flag(g.Wraps(ax))
	}
	// An axis the grid lacks has no stencil; its spacing only enters the
	// kernels' reciprocals, which must stay finite.
	if a.Hy == 0 {
		a.Hy = 1
	}
	if a.Hz == 0 {
		a.Hz = 1
	}
	return a
}

// gridKernels returns the second unit's kernels, compiling (or reading from
// the disk cache) and loading them the first time. Called with p.mu held and
// the context current.
func (p *Program) gridKernels() (map[string]*kernel, error) {
	if p.grid != nil {
		return p.grid.k, nil
	}
	source := TranslationUnitGridAs(p.unit, p.prec)
	image, log, cached, err := p.b.cubin(source, false)
	if err != nil {
		return nil, err
	}
	mod, ks, err := p.b.loadModule(image, log, GridKernelNames)
	if err != nil && cached {
		if image, log, _, err = p.b.cubin(source, true); err != nil {
			return nil, err
		}
		cached = false
		mod, ks, err = p.b.loadModule(image, log, GridKernelNames)
	}
	if err != nil {
		return nil, err
	}
	p.grid = &gridModule{mod: mod, k: ks, log: log, cached: cached}
	return ks, nil
}

// launchGrid launches kernel name of the second unit over blocks blocks.
func (p *Program) launchGrid(name string, blocks int, a any) error {
	ks, err := p.gridKernels()
	if err != nil {
		return err
	}
	k := ks[name]
	if k == nil {
		return errs.New(errs.Internal, "no kernel %s in the grid unit", name)
	}
	return launchArgs(k, max(blocks, 1), k.info.BlockSize, 1, 0, driver.Stream{}, a)
}

// lineBlocks is the number of blocks of kernel name covering the chunk-padded
// lines of g.
func (p *Program) lineBlocks(name string, g grid3Args) (int, error) {
	ks, err := p.gridKernels()
	if err != nil {
		return 0, err
	}
	return linesBlocks(g, ks[name].info.BlockSize), nil
}

// linesBlocks is the grid of a site kernel of the grid unit in blocks of bs
// threads: a block is one chunk of bs/32 consecutive lines (fg_line_site).
func linesBlocks(g grid3Args, bs int) int {
	w := bs / chunk
	return int(g.Nchunk) * ((int(g.Lines) + w - 1) / w)
}

// checkForm refuses a gradient form the grid unit does not run on ga's grid:
// an unknown one, and the continuum form on the free boundary, as the CPU
// backend does (its expression at an edge site is the derivative of no energy).
func checkForm(ga kernels.GradientArgs) error {
	switch {
	case ga.Form != kernels.Continuum && ga.Form != kernels.Consistent:
		return errs.New(errs.Parameter, "unknown gradient form %d", ga.Form)
	case ga.Grid.Free && ga.Form == kernels.Continuum:
		return errs.New(errs.Parameter, "the continuum gradient form has no free boundary: "+
			"its expression at an edge site is the derivative of no energy; use the consistent form")
	}
	return nil
}

// gridGradient is Gradient on the second unit (p.mu held, context current,
// prepare done, buffers checked).
func (p *Program) gridGradient(ga kernels.GradientArgs, phi, out, vel *buffer) (kernels.Reduction, error) {
	var r kernels.Reduction
	if err := checkForm(ga); err != nil {
		return r, err
	}
	g := grid3Of(ga.Grid)
	a := &ndGradientArgs{Grid: g, Params: uint64(p.params.d), Phi: uint64(phi.d), Out: uint64(out.d),
		Part: uint64(p.part.d), Project: flag(ga.Project), WantEnergy: flag(ga.Energy)}
	if vel != nil {
		a.Vel = uint64(vel.d)
	}
	if len(ga.Shift) > 0 {
		// The kernels read one field: form Phi + Shift first, as Combine would.
		if err := p.shifted.ensure(p.prec.Bytes() * phi.n); err != nil {
			return r, err
		}
		if err := p.combine(p.shifted.d, phi.n, append([]kernels.Term{{Coef: 1, X: ga.Phi}}, ga.Shift...)); err != nil {
			return r, err
		}
		a.Phi = uint64(p.shifted.d)
	}
	if ga.Form == kernels.Consistent {
		if err := p.gridConsistent(a, ga.Penalty, ga.Grid.Free); err != nil {
			return r, err
		}
	} else {
		blocks, err := p.lineBlocks("fg_k_nd_continuum", g)
		if err != nil {
			return r, err
		}
		if err := p.launchGrid("fg_k_nd_continuum", blocks, a); err != nil {
			return r, err
		}
	}
	e, m, pw, err := p.reduce(gridArgs{Ny: g.Lines, Nchunk: g.Nchunk})
	if err != nil {
		return r, err
	}
	// The consistent form's pass 1 computes the energy always; the
	// continuum kernel when asked.
	if ga.Energy {
		r.Energy = e
	}
	r.MaxGrad = m
	if vel != nil {
		r.Power = pw
	}
	return r, nil
}

// gridDensity is Density on the second unit (p.mu held, context current,
// prepare done): density k (-1: the energy density) of f into out (0: none).
func (p *Program) gridDensity(gr kernels.Grid, f *buffer, out uint64, k int) (float64, error) {
	g := grid3Of(gr)
	a := &ndDensityArgs{Grid: g, Params: uint64(p.params.d), Phi: uint64(f.d), Out: out, Part: uint64(p.part.d), Density: int32(k)}
	name := "fg_k_nd_density"
	if gr.Free {
		name = "fg_k_nd_density_free"
	}
	blocks, err := p.lineBlocks(name, g)
	if err != nil {
		return 0, err
	}
	if err := p.launchGrid(name, blocks, a); err != nil {
		return 0, err
	}
	sum, _, _, err := p.reduce(gridArgs{Ny: g.Lines, Nchunk: g.Nchunk})
	return sum, err
}

// gridSite launches fg_k_nd_constrain or fg_k_nd_project, one thread per site.
func (p *Program) gridSite(name string, gr kernels.Grid, phi, x uint64) error {
	ks, err := p.gridKernels()
	if err != nil {
		return err
	}
	bs := ks[name].info.BlockSize
	return p.launchGrid(name, (gr.Sites()+bs-1)/bs, &ndSiteArgs{Grid: grid3Of(gr), Phi: phi, X: x})
}

// gridConsistent launches the consistent form's two passes (fg_k_nd_partials,
// fg_k_nd_consistent, or their _free kernels on the free boundary) for a with
// the doubler penalty c, through the grid module's work buffer of 7 (3D) or 5
// columns per component.
func (p *Program) gridConsistent(a *ndGradientArgs, penalty float64, free bool) error {
	nb := 5
	if a.Grid.Dims == 3 {
		nb = 7
	}
	if _, err := p.gridKernels(); err != nil {
		return err
	}
	if err := p.grid.work.ensure(8 * nb * p.unit.NComp * int(a.Grid.N)); err != nil {
		return err
	}
	c := &ndConsistentArgs{Grid: a.Grid, Params: a.Params, Phi: a.Phi, Vel: a.Vel, Out: a.Out, Part: a.Part,
		Work: uint64(p.grid.work.d), Project: a.Project, Penalty: penalty}
	names := []string{"fg_k_nd_partials", "fg_k_nd_consistent"}
	if free {
		names = []string{"fg_k_nd_partials_free", "fg_k_nd_consistent_free"}
	}
	for _, name := range names {
		blocks, err := p.lineBlocks(name, a.Grid)
		if err != nil {
			return err
		}
		if err := p.launchGrid(name, blocks, c); err != nil {
			return err
		}
	}
	return nil
}
