"""Retarded-time Liénard–Wiechert fields of particles on cubic-spline worldlines.

Give particle trajectories as an Arrow table (pyarrow, polars, anything with
``__arrow_c_stream__``) with columns ``particle, tau, t, x, y, z, ut, ux, uy, uz``
(proper time tau, 4-position and 4-velocity ``u = d(t, x, y, z)/dtau``, so that
``c^2 ut^2 - |u_s|^2 = c^2``) and schema metadata ``units``, ``c``, ``charge`` and
``mass``; :func:`trajectory_table` builds one from numpy arrays and
:func:`from_lab_time` from lab-time samples with 3-velocities.

:func:`fields` returns a :class:`Cube`: E, B, phi and A (Gaussian units with the
table's c) at every observer and observation time, summed over particles, computed
in Go on C memory and seen by numpy and pyarrow without a copy::

    import fieldgo as fg
    tab = fg.radiation.from_lab_time(t, x, y, z, vx, vy, vz, charge=1.0)
    cube = fg.radiation.fields(tab, observers, times)   # Newton, 2 corrections
    cube.numpy().shape        # (observers, samples, 10)
    cube["Ex"]                # (observers, samples) view
    f, p = fg.radiation.spectrum(cube, "Ex")
"""

from __future__ import annotations

import json
import weakref

import numpy as np
import pyarrow as pa

from . import _interruptible
from ._go import go, import_batch, import_table
from .errors import BackendError, LayoutError, ParameterError, ReleasedError, ShapeError
from .field import _View

__all__ = [
    "fields",
    "trajectory_table",
    "from_lab_time",
    "validate",
    "Cube",
    "DeviceCube",
    "spectrum",
    "harmonic_powers",
    "harmonic_map",
    "COMPONENTS",
]

COMPONENTS = ("Ex", "Ey", "Ez", "Bx", "By", "Bz", "phi", "Ax", "Ay", "Az")
STATE = ("t", "x", "y", "z", "ut", "ux", "uy", "uz")


def _batch(data) -> pa.RecordBatch:
    """One RecordBatch over the data, without a copy when it is one chunk."""
    if isinstance(data, pa.RecordBatch):
        return data
    if isinstance(data, pa.Table):
        tab = data
    elif hasattr(data, "to_arrow") and not hasattr(data, "__arrow_c_stream__"):
        tab = data.to_arrow()
    elif hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        tab = pa.table(data)
    elif isinstance(data, dict):
        tab = pa.table(data)
    else:
        raise ShapeError(f"expected an Arrow table or record batch, got {type(data).__name__}")
    if isinstance(tab, pa.RecordBatch):
        return tab
    batches = tab.combine_chunks().to_batches()
    if not batches:
        return pa.RecordBatch.from_pylist([], schema=tab.schema)
    return batches[0]


def _export(batch: pa.RecordBatch) -> int:
    pair = go.NewArrowPair()
    try:
        batch._export_to_c(go.ArrowPairArray(pair), pair)
    except BaseException:
        go.FreeArrowPair(pair)
        raise
    return pair


def _numbers(v, name: str) -> np.ndarray:
    """v as a contiguous float64 array; strings, booleans, complex numbers and
    objects that are not numbers are a LayoutError naming it."""
    a = np.asarray(v)
    if a.dtype.kind == "O":  # e.g. a pandas column of a nullable dtype
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            pass
    if a.dtype.kind not in "fiu":
        raise LayoutError(f"{name} have dtype {a.dtype}: use real numbers (float64, float32 or integers)")
    return np.ascontiguousarray(a, dtype=np.float64)


def _scalar(v, name: str) -> float:
    a = _numbers(v, name)
    if a.size != 1:
        raise ShapeError(f"{name} must be one number, got shape {a.shape}")
    return float(a.ravel()[0])


def _count(v, name: str, lo: int) -> int:
    """An integer option (a Python or numpy integer, or a float with an integral
    value) of at least lo."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{name}={v!r}: want an integer >= {lo}")
    if not np.isfinite(v) or v != int(v) or int(v) < lo:
        raise ParameterError(f"{name}={v!r}: want an integer >= {lo}")
    return int(v)


def _ids(particle, n: int) -> np.ndarray:
    """Particle ids: integers, or floats with integral values; None: all 0."""
    if particle is None:
        return np.zeros(n, dtype=np.int64)
    a = np.asarray(particle).ravel()
    if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
        a = a.astype(np.int64)
    if a.dtype.kind not in "iu":
        what = " with non-integral or non-finite values" if a.dtype.kind == "f" else ""
        raise LayoutError(f"particle ids have dtype {a.dtype}{what}: use integers")
    if a.size != n:
        raise ShapeError(f"particle has {a.size} rows, the other columns {n}")
    return np.ascontiguousarray(a, dtype=np.int64)


def _finite(v, name: str) -> np.ndarray:
    """_numbers(v), refusing NaN and infinities by name (JSON cannot carry them)."""
    a = _numbers(v, name)
    if not np.all(np.isfinite(a)):
        raise ParameterError(f"{name} must be finite, got {v!r}")
    return a


def _per_particle(v, name: str) -> str:
    """A metadata value that is one number or one per particle, as Go reads it."""
    a = np.atleast_1d(_finite(v, name))
    return repr(float(a[0])) if a.size == 1 else json.dumps(a.tolist())


def _metadata(units, c, charge, mass) -> dict:
    return {
        "units": str(units),
        "c": repr(_scalar(c, "c")),
        "charge": _per_particle(charge, "charges"),
        "mass": _per_particle(mass, "masses"),
    }


def trajectory_table(
    tau,
    t,
    x,
    y,
    z,
    ut,
    ux,
    uy,
    uz,
    *,
    particle=None,
    charge=1.0,
    mass=1.0,
    c=1.0,
    units="gaussian",
    validate_: bool = True,
    tolerance: float = 1e-6,
) -> pa.Table:
    """A trajectory table from arrays of equal length (one row per sample, rows of a
    particle contiguous and in increasing tau). ``particle`` defaults to 0 for every
    row; ``charge`` and ``mass`` are one number or one per particle. Validated in Go
    (sorted, finite, >= 4 samples per particle, u.u = c^2 within ``tolerance``):
    problems raise :class:`fieldgo.TrajectoryError`."""
    cols = [_numbers(a, name).ravel() for a, name in zip((tau, t, x, y, z, ut, ux, uy, uz), ("tau", *STATE))]
    n = cols[0].size
    if any(a.size != n for a in cols):
        raise ShapeError(f"trajectory columns have different lengths: {[a.size for a in cols]}")
    pid = _ids(particle, n)
    names = ["particle", "tau", *STATE]
    tab = pa.table(
        [pa.array(pid)] + [pa.array(a) for a in cols], names=names, metadata=_metadata(units, c, charge, mass)
    )
    if validate_:
        validate(tab, tolerance=tolerance)
    return tab


def from_lab_time(t, x, y, z, vx, vy, vz, *, particle=None, charge=1.0, mass=1.0, c=1.0, units="gaussian") -> pa.Table:
    """Convert samples in lab time with 3-velocities into a trajectory table:
    u = gamma (1, v) and tau = integral of dt/gamma from each particle's first sample,
    integrated in Go to fourth order in the sample spacing. Speeds must stay below c."""
    names = ("t", "x", "y", "z", "vx", "vy", "vz")
    cols = [_numbers(a, name).ravel() for a, name in zip((t, x, y, z, vx, vy, vz), names)]
    n = cols[0].size
    if any(a.size != n for a in cols):
        raise ShapeError(f"lab-time columns have different lengths: {[a.size for a in cols]}")
    pid = _ids(particle, n)
    batch = pa.record_batch([pa.array(pid)] + [pa.array(a) for a in cols], names=["particle", *names])
    enc = lambda v, name: json.dumps(_finite(v, name).tolist())  # noqa: E731
    c = _scalar(c, "c")
    pair = _export(batch)
    try:
        out = go.TrajectoryFromLabTime(pair, str(units), c, enc(charge, "charges"), enc(mass, "masses"))
    finally:
        go.FreeArrowPair(pair)
    return import_table(out)


def validate(trajectories, tolerance: float = 1e-6) -> dict:
    """Validate a trajectory table in Go; returns its description (particles, ids,
    rows, charge, mass, c, units, tau range per particle)."""
    pair = _export(_batch(trajectories))
    try:
        return json.loads(go.TrajectoryInfo(pair, float(tolerance)))
    finally:
        go.FreeArrowPair(pair)


class Cube:
    """Fields at observers x samples, in C memory shared with Arrow and numpy.

    ``to_arrow()`` is a RecordBatch with one float64 column per component (rows
    observer-major: row o*S + s); ``numpy()`` is the (observers, samples, components)
    view of the same bytes; ``cube["Ex"]`` one component as (observers, samples).
    NaN marks samples whose retarded time falls outside a particle's trajectory."""

    def __init__(self, batch: pa.RecordBatch, observers: int, samples: int, times: np.ndarray):
        self._batch = batch
        self.observers, self.samples = observers, samples
        self.columns = tuple(batch.schema.names)
        self.times = times
        self.metadata = {k.decode(): v.decode() for k, v in (batch.schema.metadata or {}).items()}

    def to_arrow(self) -> pa.RecordBatch:
        return self._batch

    def __arrow_c_array__(self, requested_schema=None):
        return self._batch.__arrow_c_array__(requested_schema)

    def _addr(self, k: int) -> int:
        col = self._batch.column(k)
        return col.buffers()[1].address + 8 * col.offset

    def _index(self, name) -> int:
        if name not in self.columns:
            hint = ": call fields(..., retarded=True) for the retarded times" if str(name).startswith("t_ret_") else ""
            raise ParameterError(f"the cube has no component {name!r} (it has {', '.join(self.columns)}){hint}")
        return self.columns.index(name)

    def numpy(self, components=COMPONENTS) -> np.ndarray:
        """(observers, samples, len(components)) view without a copy."""
        idx = [self._index(c) for c in components]
        n = self.observers * self.samples
        step = idx[1] - idx[0] if len(idx) > 1 else 1
        if any(b - a != step for a, b in zip(idx, idx[1:])) or step <= 0:
            raise ShapeError("components must be consecutive columns to form one view")
        stride = (self._addr(idx[1]) - self._addr(idx[0])) if len(idx) > 1 else 8 * n
        view = _View(
            self._batch, self._addr(idx[0]), (self.observers, self.samples, len(idx)), (self.samples * 8, 8, stride)
        )
        return np.asarray(view)

    def __getitem__(self, name: str) -> np.ndarray:
        k = self._index(name)
        return np.asarray(_View(self._batch, self._addr(k), (self.observers, self.samples), (self.samples * 8, 8)))

    @property
    def E(self) -> np.ndarray:
        return self.numpy(("Ex", "Ey", "Ez"))

    @property
    def B(self) -> np.ndarray:
        return self.numpy(("Bx", "By", "Bz"))

    def retarded_time(self, particle: int = 0) -> np.ndarray:
        """The retarded lab time t(tau_ret) of a particle (fields(..., retarded=True)):
        ``particle`` counts the table's particles in their order (0 for the first
        listed), whatever their ids."""
        have = [c for c in self.columns if c.startswith("t_ret_")]
        if have and f"t_ret_{particle}" not in self.columns:
            raise ParameterError(
                f"particle={particle!r}: the cube has the retarded times of particles 0 .. "
                f"{len(have) - 1}, counted in the table's order (not by id)"
            )
        return self[f"t_ret_{particle}"]

    def __repr__(self):
        md = self.metadata
        return f"Cube({self.observers} observers x {self.samples} samples, {md.get('method')}, {md.get('precision')})"


class DeviceCube:
    """A cube left in GPU memory (``fields(..., on_device=True)``) for a consumer
    there, with no copy to the host: ``__cuda_array_interface__`` describes it as a
    float64 array (components, observers, samples), the components in ``columns``
    order (``cupy.asarray(cube)``, ``torch.as_tensor(cube, device="cuda")``,
    ``numba.cuda.as_cuda_array(cube)``); ``cube["Ex"]`` is one component
    (observers, samples). Its memory is the cube's own until ``release()`` or the
    object is collected; views taken from it must not outlive it."""

    def __init__(self, info: dict, times: np.ndarray):
        self.columns = tuple(info["columns"])
        self.observers, self.samples = info["observers"], info["samples"]
        self.ptr, self.nbytes, self.device_id = info["ptr"], info["bytes"], info["device"]
        self.times = times
        self._handle = info["handle"]
        self._finalizer = weakref.finalize(self, _release_device_cube, self._handle)

    @property
    def released(self) -> bool:
        return not self._finalizer.alive

    def release(self) -> None:
        """Free the device memory now (otherwise when the object is collected)."""
        self._finalizer()

    def _live(self):
        if self.released:
            raise ReleasedError("the device cube has been released")

    @property
    def __cuda_array_interface__(self):
        self._live()
        return _cuda_array((len(self.columns), self.observers, self.samples), self.ptr)

    def __getitem__(self, name: str) -> _DeviceColumn:
        self._live()
        if name not in self.columns:
            raise ParameterError(f"the cube has no component {name!r} (it has {', '.join(self.columns)})")
        k = self.columns.index(name)
        return _DeviceColumn(self, self.ptr + 8 * k * self.observers * self.samples)

    def __repr__(self):
        state = "released" if self.released else f"at 0x{self.ptr:x} on cuda:{self.device_id}"
        return f"DeviceCube({self.observers} observers x {self.samples} samples x {len(self.columns)} columns, {state})"


class _DeviceColumn:
    """One component of a DeviceCube, (observers, samples); it keeps the cube alive."""

    def __init__(self, cube: DeviceCube, ptr: int):
        self._cube, self._ptr = cube, ptr

    @property
    def __cuda_array_interface__(self):
        self._cube._live()
        return _cuda_array((self._cube.observers, self._cube.samples), self._ptr)


def _cuda_array(shape, ptr):
    """__cuda_array_interface__ of float64 device memory, C order, settled (no stream)."""
    return {"shape": shape, "typestr": "<f8", "data": (ptr, False), "version": 3, "strides": None, "stream": None}


def _release_device_cube(handle: int) -> None:
    try:
        go.ReleaseRadiationCube(handle)
    except Exception:  # noqa: BLE001  (interpreter shutdown: the runtime may be gone)
        pass


def _observers(observers) -> pa.RecordBatch:
    if isinstance(observers, (pa.Table, pa.RecordBatch)) or hasattr(observers, "__arrow_c_stream__"):
        b = _batch(observers)
        missing = [n for n in ("x", "y", "z") if n not in b.schema.names]
        if missing:
            raise ShapeError(
                f"an observer table needs columns x, y, z; it lacks {', '.join(missing)} "
                f"(it has {', '.join(b.schema.names) or 'none'})"
            )
        return pa.record_batch([b.column(n).cast(pa.float64()) for n in ("x", "y", "z")], names=["x", "y", "z"])
    a = _numbers(observers, "observers")
    if a.ndim == 1 and a.size == 3:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != 3:
        raise ShapeError(f"observers must be (n, 3) positions, got shape {a.shape}")
    return pa.record_batch([pa.array(np.ascontiguousarray(a[:, k])) for k in range(3)], names=["x", "y", "z"])


def fields(
    trajectories,
    observers,
    times,
    method: str = "newton",
    n_iters: int = 2,
    n_substeps: int = 4,
    precision: str = "float64",
    coef_reuse: bool = True,
    backend: str = "auto",
    *,
    search: str = "warm",
    retarded: bool = False,
    threads: int = 0,
    tolerance: float = 1e-6,
    segment: int = 0,
    charge=None,
    c=None,
    on_device: bool = False,
) -> Cube | DeviceCube:
    """Liénard–Wiechert fields and potentials at every observer and time.

    ``observers``: (n, 3) positions (or a table with x, y, z); ``times``: (S,) times
    shared by all observers or (n, S), one row per observer. ``method`` "newton"
    (``n_iters`` corrections per sample from the previous sample's root; with 2 or
    more, every sample's retarded time is within 2^-16 of the local knot interval
    of the root: a sample whose last correction is over 2^-20 of a knot interval
    is kept only if the error that correction leaves, bounded from its size and
    the light cone's local curvature, is below that, and is solved from scratch
    otherwise, as when the samples miss a Doppler-compressed pulse. The bound
    assumes the curvature changes by less than 2x within the last correction,
    which splines that resolve the worldline meet by far; measured at beta = 0.99
    with 4096 knots and 2048 samples per period the worst sample is at 1/8 of it.
    Where the samples resolve the signal two corrections leave far less, ~1e-17 of
    a knot interval for the median sample of a synchrotron orbit; give
    ``segment=1`` to solve every sample from scratch, for roots exact to
    rounding) or "rk4" (``n_substeps`` RK4 steps of dtau/dt_obs per sample
    interval, no error control: on a circular orbit with 4096 knots and 2048
    samples per period and the default 4 substeps, the worst retarded time is off
    by 1e-7 of a knot interval at beta = 0.9 (fields 5e-10 of the peak) but by
    0.04 of one at beta = 0.99 (6e-4 of the peak) where the pulse is sharp; raise
    ``n_substeps`` or use Newton there). ``precision``
    "float64" or "float32" (shifted time, in power-of-two units of its own, so any
    units work; error 1e-5 to 5e-4 of the peak at gamma = 5). The splines are
    natural (zero second derivative at a trajectory's ends): within a few knots of
    its ends their error falls as h^2, not h^4, so let trajectories run a few knots
    past the retarded times of interest.
    ``coef_reuse`` keeps the current interval's coefficients while tau stays inside;
    ``search="cold"`` is the naive kernel (binary search every evaluation). Results
    are bit-identical whatever the search or reuse. ``segment``: samples per walk;
    each walk solves its first sample from scratch (bracketing and Newton to
    convergence) and the rest by ``method`` from the previous sample, and walks run
    in parallel. 0 (default): one walk per observer with 65536 observers or more,
    else segments of at least 32 samples, enough walks to fill a GPU; ``segment``
    >= the number of samples: one walk. A segment's first sample is the converged
    root where one long walk has ``method``'s error, so the cube depends on
    ``segment`` (and, by default, on how many observers share the call) at that
    level; for a given ``segment`` it is the same on the CPU and the GPU.
    ``backend``: "auto" (a usable NVIDIA GPU, else the CPU), "cpu" or "cuda".
    ``charge`` (one or one per particle) and ``c`` override the table's metadata
    (polars drops schema metadata; without any, charge and c are 1).
    ``on_device=True`` (a GPU only) leaves the cube in GPU memory and returns a
    :class:`DeviceCube` (``__cuda_array_interface__``) instead of copying it to
    the host: the call then costs about the kernel alone.
    Ctrl-C cancels the computation."""
    if backend not in ("auto", "cpu", "cuda"):
        raise BackendError(f"unknown backend {backend!r}: use 'auto', 'cpu' or 'cuda'")
    if method not in ("newton", "rk4"):
        raise ParameterError(f"method={method!r}: use 'newton' or 'rk4'")
    if precision not in ("float64", "float32"):
        raise ParameterError(f"precision={precision!r}: use 'float64' or 'float32'")
    if not np.isfinite(tolerance):  # JSON carries no NaN or inf; the range is core/trajectory's check
        raise ParameterError(f"tolerance={tolerance!r}: want a finite number >= 0 (0: the default 1e-6)")
    obs = _observers(observers)
    o = obs.num_rows
    ts = _numbers(times, "times")
    if ts.ndim == 1:
        s = ts.size
    elif ts.ndim == 2 and ts.shape[0] == o:
        s = ts.shape[1]
    else:
        raise ShapeError(f"times must be (samples,) or (observers={o}, samples), got shape {ts.shape}")
    tbatch = pa.record_batch([pa.array(ts.ravel())], names=["t"])
    opts = json.dumps(
        {
            "method": method,
            "n_iters": _count(n_iters, "n_iters", 0),
            "n_substeps": _count(n_substeps, "n_substeps", 1),
            "search": search,
            "coef_reuse": bool(coef_reuse),
            "precision": precision,
            "retarded": bool(retarded),
            "threads": _count(threads, "threads", 0),
            "tolerance": float(tolerance),
            "segment": _count(segment, "segment", 0),
            "backend": backend,
        }
    )
    traj = _batch(trajectories)
    if charge is not None or c is not None:
        md = dict(traj.schema.metadata or {})
        if charge is not None:
            md[b"charge"] = _per_particle(charge, "charges").encode()
        if c is not None:
            md[b"c"] = repr(_scalar(c, "c")).encode()
        traj = traj.replace_schema_metadata(md)
    if on_device and backend == "cpu":
        raise BackendError("on_device=True leaves the cube in GPU memory: use backend='cuda' (or 'auto' with a GPU)")
    pairs = [_export(traj), _export(obs), _export(tbatch)]
    job = go.RadiationNewJob()
    call = go.RadiationFieldsOnDevice if on_device else go.RadiationFields
    try:
        # The pairs are freed only after the call has returned, Ctrl-C or not.
        out = _interruptible.call(
            lambda: call(job, pairs[0], pairs[1], pairs[2], s, opts),
            lambda: go.RadiationCancel(job),
            "fieldgo-radiation",
        )
    finally:
        for p in pairs:
            go.FreeArrowPair(p)
        go.RadiationReleaseJob(job)
    if on_device:
        return DeviceCube(json.loads(out), ts)
    return Cube(import_batch(out), o, s, ts)


# --- spectra and harmonic maps (numpy FFT) ---


def _spacing(cube: Cube) -> float:
    """The sample spacing shared by every observer's times (uniform, at least two)."""
    t = cube.times.reshape(-1, cube.samples)
    if cube.samples < 2:
        raise ShapeError(f"a spectrum needs at least 2 samples, the cube has {cube.samples}")
    d = np.diff(t, axis=-1)
    dt = float(t[0, -1] - t[0, 0]) / (cube.samples - 1)
    # Times far from 0 (an observer at 1e7) carry their rounding into the spacings.
    slack = 16 * np.finfo(np.float64).eps * float(np.abs(t).max())
    if not (np.isfinite(dt) and dt > 0 and np.allclose(d, dt, rtol=1e-9, atol=slack)):
        raise ShapeError("spectra need uniformly spaced, increasing times with the same spacing for every observer")
    return dt


def spectrum(cube: Cube, component: str = "Ex", *, window=None):
    """One-sided power spectrum of a component along each observer's samples
    (uniform times). Returns (frequencies, power) with power shaped
    (observers, samples//2 + 1), normalised so that sum(power) = mean(x^2) (Parseval)."""
    x = np.asarray(cube[component])
    dt = _spacing(cube)
    if window is not None:
        w = np.asarray(window, dtype=float)
        if w.shape != (cube.samples,):
            raise ShapeError(f"window has shape {w.shape}, want ({cube.samples},): one weight per sample")
        x = x * w
    n = x.shape[-1]
    X = np.fft.rfft(x, axis=-1) / n
    p = np.abs(X) ** 2
    p[..., 1 : (n + 1) // 2] *= 2  # both signs of frequency, except 0 and Nyquist
    return np.fft.rfftfreq(n, dt), p


def harmonic_powers(cube: Cube, period: float, harmonics=range(1, 11), components=("Ex", "Ey", "Ez")):
    """Time-averaged power of each harmonic of the received ``period``,
    sum over ``components`` of 2|X_n|^2, shaped (observers, len(harmonics)). The
    samples must span a whole number of periods, uniformly."""
    if not (isinstance(period, (int, float, np.integer, np.floating)) and np.isfinite(period) and period > 0):
        raise ParameterError(f"period={period!r}: want a finite number > 0")
    harmonics = list(harmonics)
    if not all(isinstance(h, (int, np.integer)) and h >= 1 for h in harmonics):
        raise ParameterError(f"harmonics={harmonics!r}: want integers >= 1")
    n = cube.samples
    span = _spacing(cube) * n
    m = span / period
    if abs(m - round(m)) > 1e-6 * max(1.0, m):
        raise ShapeError(f"the samples span {m:.6g} periods: use a whole number for clean harmonics")
    m = int(round(m))
    out = np.zeros((cube.observers, len(harmonics)))
    for comp in components:
        X = np.fft.rfft(np.asarray(cube[comp]), axis=-1) / n
        for j, h in enumerate(harmonics):
            if h * m >= X.shape[-1]:
                raise ShapeError(f"harmonic {h} is above the Nyquist frequency of the samples")
            out[:, j] += 2 * np.abs(X[:, h * m]) ** 2
    return out


def harmonic_map(
    cube: Cube, period: float, harmonic: int, shape=None, components=("Ex", "Ey", "Ez"), distance=None, c=None
):
    """Power of one harmonic at every observer, reshaped to ``shape`` (for observers
    on a grid of angles or positions). With ``distance`` (array or number) it is
    scaled to dI/dOmega = c R^2 <E_n^2> / (4 pi) (Gaussian units; ``c`` defaults to
    the speed of light the cube was computed with)."""
    p = harmonic_powers(cube, period, [harmonic], components)[:, 0]
    if distance is not None:
        c = float(cube.metadata.get("c", 1.0)) if c is None else _scalar(c, "c")
        p = p * c * np.asarray(distance, dtype=float) ** 2 / (4 * np.pi)
    if shape is None:
        return p
    if int(np.prod(shape)) != p.size:
        raise ShapeError(
            f"shape {tuple(int(k) for k in np.atleast_1d(shape))} does not hold the cube's {p.size} observers"
        )
    return p.reshape(shape)
