package cuda

import "github.com/fieldgo/fieldgo/kernels"

// CombineDots is Combine, then Project when phi is given, then the two dot
// products.
func (p *Program) CombineDots(g kernels.Grid, phi, out, y kernels.Buffer, terms ...kernels.Term) (float64, float64, error) {
	if err := p.Combine(out, terms...); err != nil {
		return 0, 0, err
	}
	if phi != nil {
		if err := p.Project(g, phi, out); err != nil {
			return 0, 0, err
		}
	}
	oo, err := p.Dot(out, out)
	if err != nil || y == nil {
		return oo, 0, err
	}
	oy, err := p.Dot(out, y)
	return oo, oy, err
}
