package kernels

import (
	"fmt"
	"strings"
)

// Assemble builds a backend's translation unit: its prelude, the theory's
// point source, the size guard, then the backend's templates in order.
func Assemble(prelude string, u Unit, templates ...string) string {
	var sb strings.Builder
	sb.WriteString(prelude)
	sb.WriteString(u.Point)
	sb.WriteString("\n")
	sb.WriteString(SizeChecks(u))
	for _, t := range templates {
		sb.WriteString(t)
	}
	return sb.String()
}

// SizeChecks is the C preprocessor guard every backend's translation unit
// puts after the point source: the sizes the engine allocates for must be the
// ones the source declares.
func SizeChecks(u Unit) string {
	var out string
	for _, c := range []struct {
		macro, what string
		n           int
	}{{"FG_NCOMP", "field", u.NComp}, {"FG_NDENS", "density", u.NDens}, {"FG_NPARAMS", "parameter", u.NParams}} {
		out += fmt.Sprintf("#if %s != %d\n#error \"point source declares %s != %d (the spec's %s count)\"\n#endif\n",
			c.macro, c.n, c.macro, c.n, c.what)
	}
	return out
}
