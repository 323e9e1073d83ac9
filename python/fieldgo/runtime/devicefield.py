"""The working field where the backend keeps it, without a copy.

``sim.device_field()`` returns a :class:`DeviceField`. On the CUDA backend it is
the simulation's device memory (float64, or float32 with ``precision="float32"``),
offered through the Arrow C Device Data Interface (``__arrow_c_device_array__``,
device type CUDA) and the CUDA Array Interface (``__cuda_array_interface__``:
CuPy, Numba, PyTorch take it as is). On the CPU backend the working field is the
host field, and the device array is its CPU one.

What it aliases: the state as of the last ``minimize`` (or ``set_field``); the
device work is finished before the view is made, so a consumer on any stream
reads a settled state. The next ``minimize`` overwrites it in place, writes
through the view are seen by the next ``minimize``, and it is invalid once the
simulation is closed (the view keeps the Python object alive, not its memory).

The Arrow structures are built here with ctypes (the bridge passes no
callbacks): a struct array of one column per component, its release callbacks
keeping every buffer they point to alive until the consumer releases them.
"""

from __future__ import annotations

import ctypes
import itertools
import json
import math
import threading

from ..errors import ShapeError
from .bridge import go

ARROW_DEVICE_CPU = 1
ARROW_DEVICE_CUDA = 2
_FORMAT = {"float64": b"g", "float32": b"f"}
_TYPESTR = {"float64": "<f8", "float32": "<f4"}
_ITEMSIZE = {"float64": 8, "float32": 4}


class _Schema(ctypes.Structure):
    pass


_Schema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(_Schema))),
    ("dictionary", ctypes.POINTER(_Schema)),
    ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p),
]


class _Array(ctypes.Structure):
    pass


_Array._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(_Array))),
    ("dictionary", ctypes.POINTER(_Array)),
    ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p),
]


class _DeviceArray(ctypes.Structure):
    _fields_ = [
        ("array", _Array),
        ("device_id", ctypes.c_int64),
        ("device_type", ctypes.c_int32),
        ("sync_event", ctypes.c_void_p),
        ("reserved", ctypes.c_int64 * 3),
    ]


# What each exported structure points to, by the token in its private_data:
# released (dropped) by the release callback, wherever the consumer moved it.
_live: dict[int, list] = {}
_tokens = itertools.count(1)
_lock = threading.Lock()


def _keep(objs: list) -> int:
    with _lock:
        t = next(_tokens)
        _live[t] = objs
        return t


def _drop(token) -> None:
    with _lock:
        _live.pop(token or 0, None)


_RELEASE_SCHEMA = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Schema))
_RELEASE_ARRAY = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Array))


def _releaser(ftype):
    """The release callback of an ArrowSchema or ArrowArray (the same protocol):
    release the children still held, drop what the structure points to, mark it
    released."""

    @ftype
    def release(p):
        x = p.contents
        for i in range(x.n_children):
            if x.children[i].contents.release:
                ctypes.cast(x.children[i].contents.release, ftype)(x.children[i])
        _drop(x.private_data)
        x.release = None

    return release


_release_schema = _releaser(_RELEASE_SCHEMA)
_release_array = _releaser(_RELEASE_ARRAY)
_RELEASE_SCHEMA_ADDR = ctypes.cast(_release_schema, ctypes.c_void_p).value
_RELEASE_ARRAY_ADDR = ctypes.cast(_release_array, ctypes.c_void_p).value

# PyCapsules: raw pointers in and out (no reference counting on a capsule
# being destroyed), names that live as long as the module.
_NAME_SCHEMA = ctypes.create_string_buffer(b"arrow_schema")
_NAME_ARRAY = ctypes.create_string_buffer(b"arrow_device_array")
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi)
)
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_capsule_mem: dict[int, ctypes.Structure] = {}  # top-level structures, until their capsule dies


@ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
def _destroy_schema_capsule(cap):
    ptr = _capsule_pointer(cap, ctypes.addressof(_NAME_SCHEMA))
    s = _capsule_mem.pop(ptr, None)
    if s is not None and s.release:  # not moved out by a consumer
        ctypes.cast(s.release, _RELEASE_SCHEMA)(ctypes.pointer(s))


@ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
def _destroy_array_capsule(cap):
    ptr = _capsule_pointer(cap, ctypes.addressof(_NAME_ARRAY))
    d = _capsule_mem.pop(ptr, None)
    if d is not None and d.array.release:
        ctypes.cast(d.array.release, _RELEASE_ARRAY)(ctypes.pointer(d.array))


def _capsule(struct, name, destructor):
    ptr = ctypes.addressof(struct)
    _capsule_mem[ptr] = struct
    return _capsule_new(ptr, ctypes.addressof(name), ctypes.cast(destructor, ctypes.c_void_p).value)


def _metadata(md: dict) -> bytes:
    """Arrow C metadata: int32 count, then (int32 length, bytes) per key and value."""
    out = bytearray(len(md).to_bytes(4, "little", signed=True))
    for k, v in md.items():
        for b in (k, v):
            out += len(b).to_bytes(4, "little", signed=True) + b
    return bytes(out)


def _schema(names, dtype, metadata):
    keep = []
    kids = (ctypes.POINTER(_Schema) * len(names))()
    for i, n in enumerate(names):
        nm = n.encode()  # the child struct and its token keep these bytes alive
        c = _Schema(format=_FORMAT[dtype], name=nm, flags=0, n_children=0, release=_RELEASE_SCHEMA_ADDR)
        c.private_data = _keep([nm])
        keep.append(c)
        kids[i] = ctypes.pointer(c)
    md = _metadata(metadata) if metadata else None
    top = _Schema(
        format=b"+s", metadata=md, flags=0, n_children=len(names), children=kids, release=_RELEASE_SCHEMA_ADDR
    )
    top.private_data = _keep([kids, keep, md])
    return top


def _array(ptrs, length, device_type, device_id, owner):
    keep = []
    kids = (ctypes.POINTER(_Array) * len(ptrs))()
    for i, p in enumerate(ptrs):
        bufs = (ctypes.c_void_p * 2)(None, p)  # no validity bitmap: no nulls
        c = _Array(
            length=length, null_count=0, offset=0, n_buffers=2, n_children=0, buffers=bufs, release=_RELEASE_ARRAY_ADDR
        )
        c.private_data = _keep([bufs])
        keep.append(c)
        kids[i] = ctypes.pointer(c)
    top_bufs = (ctypes.c_void_p * 1)(None)
    top = _Array(
        length=length,
        null_count=0,
        offset=0,
        n_buffers=1,
        n_children=len(ptrs),
        buffers=top_bufs,
        children=kids,
        release=_RELEASE_ARRAY_ADDR,
    )
    top.private_data = _keep([kids, keep, top_bufs, owner])
    return _DeviceArray(array=top, device_id=device_id, device_type=device_type, sync_event=None)


class DeviceField:
    """A simulation's working field where its backend keeps it (see the module
    docstring): ``device_type`` ("cuda" or "cpu"), ``ptr``, ``dtype``, ``shape``
    (ncomp, ny, nx) (``(ncomp, nz, ny, nx)`` in 3D, ``(ncomp, nx)`` on a line),
    ``names``; ``__cuda_array_interface__`` on CUDA, ``__arrow_c_device_array__`` and
    ``__arrow_c_schema__`` everywhere."""

    def __init__(self, sim):
        d = json.loads(go.SimDeviceField(sim._h()))
        self._sim = sim  # keeps the Python object alive, not its memory once closed
        host_schema = sim.field.to_arrow().schema
        self.names = tuple(host_schema.names)
        self._metadata = dict(host_schema.metadata or {})  # the lattice, as the host field has it
        self.shape = (d["ncomp"], *sim.lattice.shape)
        self.device_type = d["device_type"]
        if self.device_type == "cuda":
            self.ptr, self.dtype, self.device_id = d["ptr"], d["dtype"], d["device"]
        else:
            host = sim.field.numpy()
            if not host.flags.c_contiguous:
                raise ShapeError("this field's components are not one contiguous block; use sim.field instead")
            self.ptr, self.dtype, self.device_id = host.ctypes.data, "float64", 0
            self._host = host

    def __repr__(self):
        return f"<DeviceField {self.device_type}:{self.device_id} {self.dtype} shape={self.shape} at 0x{self.ptr:x}>"

    @property
    def __cuda_array_interface__(self):
        if self.device_type != "cuda":
            raise AttributeError("the field is in host memory (CPU backend): use sim.field or numpy")
        return {
            "shape": self.shape,
            "typestr": _TYPESTR[self.dtype],
            "data": (self.ptr, False),
            "version": 3,
            "strides": None,
            "stream": None,
        }

    def _columns(self):
        n = math.prod(self.shape[1:])
        return [self.ptr + c * n * _ITEMSIZE[self.dtype] for c in range(self.shape[0])], n

    def __arrow_c_schema__(self):
        return _capsule(_schema(self.names, self.dtype, self._metadata), _NAME_SCHEMA, _destroy_schema_capsule)

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        """(schema capsule, device array capsule): a struct array (record batch) of one
        column per component, one value per site each, in this field's memory."""
        if requested_schema is not None:
            raise NotImplementedError("DeviceField exports its own schema only (requested_schema must be None)")
        ptrs, n = self._columns()
        dev = ARROW_DEVICE_CUDA if self.device_type == "cuda" else ARROW_DEVICE_CPU
        arr = _array(ptrs, n, dev, self.device_id, self)
        return self.__arrow_c_schema__(), _capsule(arr, _NAME_ARRAY, _destroy_array_capsule)
