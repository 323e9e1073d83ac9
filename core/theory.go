package core

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/fieldgo/fieldgo/errs"
	"github.com/fieldgo/fieldgo/kernels"
)

// TheorySpec is the JSON spec the front end hands across the bridge with the
// point source (docs/abi.md).
type TheorySpec struct {
	Name       string   `json:"name"`
	Fields     []string `json:"fields"`
	Params     []string `json:"params"`
	Densities  []string `json:"densities"`
	Constraint string   `json:"constraint"` // "" or "unit_vector"
	Gradient   string   `json:"gradient"`   // "derived" or "hand"
	// Auxiliary names the components fixed by their own field equation
	// dE/dpsi = 0 rather than minimised (absent in older specs: none). The
	// point source marks them with FG_AUX(k); the flow moves them up their
	// gradient (the saddle form) and the unit-vector constraint skips them.
	Auxiliary []string `json:"auxiliary,omitempty"`
	// GaussLaw: the point source carries the phase-space unit of a Gauss law
	// (GaussUnit), whose violation an evolution records (absent: none).
	GaussLaw bool `json:"gauss_law,omitempty"`
	// KineticDensity: the point source carries the kinetic unit of a kinetic
	// density other than |phi'|^2/2 (KineticUnit, kinetic.go), which the
	// second-order evolutions solve for the acceleration (absent: none).
	KineticDensity bool `json:"kinetic_density,omitempty"`
}

// Theory is a spec with its point source.
type Theory struct {
	Spec     TheorySpec
	SpecJSON string // as handed over, kept for Save
	Source   string
}

// ParseTheory checks a spec and its point source.
func ParseTheory(specJSON, source string) (*Theory, error) {
	var sp TheorySpec
	dec := json.NewDecoder(strings.NewReader(specJSON))
	if err := dec.Decode(&sp); err != nil {
		return nil, errs.Wrap(errs.Spec, err, "theory spec is not valid JSON")
	}
	if sp.Name == "" {
		return nil, errs.New(errs.Spec, "theory spec has no name")
	}
	if err := checkNames(sp.Fields); err != nil {
		return nil, errs.New(errs.Spec, "theory %q fields: %v", sp.Name, err)
	}
	seen := map[string]bool{}
	for _, list := range [][]string{sp.Params, sp.Densities} {
		for _, s := range list {
			if s == "" || seen[s] {
				return nil, errs.New(errs.Spec, "theory %q: parameter/density name %q empty or repeated", sp.Name, s)
			}
			seen[s] = true
		}
	}
	if seen["energy"] {
		return nil, errs.New(errs.Spec, "theory %q: \"energy\" is reserved for the energy density", sp.Name)
	}
	switch sp.Constraint {
	case "", "unit_vector":
	default:
		return nil, errs.New(errs.Spec, "theory %q: unknown constraint %q (\"\" or \"unit_vector\")", sp.Name, sp.Constraint)
	}
	aux := map[string]bool{}
	for _, a := range sp.Auxiliary {
		if aux[a] || !contains(sp.Fields, a) {
			return nil, errs.New(errs.Spec, "theory %q: auxiliary field %q is repeated or not one of the fields %v", sp.Name, a, sp.Fields)
		}
		aux[a] = true
	}
	if len(sp.Auxiliary) > 0 && len(sp.Auxiliary) == len(sp.Fields) {
		return nil, errs.New(errs.Spec, "theory %q: every field is auxiliary; the flow needs one to minimise", sp.Name)
	}
	if len(sp.Auxiliary) > 0 && !strings.Contains(source, "FG_AUX") {
		return nil, errs.New(errs.Spec, "theory %q declares auxiliary fields %v but its point source does not define FG_AUX(k) (docs/abi.md)", sp.Name, sp.Auxiliary)
	}
	if strings.TrimSpace(source) == "" {
		return nil, errs.New(errs.Spec, "theory %q has an empty point source", sp.Name)
	}
	if sp.GaussLaw && (seen[GaussMaxColumn] || seen[GaussL2Column]) {
		return nil, errs.New(errs.Spec, "theory %q: %q and %q name the Gauss law's history columns, not densities",
			sp.Name, GaussMaxColumn, GaussL2Column)
	}
	t := &Theory{Spec: sp, SpecJSON: specJSON, Source: source}
	switch gauss := t.GaussUnit(); {
	case sp.GaussLaw && gauss == "":
		return nil, errs.New(errs.Spec, "theory %q declares a Gauss law but its point source has no phase-space unit "+
			"(lines behind %q, docs/abi.md)", sp.Name, gaussPrefix)
	case !sp.GaussLaw && gauss != "":
		return nil, errs.New(errs.Spec, "theory %q: its point source has a Gauss law's phase-space unit but the spec "+
			"does not declare \"gauss_law\"", sp.Name)
	}
	switch kin := t.KineticUnit(); {
	case sp.KineticDensity && kin == "":
		return nil, errs.New(errs.Spec, "theory %q declares a kinetic density but its point source has no kinetic unit "+
			"(lines behind %q, docs/abi.md)", sp.Name, kineticPrefix)
	case !sp.KineticDensity && kin != "":
		return nil, errs.New(errs.Spec, "theory %q: its point source has a kinetic unit but the spec does not declare "+
			"\"kinetic_density\"", sp.Name)
	}
	return t, nil
}

// gaussPrefix starts each line of a Gauss law's phase-space unit inside the
// theory's point source: a comment to every C compiler, so the theory's own
// functions, FG_DIM included, are what they would be without it.
const gaussPrefix = "//fg-gauss| "

// GaussUnit is the point source of the theory's Gauss law (docs/abi.md), or
// "" when it has none: a unit of 2n components (the field's n, then their
// velocities) whose density 0 is the constraint density G.
func (t *Theory) GaussUnit() string { return t.embedded(gaussPrefix) }

// embedded is the unit whose lines stand behind prefix in the point source,
// or "" when there is none.
func (t *Theory) embedded(prefix string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(t.Source, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			b.WriteString(rest)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// gaussUnit is the kernels.Unit of the theory's Gauss law.
func (t *Theory) gaussUnit() kernels.Unit {
	src := t.GaussUnit()
	return kernels.Unit{Point: src, NComp: 2 * len(t.Spec.Fields), NParams: len(t.Spec.Params), NDens: 1,
		ThreeD: fgDim3.MatchString(src)}
}

// UnitVector reports whether the field is constrained to the unit sphere.
func (t *Theory) UnitVector() bool { return t.Spec.Constraint == "unit_vector" }

// Auxiliary reports whether component c is auxiliary.
func (t *Theory) Auxiliary(c int) bool {
	return c >= 0 && c < len(t.Spec.Fields) && contains(t.Spec.Auxiliary, t.Spec.Fields[c])
}

// HasAuxiliary reports whether the theory declares auxiliary components.
func (t *Theory) HasAuxiliary() bool { return len(t.Spec.Auxiliary) > 0 }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Unit is the translation unit a backend compiles for t.
func (t *Theory) Unit() kernels.Unit { return t.unit() }

func (t *Theory) unit() kernels.Unit {
	return kernels.Unit{Point: t.Source, NComp: len(t.Spec.Fields), NParams: len(t.Spec.Params), NDens: len(t.Spec.Densities),
		ThreeD: t.ThreeD()}
}

// ThreeD reports whether the point source's site has z derivatives (it
// defines FG_DIM 3, docs/abi.md): its theory uses z. Such a theory runs on
// the CPU backend, on a 3D lattice or as a field constant along z.
func (t *Theory) ThreeD() bool { return fgDim3.MatchString(t.Source) }

var fgDim3 = regexp.MustCompile(`(?m)^#define FG_DIM +3\b`)

// DensityIndex maps a density name to its fg_density index; "energy" is -1.
func (t *Theory) DensityIndex(name string) (int, error) {
	if name == "energy" {
		return -1, nil
	}
	for k, d := range t.Spec.Densities {
		if d == name {
			return k, nil
		}
	}
	return 0, errs.New(errs.Parameter, "theory %q declares no density %q (it has %v and \"energy\")", t.Spec.Name, name, t.Spec.Densities)
}
