"""Go calls that Ctrl-C can stop.

A Go call cannot see Python's signals, so a long call runs on a goroutine that an
``...Start`` export starts, and the main thread waits for it in short, interruptible
steps (:func:`wait`). On KeyboardInterrupt the Go side is asked to cancel, and the main
thread waits for the call to return before raising, so that nothing it reads or frees
afterwards is still in use by the call. (A Python worker thread per call, the
alternative, cost its start and Go's attachment of a thread it did not create.)
"""

from __future__ import annotations

from .bridge import go

# How long one CallWait blocks in Go: Ctrl-C is seen within this.
_STEP_MS = 10


def wait(handle: int) -> None:
    """Wait for the Go call ``handle`` (from a ``...Start`` export) to return; take its
    result with ``go.CallResult`` or ``go.CallResultPointer``. Ctrl-C cancels the
    call, waits for it to return (a second Ctrl-C does not stop that wait: the call
    may read memory the caller frees next), releases it and raises
    KeyboardInterrupt."""
    try:
        while not go.CallWait(handle, _STEP_MS):
            pass
    except KeyboardInterrupt:
        go.CallCancel(handle)
        while True:
            try:
                if go.CallWait(handle, 100):
                    break
            except KeyboardInterrupt:
                continue
        try:
            go.CallResult(handle)
        except Exception:  # noqa: BLE001  (the call's own error, most likely CancelledError)
            pass
        raise
