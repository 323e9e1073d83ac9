"""The result of :func:`fieldgo.radiation.fields`: a cube observers x times x components
in C memory (:class:`Cube`), or left in GPU memory (:class:`DeviceCube`)."""

from __future__ import annotations

import functools
import weakref

import numpy as np
import pyarrow as pa

from ..errors import ParameterError, ReleasedError, ShapeError
from ..runtime.bridge import go
from ..runtime.field import _View

COMPONENTS = ("Ex", "Ey", "Ez", "Bx", "By", "Bz", "phi", "Ax", "Ay", "Az")


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

    @functools.cached_property
    def metadata(self) -> dict:
        """The cube's schema metadata (observers, samples, method, ...), decoded when
        first read."""
        return {k.decode(): v.decode() for k, v in (self._batch.schema.metadata or {}).items()}

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
