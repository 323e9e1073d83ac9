"""The values ``fg.animate`` and ``fg.track`` read from a run: a density or field
components of each snapshot of an :class:`fieldgo.Evolution`, or of one simulation or
field.

A snapshot is a bare array of the field; its densities need the theory's density kernel.
They are computed through a scratch CPU :class:`fieldgo.Simulation` of the run's theory
and parameters on the run's lattice, made once per animation or tracking and reused for
every snapshot: each snapshot costs a ``set_field`` (one copy of the field) and a
``density`` (one pass of the density kernel and one copy out), about what a
``sim.density`` costs (0.3 ms for a 401-site line, 1 ms for 256^2). Its CPU kernels come
from the disk cache (a run on a GPU compiles them with the C compiler the first time).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator

import numpy as np

from .errors import LatticeError, ParameterError, SpecError


def _check_threshold(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or not v > 0:
        raise ParameterError(f"{name} must be a positive finite number, got {v!r}")
    return float(v)


class _Densities:
    """A scratch CPU simulation of a theory on a lattice: the densities of fields set in it."""

    def __init__(self, theory, params, lattice):
        from .runtime.simulation import Simulation

        self.sim = Simulation(
            theory,
            grid=lattice.grid,
            spacing=lattice.spacing,
            origin=lattice.origin,
            boundary=lattice.boundary,
            backend="cpu",
        )
        if params:
            self.sim.set_params(**params)

    def __call__(self, field, name) -> np.ndarray:
        self.sim.set_field(field)
        d = self.sim.density(name)
        try:
            return np.array(d.numpy()[0])
        finally:
            d.release()

    def close(self):
        self.sim.close()


class Source:
    """What a run gives frame by frame: ``panels`` [(label, name)] (name: the density's,
    None for a component) and, iterated, (frame, t, [values per panel]) over the whole
    lattice. Made by :func:`source`."""

    def __init__(self, run, lattice, fields, density, components, theory, params, every) -> None:
        self.run, self.lattice, self.fields = run, lattice, tuple(fields)
        self.density, self.components = density, components
        self.theory, self.params, self.every = theory, params, every
        self._densities: _Densities | None = None
        if density is not None:
            self.panels = [("energy density" if density == "energy" else f"{density} density", density)]
        else:
            self.panels = [(self.fields[c], None) for c in components]

    @property
    def times(self) -> np.ndarray:
        from .runtime.evolution import Evolution

        if isinstance(self.run, Evolution):
            return np.asarray(self.run.times[:: self.every], dtype=np.float64)
        return np.array([_single_time(self.run)])

    def __len__(self):
        return len(self.times)

    def _values(self, field) -> list:
        if self.density is None:
            return [np.array(field[c]) for c in self.components]
        if self._densities is None:
            self._densities = _Densities(self.theory, self.params, self.lattice)
        return [self._densities(field, self.density)]

    def __iter__(self) -> Iterator[tuple[int, float, list]]:
        from .runtime.evolution import Evolution
        from .runtime.field import Field
        from .runtime.simulation import Simulation

        run = self.run
        if isinstance(run, Evolution):
            # the snapshots one at a time (a file's are read as they come, not all at once)
            for k, (t, snap) in enumerate(run):
                if k % self.every == 0:
                    yield k, float(t), self._values(snap)
        elif isinstance(run, Simulation):
            if self.density is not None:
                d = run.density(self.density)
                try:
                    values = [np.array(d.numpy()[0])]
                finally:
                    d.release()
            else:
                values = [np.array(run.field[c]) for c in self.components]
            yield 0, float(run.time), values
        elif isinstance(run, Field):
            yield 0, 0.0, [np.array(run[c]) for c in self.components]

    def close(self):
        if self._densities is not None:
            self._densities.close()
            self._densities = None


def _single_time(run) -> float:
    from .runtime.simulation import Simulation

    return float(run.time) if isinstance(run, Simulation) else 0.0


def _declared(theory) -> list:
    return ["energy", *theory.spec.get("densities", [])]


def source(run, density, component, theory=None, *, what="fg.animate", every=1, need_one=False) -> Source:
    """The :class:`Source` of ``run`` (an Evolution, a Simulation or a Field) for a
    density or components, refusing with typed errors what cannot be drawn or tracked:
    an evolution without snapshots, an unknown density or component, a density without
    a theory to compute it with. ``theory``: an ``fg.Theory`` or an ``fg.Simulation``
    (its theory and parameters) for an evolution that does not know its own."""
    from .runtime.evolution import Evolution
    from .runtime.field import Field
    from .runtime.simulation import Simulation

    if isinstance(every, bool) or not isinstance(every, numbers.Integral) or every < 1:
        raise ParameterError(f"every must be a positive integer, got {every!r}")
    if density is not None and component is not None:
        raise ParameterError(f"{what}: give density= or component=, not both")
    params = None
    if isinstance(run, Evolution):
        if len(run.snapshots) == 0:
            raise ParameterError(
                f"{what}: the evolution has no snapshots (it was run with snapshots=False, or recorded nothing)"
            )
        lattice, fields = run.lattice, run.fields
        if isinstance(theory, Simulation):
            theory, params = theory.theory, theory.params
        elif theory is None:
            theory, params = run.theory, run.params
        else:
            params = dict(theory.params)
        if density is not None and theory is None:
            raise ParameterError(
                f"{what}: the {density!r} density needs the run's theory, which this evolution does not keep: "
                f"pass theory= (the fg.Theory, or a Simulation of it)"
            )
    elif isinstance(run, Simulation):
        run._require_field(what, density)
        lattice, fields, theory = run.lattice, run.theory.fields, run.theory
    elif isinstance(run, Field):
        if run.released:
            run.numpy()  # the field's own ReleasedError
        if density is not None:
            raise ParameterError(
                f"{what}: a Field has no densities ({density!r}): pass the Simulation or the Evolution, or component="
            )
        lattice, fields, theory = run.lattice, run.names, None
    else:
        raise ParameterError(f"{what} takes an fg.Evolution, fg.Simulation or fg.Field, got {type(run).__name__}")
    if lattice.dims not in (1, 2, 3):
        raise LatticeError(f"{what}: unsupported lattice {lattice!r}")
    components: list = []
    if density is not None:
        if not isinstance(density, str):
            raise ParameterError(f"{what}: density must be a density's name, got {density!r}")
        if density not in _declared(theory):
            raise SpecError(
                f"{what}: unknown density {density!r}: theory {theory.name!r} declares {', '.join(_declared(theory))}"
            )
    elif component is not None:
        components = [_component_index(component, fields, what)]
    else:
        if need_one and len(fields) != 1:
            raise ParameterError(
                f"{what} needs one scalar: a density= or one component= of {', '.join(map(str, fields))}"
            )
        components = list(range(len(fields)))
    return Source(run, lattice, fields, density, components, theory, params, int(every))


def _component_index(component, fields, what) -> int:
    fields = list(fields)
    if isinstance(component, str):
        if component not in fields:
            raise ParameterError(f"{what}: unknown component {component!r}: the fields are {', '.join(fields)}")
        return fields.index(component)
    if isinstance(component, bool) or not isinstance(component, numbers.Integral):
        raise ParameterError(f"{what}: component must be a name or an index, got {component!r}")
    k = int(component)
    if not -len(fields) <= k < len(fields):
        raise ParameterError(f"{what}: component {k} out of range ({len(fields)} components)")
    return k % len(fields)
