"""Band providers for rules with ``threshold: dynamic`` (the rules package's ``BandProvider``).

The rules package cannot import baseline (package order), so it declares a
protocol and takes a factory; :func:`band_provider_factory` is that factory.
The lead wires it into the server::

    settings = BaselineSettings.from_dict(config.baseline.model_dump())
    Evaluator(rules, store, band_factory=band_provider_factory(settings))

A rule's ``dynamic:`` section (the config's ``DynamicThreshold``) is read through the
:class:`RuleBand` protocol: baseline sits below config in the package table.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable
from typing import Any, Protocol

from inferwatch.baseline._band import Band, Baseline, Direction, band_excess, is_anomalous, on_side
from inferwatch.baseline._likelihood import NoveltyScorer
from inferwatch.baseline._prophet import ProphetBaseline
from inferwatch.baseline._recurrence import RecurrenceGate, recurrence_gate
from inferwatch.baseline._seasonal import SeasonalBaseline
from inferwatch.baseline._settings import BaselineSettings, SeasonalSettings

__all__ = ["RuleBand", "SeriesBands", "band_provider_factory", "rule_seasonal_config"]

log = logging.getLogger(__name__)


class RuleBand(Protocol):
    """What a band reads of one rule's ``dynamic:`` settings (``None``: the baseline's own)."""

    @property
    def band(self) -> float: ...
    @property
    def direction(self) -> Direction: ...
    @property
    def min_history(self) -> float: ...
    @property
    def windows(self) -> tuple[int, ...] | None: ...
    @property
    def level_points(self) -> int | None: ...
    @property
    def long_range(self) -> bool | None: ...
    @property
    def recurrence(self) -> int | None: ...
    @property
    def novelty(self) -> bool | None: ...


class SeriesBands:
    """One rule's baselines, one per series key; scores a point, then learns it.

    Satisfies ``inferwatch.rules.BandProvider`` structurally. At most
    ``max_series`` keys are tracked; points of further keys get no band (the
    rule's static fallback applies) and are counted in ``dropped``. Each series
    also has a recurrence gate (``baseline.recurrence``, or the rule's own): an
    excursion that only repeats the series' earlier ones is ``held`` and its
    alert stays pending.

    >>> from types import SimpleNamespace
    >>> rule = SimpleNamespace(band=6.0, direction="above", min_history=0.0, windows=None,
    ...                        level_points=None, long_range=None, recurrence=None, novelty=None)
    >>> bands = SeriesBands(BaselineSettings(), rule)
    >>> bands.band("latency{job=\\"api\\"}", 0.0, 1.0) is None  # no history yet
    True
    """

    def __init__(self, config: BaselineSettings, dynamic: RuleBand, *,
                 max_series: int = 10_000) -> None:
        self.config = config
        self.dynamic = dynamic
        self.max_series = max_series
        self.dropped = 0
        self._series: dict[str, Baseline] = {}
        self._gates: dict[str, RecurrenceGate] = {}
        self._novelty: dict[str, NoveltyScorer] = {}  # only with baseline.novelty.enabled
        # one frozen settings object shared by every series of the rule, not a copy each
        self._seasonal_config: SeasonalSettings | None = None

    def _new(self) -> Baseline:
        cfg, dyn = self.config, self.dynamic
        if cfg.method == "prophet":
            return ProphetBaseline(dataclasses.replace(
                cfg.prophet, band=dyn.band, min_history=dyn.min_history))
        return SeasonalBaseline(self._seasonal())

    def _seasonal(self) -> SeasonalSettings:
        if self._seasonal_config is None:
            self._seasonal_config = rule_seasonal_config(self.config, self.dynamic)
        return self._seasonal_config

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
            novel = self._novel(key, value, predicted)
            if predicted is not None:
                gate = self._gate(key)
                if gate is not None:
                    outside = novel or is_anomalous(predicted, value, self.dynamic.direction)
                    gate.step(t, value, predicted.expected, outside)
        except Exception:  # the evaluator's hot path: log and fall back, never raise
            log.exception("baseline for %s failed; the static fallback applies", key)
            return None
        if novel:
            return excluding(predicted, value, self.dynamic.direction)
        return None if predicted is None else (predicted.lower, predicted.upper)

    @property
    def novelty_on(self) -> bool:
        """Whether this rule uses the novelty detector (its own ``novelty``, else the config's)."""
        on = self.dynamic.novelty
        return self.config.novelty.enabled if on is None else on

    def _novel(self, key: str, value: float, predicted: Band | None) -> bool:
        """The novelty detector's verdict on ``value`` (False when it is off), on the watched side."""
        if not self.novelty_on:
            return False
        scorer = self._novelty.get(key)
        if scorer is None:
            scorer = self._novelty[key] = NoveltyScorer(self.config.novelty)
        excess = 0.0 if predicted is None else band_excess(predicted, value)
        if not scorer.step(value, excess):
            return False
        return on_side(predicted, value, self.dynamic.direction)

    def _gate(self, key: str) -> RecurrenceGate | None:
        gate = self._gates.get(key)
        if gate is None:
            gate = recurrence_gate(self.config, self.dynamic.recurrence)
            if gate is not None:
                self._gates[key] = gate
        return gate

    def held(self, key: str) -> bool:
        """Whether ``key``'s excursion in progress repeats its earlier ones (its alert waits)."""
        gate = self._gates.get(key)
        return gate is not None and gate.held

    def learned(self) -> dict[str, bool]:
        """Each tracked series key and whether its band is learned yet (``False``: fallback)."""
        return {k: b.learned for k, b in self._series.items()}

    def warmup(self) -> dict[str, dict[str, float]]:
        """Each tracked series' warm-up progress (seasonal baselines; others report none).

        With the novelty detector on, also its points seen against the ``min_points`` it
        needs before it may flag (it judges a short series before the band does).
        """
        out = {k: b.warmup() for k, b in self._series.items() if isinstance(b, SeasonalBaseline)}
        for k, scorer in self._novelty.items():
            out.setdefault(k, {}).update({"novelty_points": scorer.likelihood.seen,
                                          "novelty_min_points": scorer.config.min_points})
        return out

    def export_state(self) -> dict[str, Any]:
        """Every series' state, JSON-ready (persisted by the rules' state store)."""
        return {"version": 1, "series": {k: b.to_state() for k, b in self._series.items()},
                "gates": {k: g.to_state() for k, g in self._gates.items()},
                "novelty": {k: n.to_state() for k, n in self._novelty.items()}}

    def restore_state(self, state: Any) -> None:
        """Restore :meth:`export_state`'s output; a malformed series is logged and starts fresh."""
        series = state.get("series", {}) if isinstance(state, dict) else {}
        seasonal = self._seasonal() if self.config.method == "seasonal" else None
        relearn = 0
        for key, s in list(series.items())[: self.max_series]:
            try:
                baseline = _from_state(s)
            except (ValueError, TypeError, KeyError, AttributeError):
                log.warning("discarding unreadable baseline state of %s", key)
                continue
            if seasonal is not None:
                # the settings are the config's now: thresholds apply to what was learned;
                # a changed shape (rings, slots, windows) or method is learned afresh
                if not isinstance(baseline, SeasonalBaseline) or not baseline.adopt(seasonal):
                    relearn += 1
                    continue
            elif not isinstance(baseline, ProphetBaseline):
                relearn += 1
                continue
            self._series[key] = baseline
        if relearn:
            log.info("baseline settings changed: %d series learn afresh", relearn)
        gates = state.get("gates", {}) if isinstance(state, dict) else {}  # older states: none
        wanted = recurrence_gate(self.config, self.dynamic.recurrence)
        for key, g in gates.items():
            if key not in self._series or wanted is None:
                continue
            try:
                gate = RecurrenceGate.from_state(g)
            except (ValueError, TypeError, KeyError, AttributeError):
                log.warning("discarding unreadable recurrence state of %s", key)
                continue
            # the remembered excursions carry over; the settings are the config's now
            gate.count, gate.horizon, gate.gap, gate.debounce = (
                wanted.count, wanted.horizon, wanted.gap, wanted.debounce)
            self._gates[key] = gate
        self._restore_novelty(state.get("novelty", {}) if isinstance(state, dict) else {})

    def _restore_novelty(self, saved: Any) -> None:
        if not self.novelty_on or not isinstance(saved, dict):
            return
        for key, n in saved.items():
            if key not in self._series:
                continue
            try:
                self._novelty[key] = NoveltyScorer.from_state(n, self.config.novelty)
            except (ValueError, TypeError, KeyError, AttributeError):
                log.warning("discarding unreadable novelty state of %s", key)

    def __len__(self) -> int:
        return len(self._series)


def excluding(band: Band | None, value: float, direction: str) -> tuple[float, float]:
    """A band that puts ``value`` outside on the watched side: how a novelty flag reaches a
    rule that only compares values with bands (as the window means fold into the band)."""
    low, high = (-math.inf, math.inf) if band is None else (band.lower, band.upper)
    above = direction == "above" or (direction == "both" and (band is None or value >= band.expected))
    if above:
        return low, min(high, math.nextafter(value, -math.inf))
    return max(low, math.nextafter(value, math.inf)), high


def _from_state(state: dict[str, Any]) -> Baseline:
    if state.get("method") == "prophet":
        return ProphetBaseline.from_state(state)
    return SeasonalBaseline.from_state(state)


def rule_seasonal_config(config: BaselineSettings, dynamic: RuleBand) -> SeasonalSettings:
    """The seasonal settings of one dynamic rule: the config's, with the rule's own on top."""
    update: dict[str, Any] = {"band": dynamic.band, "min_history": dynamic.min_history}
    if dynamic.windows is not None:
        update["windows"] = dynamic.windows
    if dynamic.level_points is not None:
        update["level_points"] = dynamic.level_points
    if dynamic.long_range is False:
        update["range_horizon"] = 0.0
    return dataclasses.replace(config.seasonal, **update)


def band_provider_factory(
    config: BaselineSettings | None = None,
) -> Callable[[str, RuleBand], SeriesBands]:
    """The ``band_factory`` for ``inferwatch.rules.Evaluator``: one :class:`SeriesBands` per rule."""
    cfg = config or BaselineSettings()

    def factory(rule_name: str, dynamic: RuleBand) -> SeriesBands:
        return SeriesBands(cfg, dynamic)

    return factory
