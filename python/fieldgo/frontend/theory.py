"""``fg.Theory``: a lattice field theory written as Python point functions.

    theory = fg.Theory("baby_skyrme", fields=["n1", "n2", "n3"],
                       params={"kappa": 1.0, "mass": 1.0}, constraint=fg.UnitVector())

    @theory.energy_density
    def energy(s, p): ...

Decorating records the function (after static checks: arity, no writes to captured
state); tracing is lazy and cached per set of static parameter values. Plain float
parameters are *dynamic*: they live in the run-time ``fg_params`` struct, so their
values never change the generated code. ``fg.Static(v)`` parameters fold into the code.
"""

from __future__ import annotations

import json
import keyword
import math
import numbers
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError, ShapeError, SpecError
from . import derive, diagnostics, gauss, kinetic, native, sourcecache, tracer
from .symbolic import Expr, to_sympy

__all__ = ["Theory", "Static", "UnitVector", "PointResult", "SymbolicTheory"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_C_KEYWORDS = {
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Bool",
    "_Complex",
}
# Names a Vector uses for itself, so they cannot double as component names.
_RESERVED_FIELDS = {"names", "tolist"}


class Static:
    """A parameter folded into the generated code: ``params={"N": fg.Static(3)}``.

    Use it for values Python branches or loops on (an integer power, a potential's
    variant). Changing it regenerates and recompiles; dynamic parameters never do.
    """

    __slots__ = ("value",)

    def __init__(self, value):
        if isinstance(value, Static):
            value = value.value
        if not isinstance(value, (numbers.Real, str, tuple)) or isinstance(value, bool):
            raise ParameterError(f"fg.Static needs a number, string or tuple, got {value!r}")
        self.value = value

    def __repr__(self):
        return f"Static({self.value!r})"


class UnitVector:
    """Constraint ``|phi| = 1`` over all components; the engine projects onto it."""

    spec_name = "unit_vector"

    def __repr__(self):
        return "UnitVector()"


@dataclass
class PointResult:
    """Everything the point functions give at one site (``theory.at``)."""

    energy: float
    de_dphi: np.ndarray
    de_ddx: np.ndarray
    de_ddy: np.ndarray
    gradient: np.ndarray
    densities: dict = field(default_factory=dict)
    de_ddz: np.ndarray | None = None  # a theory that uses z; None for a planar one


@dataclass
class SymbolicTheory:
    """The traced theory as SymPy expressions (for checks, LaTeX and code generation)."""

    symbols: tracer.Symbols
    energy: object
    partials: derive.Partials
    gradient: list
    gradient_kind: str  # "derived" or "hand"
    densities: dict
    static: dict


def _check_ident(kind, name):
    if not isinstance(name, str) or not _IDENT.match(name) or name in _C_KEYWORDS or keyword.iskeyword(name):
        raise SpecError(f"{kind} name {name!r} must be a C and Python identifier")


class Theory:
    """A field theory: components, parameters, an energy density and densities."""

    def __init__(self, name: str, fields, params=None, constraint=None, auxiliary=None):
        if not isinstance(name, str) or not name:
            raise SpecError("a theory needs a non-empty name")
        fields = list(fields)
        if not fields:
            raise SpecError("a theory needs at least one field component")
        for f in fields:
            _check_ident("field", f)
            if f in _RESERVED_FIELDS:
                raise SpecError(f"field name {f!r} is reserved")
        if len(set(fields)) != len(fields):
            raise SpecError(f"duplicate field names in {fields}")
        self.name = name
        self.fields = fields
        self._dynamic: dict = {}
        self._static: dict = {}
        for pname, value in (params or {}).items():
            _check_ident("parameter", pname)
            if isinstance(value, Static):
                self._static[pname] = value.value
            else:
                self._dynamic[pname] = _finite(pname, value)
        if constraint is not None and not isinstance(constraint, UnitVector):
            raise SpecError(f"unknown constraint {constraint!r} (use fg.UnitVector() or None)")
        self.constraint = constraint
        auxiliary = [auxiliary] if isinstance(auxiliary, str) else list(auxiliary or [])
        for a in auxiliary:
            if a not in fields:
                raise SpecError(f"auxiliary field {a!r} is not one of the fields {fields}")
        if len(set(auxiliary)) != len(auxiliary):
            raise SpecError(f"duplicate auxiliary fields in {auxiliary}")
        if auxiliary and len(auxiliary) == len(fields):
            raise SpecError("every field is auxiliary: a theory needs at least one field the flow minimises")
        # Auxiliary components are fixed by their own field equation dE/dpsi = 0, at
        # which the energy is a maximum in psi (the saddle form): the flow moves them
        # up their gradient while it moves the others down; the unit-vector
        # constraint applies to the other components only.
        self.auxiliary = [f for f in fields if f in auxiliary]
        self._energy_fn = None
        self._gradient_fn = None
        self._density_fns: dict = {}
        self._gauss_fn = None
        self._kinetic_fn = None
        self._generated: dict = {}  # static values -> (SymbolicTheory, source)

    # --- declaring -------------------------------------------------------------------
    def energy_density(self, fn):
        """Decorator: ``e(s, p) -> scalar``. The gradient is derived from it."""
        diagnostics.check_arity(fn, "energy_density", ("s", "p"))
        diagnostics.check_no_captured_mutation(fn)
        self._energy_fn = fn
        self._generated.clear()
        return fn

    def gradient(self, fn):
        """Decorator: a hand-written continuum gradient ``g(s, p, out)`` writing out[a]."""
        diagnostics.check_arity(fn, "gradient", ("s", "p", "out"))
        diagnostics.check_no_captured_mutation(fn)
        self._gradient_fn = fn
        self._generated.clear()
        return fn

    def density(self, name: str):
        """Decorator factory: ``@theory.density("charge")`` for ``d(s, p) -> scalar``."""
        _check_ident("density", name)

        def register(fn):
            diagnostics.check_arity(fn, f"density({name!r})", ("s", "p"))
            diagnostics.check_no_captured_mutation(fn)
            self._density_fns[name] = fn
            self._generated.clear()
            return fn

        return register

    def gauss_law(self, fn):
        """Decorator: Gauss's law ``g(s, v, p) -> scalar`` of a gauge theory evolved in
        temporal gauge (A_0 = 0), the constraint density G = div E - rho per site: ``s``
        is the site, ``v`` the site of its velocities (``v.phi`` = d_t phi, ``v.dx`` =
        d_x d_t phi, ...), ``p`` the parameters. The exact dynamics conserves G;
        ``Simulation.evolve`` records its largest ``|G|`` and its L2 norm at every record
        (history columns ``gauss_max``, ``gauss_l2``; docs/dynamics.md)."""
        diagnostics.check_arity(fn, "gauss_law", gauss.ARGS)
        diagnostics.check_no_captured_mutation(fn)
        self._gauss_fn = fn
        self._generated.clear()
        return fn

    @property
    def has_gauss_law(self) -> bool:
        """Whether a Gauss law is declared (``@theory.gauss_law``)."""
        return self._gauss_fn is not None

    def kinetic_density(self, fn):
        """Decorator: the kinetic energy density ``k(s, v, p) -> scalar`` of the
        second-order dynamics, in place of ``|v.phi|^2 / 2``: ``s`` is the site, ``v``
        the site of its velocities (``v.phi`` = d_t phi), ``p`` the parameters. It must
        be a quadratic form in ``v.phi``, K = 1/2 v.M(phi, dphi).v, with M positive
        definite (on the tangent space under the unit-vector constraint), and read no
        derivative of the velocities. ``Simulation.evolve`` (``"rk4"``, ``"rk45"``) then
        solves the Euler-Lagrange equation of L = K - e for the acceleration site by
        site, and its history's kinetic energy is the integral of K
        (docs/dynamics.md)."""
        diagnostics.check_arity(fn, "kinetic_density", kinetic.ARGS)
        diagnostics.check_no_captured_mutation(fn)
        self._kinetic_fn = fn
        self._generated.clear()
        return fn

    @property
    def has_kinetic_density(self) -> bool:
        """Whether a kinetic density is declared (``@theory.kinetic_density``)."""
        return self._kinetic_fn is not None

    # --- parameters ------------------------------------------------------------------
    @property
    def params(self) -> dict:
        """Current parameter values, dynamic and static (a copy)."""
        return {**self._dynamic, **self._static}

    @property
    def dynamic_params(self) -> list:
        return list(self._dynamic)

    @property
    def static_params(self) -> dict:
        return dict(self._static)

    def set_params(self, **values):
        """Change parameter values. Dynamic ones never regenerate code; static ones do."""
        for k, v in values.items():
            if k in self._dynamic:
                self._dynamic[k] = _finite(k, v)
            elif k in self._static:
                self._static[k] = v.value if isinstance(v, Static) else v
            else:
                raise ParameterError(
                    f"unknown parameter {k!r} for theory {self.name!r} (parameters: {', '.join(self.params) or 'none'})"
                )

    # --- tracing ---------------------------------------------------------------------
    def _static_key(self, static):
        return tuple(sorted(static.items(), key=lambda kv: kv[0]))

    def symbolic(self, **static) -> SymbolicTheory:
        """The traced theory for the current static values (or those given)."""
        return self._build({**self._static, **self._checked_static(static)})[0]

    def _checked_static(self, static):
        for k in static:
            if k not in self._static:
                raise ParameterError(f"{k!r} is not a static parameter of {self.name!r}")
        return {k: (v.value if isinstance(v, Static) else v) for k, v in static.items()}

    def _source(self, static: dict) -> str:
        """The point source for these static values: from the source cache when this
        theory was traced before (no SymPy needed), else traced and stored."""
        key = self._static_key(static)
        hit = self._generated.get(key)
        if hit is not None:
            return hit[1]
        ck = sourcecache.key(
            (
                self.name,
                list(self.fields),
                list(self._dynamic),
                sorted(static.items()),
                self.constraint.spec_name if self.constraint else "",
                list(self.auxiliary),
                list(self._density_fns),
                self._gauss_fn is not None,
            )
            # a kinetic density extends the key; theories without one keep theirs
            + (("kinetic_density",) if self._kinetic_fn is not None else ()),
            [self._energy_fn, self._gradient_fn, *self._density_fns.values(), self._gauss_fn]
            + ([self._kinetic_fn] if self._kinetic_fn is not None else []),
        )
        if ck is not None:
            cached = sourcecache.load(ck)
            if cached is not None:
                return cached
        source = self._build(static)[1]
        if ck is not None:
            sourcecache.store(ck, source)
        return source

    def _build(self, static: dict):
        from . import codegen  # imports SymPy's printers: only when tracing

        key = self._static_key(static)
        hit = self._generated.get(key)
        if hit is not None:
            return hit
        if self._energy_fn is None:
            raise SpecError(f"theory {self.name!r} has no @theory.energy_density")
        sym = tracer.Symbols(self.fields, list(self._dynamic))
        pvals = {k: Expr(s) for k, s in sym.params.items()}
        pvals.update(static)
        params = tracer.Params(pvals)

        site = tracer.symbolic_site(sym, False, "energy density")
        energy = to_sympy(tracer.scalar_result(self._energy_fn, (site, params), "energy_density"))
        hand = None
        if self._gradient_fn is not None:
            site2 = tracer.symbolic_site(sym, True, "gradient")
            hand = [to_sympy(v) for v in tracer.gradient_result(self._gradient_fn, site2, params, self.fields, 0)]
        densities = {}
        for name, fn in self._density_fns.items():
            site3 = tracer.symbolic_site(sym, True, f"density {name!r}")
            densities[name] = to_sympy(tracer.scalar_result(fn, (site3, params), f"density {name!r}"))
        # A theory that reads any z value is three-dimensional (FG_DIM 3 in its point
        # source); one that never does keeps the planar source of docs/abi.md, byte for byte.
        three_d = sym.uses_z(energy, *(hand or []), *densities.values())
        parts = derive.partials(energy, sym, three_d)
        if hand is not None:
            gradient, kind = hand, "hand"
        else:
            gradient, kind = derive.euler_lagrange(parts, sym), "derived"
        st = SymbolicTheory(sym, energy, parts, gradient, kind, densities, dict(static))
        if kind == "hand":
            self._refuse_gradient_mismatch(st)

        origins = {"energy": codegen.Origin(*diagnostics.def_line(self._energy_fn))}
        if self._gradient_fn is not None:
            origins["gradient"] = codegen.Origin(*diagnostics.def_line(self._gradient_fn))
        for name, fn in self._density_fns.items():
            origins["density:" + name] = codegen.Origin(*diagnostics.def_line(fn))
        header = f"fieldgo point source for theory {self.name!r}\nspec: {json.dumps(self._spec(kind))}" + (
            f"\nstatic: {json.dumps({k: v for k, v in sorted(static.items())})}" if static else ""
        )
        pf = codegen.PointFunctions(
            name=self.name,
            fields=self.fields,
            params=list(self._dynamic),
            energy=energy,
            partials=(parts.de_dphi, parts.de_ddx, parts.de_ddy)
            + ((parts.de_ddz,) if parts.de_ddz is not None else ()),
            gradient=gradient,
            densities=densities,
            names=sym.c_names(),
            origins=origins,
            header=header,
            auxiliary=list(self.auxiliary),
            gradient_program=derive.euler_lagrange_program(parts, sym) if kind == "derived" else None,
        )
        source = codegen.emit(pf)
        if self._gauss_fn is not None:
            source += self._gauss_unit(static, three_d)
        if self._kinetic_fn is not None:
            source += self._kinetic_unit(static, three_d)
        result = (st, source)
        self._generated[key] = result
        return result

    def _gauss_unit(self, static: dict, three_d: bool) -> str:
        """The Gauss law's phase-space unit, embedded (fieldgo.frontend.gauss)."""
        from . import codegen

        g, sym = gauss.trace(self._gauss_fn, self.fields, list(self._dynamic), static)
        origin = codegen.Origin(*diagnostics.def_line(self._gauss_fn))
        unit = gauss.unit_source(self.name, self.fields, list(self._dynamic), g, sym, origin, three_d or sym.uses_z(g))
        return gauss.embed(unit)

    def _kinetic_unit(self, static: dict, three_d: bool) -> str:
        """The kinetic density's unit, embedded (fieldgo.frontend.kinetic)."""
        from . import codegen

        k, sym = kinetic.trace(self._kinetic_fn, self.fields, list(self._dynamic), static)
        origin = codegen.Origin(*diagnostics.def_line(self._kinetic_fn))
        three_d = three_d or sym.uses_z(k)
        unit = kinetic.unit_source(self.name, self.fields, list(self._dynamic), k, sym, origin, three_d)
        return kinetic.embed(unit)

    def check_gradient(self, **static) -> None:
        """Check a hand-written ``@theory.gradient`` against the Euler–Lagrange form
        derived from ``@theory.energy_density`` (fieldgo.frontend.gradcheck): at three points of
        a smooth test field, with parameters away from zero, every component must agree
        to 1e-8 of the gradient's size (tangent parts under a unit-vector constraint).
        Raises SpecError naming the component and the difference. It also runs when the
        theory is first traced, so a Simulation never relaxes a field with a gradient
        that is not the energy's; a derived gradient passes by construction."""
        st = self.symbolic(**static)
        if st.gradient_kind == "hand":
            self._refuse_gradient_mismatch(st)

    def _refuse_gradient_mismatch(self, st):
        from . import gradcheck

        unit = bool(self.constraint) and self.constraint.spec_name == "unit_vector"
        bad = gradcheck.mismatches(st, unit, list(self.auxiliary))
        if not bad:
            return
        a, diff, scale, point = max(bad, key=lambda m: m[1] / m[2])
        at = ", ".join(f"{axis}={v}" for axis, v in zip("xyz", point))
        comps = sorted({self.fields[m[0]] for m in bad})
        file, line = diagnostics.def_line(self._gradient_fn)
        where = f" ({file}:{line})" if file else ""
        raise SpecError(
            f"the hand-written gradient of theory {self.name!r}{where} is not the derivative of its energy "
            f"density: component {self.fields[a]!r} differs from the derived one by {diff:.3g} where the "
            f"gradient is {scale:.3g} in size (relative {diff / scale:.2g}, at a test point {at}); "
            f"components that differ: {', '.join(comps)}. Fix the gradient, or drop @theory.gradient to use "
            f"the derived one"
        )

    # --- outputs ---------------------------------------------------------------------
    @property
    def source(self) -> str:
        """The C99 point source (docs/abi.md) for the current static values."""
        return self._source(dict(self._static))

    def _spec(self, kind):
        spec = {
            "name": self.name,
            "fields": list(self.fields),
            "params": list(self._dynamic),
            "densities": list(self._density_fns),
            "constraint": self.constraint.spec_name if self.constraint else "",
            "gradient": kind,
        }
        if self.auxiliary:  # absent otherwise: older specs stay byte-identical
            spec["auxiliary"] = list(self.auxiliary)
        if self._gauss_fn is not None:  # likewise
            spec["gauss_law"] = True
        if self._kinetic_fn is not None:  # likewise
            spec["kinetic_density"] = True
        return spec

    @property
    def spec(self) -> dict:
        """The JSON spec of docs/abi.md, as a dict."""
        return self._spec("hand" if self._gradient_fn is not None else "derived")

    def spec_json(self) -> str:
        return json.dumps(self.spec)

    def latex(self) -> str:
        """LaTeX of the energy density, one line, in the operations it was written with
        (``|\\partial_x \\vec{n}|^2``, ``\\vec{n} \\cdot (...)``, ``|\\psi|^2``; fieldgo.frontend.notation), with
        component names, ``\\partial_x`` and parameter names."""
        from ..jupyter.display import energy_latex

        return energy_latex(self)

    def display(self, gradient: bool = False, densities: bool = True):
        """The energy density (and with ``gradient=True`` the gradient, derived or
        hand-written), densities, fields and parameters, shown as LaTeX in Jupyter."""
        from ..jupyter.display import TheoryView

        return TheoryView(self, gradient=gradient, densities=densities)

    def _repr_latex_(self):
        from ..jupyter.display import theory_latex

        return theory_latex(self)

    # --- evaluating --------------------------------------------------------------------
    def _site_arrays(self, phi, dx, dy, dxx, dyy, dxy, dz=None, dzz=None, dxz=None, dyz=None):
        n = len(self.fields)
        arrays = {}
        given = (("phi", phi), ("dx", dx), ("dy", dy), ("dxx", dxx), ("dyy", dyy), ("dxy", dxy))
        given += (("dz", dz), ("dzz", dzz), ("dxz", dxz), ("dyz", dyz))
        for name, v in given:
            if v is None:
                arr = np.zeros(n)
            else:
                try:
                    arr = np.asarray(v, dtype=np.float64).reshape(-1)
                except (TypeError, ValueError):
                    raise ShapeError(f"{name} must be {n} numbers, got {v!r}") from None
                if np.ndim(v) > 1 or arr.size != n:
                    raise ShapeError(
                        f"{name} must have {n} components ({', '.join(self.fields)}), got shape {np.shape(v)}"
                    )
            arrays[name] = arr
        return arrays

    def _split_params(self, given):
        dynamic = dict(self._dynamic)
        static = dict(self._static)
        for k, v in given.items():
            if k in dynamic:
                dynamic[k] = _finite(k, v)
            elif k in static:
                static[k] = v.value if isinstance(v, Static) else v
            else:
                raise ParameterError(
                    f"unknown parameter {k!r} for theory {self.name!r} (parameters: {', '.join(self.params) or 'none'})"
                )
        return dynamic, static

    def at(
        self,
        phi=None,
        dx=None,
        dy=None,
        dxx=None,
        dyy=None,
        dxy=None,
        x=0.0,
        y=0.0,
        *,
        dz=None,
        dzz=None,
        dxz=None,
        dyz=None,
        z=0.0,
        **params,
    ) -> PointResult:
        """Evaluate the generated C at one site (compiled with the system C compiler).

        Unlisted parameters take the theory's values. Dynamic parameters go into the
        ``fg_params`` struct; a static one different from the theory's value selects
        (and compiles once) the code generated for it. A theory that uses z also takes
        ``dz``, ``dzz``, ``dxz``, ``dyz`` (zero when not given) and ``z``, and its result
        has ``de_ddz``; a planar theory reads none of them.
        """
        arrays = self._site_arrays(phi, dx, dy, dxx, dyy, dxy, dz, dzz, dxz, dyz)
        dynamic, static = self._split_params(params)
        x, y, z = _finite("x", x), _finite("y", y), _finite("z", z)
        source = self._source(static)
        lib = native.load(source)
        if lib.three_d:
            slots = tracer.FIRST + tracer.Z_FIRST + ("dxx", "dyy", "dzz", "dxy", "dxz", "dyz")
            site = np.concatenate([arrays[k] for k in slots] + [np.array([x, y, z])])
        else:
            site = np.concatenate([arrays[k] for k in tracer.SLOTS] + [np.array([x, y])])
        pvec = np.array([dynamic[k] for k in self._dynamic] or [0.0])
        out = lib.evaluate(site, pvec)
        n = len(self.fields)
        nd = len(self._density_fns)
        return PointResult(
            energy=float(out[0]),
            de_dphi=out[1 : 1 + n].copy(),
            de_ddx=out[1 + n : 1 + 2 * n].copy(),
            de_ddy=out[1 + 2 * n : 1 + 3 * n].copy(),
            gradient=out[1 + 3 * n : 1 + 4 * n].copy(),
            densities={name: float(out[1 + 4 * n + k]) for k, name in enumerate(self._density_fns)},
            de_ddz=out[1 + 4 * n + nd : 1 + 5 * n + nd].copy() if lib.three_d else None,
        )

    def evaluate(
        self,
        phi=None,
        dx=None,
        dy=None,
        dxx=None,
        dyy=None,
        dxy=None,
        x=0.0,
        y=0.0,
        *,
        dz=None,
        dzz=None,
        dxz=None,
        dyz=None,
        z=0.0,
        **params,
    ) -> PointResult:
        """Run the Python functions themselves on plain floats (no tracing, no C).

        Gives the energy, the densities and, if one was written, the hand gradient
        (partials and the derived gradient need the symbolic form: they are NaN here).
        The z values (``dz``, ``dzz``, ``dxz``, ``dyz``, ``z``) are zero unless given.
        """
        if self._energy_fn is None:
            raise SpecError(f"theory {self.name!r} has no @theory.energy_density")
        arrays = self._site_arrays(phi, dx, dy, dxx, dyy, dxy, dz, dzz, dxz, dyz)
        dynamic, static = self._split_params(params)
        x, y, z = _finite("x", x), _finite("y", y), _finite("z", z)
        p = tracer.Params({**dynamic, **static})
        n = len(self.fields)
        nan = np.full(n, np.nan)

        def site(second, role):
            return tracer.numeric_site(self.fields, arrays, x, y, second, role, z)

        energy = float(tracer.scalar_result(self._energy_fn, (site(False, "energy density"), p), "energy_density"))
        grad = nan.copy()
        if self._gradient_fn is not None:
            grad = np.array(
                [
                    float(v)
                    for v in tracer.gradient_result(self._gradient_fn, site(True, "gradient"), p, self.fields, 0.0)
                ]
            )
        dens = {
            name: float(tracer.scalar_result(fn, (site(True, f"density {name!r}"), p), f"density {name!r}"))
            for name, fn in self._density_fns.items()
        }
        return PointResult(energy, nan.copy(), nan.copy(), nan.copy(), grad, dens)

    def __repr__(self):
        aux = f", auxiliary={self.auxiliary}" if self.auxiliary else ""
        return f"Theory({self.name!r}, fields={self.fields}, params={self.params}, constraint={self.constraint!r}{aux})"


def _finite(name, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"parameter {name!r} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ParameterError(f"parameter {name!r} must be finite, got {v}")
    return v
