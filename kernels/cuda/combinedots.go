package cuda

import (
	"unsafe"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
	"github.com/fieldgo/fieldgo/kernels/cuda/driver"
)

// CombineDots forms out = the sum of the terms, projects it when phi is given
// and reduces out.out and out.y, in one kernel over the lattice
// (fg_k_combine_dots, or fg_k_nd_combine_dots on the grid unit), then
// fg_k_combine_dots_final, and waits for the two sums. out holds the bits
// Combine and Project would leave; the sums are folded per dotChunk sites
// with a fixed tree, the same bits for any block size, and Dot's to
// rounding.
func (p *Program) CombineDots(g kernels.Grid, phi, out, y kernels.Buffer, terms ...kernels.Term) (float64, float64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var oo, oy float64
	err := p.b.onDevice(func() error {
		grid, err := p.prepare(g, make([]float64, p.unit.NParams))
		if err != nil {
			return err
		}
		o, err := p.field("output", out, g, false)
		if err != nil {
			return err
		}
		f, err := p.field("field", phi, g, true)
		if err != nil {
			return err
		}
		yb, err := p.field("second vector", y, g, true)
		if err != nil {
			return err
		}
		if len(terms) > maxTerms {
			return errs.New(errs.Internal, "CombineDots takes at most %d terms, got %d", maxTerms, len(terms))
		}
		sites := g.Sites()
		nchunk := (sites + dotChunk - 1) / dotChunk
		if err := p.dotPart.ensure(16 * nchunk); err != nil {
			return err
		}
		d := cdotsArgs{Sites: int64(sites), Nterms: int32(len(terms)), Out: uint64(o.d), Part: uint64(p.dotPart.d), Res: uint64(p.res)}
		for t, term := range terms {
			x, err := p.buf(term.X)
			if err != nil {
				return err
			}
			if x == nil || x.n != o.n {
				return errs.New(errs.Shape, "CombineDots term %d does not match the output length %d", t, o.n)
			}
			d.Coef[t], d.Terms[t] = term.Coef, uint64(x.d)
		}
		if f != nil {
			d.Phi = uint64(f.d)
		}
		if yb != nil {
			d.Y = uint64(yb.d)
		}
		err = p.siteLaunch(g, "combine_dots", 32*nchunk, func() any { return &combineDotsArgs{D: d, Grid: grid} },
			func() any { return &ndCombineDotsArgs{D: d, Grid: grid3Of(g)} })
		if err != nil {
			return err
		}
		if err := p.launch("fg_k_combine_dots_final", 1, &d); err != nil {
			return err
		}
		if err := check(driver.MemcpyDtoH(p.hostRes, p.res, 16), "cuMemcpyDtoH CombineDots"); err != nil {
			return err
		}
		h := unsafe.Slice((*float64)(p.hostRes), 2)
		oo, oy = h[0], h[1]
		return nil
	})
	return oo, oy, err
}
