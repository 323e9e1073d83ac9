"""Go calls that Ctrl-C can stop.

A Go call cannot see Python's signals, so long calls run where the main thread can
wait for them in short, interruptible steps: on a goroutine that an ``...Start`` export
starts (:func:`wait`), or in a worker thread (:func:`call`). On KeyboardInterrupt the Go
side is asked to cancel, and the main thread waits for the call to return before
raising, so that nothing it reads or frees afterwards is still in use by the call.
"""

from __future__ import annotations

import threading

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


def call(fn, cancel, name: str):
    """fn() in a worker thread named name; its result, or its exception. Ctrl-C calls
    cancel() and waits for fn to return, then raises KeyboardInterrupt."""
    box = {}
    entered, finished = threading.Event(), threading.Event()

    def run():
        entered.set()
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the calling thread
            box["error"] = exc
        finally:
            finished.set()

    worker = threading.Thread(target=run, name=name, daemon=True)
    try:
        worker.start()
        while not finished.wait(0.01):
            pass
    except KeyboardInterrupt:
        # Thread.start() waits for the new thread's first report, so Ctrl-C can land
        # there after the thread exists: whenever it started, wait for fn. (A thread
        # that was never created reports nothing; half a second says so.)
        if entered.wait(0.5):
            cancel()
            finished.wait()
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
