"""Synthetic series for the baseline tests (a seeded generator per test, no global state)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pytest

STEP = 300.0  # NAB's 5-minute samples
Series = tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]


@pytest.fixture
def daily() -> Callable[..., Series]:
    """``daily(days, seed)``: a daily sine + Gaussian noise every 5 minutes from t=0."""

    def make(days: float, seed: int = 0, *, amplitude: float = 10.0, noise: float = 0.5,
             level: float = 50.0) -> Series:
        rng = np.random.default_rng(seed)
        t = np.arange(int(days * 86400 / STEP)) * STEP
        v = level + amplitude * np.sin(2 * np.pi * t / 86400) + rng.normal(0, noise, t.size)
        return t, v

    return make
