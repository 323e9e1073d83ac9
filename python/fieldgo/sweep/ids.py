"""Point ids and the values a point is known by: a stable id from a point's canonical JSON,
its parameters as they appear in the results table, and a unique name for each sweep call."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import time

import numpy as np

from ..frontend.theory import Static

ID_LENGTH = 16  # hex digits of sha256: 64 bits, no collision in any sweep a person runs


def point_id(description: dict) -> str:
    """A stable id for a point: sha256 of its canonical JSON (theory source, spec,
    parameter values, lattice, flow settings and initial configuration)."""
    text = json.dumps(description, sort_keys=True, separators=(",", ":"), default=json_default)
    return hashlib.sha256(text.encode()).hexdigest()[:ID_LENGTH]


def json_default(v):
    if isinstance(v, Static):
        return v.value
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return repr(v)


def label(v):
    """A parameter value as it appears in the results table."""
    if isinstance(v, Static):
        v = v.value
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (tuple, list)) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        return list(v)
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True, default=json_default)
    return repr(v)


_counter = itertools.count()


def nonce():
    return f"{os.getpid()}-{time.time_ns()}-{next(_counter)}"
