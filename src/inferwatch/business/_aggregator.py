"""Conversion tracking per experiment and variant, and the live A/B test, on ``/metrics``.

:class:`ConversionAggregator` consumes the ``outcome`` kind's
``(experiment, variant, converted)`` payloads and keeps two counters per
variant (O(variants) memory, cumulative since start: an A/B test needs all of
its data). For an experiment with two variants it exports the z-test p-value,
the difference (second minus first; the first is the ``controls`` entry, else
the first in sorted order) and the mSPRT always-valid p-value, updated at every
batch (each batch is one "look"). With more variants the p-value is the
chi-square test over all of them and no difference or sequential test is given.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from scipy import stats

from inferwatch.business._abtest import Arm, SequentialTest, z_test
from inferwatch.model import metrics as catalog

__all__ = ["ConversionAggregator"]


class ConversionAggregator:
    """Conversion rates and A/B tests from ``monitor.observe_outcome``.

    >>> agg = ConversionAggregator()
    >>> agg.consume("outcome", [("checkout", "A", i < 100) for i in range(1000)]
    ...             + [("checkout", "B", i < 150) for i in range(1000)], now=0.0)
    >>> round(agg.p_value("checkout"), 5), agg.rates("checkout")
    (0.00072, {'A': 0.1, 'B': 0.15})
    """

    kinds: tuple[str, ...] = ("outcome",)

    def __init__(self, *, tau: float = 0.05, controls: Mapping[str, str] | None = None) -> None:
        self.tau = tau
        self.controls = dict(controls or {})
        self._counts: dict[str, dict[str, list[int]]] = {}
        self._sequential: dict[str, SequentialTest] = {}
        self._lock = threading.Lock()
        self.invalid = 0

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Count a batch of outcomes; then one sequential look per experiment touched."""
        touched: set[str] = set()
        with self._lock:
            for p in payloads:
                try:
                    experiment, variant, converted = p
                    if not isinstance(experiment, str) or not isinstance(variant, str) or not experiment:
                        raise TypeError("experiment and variant must be strings")
                except (TypeError, ValueError):
                    self.invalid += 1
                    continue
                cell = self._counts.setdefault(experiment, {}).setdefault(variant, [0, 0])
                cell[0] += 1
                cell[1] += bool(converted)
                touched.add(experiment)
            for experiment in touched:
                arms = self._pair(experiment)
                if arms is not None:
                    test = self._sequential.setdefault(experiment, SequentialTest(tau=self.tau))
                    test.look(*arms)

    def _order(self, experiment: str) -> list[str]:
        variants = sorted(self._counts.get(experiment, {}))
        control = self.controls.get(experiment)
        if control in variants:
            variants.remove(control)
            variants.insert(0, control)
        return variants

    def _pair(self, experiment: str) -> tuple[Arm, Arm] | None:
        names = self._order(experiment)
        if len(names) != 2:
            return None
        cells = self._counts[experiment]
        return (Arm(cells[names[0]][1], cells[names[0]][0]), Arm(cells[names[1]][1], cells[names[1]][0]))

    def rates(self, experiment: str) -> dict[str, float]:
        """Conversion rate per variant."""
        with self._lock:
            return {v: c[1] / c[0] for v, c in sorted(self._counts.get(experiment, {}).items())}

    def p_value(self, experiment: str) -> float | None:
        """Fixed-horizon p-value (z-test for two variants, chi-square for more; None for one)."""
        with self._lock:
            return self._p(experiment)

    def _p(self, experiment: str) -> float | None:
        pair = self._pair(experiment)
        if pair is not None:
            return z_test(*pair)[1]
        cells = self._counts.get(experiment, {})
        if len(cells) < 3:
            return None
        table = np.array([[c[1], c[0] - c[1]] for c in cells.values()], dtype=np.float64)
        table = table[:, table.sum(axis=0) > 0]
        if table.shape[1] < 2:
            return 1.0
        return float(stats.chi2_contingency(table, correction=False).pvalue)

    def collect(self, now: float) -> Iterable[Metric]:
        """Rates, counters, p-values and differences."""
        specs = (catalog.CONVERSION_RATE, catalog.ABTEST_P_VALUE, catalog.ABTEST_SEQUENTIAL_P_VALUE,
                 catalog.ABTEST_DIFFERENCE)
        rate, p, seq, diff = (GaugeMetricFamily(s.family, s.help, labels=s.labels) for s in specs)
        outcomes, conversions = (
            CounterMetricFamily(s.family, s.help, labels=s.labels)
            for s in (catalog.EXPERIMENT_OUTCOMES_TOTAL, catalog.EXPERIMENT_CONVERSIONS_TOTAL)
        )
        with self._lock:
            for experiment in sorted(self._counts):
                for variant, (n, x) in sorted(self._counts[experiment].items()):
                    rate.add_metric([experiment, variant], x / n)
                    outcomes.add_metric([experiment, variant], float(n))
                    conversions.add_metric([experiment, variant], float(x))
                pv = self._p(experiment)
                if pv is not None:
                    p.add_metric([experiment], pv)
                pair = self._pair(experiment)
                if pair is not None:
                    diff.add_metric([experiment], pair[1].rate - pair[0].rate)
                    seq.add_metric([experiment], self._sequential[experiment].p_value)
        return [rate, p, seq, diff, outcomes, conversions]

    def __repr__(self) -> str:
        return f"ConversionAggregator({len(self._counts)} experiments)"
