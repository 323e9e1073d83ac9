"""The traced-source cache: a theory traced before runs without SymPy, and anything the
generated C depends on changes the key (python/fieldgo/frontend/sourcecache.py)."""

import subprocess
import sys

import pytest

import fieldgo as fg
from fieldgo.frontend import sourcecache


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FIELDGO_CACHE", str(tmp_path))
    return tmp_path


def model(coefficient=0.5, static_power=2, helper=None):
    th = fg.Theory("m", fields=["u"], params={"k": 1.0, "n": fg.Static(static_power)})

    @th.energy_density
    def energy(s, p):
        extra = helper(s.phi.u) if helper else 0
        return coefficient * s.dx.u**2 + p.k * s.phi.u**p.n + extra

    return th


def _key(th):
    return sourcecache.key(
        (th.name, list(th.fields), list(th.dynamic_params), sorted(th.static_params.items()), "", [], []),
        [th._energy_fn],
    )


def test_a_cached_source_is_the_traced_source(private_cache):
    traced = model().source
    assert list((private_cache / "source").glob("*.c"))
    th = model()
    assert th.source == traced  # from the cache
    assert not th._generated  # nothing was traced for it


def test_the_key_follows_everything_the_code_depends_on():
    base = _key(model())
    assert base is not None and base == _key(model())
    assert _key(model(coefficient=0.25)) != base  # a closure value
    assert _key(model(static_power=3)) != base  # a static parameter
    assert _key(model(helper=lambda u: u**3)) != _key(model(helper=lambda u: u**4))  # a called function's code
    sky = [fg.theories.baby_skyrme(p) for p in ("standard", "easy plane")]
    assert sky[0].source != sky[1].source


def test_what_cannot_be_fingerprinted_is_traced_every_time():
    class Opaque:
        scale = 2.0

    thing = Opaque()
    th = fg.Theory("o", fields=["u"])

    @th.energy_density
    def energy(s, p):
        return thing.scale * s.phi.u**2

    assert sourcecache.key(("o",), [th._energy_fn]) is None
    assert "2.0" in th.source or "2*" in th.source


def test_a_cached_theory_runs_without_importing_sympy(private_cache):
    _ = fg.theories.baby_skyrme().source  # trace once, filling the cache
    script = (
        "import sys, fieldgo as fg\n"
        "sim = fg.Simulation(fg.theories.baby_skyrme(), grid=(16, 16), spacing=1.0)\n"
        "sim.set_field(fg.initial.skyrmion()); sim.minimize(tol=1e-3, max_steps=3)\n"
        "print('sympy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "FIELDGO_CACHE": str(private_cache)},
    )
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr[-2000:]
