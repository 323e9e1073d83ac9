"""Robustness: no leaks over many cycles, safe concurrency in threads and
processes, and a damaged compile cache rebuilt."""

import gc
import multiprocessing as mp
import os
import time

import numpy as np
import pytest

import fieldgo as fg
from fieldgo.runtime.bridge import go

CYCLES = int(os.environ.get("FIELDGO_LEAK_CYCLES", "10000"))


def _settled_goroutines(target, timeout=2.0):
    """Goroutines that end asynchronously (finished workers) need a moment."""
    end = time.monotonic() + timeout
    n = go.Goroutines()
    while n > target and time.monotonic() < end:
        time.sleep(0.01)
        n = go.Goroutines()
    return n


def test_create_run_release_cycles_leak_nothing():
    th = fg.theories.baby_skyrme()
    init = fg.initial.skyrmion()
    warm = fg.Simulation(th, grid=(16, 16), spacing=1.0)  # compile once, outside the count
    warm.close()
    gc.collect()
    bytes0, handles0, goroutines0 = fg.allocated_bytes(), go.LiveHandles(), go.Goroutines()
    for _ in range(CYCLES):
        s = fg.Simulation(th, grid=(16, 16), spacing=1.0)
        s.set_field(init)
        s.minimize(tol=1e-3, max_steps=5)
        s.energy()
        view = s.field.numpy()
        assert view.shape == (3, 16, 16)
        s.density("charge").release()
        s.close()
        del s, view
    gc.collect()
    assert fg.allocated_bytes() == bytes0
    assert go.LiveHandles() == handles0
    assert _settled_goroutines(goroutines0) <= goroutines0


def _relax(theory, threads=None):
    s = fg.Simulation(theory, grid=(48, 48), spacing=0.4, threads=threads)
    s.set_field(fg.initial.skyrmion())
    s.minimize(tol=1e-12, max_steps=150)
    return s.energy(), s.field.numpy().copy()


def test_two_simulations_in_two_threads_match_sequential_runs():
    import threading

    a, b = fg.theories.baby_skyrme(kappa=1.0), fg.theories.baby_skyrme(kappa=0.5)
    seq = [_relax(a), _relax(b)]
    out = [None, None]

    def run(i, th):
        out[i] = _relax(th)

    ts = [threading.Thread(target=run, args=(i, th)) for i, th in enumerate((a, b))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for (e_seq, f_seq), (e_par, f_par) in zip(seq, out):
        assert e_seq == e_par
        assert np.array_equal(f_seq, f_par)


def _compile_and_relax(kappa, queue):

    th = fg.Theory(
        "concurrent_compile",
        fields=["n1", "n2", "n3"],
        params={"kappa": kappa, "mass": 1.0},
        constraint=fg.UnitVector(),
    )

    @th.energy_density
    def energy(s, p):
        return (
            0.5 * (fg.norm2(s.dx) + fg.norm2(s.dy))
            + 0.5 * p.kappa**2 * fg.norm2(fg.cross(s.dx, s.dy))
            + p.mass**2 * (1 - s.phi.n3)
        )

    sim = fg.Simulation(th, grid=(24, 24), spacing=0.5)
    sim.set_field(fg.initial.skyrmion())
    sim.minimize(tol=1e-10, max_steps=40)
    queue.put(sim.energy())


def _in_processes(cache, n):
    ctx = mp.get_context("spawn")  # the Go runtime is loaded: never fork
    q = ctx.Queue()
    ps = [ctx.Process(target=_compile_and_relax, args=(0.75, q)) for _ in range(n)]
    # Go reads its environment when it starts, so the children get the cache
    # directory from theirs, inherited at spawn.
    old = os.environ.get("FIELDGO_CACHE")
    os.environ["FIELDGO_CACHE"] = str(cache)
    try:
        for p in ps:
            p.start()
    finally:
        if old is None:
            del os.environ["FIELDGO_CACHE"]
        else:
            os.environ["FIELDGO_CACHE"] = old
    out = [q.get(timeout=300) for _ in ps]
    for p in ps:
        p.join(timeout=60)
        assert p.exitcode == 0
    return out


def test_two_processes_compiling_the_same_kernel_share_a_sound_cache(tmp_path):
    energies = _in_processes(tmp_path, 2)
    assert energies[0] == energies[1]
    entries = list((tmp_path / "cpu").glob("*.so"))
    assert len(entries) == 1, entries  # one entry, written atomically, no stray temporaries
    assert not [p for p in (tmp_path / "cpu").iterdir() if ".tmp" in p.name]
    # A third process loads it from the cache and gets the same numbers.
    assert _in_processes(tmp_path, 1) == energies[:1]


def test_a_truncated_cache_entry_is_rebuilt(tmp_path):
    first = _in_processes(tmp_path, 1)
    (entry,) = (tmp_path / "cpu").glob("*.so")
    entry.write_bytes(entry.read_bytes()[:1000])
    assert _in_processes(tmp_path, 1) == first
    assert entry.stat().st_size > 1000


def test_forking_after_the_go_runtime_started_warns():
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    with pytest.warns(RuntimeWarning, match="spawn"):
        pid = os.fork()
        if pid == 0:  # the child touches nothing and leaves at once
            os._exit(0)
    os.waitpid(pid, 0)
