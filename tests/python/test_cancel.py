"""Ctrl-C during the long calls of the trajectory workloads: the call
returns within 100 ms of the KeyboardInterrupt, the Go work stops, and the next call
works. (Simulation.minimize has its own tests in test_interrupt.py.)"""

import _thread
import gc
import math
import threading
import time

import numpy as np
import pytest

import fieldgo as fg
from fieldgo.runtime.bridge import go

LIMIT_S = 0.1


def interrupted(call, after=0.3):
    """Run call(), send KeyboardInterrupt to this thread after `after` seconds, and
    return the latency from the interrupt to the call's return."""
    sent = {}

    def fire():
        sent["t"] = time.perf_counter()
        _thread.interrupt_main()

    timer = threading.Timer(after, fire)
    timer.start()
    try:
        call()
    except KeyboardInterrupt:
        return time.perf_counter() - sent["t"]
    finally:
        timer.cancel()
    pytest.fail("the call finished before it could be interrupted: make it longer")


def _settle(n0):
    end = time.monotonic() + 2
    while go.Goroutines() > n0 and time.monotonic() < end:
        time.sleep(0.01)
    return go.Goroutines()


def _settled_bytes():
    """C memory in use once earlier tests' garbage (cubes and tables held by
    reference cycles, e.g. in pytest's caught exceptions) has been freed: the
    baseline the cancelled call's memory must return to."""
    gc.collect()
    return fg.allocated_bytes()


def test_nbody_integrate_stops_within_100_ms():
    pos, vel, m = fg.nbody.plummer(2048, seed=1)
    n0 = go.Goroutines()
    bytes0 = _settled_bytes()
    latency = interrupted(lambda: fg.nbody.integrate(pos, vel, m, dt=1e-3, steps=100_000, every=1000, softening=0.01))
    assert latency < LIMIT_S, f"integrate returned {latency * 1e3:.1f} ms after Ctrl-C"
    assert _settle(n0) <= n0  # the integrator's goroutines ended
    assert fg.allocated_bytes() == bytes0  # and its C memory is freed
    table = fg.nbody.integrate(pos[:64], vel[:64], m[:64], dt=1e-3, steps=10, every=5, softening=0.01)
    assert table.num_rows == 3 * 64


def test_radiation_fields_stop_within_100_ms():
    gamma = 1 / math.sqrt(1 - 0.25)
    tau = np.linspace(0, 400, 4000)
    w = gamma
    traj = fg.radiation.trajectory_table(
        tau,
        gamma * tau,
        0.5 * np.cos(w * tau),
        0.5 * np.sin(w * tau),
        0 * tau,
        gamma + 0 * tau,
        -0.5 * w * np.sin(w * tau),
        0.5 * w * np.cos(w * tau),
        0 * tau,
    )
    rng = np.random.default_rng(0)
    observers = rng.normal(size=(400, 3)) * 50
    times = np.linspace(150, 300, 4000)  # a 128 MB cube, slow through RK4 substeps
    bytes0 = _settled_bytes()
    latency = interrupted(lambda: fg.radiation.fields(traj, observers, times, method="rk4", n_substeps=256))
    assert latency < LIMIT_S, f"fields returned {latency * 1e3:.1f} ms after Ctrl-C"
    # the abandoned cube is freed once Go's workers have stopped
    end = time.monotonic() + 5
    while fg.allocated_bytes() != bytes0 and time.monotonic() < end:
        time.sleep(0.01)
    assert fg.allocated_bytes() == bytes0
    cube = fg.radiation.fields(traj, observers[:4], times[:16])
    assert np.isfinite(cube.numpy()).all()
