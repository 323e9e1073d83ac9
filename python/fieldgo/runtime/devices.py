"""What this process can run on."""

from __future__ import annotations

import json
import os

from .bridge import go


def devices() -> dict:
    """The backends fieldgo can use here: ``{"cpu": {...}, "cuda": {...}}``.

    The CPU is always available (its thread count is shown); CUDA shows the device
    and its architecture, or the reason it cannot be used (no driver, no NVRTC, no
    GPU), which is also why ``backend="auto"`` chose the CPU.
    """
    info = json.loads(go.Devices())
    info["cpu"]["threads"] = os.cpu_count()
    return info
