"""fg.cache: one root, one folder per kind, one key scheme and one atomic writer shared
with Go (python/fieldgo/cache.py, internal/diskcache)."""

import os
import subprocess
import sys

import pytest

import fieldgo as fg
from fieldgo import cache


@pytest.fixture
def root(tmp_path, monkeypatch):
    r = tmp_path / "cache"
    monkeypatch.setenv("FIELDGO_CACHE", str(r))
    return r


def test_key_is_gos_key():
    # the vector of internal/diskcache's TestKeyIsTheSharedScheme
    assert (
        cache.key("cpu", "int main(void){return 0;}", "cc", "-O3")
        == "c6941e09cf4f3fbd927f0b1ab3e30592e731a52ba9227c84cf65d601a3fb3a1a"
    )
    assert cache.key("cpu", "a", "bc") != cache.key("cpu", "ab", "c")


def test_layout(root, monkeypatch):
    assert fg.cache is cache
    assert cache.root() == str(root)
    assert {k: cache.directory(k) for k in cache.KINDS} == {
        k: str(root / k) for k in ("source", "point", "cpu", "cuda")
    }
    monkeypatch.delenv("FIELDGO_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    if sys.platform.startswith("linux"):
        assert cache.root() == "/xdg/fieldgo"  # as Go's os.UserCacheDir


def test_write_atomic(tmp_path):
    p = tmp_path / "entry"
    cache.write_atomic(p, b"bytes")
    assert p.read_bytes() == b"bytes"
    cache.write_atomic(str(p), "text, longer")
    assert p.read_text() == "text, longer"
    cache.write_atomic(p, lambda tmp: open(tmp, "w").write("by a writer"))
    assert p.read_text() == "by a writer"
    assert oct(p.stat().st_mode & 0o777) == oct(0o644)

    def fails(tmp):
        open(tmp, "w").write("half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        cache.write_atomic(p, fails)
    assert p.read_text() == "by a writer"
    assert os.listdir(tmp_path) == ["entry"]  # no temporaries left
    with pytest.raises(OSError):
        cache.write_atomic(tmp_path / "missing" / "entry", b"")


def test_empty_cache(root):
    info = cache.info()
    assert info["root"] == str(root) and info["entries"] == 0 and info["bytes"] == 0
    assert set(info["kinds"]) == {"source", "point", "cpu", "cuda"}
    assert cache.clear() == {"files": 0, "bytes": 0}  # nothing there: fine
    assert cache.clear("cuda") == {"files": 0, "bytes": 0}
    assert str(root) in repr(info) and "total" in repr(info)


def test_bad_kind(root):
    with pytest.raises(fg.ParameterError, match="unknown cache kind 'gpu'"):
        cache.clear("gpu")
    with pytest.raises(fg.ParameterError, match="source, point, cpu, cuda"):
        cache.directory("kernels")


def _theory():
    th = fg.Theory("cache_test", fields=["u"], params={"a": 1.25})

    @th.energy_density
    def e(s, p):
        return 0.5 * (s.dx.u**2 + s.dy.u**2) + p.a * (1 - s.phi.u**2) ** 2

    return th


def test_info_counts_what_python_compiles(root):
    before = cache.info()
    r = _theory().at(phi=[0.3])
    after = cache.info()
    assert before["kinds"]["point"]["entries"] == 0 and after["kinds"]["point"]["entries"] == 1
    assert after["kinds"]["source"]["entries"] == 1
    assert after["kinds"]["point"]["bytes"] > 0
    assert "point" in repr(after) and "1 entries" in repr(after)
    assert cache.clear("point")["files"] >= 2  # the library and its source
    assert cache.info()["kinds"]["point"]["entries"] == 0
    assert cache.info()["kinds"]["source"]["entries"] == 1  # the other kinds stay
    from fieldgo.frontend import native

    native._loaded.clear()  # as a new process: compiles again, the same numbers
    again = _theory().at(phi=[0.3])
    assert again.energy == r.energy and cache.info()["kinds"]["point"]["entries"] == 1


RUN = """
import fieldgo as fg
th = fg.Theory("cache_test", fields=["u"], params={"a": 1.25})

@th.energy_density
def e(s, p):
    return 0.5 * (s.dx.u**2 + s.dy.u**2) + p.a * (1 - s.phi.u**2) ** 2

sim = fg.Simulation(th, grid=(24, 20), spacing=0.25, backend="cpu")
sim.set_field(lambda x, y: 0.3 + 0.1 * x - 0.05 * y * y)
sim.minimize(tol=1e-12, max_steps=30)
print(sim.describe()["compile_cached"], repr(sim.energy()))
"""


def _run(root):
    """A Simulation in a fresh process (Go reads $FIELDGO_CACHE when it starts)."""
    out = subprocess.run(
        [sys.executable, "-c", RUN],
        env=dict(os.environ, FIELDGO_CACHE=str(root)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    cached, energy = out.stdout.split()[-2:]
    return cached == "True", energy


def test_clear_then_a_simulation_recompiles_to_the_same_numbers(root):
    cached, energy = _run(root)
    assert not cached
    info = cache.info()
    assert info["kinds"]["cpu"]["entries"] == 1 and info["kinds"]["source"]["entries"] == 1
    assert info["kinds"]["cpu"]["bytes"] > 0
    assert _run(root) == (True, energy)
    removed = cache.clear("cpu")
    assert removed["files"] == 2 and removed["bytes"] == info["kinds"]["cpu"]["bytes"]  # object + checksum
    assert cache.info()["kinds"]["cpu"]["entries"] == 0
    assert _run(root) == (False, energy)  # recompiled, identical bits
    cache.clear()
    assert cache.info()["entries"] == 0 and cache.info()["bytes"] == 0
    assert _run(root) == (False, energy)


def test_an_old_layout_is_not_found_and_never_an_error(root):
    # entries written under the previous scheme: other names, other keys
    for kind, name in (("point", "point-0123456789abcdef0123456789abcdef.so"), ("cpu", "0" * 64 + ".so")):
        (root / kind).mkdir(parents=True)
        (root / kind / name).write_bytes(b"not an object")
    (root / "cpu" / ("0" * 64 + ".so.sha256")).write_text("0" * 64 + "\n")
    (root / "source").mkdir()
    (root / "source" / ("1" * 64 + ".c")).write_text("#error old\n")
    assert _run(root)[0] is False
    assert _theory().at(phi=[0.3]).energy == pytest.approx(0.5 * 0 + 1.25 * (1 - 0.09) ** 2)
