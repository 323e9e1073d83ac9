"""Spectra of a cube's components and the power in the harmonics of a periodic motion."""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, ShapeError
from .cube import Cube
from .trajectories import scalar


def _spacing(cube: Cube) -> float:
    """The sample spacing shared by every observer's times (uniform, at least two)."""
    t = cube.times.reshape(-1, cube.samples)
    if cube.samples < 2:
        raise ShapeError(f"a spectrum needs at least 2 samples, the cube has {cube.samples}")
    d = np.diff(t, axis=-1)
    dt = float(t[0, -1] - t[0, 0]) / (cube.samples - 1)
    # Times far from 0 (an observer at 1e7) carry their rounding into the spacings.
    slack = 16 * np.finfo(np.float64).eps * float(np.abs(t).max())
    if not (np.isfinite(dt) and dt > 0 and np.allclose(d, dt, rtol=1e-9, atol=slack)):
        raise ShapeError("spectra need uniformly spaced, increasing times with the same spacing for every observer")
    return dt


def spectrum(cube: Cube, component: str = "Ex", *, window=None):
    """One-sided power spectrum of a component along each observer's samples
    (uniform times). Returns (frequencies, power) with power shaped
    (observers, samples//2 + 1), normalised so that sum(power) = mean(x^2) (Parseval)."""
    x = np.asarray(cube[component])
    dt = _spacing(cube)
    if window is not None:
        w = np.asarray(window, dtype=float)
        if w.shape != (cube.samples,):
            raise ShapeError(f"window has shape {w.shape}, want ({cube.samples},): one weight per sample")
        x = x * w
    n = x.shape[-1]
    X = np.fft.rfft(x, axis=-1) / n
    p = np.abs(X) ** 2
    p[..., 1 : (n + 1) // 2] *= 2  # both signs of frequency, except 0 and Nyquist
    return np.fft.rfftfreq(n, dt), p


def harmonic_powers(cube: Cube, period: float, harmonics=range(1, 11), components=("Ex", "Ey", "Ez")):
    """Time-averaged power of each harmonic of the received ``period``,
    sum over ``components`` of 2|X_n|^2, shaped (observers, len(harmonics)). The
    samples must span a whole number of periods, uniformly."""
    if not (isinstance(period, (int, float, np.integer, np.floating)) and np.isfinite(period) and period > 0):
        raise ParameterError(f"period={period!r}: want a finite number > 0")
    harmonics = list(harmonics)
    if not all(isinstance(h, (int, np.integer)) and h >= 1 for h in harmonics):
        raise ParameterError(f"harmonics={harmonics!r}: want integers >= 1")
    n = cube.samples
    span = _spacing(cube) * n
    m = span / period
    if abs(m - round(m)) > 1e-6 * max(1.0, m):
        raise ShapeError(f"the samples span {m:.6g} periods: use a whole number for clean harmonics")
    m = int(round(m))
    out = np.zeros((cube.observers, len(harmonics)))
    for comp in components:
        X = np.fft.rfft(np.asarray(cube[comp]), axis=-1) / n
        for j, h in enumerate(harmonics):
            if h * m >= X.shape[-1]:
                raise ShapeError(f"harmonic {h} is above the Nyquist frequency of the samples")
            out[:, j] += 2 * np.abs(X[:, h * m]) ** 2
    return out


def harmonic_map(
    cube: Cube, period: float, harmonic: int, shape=None, components=("Ex", "Ey", "Ez"), distance=None, c=None
):
    """Power of one harmonic at every observer, reshaped to ``shape`` (for observers
    on a grid of angles or positions). With ``distance`` (array or number) it is
    scaled to dI/dOmega = c R^2 <E_n^2> / (4 pi) (Gaussian units; ``c`` defaults to
    the speed of light the cube was computed with)."""
    p = harmonic_powers(cube, period, [harmonic], components)[:, 0]
    if distance is not None:
        c = float(cube.metadata.get("c", 1.0)) if c is None else scalar(c, "c")
        p = p * c * np.asarray(distance, dtype=float) ** 2 / (4 * np.pi)
    if shape is None:
        return p
    if int(np.prod(shape)) != p.size:
        raise ShapeError(
            f"shape {tuple(int(k) for k in np.atleast_1d(shape))} does not hold the cube's {p.size} observers"
        )
    return p.reshape(shape)
