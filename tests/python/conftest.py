"""Shared set-up of the Python tests."""

import signal

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
