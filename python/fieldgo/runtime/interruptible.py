"""Go calls that Ctrl-C can stop.

A Go call cannot see Python's signals, so long calls run in a worker thread while the
main thread waits in short, interruptible steps; on KeyboardInterrupt the Go side is
asked to cancel, and the main thread waits for the call to return before raising, so
that nothing it reads or frees afterwards is still in use by the call.
"""

from __future__ import annotations

import threading


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
