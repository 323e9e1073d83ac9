"""sim.device_field(): the working field without a copy, through the Arrow C Device
Data Interface (and the CUDA Array Interface on a GPU). The CPU tests run
everywhere; the CUDA ones skip without a usable GPU, saying why."""

import ctypes
import gc

import numpy as np
import pyarrow as pa
import pytest

import fieldgo as fg
from fieldgo.runtime import devicefield

CUDA = fg.devices()["cuda"]
needs_gpu = pytest.mark.skipif(not CUDA["available"], reason=f"no usable GPU: {CUDA.get('reason')}")


def sim_on(backend, precision="float64", grid=(24, 16)):
    s = fg.Simulation(fg.theories.baby_skyrme(), grid=grid, spacing=0.5, backend=backend, precision=precision)
    s.set_field(fg.initial.skyrmion())
    return s


def batch_of(obj):
    schema, array = obj.__arrow_c_device_array__()
    return pa.RecordBatch._import_from_c_device_capsule(schema, array)


def no_exports_alive():
    gc.collect()
    return not devicefield._live and not devicefield._capsule_mem


def test_cpu_device_field_aliases_the_host_field():
    sim = sim_on("cpu")
    d = sim.device_field()
    assert d.device_type == "cpu" and d.dtype == "float64" and d.shape == (3, 16, 24)
    b = batch_of(d)
    host = sim.field.numpy()
    assert b.device_type == pa.DeviceAllocationType.CPU
    assert b.schema.names == ["n1", "n2", "n3"]
    assert b.schema.metadata[b"nx"] == b"24"  # the lattice travels as on the host field
    for c in range(3):
        assert b.column(c).buffers()[1].address == host[c].ctypes.data  # the same memory
        np.testing.assert_array_equal(b.column(c).to_numpy(), host[c].ravel())
    host[1, 3, 4] = 0.25  # a write on one side is seen on the other
    assert b.column(1).to_numpy()[3 * 24 + 4] == 0.25
    assert not hasattr(d, "__cuda_array_interface__")
    del b
    assert no_exports_alive()


def test_exports_are_released_whether_or_not_a_consumer_takes_them():
    sim = sim_on("cpu")
    d = sim.device_field()
    for _ in range(200):
        schema, array = d.__arrow_c_device_array__()  # never consumed: the capsules release
        del schema, array
        pa.record_batch(d)  # consumed and dropped by pyarrow
    assert no_exports_alive()
    b = pa.record_batch(d)
    assert not no_exports_alive()  # the batch still holds its buffers' owner
    del b
    assert no_exports_alive()


def test_device_field_refuses_a_requested_schema_and_a_closed_simulation():
    sim = sim_on("cpu")
    d = sim.device_field()
    with pytest.raises(NotImplementedError, match="requested_schema"):
        d.__arrow_c_device_array__(requested_schema=d.__arrow_c_schema__())
    sim.close()
    with pytest.raises(fg.ReleasedError):
        sim.device_field()


def _device_array_struct(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return devicefield._DeviceArray.from_address(get(capsule, b"arrow_device_array"))


@needs_gpu
@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_cuda_device_field_is_the_device_state(precision):
    cupy = pytest.importorskip("cupy")
    sim = sim_on("cuda", precision)
    sim.minimize(tol=1e-300, max_steps=20)
    d = sim.device_field()
    assert d.device_type == "cuda" and d.dtype == precision
    g = cupy.asarray(d)  # __cuda_array_interface__: no copy
    assert g.data.ptr == d.ptr and g.dtype == np.dtype(precision) and g.shape == d.shape
    np.testing.assert_array_equal(cupy.asnumpy(g).astype(np.float64), sim.field.numpy())
    # The Arrow device array: CUDA memory at the same addresses, one column per component.
    schema, array = d.__arrow_c_device_array__()
    s = _device_array_struct(array)
    assert s.device_type == devicefield.ARROW_DEVICE_CUDA and s.device_id == d.device_id
    assert s.array.length == d.shape[1] * d.shape[2] and s.array.n_children == 3
    n = s.array.length * np.dtype(precision).itemsize
    for c in range(3):
        assert s.array.children[c].contents.buffers[1] == d.ptr + c * n
    del schema, array, s
    # Writes through the view are the simulation's state.
    g[2] = 1.0
    g[0] = 0.0
    g[1] = 0.0
    f = sim.field.numpy()
    assert (f[2] == 1.0).all() and (f[:2] == 0.0).all()
    sim.close()
    assert no_exports_alive()


@needs_gpu
@pytest.mark.parametrize("grid", [(12, 10, 8), (40,)])
def test_cuda_device_field_beyond_the_plane(grid):
    """On a 3D lattice or a line the device field is the field's device memory too,
    shaped (ncomp, nz, ny, nx) or (ncomp, nx), one column per component."""
    cupy = pytest.importorskip("cupy")
    sim = fg.Simulation(fg.theories.baby_skyrme(), grid=grid, spacing=0.5, backend="cuda")
    rng = np.random.default_rng(3)
    f = rng.normal(size=(3, *reversed(grid)))
    sim.set_field(f / np.linalg.norm(f, axis=0))
    d = sim.device_field()
    assert d.device_type == "cuda" and d.shape == (3, *reversed(grid))
    g = cupy.asarray(d)
    assert g.data.ptr == d.ptr and g.shape == d.shape
    np.testing.assert_array_equal(cupy.asnumpy(g), sim.field.numpy())
    schema, array = d.__arrow_c_device_array__()
    s = _device_array_struct(array)
    n = int(np.prod(grid))
    assert s.array.length == n and s.array.n_children == 3
    for c in range(3):
        assert s.array.children[c].contents.buffers[1] == d.ptr + c * n * 8
    del schema, array, s
    g[0] = 0.0
    assert (sim.field.numpy()[0] == 0.0).all()
    sim.close()
    assert no_exports_alive()
