"""Shared set-up of the Python tests."""

import signal

import numpy as np
import pytest


@pytest.fixture(autouse=True, scope="session")
def _keyboard_interrupt_handler():
    """Python raises KeyboardInterrupt on SIGINT only if SIGINT was not ignored when the
    interpreter started; a test run launched as a background job of a non-interactive
    shell inherits it ignored, and the Ctrl-C tests (test_cancel.py, test_interrupt.py,
    which send it with _thread.interrupt_main) would wait for their long calls to end.
    Python's own handler is installed for the run and the inherited one restored."""
    old = signal.getsignal(signal.SIGINT)
    if old in (signal.SIG_IGN, signal.SIG_DFL, None):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    if old in (signal.SIG_IGN, signal.SIG_DFL):
        signal.signal(signal.SIGINT, old)


@pytest.fixture(scope="session")
def baby_skyrmion_profile():
    """The relaxed charge-1 Baby Skyrmion (fg.theories.baby_skyrme, kappa = mass = 1, the
    potential 1 - n3) at h = 0.25: (radii, f, E) with f(r) its profile angle (n3 = cos f)
    at every distinct distance of a site from the centre out to 6 (dense enough for
    linear interpolation between them) and E its energy."""
    import fieldgo as fg

    one = fg.Simulation(fg.theories.baby_skyrme(), grid=(49, 49), spacing=0.25, origin=(-6, -6), backend="cpu")
    one.set_field(fg.initial.skyrmion(charge=1))
    one.minimize(tol=1e-6, progress=False)
    X, Y = one.lattice.meshgrid()
    r = np.round(np.hypot(X, Y).ravel(), 12)
    f = np.arccos(np.clip(one.field.numpy()[2].ravel(), -1, 1))
    radii, k = np.unique(r, return_inverse=True)
    profile = np.bincount(k, weights=f) / np.bincount(k)
    keep = radii < 6.0
    return radii[keep], profile[keep], one.energy()
