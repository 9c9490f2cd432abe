"""The synthetic embedding sets both sides of ``bench_embedding.py`` score (numpy only, seeded).

Vectors look like sentence embeddings more than white noise: a decaying spectrum
(component ``i`` has sd ``1/sqrt(1 + i/8)``) rotated by a fixed random orthogonal
matrix, so every coordinate mixes all components. A shift moves the mean of the
16 strongest components by ``shift`` of their sd before the rotation.
"""

from __future__ import annotations

import numpy as np

SHIFTS = {"none": 0.0, "small": 0.1, "large": 1.0}
SIZES = (1000, 5000)
DIMS = (64, 384)


def _rotation(dim: int) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(dim).normal(size=(dim, dim)))
    return q


def embeddings(n: int, dim: int, shift: float, seed: int) -> np.ndarray:
    """``n`` vectors of dimension ``dim``; ``shift`` moves the 16 strongest components' means."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, dim))
    z[:, :16] += shift
    scales = 1.0 / np.sqrt(1.0 + np.arange(dim) / 8.0)
    return (z * scales) @ _rotation(dim)


def cases() -> list[dict[str, object]]:
    """Every (size, dim, shift) case with its seeds: reference seed 1, current seed 2."""
    return [{"name": f"n{n}_d{d}_{s}", "n": n, "dim": d, "shift": SHIFTS[s], "kind": s}
            for n in SIZES for d in DIMS for s in SHIFTS]


def pair(case: dict[str, object]) -> tuple[np.ndarray, np.ndarray]:
    """The (reference, current) sets of one case."""
    n, dim, shift = int(case["n"]), int(case["dim"]), float(case["shift"])  # type: ignore[call-overload]
    return embeddings(n, dim, 0.0, 1 + 10 * dim + n), embeddings(n, dim, shift, 2 + 10 * dim + n)
