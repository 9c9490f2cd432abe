"""Prophet behind the baseline interface (optional extra ``inferwatch[prophet]``).

Prophet fits a whole history, so to stay O(1) amortised it is refitted every
``refit_every`` on a bounded trailing ``history`` window; each fit forecasts a
grid up to the next refit, and ``predict`` reads that grid. The band is the
forecast ± ``band`` robust deviations (1.4826·MAD) of the fit's residuals, the
same rule as the seasonal baseline (Prophet's own intervals need sampling and
are far slower).
"""

from __future__ import annotations

import importlib.util
import logging
import math
from collections import deque
from typing import Any

import numpy as np

from inferwatch._exceptions import ToolMissingError
from inferwatch.baseline._band import Band
from inferwatch.baseline._ring import robust_sigma
from inferwatch.baseline._settings import ProphetSettings

__all__ = ["ProphetBaseline", "prophet_available"]

INSTALL_HINT = "Prophet is not installed: pip install 'inferwatch[prophet]'"
_MAX_POINTS = 50_000  # cap on the trailing window whatever the sample rate


def prophet_available() -> bool:
    """Whether the ``prophet`` package can be imported."""
    return importlib.util.find_spec("prophet") is not None


def _fit_forecast(times: np.ndarray, values: np.ndarray, until: float,
                  step: float) -> tuple[np.ndarray, np.ndarray, float]:
    try:
        import pandas as pd  # type: ignore[import-untyped,unused-ignore]
        from prophet import Prophet
    except ImportError as exc:
        raise ToolMissingError(INSTALL_HINT) from exc
    for name in ("cmdstanpy", "prophet"):  # both log every fit at INFO through own handlers
        logger = logging.getLogger(name)
        logger.setLevel(logging.WARNING)
        for handler in logger.handlers:
            handler.setLevel(logging.WARNING)
    span = float(times[-1] - times[0])
    model = Prophet(daily_seasonality=span >= 2 * 86400, weekly_seasonality=span >= 14 * 86400,
                    yearly_seasonality=False, uncertainty_samples=0)
    model.fit(pd.DataFrame({"ds": pd.to_datetime(times, unit="s"), "y": values}))
    fitted = model.predict(pd.DataFrame({"ds": pd.to_datetime(times, unit="s")}))["yhat"].to_numpy()
    grid = np.arange(times[-1] + step, until + step, step)
    future = model.predict(pd.DataFrame({"ds": pd.to_datetime(grid, unit="s")}))["yhat"].to_numpy()
    return grid, future.astype(np.float64), robust_sigma(values - fitted)


class ProphetBaseline:
    """Prophet forecasts refitted on a bounded window; same interface as ``SeasonalBaseline``.

    Raises ``ToolMissingError`` with the install hint at the first fit when
    Prophet is missing.
    """

    def __init__(self, config: ProphetSettings | None = None) -> None:
        self.config = config or ProphetSettings()
        self._history: deque[tuple[float, float]] = deque(maxlen=_MAX_POINTS)
        self._grid = np.empty(0)
        self._forecast = np.empty(0)
        self._sigma = math.nan
        self._next_fit = -math.inf

    @property
    def learned(self) -> bool:
        """Whether a fit has been made (a band exists)."""
        return bool(self._grid.size) and not math.isnan(self._sigma)

    def predict(self, t: float) -> Band | None:
        """The band at ``t`` from the last fit's forecast grid (``None`` before the first fit)."""
        if not self._grid.size or math.isnan(self._sigma):
            return None
        expected = float(np.interp(t, self._grid, self._forecast))
        half = self.config.band * max(self._sigma, 1e-9 * max(1.0, abs(expected)))
        return Band(expected, expected - half, expected + half)

    def learn(self, t: float, value: float) -> None:
        """Add the point; refit when ``refit_every`` has passed (on the trailing window)."""
        if not (math.isfinite(t) and math.isfinite(value)):
            return
        if self._history and t < self._history[-1][0]:
            return
        self._history.append((t, value))
        while self._history and self._history[0][0] < t - self.config.history:
            self._history.popleft()
        if t >= self._next_fit and t - self._history[0][0] >= self.config.min_history:
            self._refit(t)

    def _refit(self, t: float) -> None:
        arr = np.asarray(self._history, dtype=np.float64)
        step = float(np.median(np.diff(arr[:, 0]))) if arr.shape[0] > 1 else 60.0
        until = t + self.config.refit_every
        self._grid, self._forecast, self._sigma = _fit_forecast(arr[:, 0], arr[:, 1], until, step)
        self._next_fit = until

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state: the trailing window and the current forecast grid."""
        return {"method": "prophet", "config": self.config.to_dict(),
                "history": [list(p) for p in self._history], "grid": self._grid.tolist(),
                "forecast": self._forecast.tolist(),
                "sigma": None if math.isnan(self._sigma) else self._sigma,
                "next_fit": None if math.isinf(self._next_fit) else self._next_fit}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> ProphetBaseline:
        """Rebuild from ``to_state`` (no refit: the saved forecast grid is reused)."""
        b = cls(ProphetSettings.from_dict(state["config"]))
        b._history.extend((float(t), float(v)) for t, v in state["history"])
        b._grid = np.asarray(state["grid"], dtype=np.float64)
        b._forecast = np.asarray(state["forecast"], dtype=np.float64)
        b._sigma = math.nan if state["sigma"] is None else float(state["sigma"])
        b._next_fit = -math.inf if state["next_fit"] is None else float(state["next_fit"])
        return b
