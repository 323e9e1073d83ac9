"""``fg.Simulation``: a theory on a lattice, relaxed by the Go runtime.

    sim = fg.Simulation(theory, grid=(256, 256), spacing=0.08, boundary="fixed")
    sim.set_field(fg.initial.skyrmion(charge=1))
    hist = sim.minimize(tol=1e-8)          # a pyarrow Table, one row per check
    sim.energy(), sim.integral("charge"), sim.field.numpy()

The simulation's working field lives in C memory owned by Go; ``sim.field`` is a
zero-copy view of it on the CPU backend. ``minimize`` runs in short chunks inside
Go, so Ctrl-C (KeyboardInterrupt) stops it within a chunk and leaves the last good
field and the history readable.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import warnings

import pyarrow as pa

from ..errors import BackendError, Error, ParameterError, ReleasedError, ShapeError, SpecError
from . import interruptible as _interruptible
from .bridge import go, import_batch, import_table
from .field import Field
from .fieldvalues import constraint_of, field_values
from .lattice import Lattice
from .options import EvolveOptions, MinimizeOptions, SimulationOptions

_METHODS = ("anf", "gradient")
_EVOLVE_METHODS = ("rk4", "leapfrog", "rk45", "llg", "gpe", "gpe_imaginary")
_ARRESTS = ("power", "energy")
_GRADIENTS = ("auto", "continuum", "consistent")
_CHUNK_SECONDS = 0.05  # Go returns to Python at least this often: Ctrl-C and progress
_CHUNK_STEPS = 0  # steps a chunk may take at most besides its time (0: no limit)


class PrecisionWarning(UserWarning):
    """A request the storage precision cannot honour reliably, e.g. a tolerance below
    what float32 storage reaches (the flow then likely runs to max_steps, converged False)."""


class _SourceTheory:
    """A theory known only by its spec and point source (what ``fg.load`` reads back)."""

    def __init__(self, spec: dict, source: str, params: dict):
        self.name = spec["name"]
        self.fields = list(spec["fields"])
        self.spec = dict(spec)
        self.source = source
        self.params = dict(params)
        self.dynamic_params = list(spec["params"])

    def spec_json(self):
        return json.dumps(self.spec)

    @property
    def has_gauss_law(self) -> bool:
        return bool(self.spec.get("gauss_law"))

    @property
    def has_kinetic_density(self) -> bool:
        return bool(self.spec.get("kinetic_density"))

    def __repr__(self):
        return f"Theory({self.name!r}, fields={self.fields}, params={self.params}) (loaded)"


def _theory_parts(theory):
    try:
        spec = theory.spec
        # A theory whose functions use z (s.dz, s.z, ...) has a 3D point source; it
        # runs on a 3D lattice, and on a line or a plane as a field constant along z.
        source = theory.source
        names = list(spec["params"])
        values = theory.params
    except AttributeError:
        raise SpecError(f"Simulation needs an fg.Theory, got {type(theory).__name__}") from None
    return spec, source, {k: float(values[k]) for k in names}


def _finite_param(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
        raise ParameterError(f"parameter {name!r} must be a finite number, got {v!r}")
    return float(v)


class Simulation:
    """A theory on a lattice with a backend: fields, flows and observables.

    ``boundary``: ``"fixed"`` (default; the outer two layers are held at the field
    you set and carry no energy, so a relaxed energy depends on what you gave them),
    ``"periodic"`` (every axis wraps) or ``"free"`` (no site held, the energy
    summed over every site with in-box derivatives at the edges: the natural boundary,
    where a soliton well inside relaxes to the same energy from any starting field;
    both backends run it, and its gradient is the ``"consistent"`` form:
    ``gradient="continuum"`` is refused). ``fg.Lattice`` says more. ``grid`` has one,
    two or three axes, ``(nx,)``, ``(nx, ny)`` or ``(nx, ny, nz)``, and ``boundary`` may
    be one name per axis (fixed or periodic); lines, 3D lattices and per-axis
    boundaries run on the CPU backend, with both gradient forms and both precisions.

    ``gradient``: ``"auto"`` (the continuum Euler-Lagrange form; the consistent form
    on a free boundary), ``"continuum"`` or ``"consistent"`` (the exact gradient of
    the reported energy, doubler penalty included; docs/convergence.md).

    ``precision``: ``"float64"`` (default) or ``"float32"``.
    float32 is a *storage* precision: the field, the velocity and the flow's stage
    gradients live on the GPU as float32 (half the bytes each step moves and half the
    device memory; on the H200 1.16-1.27x faster per step at 1024^2-2048^2, no faster at
    256^2, where the step is latency-bound), while every
    site computation (the theory's point functions), the RK4 combination and all
    reductions (energy, ``max |grad|``, integrals) run in float64; results are rounded to
    float32 when stored. ``sim.field`` is float64 all the same: the float32 state widened
    exactly (``set_field`` rounds to float32), and ``save``/``fg.load`` keep the
    precision, so a float32 run resumes bit-identically. ``density()`` fields are
    rounded to float32 like the state; ``energy()``, ``integral()`` and the
    history's energy and max_grad are float64 reductions. Rounding the field to float32
    leaves a gradient noise floor F, about ``(64/12)(1/hx^2 + 1/hy^2) 2^-24 max(1, |phi|)``
    (``describe()["gradient_floor"]``; 1e-4 at spacing 0.08). The floors measured on the
    H200 were 0.52-1.16 F, so tolerances >= 2 F are reached; ``minimize(tol)`` below 2 F
    warns (PrecisionWarning) and, if the flow cannot get there, runs to ``max_steps`` and
    reports converged False (never a false convergence). The energy and the integrals of
    a float32-relaxed soliton agree with float64's to a few 1e-8 (relative).
    docs/performance/gpu.md has the measured errors, floors and speed. On the CPU the
    same numbers are kept in float64 memory (every stored value rounded to float32, so
    ``sim.field`` stays a zero-copy view): a float32 run can be made and checked without
    a GPU, but it saves neither memory nor time there.
    """

    def __init__(
        self,
        theory,
        grid=(128, 128),
        spacing=0.1,
        boundary="fixed",
        backend="auto",
        precision="float64",
        *,
        origin=None,
        gradient="auto",
        threads=None,
    ):
        if precision not in ("float64", "float32"):
            raise ParameterError(f"precision must be 'float64' or 'float32', got {precision!r}")
        if gradient not in _GRADIENTS:
            raise ParameterError(f"gradient must be one of {_GRADIENTS}, got {gradient!r}")
        if backend not in ("auto", "cpu", "cuda"):
            raise BackendError(f"unknown backend {backend!r}: use 'auto', 'cpu' or 'cuda'")
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ParameterError(f"threads must be a positive integer, got {threads!r}")
        go.WarmBackend(backend)  # the GPU probe runs in Go while the theory is traced below
        self.lattice = Lattice(grid, spacing, origin=origin, boundary=boundary)
        lat = self.lattice
        spec, source, params = _theory_parts(theory)
        self.theory = theory
        opts = SimulationOptions(backend=backend, threads=threads or 0, precision=precision, gradient=gradient)
        if lat.planar:
            self._handle = go.NewSimulation(
                json.dumps(spec),
                source,
                lat.nx,
                lat.ny,
                lat.hx,
                lat.hy,
                lat.origin[0],
                lat.origin[1],
                lat.boundary,
                opts.json(),
            )
        else:
            # Lines, 3D lattices and per-axis boundaries run on both backends: the CPU
            # with everything a plane has there, CUDA in the continuum form (Go refuses
            # the consistent form there by name; docs/kernels/grids.md).
            self._handle = go.NewSimulationOn(json.dumps(spec), source, lat._json(), opts.json())
        self._precision = precision
        self._params = {}
        self.set_params(**params)
        self._past = []
        self._flow_started = False
        self._run_history = None  # the current flow's history as the last run returned it
        self._field = None
        self._device_views = False  # a CUDA device_field() was handed out: sim.field re-reads the device
        # A writable view of the working field was handed out: each minimize tells Go the
        # field may have been written, so it estimates the stiffness anew.
        self._views_out = False
        self._backend = None
        self._field_set = False  # set_field not called yet: the field is all zeros

    @classmethod
    def _from_handle(cls, handle, theory, lattice, precision="float64"):
        sim = cls.__new__(cls)
        sim._handle, sim.theory, sim.lattice = handle, theory, lattice
        sim._precision = precision
        sim._params = dict(theory.params)
        sim._past = []
        sim._flow_started = True
        sim._run_history = None
        sim._field = None
        sim._device_views = False
        sim._views_out = False
        sim._backend = None
        sim._field_set = True  # the saved field
        return sim

    # --- state ---
    def _h(self):
        if self._handle is None:
            raise ReleasedError("the simulation has been closed")
        return self._handle

    @property
    def backend(self) -> str:
        if self._backend is None:
            self._backend = self.describe()["backend"]
        return self._backend

    @property
    def precision(self) -> str:
        """The storage precision of the working state: "float64" or "float32" (CUDA)."""
        return self._precision

    @property
    def params(self) -> dict:
        return dict(self._params)

    def set_params(self, **values):
        """Change dynamic parameter values; never recompiles."""
        names = self.theory.spec["params"]
        new = dict(self._params)
        for k, v in values.items():
            if k not in names:
                raise ParameterError(
                    f"unknown dynamic parameter {k!r} for theory {self.theory.name!r} "
                    f"(dynamic parameters: {', '.join(names) or 'none'})"
                )
            new[k] = _finite_param(k, v)
        missing = [k for k in names if k not in new]
        if missing:
            raise ParameterError(f"missing values for parameters {missing}")
        go.SimSetParams(self._h(), json.dumps([new[k] for k in names]))
        self._params = new

    @property
    def field(self) -> Field:
        """The working field (a view of Go's memory on the CPU backend; on CUDA a float64
        host copy refreshed on access, the float32 state widened exactly when
        precision="float32"). Once ``device_field()`` has handed out the device memory,
        every access re-reads the device, so writes made through that view show here."""
        if self._device_views:
            self._device_may_be_written()
        if self._field is None or self._field.released or self._device_views:
            self._field = Field._from_handle(go.SimField(self._h(), 0))
        # On the CPU the view is the working memory itself: writes through it
        # change the field without the simulation seeing them.
        self._views_out = self._views_out or self.backend == "cpu"
        return self._field

    def _device_may_be_written(self):
        """A CUDA device view was handed out: the device buffers may hold writes the
        host copy has not seen, so the next host read downloads them."""
        go.SimFieldWritten(self._h())

    def device_field(self):
        """The working field where the backend keeps it, without a copy: a
        :class:`fieldgo.runtime.devicefield.DeviceField` with ``__arrow_c_device_array__``
        (device type CUDA on a GPU, CPU otherwise) and, on CUDA,
        ``__cuda_array_interface__`` (``cupy.asarray(sim.device_field())``). It is
        the state as of the last minimize or set_field, in the simulation's storage
        precision; the next minimize overwrites it, and it is invalid once the
        simulation is closed. Writes through it are the simulation's state: the next
        minimize starts from them and ``sim.field`` shows them."""
        from .devicefield import DeviceField

        d = DeviceField(self)
        self._device_views = self._device_views or d.device_type == "cuda"
        self._views_out = True
        return d

    @property
    def velocity(self) -> Field:
        """The velocity: the time derivative of the field after ``evolve`` or
        ``set_velocity``, the flow's velocity after ``minimize`` (arrested Newton flow)."""
        return Field._from_handle(go.SimField(self._h(), 1))

    @property
    def time(self) -> float:
        """The simulation's clock: the time its evolutions have reached since the field
        was last set (0 after ``set_field`` or ``minimize``)."""
        return go.SimTime(self._h())

    def set_velocity(self, value):
        """Set the velocity (the field's time derivative) that the next ``evolve``
        starts from; it takes what ``set_field`` takes (an array shaped like the
        field, an ``fg.Field``, a function of the coordinates, e.g. the second half
        of ``fg.initial.boost``) and is not normalised. Sites the boundary holds (the
        outer two layers of a fixed axis) get zero velocity; under a unit-vector
        constraint the velocity is projected onto the tangent space of the current
        field (so set the field first). NaN or Inf is refused (``ParameterError``
        naming the site), a shape that does not fit too (``ShapeError``).

        ``set_field`` and ``minimize`` reset the velocity to zero; an ``evolve``
        after a ``minimize`` starts at rest unless ``set_velocity`` came between."""
        lat = self.lattice
        try:
            arr = field_values(value, lat, self.theory.fields)
        except ShapeError as exc:
            raise ShapeError(f"velocity: {exc}") from None
        src = Field.from_numpy(arr, lat, names=self.theory.fields, copy=not arr.flags.writeable)
        try:
            go.SimSetVelocity(self._h(), src._handle)
        finally:
            src.release()
        self._field = None

    def evolve(
        self,
        t: float,
        dt: float | None = None,
        *,
        method: str = "rk4",
        record_every: int | None = None,
        out=None,
        stream: bool = False,
        snapshots: bool = True,
        progress: bool | None = None,
        callback=None,
        gamma: float = 1.0,
        alpha: float = 0.0,
        keep_norm: bool | None = None,
        adaptive: bool | None = None,
        rtol: float | None = None,
        atol: float | None = None,
        dt_min: float | None = None,
        record_dt: float | None = None,
    ):
        """Evolve the field in time for a duration ``t`` under second-order
        (relativistic) dynamics, phi'' = -dE/dphi (per unit cell), from the current
        field and velocity (``set_velocity``; at rest after ``set_field`` or
        ``minimize``; an earlier ``evolve``'s velocity and clock otherwise, so two
        calls make one longer run). Under a unit-vector constraint the field stays
        on the sphere and the velocity tangent. A theory with a
        ``@theory.kinetic_density`` K evolves by the Euler-Lagrange equation of
        K - e instead, solved for the acceleration site by site (``"rk4"`` and
        ``"rk45"``; the history's ``kinetic`` is the integral of K).
        docs/dynamics.md has the equations.

        ``method``: ``"rk4"`` (classic Runge-Kutta, error O(dt^4), four gradients a
        step), ``"leapfrog"`` (velocity Verlet, O(dt^2), one gradient a step,
        time-reversible: its energy error stays bounded over long runs) or ``"rk45"``
        (adaptive steps, below).
        First-order dynamics (docs/dynamics_first_order.md; classic RK4 on the rate,
        error O(dt^4); no velocity: ``kinetic`` is 0 and the velocity is set to
        zero):

        - ``"llg"``: the Landau-Lifshitz-Gilbert equation of a unit 3-vector theory,
          n' = -gamma n x H + alpha n x n' with H = -dE/dn, ``gamma`` > 0 and the
          damping ``alpha`` >= 0; the history has ``m_x``, ``m_y``, ``m_z`` (the mean
          of n) in place of the momentum.
        - ``"gpe"``: the Gross-Pitaevskii equation ``i psi' = dE/dpsi*`` of a theory whose
          components are complex fields, ``(name_re, name_im)`` pairs in a row (as
          ``fg.complex_field`` reads them); with ``E = int |grad psi|^2/2 + V`` this is
          ``i psi' = -lap psi/2 + dV/dpsi*``. ``"gpe_imaginary"``: ``psi' = -dE/dpsi*``, which
          relaxes to the ground state; with ``keep_norm`` (its default) at the initial
          norm ``int |psi|^2``. The history has ``norm`` in place of the momentum.

        ``dt``: the largest step; the step taken is ``t / ceil(t / dt)`` so that the
        run ends at exactly ``sim.time + t``. None: a quarter of the smallest
        spacing, capped by half the scheme's stability limit for the field's
        stiffest mode.
        ``record_every``: steps between records (default: about 100 records in all,
        one every ceil(steps / 100) steps); a record is also taken
        at the start and at the end. Each record is a history row (``t``,
        ``kinetic``, ``potential``, ``energy``, ``momentum_x`` .., the declared
        densities' integrals; for a theory with a ``@theory.gauss_law``, last,
        ``gauss_max`` and ``gauss_l2``, the violation of Gauss's law) and, with
        ``snapshots`` (default True), a copy of the field.

        Returns an :class:`fieldgo.Evolution` (``history``, ``times``,
        ``snapshots``: numpy arrays shaped like ``sim.field.numpy()``). With
        ``out=path`` the snapshots go to an Arrow IPC stream as the run goes, not to
        memory (``fg.read_evolution(path)`` reads it back, times bit for bit). With
        ``stream=True`` it returns an iterator of pyarrow RecordBatches, one per
        snapshot, each batch's schema metadata holding ``t``, ``step`` and the
        record's values.

        Refused with ``ParameterError``: a negative or non-finite ``t``, a ``dt``
        that is not positive and finite, an unknown method, ``gamma`` not positive
        and finite, ``alpha`` negative or not finite, ``gamma``/``alpha`` with a
        method other than ``"llg"``, ``keep_norm`` with one other than the GPE's,
        ``"llg"`` on a theory that is not a unit 3-vector, ``"gpe"`` on one without
        complex fields. A run that blows up
        raises ``DivergenceError`` naming the step, stage and site; the field and
        velocity are then the last recorded ones, and the exception's ``evolution``
        holds what was recorded. Ctrl-C stops it within about 50 ms, at a step.

        Adaptive steps (docs/dynamics.md, "Adaptive steps"): ``method="rk45"``, or
        ``adaptive=True`` with ``"llg"``, ``"gpe"``, ``"gpe_imaginary"``, runs the
        Dormand-Prince 5(4) pair (six gradients an accepted step) with step-size
        control: a step is accepted when its error estimate, the largest over the
        lattice, is within ``atol + rtol * max|y|`` (the field and the velocity each
        against its own largest value), and rejected steps are retried shorter.
        ``rtol`` (default 1e-6; 1.2e-5 in float32 storage) and ``atol`` (default
        ``rtol * 1e-3``) must be positive and finite; ``dt`` is then the largest step
        and the first one tried (None: 0.9 of the pair's stability limit for the
        field's stiffest mode);
        ``dt_min`` the floor (default 1e-6 of the largest step): a step the
        controller cuts below it raises ``StepSizeError`` (a ``DivergenceError``)
        naming the time and step, the field and velocity left at the last accepted
        step and ``exc.evolution`` holding the records so far. Records: every
        ``record_every`` accepted steps, or every ``record_dt`` in time, or by
        default about 100 at even times; steps land exactly on the record times
        and on ``sim.time + t``. The history adds ``dt`` (the controller's current
        step) and ``rejected`` (rejected steps so far; ``step`` counts the accepted
        ones), as does ``describe()["evolution"]``.

        ``progress``: a progress bar of the steps (of the time, for adaptive steps)
        with the time and energy reached (None: in Jupyter, as for ``minimize``);
        ``callback(sim, status)`` is called after each ~50 ms chunk with ``step``,
        ``steps`` (0 for adaptive steps), ``t``, ``t_end``, ``energy``, ``done``,
        ``dt`` and, for adaptive steps, ``rejected``."""
        from .evolution import _check_time

        t = _check_time("t", t)
        dt = _check_time("dt", dt, positive=True, allow_none=True)
        if method not in _EVOLVE_METHODS:
            raise ParameterError(f"method must be one of {_EVOLVE_METHODS}, got {method!r}")
        gamma = _check_time("gamma", gamma, positive=True)
        alpha = _check_time("alpha", alpha)
        if method != "llg" and (gamma != 1.0 or alpha != 0.0):
            raise ParameterError(f"gamma and alpha are the parameters of method 'llg', not of {method!r}")
        gpe = method in ("gpe", "gpe_imaginary")
        if keep_norm is None:
            keep_norm = method == "gpe_imaginary"
        elif not isinstance(keep_norm, bool):
            raise ParameterError(f"keep_norm must be True or False, got {keep_norm!r}")
        elif keep_norm and not gpe:
            raise ParameterError(f"keep_norm applies to methods 'gpe' and 'gpe_imaginary', not to {method!r}")
        if record_every is not None and (
            isinstance(record_every, bool) or not isinstance(record_every, numbers.Integral) or record_every < 1
        ):
            raise ParameterError(f"record_every must be a positive integer number of steps, got {record_every!r}")
        if adaptive is None:
            adaptive = method == "rk45"
        elif not isinstance(adaptive, bool):
            raise ParameterError(f"adaptive must be True or False, got {adaptive!r}")
        elif adaptive and method in ("rk4", "leapfrog"):
            raise ParameterError(
                f"adaptive steps are method 'rk45' for second-order dynamics (or 'llg', 'gpe', 'gpe_imaginary' "
                f"with adaptive=True), not {method!r}, whose step is fixed"
            )
        elif not adaptive and method == "rk45":
            raise ParameterError(
                "method 'rk45' is the adaptive pair, and adaptive=False contradicts it: for a fixed step, 'rk4'"
            )
        steering = dict(rtol=rtol, atol=atol, dt_min=dt_min, record_dt=record_dt)
        for name, v in steering.items():
            steering[name] = _check_time(name, v, positive=True, allow_none=True)
            if v is not None and not adaptive:
                raise ParameterError(
                    f"{name} applies to adaptive steps (method 'rk45', or adaptive=True with 'llg', 'gpe', "
                    f"'gpe_imaginary'), not to method {method!r} with its fixed step"
                )
        if record_dt is not None and record_every is not None:
            raise ParameterError(
                f"record_every ({record_every} steps) and record_dt ({record_dt} in time) are exclusive: give one"
            )
        if stream and out is not None:
            raise ParameterError("stream=True and out= are exclusive: stream the batches, or write them to a file")
        self._require_field("evolve")
        if self._views_out:
            go.SimFieldWritten(self._h())
        opts = EvolveOptions(
            method=method,
            t=t,
            dt=dt or 0.0,
            record_every=int(record_every or 0),
            snapshots=bool(snapshots or out or stream),
            gamma=gamma,
            alpha=alpha,
            keep_norm=keep_norm,
            adaptive=adaptive,
            rtol=steering["rtol"] or 0.0,
            atol=steering["atol"] or 0.0,
            dt_min=steering["dt_min"] or 0.0,
            record_dt=steering["record_dt"] or 0.0,
        )
        go.SimStartEvolve(self._h(), opts.json())
        self._field = None
        run = _EvolveRun(self, method, out, callback, progress, adaptive)
        if stream:
            return run.batches()
        return run.collect()

    def set_field(self, value):
        """Set the field from an array shaped (ncomp, ny, nx) ((ny, nx) for one
        component), an fg.Field, a function f(x, y) returning the components
        (arrays or numbers over the lattice; one bare array for one component), or
        an ``fg.initial`` configuration (extra components of the theory zero-filled
        where the configuration says so, e.g. a skyrmion in the chiral magnet).
        The velocity is reset to zero.

        Refused, with a typed error: NaN or Inf values, complex values (a complex
        field is two real components), a shape that does not fit, and a function
        that cannot be called as f(x, y).

        Under a unit-vector constraint the field is normalised at every site (held
        boundary sites too): a site whose ``|phi|`` is off 1 by more than 1e-6 draws a
        :class:`fieldgo.runtime.fieldvalues.ConstraintWarning` naming the worst site, since
        a field meant to be a unit vector is rarely that far off; a site where the
        constrained components are all zero has no direction and is refused
        (``ParameterError`` naming the site). docs/robustness.md lists these cases."""
        lat = self.lattice
        arr = field_values(value, lat, self.theory.fields, **constraint_of(self.theory.spec))
        # A view, not a copy: Go copies it into the simulation's memory before
        # SimSetField returns (a 4096^2 field is 400 MB).
        src = Field.from_numpy(arr, lat, names=self.theory.fields, copy=not arr.flags.writeable)
        try:
            go.SimSetField(self._h(), src._handle)
        finally:
            src.release()
        self._field_set = True
        self._field = None

    def _require_field(self, what, density=None):
        """A typed error instead of results computed from the all-zero field the
        simulation starts with (an energy of that field, a flow that 'diverges' at
        step 0 under a unit-vector constraint). Handing out a writable view counts
        as setting the field: writing through it is a way to set it. A closed
        simulation and an unknown density name keep their own errors."""
        self._h()
        if self._field_set or self._views_out:
            return
        if density is not None and density != "energy" and density not in self.theory.spec.get("densities", []):
            return  # the engine names the unknown density
        raise ParameterError(
            f"{what} needs a field, and none has been set: call sim.set_field(...) "
            f"first (an array, a function f(x, y) or an fg.initial configuration)"
        )

    # --- flows ---
    def minimize(
        self,
        tol: float = 1e-6,
        max_steps: int = 50_000,
        method: str = "anf",
        *,
        arrest: str | None = None,
        dt: float | None = None,
        check_every: int | None = None,
        progress: bool | None = None,
        live: bool | int | dict = False,
        callback=None,
    ):
        """Relax the field until ``max |dE/dphi| < tol`` or max_steps steps.

        ``method``: ``"anf"`` (arrested Newton flow, RK4) or ``"gradient"``;
        ``arrest``: ``"power"`` (velocity reset when v.g > 0) or ``"energy"`` (when the
        energy rises). Returns the history of this call as a pyarrow Table (step,
        energy, max_grad, the integral of every declared density, resets).
        A KeyboardInterrupt stops the run between chunks: the field stays at its last
        good state and the history so far is kept in ``sim.history``.

        ``progress``: a tqdm bar (step, energy, max_grad, rate); default on inside a
        Jupyter kernel, off in scripts. ``live``: in Jupyter, redraw the field in place
        every 100 steps (``live=True``) or every ``live`` steps (an int), at most four
        times a second (``fg.plot`` of the field: a 3D lattice's middle plane along z, a
        line's curve); a dict chooses the picture with ``fg.plot``'s arguments,
        ``live={"every": 50, "axis": "x", "index": 10, "density": "energy"}``.
        ``callback(sim, status)`` runs after each chunk (~50 ms).
        """
        if method not in _METHODS:
            raise ParameterError(f"method must be one of {_METHODS}, got {method!r}")
        if arrest is not None and arrest not in _ARRESTS:
            raise ParameterError(f"arrest must be one of {_ARRESTS}, got {arrest!r}")
        tol = _finite_param("tol", tol)
        if tol <= 0:
            raise ParameterError(f"tol must be positive, got {tol}")
        if isinstance(max_steps, bool) or not isinstance(max_steps, numbers.Integral) or max_steps < 1:
            raise ParameterError(f"max_steps must be a positive integer, got {max_steps!r}")
        if dt is not None and (_finite_param("dt", dt) <= 0):
            raise ParameterError(f"dt must be positive, got {dt}")
        if check_every is not None and (
            isinstance(check_every, bool) or not isinstance(check_every, int) or check_every < 1
        ):
            raise ParameterError(f"check_every must be a positive integer, got {check_every!r}")
        opts = MinimizeOptions.json_of(
            tol=tol,
            max_steps=int(max_steps),
            method=method,
            arrest=arrest or "",
            dt=dt or 0.0,
            check_every=check_every or 0,
        )
        if self.precision == "float32":
            floor = self.describe()["gradient_floor"]
            if tol < 2 * floor:
                warnings.warn(
                    f"tol={tol:g} is below what float32 storage reliably reaches on this lattice: "
                    f"rounding the field to float32 leaves a gradient floor of ~{floor:.2g} "
                    f"(measured floors 0.52-1.16 of that), so the flow will likely run to "
                    f"max_steps={max_steps} without converging; use tol >= {2 * floor:.2g} or "
                    f"precision='float64'",
                    PrecisionWarning,
                    stacklevel=2,
                )
        self._require_field("minimize")
        if self._flow_started:
            self._past.append(self._kept_flow_history())
        if self._views_out:
            go.SimFieldWritten(self._h())
        go.SimStartMinimize(self._h(), opts)
        self._flow_started = True
        self._run_history = None
        self._field = None
        return self._run(progress, callback, max_steps, live)

    def resume(self, *, progress: bool | None = None, live: bool | int | dict = False, callback=None):
        """Continue the current flow (for instance one read back by ``fg.load``, or
        one stopped by Ctrl-C) to its end, with the settings it was started with.
        The result is bit-identical to a run that was never interrupted."""
        if not self._flow_started:
            raise ParameterError("no flow to resume: call minimize first")
        return self._run(progress, callback, None, live)

    def _run(self, progress, callback, total, live=False):
        from ..jupyter.progress import Monitor

        monitor = Monitor(self, total, progress=progress, live=live)
        status = {}
        interrupted = True
        try:
            while True:
                status = self._advance()
                self._field = None  # the host copy is refreshed on the next access
                monitor.update(status)
                if callback is not None:
                    callback(self, status)
                if status["done"]:
                    break
            interrupted = False
        finally:
            monitor.close(interrupted=interrupted)
            if interrupted and self._handle is not None:
                # The flow's own account of where it stopped (the last completed step).
                try:
                    self.last_status = self.describe().get("flow", status)
                except Exception:  # noqa: BLE001  (the exception in flight matters more)
                    self.last_status = status
        self.last_status = status
        self._run_history = self._flow_history()
        return self._run_history

    def _advance(self):
        """One chunk of the flow on a Go goroutine that the main thread waits for in
        short steps, so that Ctrl-C cancels it at the next kernel boundary (Go cannot
        see Python's signals)."""
        call = go.SimAdvanceStart(self._h(), int(_CHUNK_SECONDS * 1000), _CHUNK_STEPS)
        _interruptible.wait(call)
        status = go.CallResult(call)
        # A cancel that comes before the chunk's Advance begins is dropped by it
        # (Advance clears the flag): that chunk then runs its ~50 ms out.
        return json.loads(status)

    def _flow_history(self) -> pa.Table:
        return import_table(go.SimHistory(self._h(), 0))

    def _kept_flow_history(self) -> pa.Table:
        """The current flow's history, without exporting it again when the last run's
        table still holds all of it: a flow's history only grows, and only minimize
        starts another flow (a field change ends it: no rows), so as many rows are
        the same rows. (A loop of short minimize calls otherwise exported each flow's
        history twice, at its end and when the next call began.)"""
        kept = self._run_history
        if kept is not None and go.SimHistoryRows(self._h()) == kept.num_rows:
            return kept
        return self._flow_history()

    @property
    def history(self) -> pa.Table:
        """Every row recorded so far, over all minimize calls (step counts restart
        with each call): step, energy, max_grad, integrals, resets."""
        return pa.concat_tables(self._past + [self._kept_flow_history()])

    # --- observables ---
    def energy(self) -> float:
        """The energy of the current field (the discrete energy the engine minimises)."""
        self._require_field("energy()")
        return go.SimEnergy(self._h())

    def integral(self, name: str) -> float:
        """hx·hy times the sum of a declared density (or "energy") over the lattice."""
        self._require_field(f"integral({name!r})", name)
        return go.SimIntegral(self._h(), str(name))

    def density(self, name: str) -> Field:
        """A declared density (or "energy") as a one-component field."""
        self._require_field(f"density({name!r})", name)
        return Field._from_handle(go.SimDensity(self._h(), str(name)))

    def describe(self) -> dict:
        """Backend, device, lattice, compiled kernels and current state.

        ``compile_seconds`` is how long the theory took to become a loaded program
        (code generation, NVRTC or the C compiler, or their disk cache, and the load)
        and ``compile_cached`` whether it came from the cache."""
        return json.loads(go.SimDescribe(self._h()))

    # --- persistence ---
    def save(self, path) -> None:
        """Write field, velocity, history, theory source, parameters and lattice as an
        Arrow IPC file; ``fg.load(path)`` resumes bit-identically."""
        if self._device_views:
            self._device_may_be_written()
        go.SimSave(self._h(), os.fspath(path))

    def close(self):
        if self._handle is not None:
            h, self._handle = self._handle, None
            if self._field is not None and not self._field.released:
                self._field.release()
            go.ReleaseSimulation(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        if self._handle is None:
            return "<Simulation (closed)>"
        d = self.describe()
        prec = "" if d.get("precision", "float64") == "float64" else f", precision={d['precision']}"
        return (
            f"<Simulation {self.theory.name!r} on {self.lattice!r}, backend={d['backend']}{prec}, "
            f"step={d.get('step', 0)}>"
        )


class _EvolveRun:
    """An evolution started in Go, advanced in ~50 ms chunks; after each chunk its new
    history rows and snapshots are taken."""

    def __init__(self, sim, method, out, callback, progress=None, adaptive=False):
        from .evolution import _FORMAT, _lattice_info

        self.sim, self.out, self.callback = sim, out, callback
        self.progress, self.bar = progress, None
        self.method, self.adaptive = method, adaptive
        self.rows = 0
        self.history = []  # pyarrow batches
        self.times, self.snaps = [], []
        self.status = {}
        lat = sim.lattice
        self.settings = dict(
            format=_FORMAT,
            lattice=_lattice_info(lat),
            fields=list(sim.theory.fields),
            theory=sim.theory.name,
            # the theory itself, for the snapshots' densities (fg.animate, fg.track)
            spec=sim.theory.spec,
            source=sim.theory.source,
            params=sim.params,
            method=method,
            dt=None,
            columns=None,
        )
        if adaptive:
            ev = json.loads(go.SimDescribe(sim._h())).get("evolution", {})
            self.settings["adaptive"] = {k: ev.get(k) for k in ("rtol", "atol", "dt_max", "dt_min")}

    def _chunk(self):
        sim = self.sim
        h = sim._h()
        call = go.SimAdvanceEvolveStart(h, int(_CHUNK_SECONDS * 1000), _CHUNK_STEPS)
        _interruptible.wait(call)
        status = go.CallResult(call)
        sim._field = None
        self.status = json.loads(status)
        self.settings["dt"] = self.status["dt"]
        if self.bar is not None:
            st = self.status
            self.bar.update(self._bar_position(st) - self.bar.n)
            energy = "nan" if st.get("energy") is None else format(st["energy"], ".10g")
            self.bar.set_postfix(t=format(st["t"], ".6g"), energy=energy, refresh=False)
        if self.callback is not None:
            self.callback(sim, self.status)

    def _bar_position(self, st):
        """Where the progress bar stands: the steps taken, or for adaptive steps
        (whose number is not known ahead) the time evolved."""
        return st["t"] - self.t_start if self.adaptive else st["step"]

    def _take(self):
        """The new history rows and snapshots, paired (a snapshot per record)."""
        h = self.sim._h()
        rows = import_batch(go.SimEvolveHistory(h, self.rows))
        self.rows += rows.num_rows
        if rows.num_rows:
            self.history.append(rows)
        self.settings["columns"] = rows.schema.names
        out = []
        recs = rows.to_pylist()
        k = 0
        while True:
            p = go.SimEvolveSnapshot(h)
            if not p:
                break
            batch = import_batch(p)
            row = recs[k] if k < len(recs) else {}
            k += 1
            out.append((batch, row))
        return out

    def _table(self):
        if self.history:
            return pa.Table.from_batches(self.history)
        return import_table(go.SimEvolveHistory(self.sim._h(), 0))

    def _result(self, path=None):
        from .evolution import Evolution

        return Evolution(
            self.sim.lattice,
            self.sim.theory.fields,
            self.method,
            self.settings["dt"] if self.settings["dt"] is not None else float("nan"),
            self._table(),
            self.times,
            self.snaps,
            path,
            theory=self.sim.theory,
            params=self.sim.params,
            adaptive=self.adaptive,
        )

    def _steps(self):
        """Yields (batch, row) as the run produces them; the first ones are the
        start's record."""
        status = json.loads(go.SimEvolveStatus(self.sim._h()))
        self.settings["dt"] = status["dt"]
        self.t_start = status["t"]
        from ..jupyter.progress import _progress_default, _tqdm_class

        if self.progress or (self.progress is None and _progress_default()):
            if self.adaptive:
                total, unit = status["t_end"] - status["t"], "t"
            else:
                total, unit = status["steps"], "step"
            self.bar = _tqdm_class()(total=total, unit=unit, desc="evolve", leave=True)
        try:
            yield from self._take()
            while True:
                self._chunk()
                yield from self._take()
                if self.status["done"]:
                    return
        finally:
            if self.bar is not None:
                self.bar.close()

    def collect(self):
        from .evolution import _snapshot_array, _Writer

        writer = _Writer(self.out, self.settings) if self.out is not None else None
        shape = self.sim.lattice.shape

        def keep(batch, row):
            self.times.append(float(batch.schema.metadata[b"t"]))
            if writer is not None:
                writer.write(batch, row)
            else:
                self.snaps.append(_snapshot_array(batch, shape))

        try:
            for batch, row in self._steps():
                keep(batch, row)
        except Error as exc:
            # The records the failing chunk took before it stopped (a step size
            # below its floor, a divergence) belong to the history handed out.
            try:
                for batch, row in self._take():
                    keep(batch, row)
            except Error:
                pass
            exc.evolution = self._result(self.out)
            raise
        finally:
            if writer is not None:
                writer.close()
        if writer is not None:
            from .evolution import read_evolution

            ev = read_evolution(self.out)
            ev.theory = self.sim.theory  # the theory itself, not the file's spec and source
            return ev
        return self._result()

    def batches(self):
        from .evolution import _INT_COLUMNS

        for batch, row in self._steps():
            md = dict(batch.schema.metadata or {})
            md.update(
                {k.encode(): (str(int(v)) if k in _INT_COLUMNS else repr(float(v))).encode() for k, v in row.items()}
            )
            yield batch.replace_schema_metadata(md)


def load(path, backend="auto", precision=None) -> Simulation:
    """Resume a simulation written by :meth:`Simulation.save`. ``precision``: None keeps
    the saved storage precision (a float32 run resumes in float32, on the GPU, bit for
    bit); "float64" or "float32" overrides it."""
    if precision not in (None, "float64", "float32"):
        raise ParameterError(f"precision must be None, 'float64' or 'float32', got {precision!r}")
    # LoadSimulation reads the backend and the precision ("": the saved one) of these
    opts = SimulationOptions(backend=backend, precision=precision or "")
    h = go.LoadSimulation(os.fspath(path), opts.json())
    info = json.loads(go.SimDescribe(h))
    theory = _SourceTheory(info["spec"], go.SimSource(h), dict(zip(info["spec"]["params"], info["params"])))
    lat = Lattice._from_info(info)
    return Simulation._from_handle(h, theory, lat, info["precision"])
