"""Band providers for rules with ``threshold: dynamic`` (the rules package's ``BandProvider``).

The rules package cannot import baseline (package order), so it declares a
protocol and takes a factory; :func:`band_provider_factory` is that factory.
The lead wires it into the server::

    Evaluator(rules, store, band_factory=band_provider_factory(config.baseline))
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from inferwatch.baseline._band import Baseline
from inferwatch.baseline._prophet import ProphetBaseline
from inferwatch.baseline._seasonal import SeasonalBaseline
from inferwatch.config._baseline import BaselineConfig
from inferwatch.config._rules import DynamicThreshold

__all__ = ["SeriesBands", "band_provider_factory"]

log = logging.getLogger(__name__)


class SeriesBands:
    """One rule's baselines, one per series key; scores a point, then learns it.

    Satisfies ``inferwatch.rules.BandProvider`` structurally. At most
    ``max_series`` keys are tracked; points of further keys get no band (the
    rule's static fallback applies) and are counted in ``dropped``.

    >>> bands = SeriesBands(BaselineConfig(), DynamicThreshold(min_history=0))
    >>> bands.band("latency{job=\\"api\\"}", 0.0, 1.0) is None  # no history yet
    True
    """

    def __init__(self, config: BaselineConfig, dynamic: DynamicThreshold, *,
                 max_series: int = 10_000) -> None:
        self.config = config
        self.dynamic = dynamic
        self.max_series = max_series
        self.dropped = 0
        self._series: dict[str, Baseline] = {}

    def _new(self) -> Baseline:
        cfg, dyn = self.config, self.dynamic
        if cfg.method == "prophet":
            return ProphetBaseline(cfg.prophet.model_copy(
                update={"band": dyn.band, "min_history": dyn.min_history}))
        update: dict[str, Any] = {"band": dyn.band, "min_history": dyn.min_history}
        if dyn.windows is not None:
            update["windows"] = dyn.windows
        if dyn.level_points is not None:
            update["level_points"] = dyn.level_points
        return SeasonalBaseline(cfg.seasonal.model_copy(update=update))

    def band(self, key: str, t: float, value: float) -> tuple[float, float] | None:
        """The ``(low, high)`` band for ``key`` at ``t`` before learning ``value``; never raises."""
        baseline = self._series.get(key)
        if baseline is None:
            if len(self._series) >= self.max_series:
                self.dropped += 1
                return None
            baseline = self._series[key] = self._new()
        try:
            predicted = baseline.predict(t)
            baseline.learn(t, value)
        except Exception:  # the evaluator's hot path: log and fall back, never raise
            log.exception("baseline for %s failed; the static fallback applies", key)
            return None
        return None if predicted is None else (predicted.lower, predicted.upper)

    def export_state(self) -> dict[str, Any]:
        """Every series' state, JSON-ready (persisted by the rules' state store)."""
        return {"version": 1, "series": {k: b.to_state() for k, b in self._series.items()}}

    def restore_state(self, state: Any) -> None:
        """Restore :meth:`export_state`'s output; a malformed series is logged and starts fresh."""
        series = state.get("series", {}) if isinstance(state, dict) else {}
        for key, s in list(series.items())[: self.max_series]:
            try:
                self._series[key] = _from_state(s)
            except (ValueError, TypeError, KeyError, AttributeError):
                log.warning("discarding unreadable baseline state of %s", key)

    def __len__(self) -> int:
        return len(self._series)


def _from_state(state: dict[str, Any]) -> Baseline:
    if state.get("method") == "prophet":
        return ProphetBaseline.from_state(state)
    return SeasonalBaseline.from_state(state)


def band_provider_factory(
    config: BaselineConfig | None = None,
) -> Callable[[str, DynamicThreshold], SeriesBands]:
    """The ``band_factory`` for ``inferwatch.rules.Evaluator``: one :class:`SeriesBands` per rule."""
    cfg = config or BaselineConfig()

    def factory(rule_name: str, dynamic: DynamicThreshold) -> SeriesBands:
        return SeriesBands(cfg, dynamic)

    return factory
