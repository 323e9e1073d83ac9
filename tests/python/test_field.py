"""Fields shared between Go, numpy and Arrow without copies."""

import gc
import math

import numpy as np
import pyarrow as pa
import pytest

import fieldgo as fg


@pytest.fixture
def lat():
    return fg.Lattice((8, 5), spacing=(0.1, 0.2), boundary="periodic")


def test_lattice_geometry(lat):
    assert (lat.nx, lat.ny, lat.hx, lat.hy) == (8, 5, 0.1, 0.2)
    assert lat.shape == (5, 8)
    # centred on the origin by default
    assert lat.x[0] == pytest.approx(-lat.x[-1]) and lat.y[0] == pytest.approx(-lat.y[-1])
    X, Y = lat.meshgrid()
    assert X.shape == lat.shape and X[0, 1] - X[0, 0] == pytest.approx(0.1)
    assert fg.Lattice((3, 3), 1.0, origin=(1, 2)).x[0] == 1.0


def test_go_write_seen_in_numpy(lat):
    f = fg.Field(lat, ["a", "b", "c"])
    view = f.numpy()
    assert view.shape == (3, 5, 8) and view.flags.writeable and not view.any()
    f.set("b", 7, 4, 2.5)  # written by Go
    assert view[1, 4, 7] == 2.5
    assert f["b"][4, 7] == 2.5


def test_numpy_write_seen_in_go(lat):
    f = fg.Field(lat, ["a", "b"])
    v = f.numpy()
    v[0] = np.arange(40.0).reshape(5, 8)
    v[1, 2, 3] = -1.0
    assert f.sum("a") == sum(range(40))  # summed by Go
    assert f.get(1, 3, 2) == -1.0
    assert f.sum(1) == -1.0


def test_arrow_batch_shares_the_numpy_buffer(lat):
    f = fg.Field(lat, ["a", "b"])
    v = f.numpy()
    batch = f.to_arrow()
    assert isinstance(batch, pa.RecordBatch) and batch.num_rows == lat.sites
    assert batch.column(0).buffers()[1].address == v.ctypes.data
    assert batch.column(1).buffers()[1].address == v[1].ctypes.data
    # the capsule protocol gives the same memory
    via_capsule = pa.record_batch(f)
    assert via_capsule.column(0).buffers()[1].address == v.ctypes.data
    v[0, 0, 0] = 42.0
    assert via_capsule.column(0)[0].as_py() == 42.0


def test_schema_metadata(lat):
    f = fg.Field(lat, ["n1", "n2"])
    md = {k.decode(): v.decode() for k, v in f.to_arrow().schema.metadata.items()}
    assert md["nx"] == "8" and md["ny"] == "5"
    assert float(md["hx"]) == 0.1 and float(md["hy"]) == 0.2
    assert md["boundary"] == "periodic" and md["components"] == '["n1","n2"]'
    assert [float(o) for o in md["origin"].strip("[]").split(",")] == list(lat.origin)
    assert f.to_arrow().schema.names == ["n1", "n2"]
    assert f.to_arrow().schema.field("n1").type == pa.float64()


def test_from_numpy_shares_memory(lat):
    a = np.random.default_rng(1).standard_normal((2, 5, 8))
    f = fg.Field.from_numpy(a, lat, names=["u", "v"])
    assert f.numpy().ctypes.data == a.ctypes.data
    assert f.sum("v") == pytest.approx(a[1].sum(), rel=1e-14)
    a[1] = 0.0
    assert f.sum("v") == 0.0
    f.set(0, 1, 1, 9.0)
    assert a[0, 1, 1] == 9.0


def test_numpy_import_outlives_the_python_reference(lat):
    a = np.full((1, 5, 8), 3.0)
    f = fg.Field.from_numpy(a, lat)
    del a
    gc.collect()
    assert f.sum(0) == 3.0 * 40  # Go still holds the memory


def test_from_arrow_round_trip_keeps_memory_and_lattice(lat):
    f = fg.Field(lat, ["a", "b"])
    f.numpy()[:] = 1.5
    g = fg.Field.from_arrow(f.to_arrow())  # lattice read from the metadata
    assert g.lattice == lat and g.names == ("a", "b")
    assert g.numpy().ctypes.data == f.numpy().ctypes.data
    f.release()
    assert g.sum("b") == 1.5 * 40


def test_from_arrow_pyarrow_table_and_polars(lat):
    polars = pytest.importorskip("polars")
    cols = {"p": np.linspace(0, 1, 40), "q": np.ones(40)}
    t = pa.table(cols)
    f = fg.Field.from_arrow(t, lattice=lat)
    assert f.numpy()[0].ravel().tolist() == cols["p"].tolist()
    assert f["p"].ctypes.data == t.column("p").chunks[0].buffers()[1].address
    df = polars.DataFrame(cols)
    g = fg.Field.from_arrow(df, lattice=lat)
    assert g.sum("q") == 40.0


def test_polars_and_duckdb_read_a_field(lat):
    polars = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    f = fg.Field(lat, ["n1", "n2"])
    v = f.numpy()
    v[0] = np.arange(40.0).reshape(5, 8)
    v[1] = 2.0
    df = polars.DataFrame(f)
    assert df.columns == ["n1", "n2"] and df["n1"].sum() == sum(range(40))
    df2 = polars.from_arrow(f.to_arrow())
    assert df2["n2"].to_list() == [2.0] * 40
    con = duckdb.connect()
    field_batch = f.to_arrow()  # noqa: F841 (duckdb scans the Python variable)
    assert con.execute("select sum(n1), max(n2) from field_batch").fetchone() == (sum(range(40)), 2.0)
    rel = duckdb.from_arrow(f)
    assert rel.aggregate("count(*)").fetchall()[0][0] == 40


def test_stream_capsule(lat):
    f = fg.Field(lat, ["a"])
    f.numpy()[:] = 7.0
    table = pa.table(pa.RecordBatchReader.from_stream(f))
    assert table.column("a").to_pylist() == [7.0] * 40


def test_views_survive_release_and_memory_returns_to_zero(lat):
    gc.collect()
    base = fg.allocated_bytes()
    f = fg.Field(lat, ["a", "b"])
    v = f.numpy()
    assert fg.allocated_bytes() == base + 2 * 40 * 8
    f.release()
    v[:] = 1.0  # still valid: the view holds its own reference
    assert v.sum() == 80.0
    del v
    gc.collect()
    assert fg.allocated_bytes() == base


def test_lifetime_over_many_cycles():
    gc.collect()
    base = fg.allocated_bytes()
    lat = fg.Lattice((16, 16), 0.1)
    for k in range(10_000):
        f = fg.Field(lat, ["a", "b", "c"])
        v = f.numpy()
        v[0, 0, 0] = k
        b = pa.record_batch(f)
        assert b.column(0)[0].as_py() == k
        f.release()
        del f, v, b
    gc.collect()
    assert fg.allocated_bytes() == base


# --- bad input: typed errors, never a crash ---


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(grid=(0, 4)), "positive"),
        (dict(grid=(4, -1)), "positive"),
        (dict(grid=(4, 4), spacing=0.0), "spacing"),
        (dict(grid=(4, 4), spacing=-0.1), "spacing"),
        (dict(grid=(4, 4), spacing=math.nan), "spacing"),
        (dict(grid=(4, 4), spacing=(0.1, math.inf)), "spacing"),
        (dict(grid=(4, 4), boundary="dirichlet"), "boundary"),
        (dict(grid=(4.5, 4)), "integer"),
        (dict(grid=4), r"\(nx, ny\)"),
        (dict(grid=(4, 4), origin=(0, math.nan)), "origin"),
    ],
)
def test_bad_lattices(kwargs, match):
    with pytest.raises(fg.LatticeError, match=match):
        fg.Lattice(**kwargs)
    assert issubclass(fg.LatticeError, ValueError) and issubclass(fg.LatticeError, fg.Error)


def test_bad_arrays(lat):
    good = np.zeros((2, 5, 8))
    with pytest.raises(fg.LayoutError, match="float64"):
        fg.Field.from_numpy(good.astype(np.float32), lat)
    with pytest.raises(fg.LayoutError, match="contiguous"):
        fg.Field.from_numpy(np.zeros((2, 8, 5)).transpose(0, 2, 1), lat)
    with pytest.raises(fg.ShapeError, match="does not fit"):
        fg.Field.from_numpy(np.zeros((2, 5, 7)), lat)
    with pytest.raises(fg.ShapeError, match="names"):
        fg.Field.from_numpy(good, lat, names=["a"])
    ro = np.zeros((1, 5, 8))
    ro.flags.writeable = False
    with pytest.raises(fg.LayoutError, match="read-only"):
        fg.Field.from_numpy(ro, lat)
    # copy=True makes each of them work
    f = fg.Field.from_numpy(np.ones((2, 8, 5), dtype=np.float32).transpose(0, 2, 1), lat, copy=True)
    assert f.sum(1) == 40.0


def test_bad_arrow(lat):
    with pytest.raises(fg.ShapeError, match="do not fit"):
        fg.Field.from_arrow(pa.table({"a": np.zeros(39)}), lattice=lat)
    with pytest.raises(fg.LayoutError, match="float64"):
        fg.Field.from_arrow(pa.table({"a": np.zeros(40, dtype=np.int64)}), lattice=lat)
    with pytest.raises(fg.LayoutError, match="nulls"):
        fg.Field.from_arrow(pa.table({"a": pa.array([None] + [1.0] * 39)}), lattice=lat)
    with pytest.raises(fg.FormatError, match="lattice"):
        fg.Field.from_arrow(pa.table({"a": np.zeros(40)}))
    two_chunks = pa.Table.from_batches([pa.record_batch({"a": np.zeros(20)})] * 2)
    with pytest.raises(fg.LayoutError, match="chunks"):
        fg.Field.from_arrow(two_chunks, lattice=lat)
    assert fg.Field.from_arrow(two_chunks, lattice=lat, copy=True).sum(0) == 0.0
    assert fg.Field.from_arrow(pa.table({"a": np.ones(40, dtype=np.int32)}), lattice=lat, copy=True).sum(0) == 40
    with pytest.raises(fg.FormatError):
        fg.Field.from_arrow(object(), lattice=lat)


def test_release_twice_and_use_after_release(lat):
    f = fg.Field(lat, ["a"])
    f.release()
    with pytest.raises(fg.ReleasedError):
        f.release()
    for use in (f.numpy, f.to_arrow, lambda: f.sum(0), lambda: f.set(0, 0, 0, 1.0), lambda: np.asarray(f)):
        with pytest.raises(fg.ReleasedError):
            use()
    assert issubclass(fg.ReleasedError, RuntimeError)


def test_bad_component_and_site(lat):
    f = fg.Field(lat, ["a"])
    with pytest.raises(fg.ShapeError, match="no component"):
        f.sum("zz")
    with pytest.raises(fg.ShapeError, match="out of range"):
        f.get(3, 0, 0)
    with pytest.raises(fg.ShapeError, match="outside"):
        f.set(0, 8, 0, 1.0)
    with pytest.raises(fg.ShapeError, match="twice"):
        fg.Field(lat, ["a", "a"])


def test_device_array_capsule_is_the_same_cpu_memory(lat):
    f = fg.Field(lat, ["a", "b"])
    v = f.numpy()
    v[1, 2, 3] = 5.0
    schema, array = f.__arrow_c_device_array__()
    back = pa.RecordBatch._import_from_c_device_capsule(schema, array)
    assert back.column(0).buffers()[1].address == v.ctypes.data
    assert back.column(1)[2 * 8 + 3].as_py() == 5.0
