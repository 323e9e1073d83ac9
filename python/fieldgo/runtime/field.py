"""Fields: components over a lattice in C memory, shared with numpy and Arrow.

A field made by Go lives in one block of C memory, component after component,
x fastest. ``field.numpy()`` is a writable (ncomp, ny, nx) view of that memory and
``field.to_arrow()`` a pyarrow RecordBatch over the same bytes: nothing is copied,
and writes on either side are seen by the other. Views and exports hold their own
reference, so they stay valid after ``field.release()``.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pyarrow as pa

from ..errors import FormatError, LayoutError, ReleasedError, ShapeError
from .bridge import go, import_batch
from .lattice import Lattice


class _View:
    """Exposes a block of memory to numpy while keeping its owner alive."""

    def __init__(self, owner, address, shape, strides):
        self._owner = owner  # the pyarrow batch whose release drops Go's reference
        self.__array_interface__ = {
            "version": 3,
            "typestr": "<f8",
            "data": (address, False),
            "shape": shape,
            "strides": strides,
        }


def _import_batch(batch: pa.RecordBatch, lattice: Lattice | None) -> int:
    """Hand a RecordBatch to Go through the Arrow C Data Interface (no copy)."""
    pair = go.NewArrowPair()
    try:
        batch._export_to_c(go.ArrowPairArray(pair), pair)
        return go.ImportField(pair, lattice._json() if lattice is not None else "")
    finally:
        go.FreeArrowPair(pair)


class Field:
    """C components of float64 over a :class:`Lattice` (structure of arrays).

    ``Field(lattice, ["n1", "n2", "n3"])`` allocates a zeroed field.
    """

    def __init__(self, lattice: Lattice, components=("phi",)):
        if not isinstance(lattice, Lattice):
            raise ShapeError(f"a field needs an fg.Lattice, got {type(lattice).__name__}")
        names = [components] if isinstance(components, str) else list(components)
        if not all(isinstance(n, str) for n in names):
            raise ShapeError(f"component names must be strings, got {names!r}")
        if lattice.planar:
            h = go.NewField(
                lattice.nx, lattice.ny, lattice.hx, lattice.hy, *lattice.origin, lattice.boundary, json.dumps(names)
            )
        else:
            h = go.NewFieldOn(lattice._json(), json.dumps(names))
        self._init(h)

    def _init(self, handle: int):
        self._handle: int | None = handle
        self._lock = threading.Lock()
        self._batch = None
        info = json.loads(go.FieldInfo(handle))
        self._lattice = Lattice._from_info(info)
        self._names = tuple(info["components"])
        self._stride = info["stride"]

    @classmethod
    def _from_handle(cls, handle: int) -> Field:
        f = cls.__new__(cls)
        f._init(handle)
        return f

    # --- identity ---
    @property
    def lattice(self) -> Lattice:
        return self._lattice

    @property
    def names(self) -> tuple:
        return self._names

    @property
    def ncomp(self) -> int:
        return len(self._names)

    @property
    def shape(self) -> tuple:
        """(ncomp,) + the lattice's shape: (ncomp, ny, nx), (ncomp, nz, ny, nx) or (ncomp, nx)."""
        return (self.ncomp, *self._lattice.shape)

    def _h(self) -> int:
        if self._handle is None:
            raise ReleasedError("the field has been released")
        return self._handle

    def _index(self, component) -> int:
        if isinstance(component, str):
            try:
                return self._names.index(component)
            except ValueError:
                raise ShapeError(f"no component {component!r}; the field has {list(self._names)}") from None
        return int(component)

    # --- zero-copy views ---
    def to_arrow(self) -> pa.RecordBatch:
        """The field as a pyarrow RecordBatch sharing its memory."""
        with self._lock:
            if self._batch is None:
                self._batch = import_batch(go.ExportField(self._h()))
            elif self._handle is None:
                raise ReleasedError("the field has been released")
            return self._batch

    def numpy(self) -> np.ndarray:
        """A writable numpy view shaped (ncomp, ny, nx) ((ncomp, nz, ny, nx) in 3D,
        (ncomp, nx) on a line); no copy."""
        batch = self.to_arrow()
        if self._stride == 0:
            raise LayoutError(
                "the components of this field are not evenly spaced in memory, so they "
                "cannot form one numpy array: use field.copy() or field[name]"
            )
        addr = batch.column(0).buffers()[1].address
        shape = self._lattice.shape
        view = _View(batch, addr, (self.ncomp, *shape), (self._stride * 8, *_strides(shape)))
        return np.asarray(view)

    def __getitem__(self, component) -> np.ndarray:
        """One component as a writable (ny, nx) view, by name or index."""
        c = self._index(component)
        batch = self.to_arrow()
        if not 0 <= c < self.ncomp:
            raise ShapeError(f"component {c} out of range: the field has {self.ncomp}")
        shape = self._lattice.shape
        addr = batch.column(c).buffers()[1].address + 8 * batch.column(c).offset
        return np.asarray(_View(batch, addr, shape, _strides(shape)))

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if copy:
            a = a.copy()
        return a if dtype is None else a.astype(dtype, copy=bool(copy))

    def __arrow_c_schema__(self):
        return self.to_arrow().schema.__arrow_c_schema__()

    def __arrow_c_array__(self, requested_schema=None):
        return self.to_arrow().__arrow_c_array__(requested_schema)

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        """The Arrow C Device Data Interface: the field's memory, on the CPU device
        (a CUDA simulation's ``sim.field`` is its host copy)."""
        return self.to_arrow().__arrow_c_device_array__(requested_schema, **kwargs)

    def __arrow_c_stream__(self, requested_schema=None):
        batch = self.to_arrow()
        return pa.RecordBatchReader.from_batches(batch.schema, [batch]).__arrow_c_stream__(requested_schema)

    # --- Go-side access (used by tests and by the runtime) ---
    def sum(self, component=0) -> float:
        """Compensated sum of one component over all sites, computed in Go."""
        return go.FieldSum(self._h(), self._index(component))

    def get(self, component, i: int, j: int) -> float:
        """Value at site (i, j), read by Go."""
        return go.FieldGet(self._h(), self._index(component), i, j)

    def set(self, component, i: int, j: int, value: float) -> None:
        """Write the value at site (i, j), from Go."""
        go.FieldSet(self._h(), self._index(component), i, j, float(value))

    def copy(self) -> Field:
        """A new Go-owned field with the same values."""
        out = Field(self._lattice, self._names)
        out.numpy()[...] = self.numpy() if self._stride else np.stack([self[c] for c in range(self.ncomp)])
        return out

    # --- lifetime ---
    def release(self) -> None:
        """Drop this object's hold on the memory. Views already made stay valid;
        using the field afterwards, or releasing it twice, raises ReleasedError."""
        with self._lock:
            if self._handle is None:
                raise ReleasedError("the field has already been released")
            h, self._handle, self._batch = self._handle, None, None
        go.ReleaseField(h)

    @property
    def released(self) -> bool:
        return self._handle is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._handle is not None:
            self.release()

    def __del__(self):
        h = getattr(self, "_handle", None)
        if h is not None:
            try:
                go.ReleaseField(h)
            except Exception:
                pass

    def __repr__(self):
        if self._handle is None:
            return "<Field (released)>"
        return f"<Field {list(self._names)} on {self._lattice!r}>"

    # --- construction from other memory ---
    @classmethod
    def from_numpy(cls, array, lattice: Lattice, names=None, *, copy: bool = False) -> Field:
        """A field over a numpy array shaped (ncomp, ny, nx) (or (ny, nx) for one
        component), sharing its memory. The array must be C-contiguous, writable
        float64; otherwise pass ``copy=True``."""
        if not isinstance(lattice, Lattice):
            raise ShapeError(f"from_numpy needs an fg.Lattice, got {type(lattice).__name__}")
        if not isinstance(array, np.ndarray):
            raise LayoutError(f"from_numpy needs a numpy array, got {type(array).__name__} (use np.asarray)")
        a = array[None] if array.ndim == lattice.dims else array
        if a.ndim != lattice.dims + 1 or a.shape[1:] != lattice.shape:
            axes = ", ".join("n" + "xyz"[k] for k in reversed(range(lattice.dims)))
            raise ShapeError(
                f"array of shape {array.shape} does not fit the lattice: want (ncomp, "
                f"{', '.join(map(str, lattice.shape))}) = (ncomp, {axes})"
            )
        if copy:
            a = np.array(a, dtype=np.float64, order="C", copy=True)
        elif a.dtype != np.float64:
            raise LayoutError(
                f"array has dtype {a.dtype}, fields are float64: use array.astype(np.float64) or pass copy=True"
            )
        elif not a.flags.c_contiguous:
            raise LayoutError(
                "array is not C-contiguous, so its memory cannot be shared: use "
                "np.ascontiguousarray(array) or pass copy=True"
            )
        elif not a.flags.writeable:
            raise LayoutError("array is read-only and fields are writable: pass copy=True")
        if names is None:
            names = [f"phi{c}" for c in range(a.shape[0])] if a.shape[0] > 1 else ["phi"]
        names = list(names)
        if len(names) != a.shape[0]:
            raise ShapeError(f"{len(names)} names for {a.shape[0]} components")
        n = lattice.sites
        cols = [
            pa.Array.from_buffers(pa.float64(), n, [None, pa.py_buffer(a[c].reshape(n))]) for c in range(a.shape[0])
        ]
        batch = pa.RecordBatch.from_arrays(cols, names=names)
        return cls._from_handle(_import_batch(batch, lattice))

    @classmethod
    def from_arrow(cls, obj, lattice: Lattice | None = None, *, copy: bool = False) -> Field:
        """A field over Arrow data (a pyarrow RecordBatch or Table, or anything with
        ``__arrow_c_array__``/``__arrow_c_stream__`` such as a polars DataFrame),
        sharing its memory. The lattice comes from the schema metadata fieldgo
        writes unless given. Columns must be float64 without nulls, in one chunk;
        otherwise pass ``copy=True``."""
        if isinstance(obj, Field):
            obj = obj.to_arrow()
        try:
            if isinstance(obj, pa.RecordBatch):
                batch = obj
            elif (
                isinstance(obj, pa.Table)
                or hasattr(obj, "__arrow_c_stream__")
                and not hasattr(obj, "__arrow_c_array__")
            ):
                table = obj if isinstance(obj, pa.Table) else pa.table(obj)
                if copy:
                    table = table.combine_chunks()
                batches = table.to_batches()
                if len(batches) != 1:
                    raise LayoutError(
                        f"the table has {len(batches)} chunks; a field is one block per "
                        "component: call table.combine_chunks() or pass copy=True"
                    )
                batch = batches[0]
            elif hasattr(obj, "__arrow_c_array__"):
                batch = pa.record_batch(obj)
            else:
                raise FormatError(f"cannot read Arrow data from a {type(obj).__name__}")
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise FormatError(f"not a table of columns: {exc}") from None
        if copy:
            arrays = []
            for col in batch.columns:
                if col.null_count:
                    raise LayoutError("a column has nulls: a field has a value at every site")
                arrays.append(
                    pa.array(
                        np.array(col.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64, copy=True)
                    )
                )
            batch = pa.RecordBatch.from_arrays(
                arrays,
                schema=pa.schema(
                    [pa.field(f.name, pa.float64()) for f in batch.schema], metadata=batch.schema.metadata
                ),
            )
        return cls._from_handle(_import_batch(batch, lattice))


def _strides(shape) -> tuple:
    """Byte strides of a C-contiguous float64 array of shape (x fastest)."""
    out, step = [], 8
    for n in reversed(shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


def allocated_bytes() -> int:
    """Bytes of C memory held by fields and their exports (0 when all are released)."""
    return go.AllocatedBytes()
