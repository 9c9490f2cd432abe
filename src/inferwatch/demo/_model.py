"""The demo's model: feature rows from a generator that can drift, and a logistic regression.

The model is trained at start-up (Newton's method on generated data, a few
milliseconds) so the demo serves real predictions with no shipped weights.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["FEATURES", "FeatureGenerator", "LogisticModel", "Prediction", "train_model"]

FEATURES: tuple[str, ...] = ("age", "income_k", "session_s", "clicks_7d", "price")
"""The demo's named numeric features, in model order."""

# Reference distribution: means and standard deviations per feature.
_MEAN = np.array([38.0, 62.0, 240.0, 6.0, 49.0])
_STD = np.array([11.0, 25.0, 120.0, 4.0, 20.0])
# Direction in standard deviations each feature moves at drift=1 (a shifted audience).
_DRIFT = np.array([-1.2, -0.8, 0.6, 2.0, 1.5])
# The "true" relation the training labels come from (on standardised features).
_TRUE_W = np.array([0.4, 0.9, 0.5, 1.3, -1.1])
_TRUE_B = -0.3


class FeatureGenerator:
    """Feature rows like the service's traffic; ``drift`` (0 = reference) shifts them.

    ``spread`` (1 = reference) scales each feature's spread: below 1 the audience
    narrows towards the average user, where the model is least sure (a real loss
    of accuracy that the model's own scores show, unlike ``drift``).
    """

    def __init__(self, rng: np.random.Generator, drift: float = 0.0, spread: float = 1.0) -> None:
        self._rng = rng
        self._lock = threading.Lock()  # numpy Generators are not thread-safe
        self.drift, self.spread = drift, spread

    def sample(self, n: int) -> NDArray[np.float64]:
        """``n`` rows (n x len(FEATURES)), drawn at the current drift."""
        mean = _MEAN + self.drift * _DRIFT * _STD
        with self._lock:
            z = self._rng.standard_normal((n, len(FEATURES)))
        return np.asarray(np.maximum(mean + self.spread * z * _STD, 0.0), dtype=np.float64)

    def row(self) -> dict[str, float]:
        """One row as ``{feature: value}`` (what the load generator posts)."""
        return dict(zip(FEATURES, (round(float(v), 3) for v in self.sample(1)[0]), strict=True))

    def labels(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Binary outcomes for rows ``x`` drawn from the true relation."""
        p = _sigmoid(((x - _MEAN) / _STD) @ _TRUE_W + _TRUE_B)
        with self._lock:
            u = self._rng.random(len(x))
        return (u < p).astype(np.float64)


@dataclass(frozen=True, slots=True)
class Prediction:
    """A score in [0, 1], the confidence max(p, 1 - p), and which model path produced it."""

    score: float
    confidence: float
    path: str


@dataclass(frozen=True)
class LogisticModel:
    """Logistic regression on standardised features; ``cheap`` uses only the strongest two."""

    mean: NDArray[np.float64]
    std: NDArray[np.float64]
    weights: NDArray[np.float64]
    bias: float

    def predict(self, x: NDArray[np.float64], *, cheap: bool = False) -> Prediction:
        """Score one row (``x`` in FEATURES order)."""
        z = (x - self.mean) / self.std
        w = self.weights
        if cheap:  # the degraded path: drop all but the two largest weights
            keep = np.argsort(-np.abs(w))[:2]
            w = np.zeros_like(w)
            w[keep] = self.weights[keep]
        p = float(_sigmoid(np.asarray(z @ w + self.bias)))
        return Prediction(p, max(p, 1.0 - p), "cheap" if cheap else "full")

    def accuracy(self, x: NDArray[np.float64], y: NDArray[np.float64]) -> float:
        """Fraction of rows classified right at threshold 0.5."""
        p = _sigmoid(((x - self.mean) / self.std) @ self.weights + self.bias)
        return float(((p >= 0.5) == (y >= 0.5)).mean())


def train_model(gen: FeatureGenerator, n: int = 4000, iterations: int = 12) -> LogisticModel:
    """Fit a logistic regression by Newton's method on ``n`` generated, labelled rows."""
    x = gen.sample(n)
    y = gen.labels(x)
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
    a = np.hstack([(x - mean) / std, np.ones((n, 1))])
    theta = np.zeros(a.shape[1])
    for _ in range(iterations):
        p = _sigmoid(a @ theta)
        grad = a.T @ (p - y) / n
        hess = (a.T * (p * (1 - p))) @ a / n + 1e-6 * np.eye(a.shape[1])
        theta -= np.linalg.solve(hess, grad)
    return LogisticModel(mean, std, theta[:-1].copy(), float(theta[-1]))


def _sigmoid(z: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -30, 30))))
