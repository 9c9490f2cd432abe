"""Data quality per feature against the reference profile: missing, out of range, unseen categories.

An SDK aggregator of kind ``prediction`` (the same feature payloads as the
drift aggregator). Per tumbling window and feature it counts the rows whose
value is missing, numeric values outside the reference's [minimum, maximum],
and categories the reference never had; when a window with at least
``min_samples`` rows (readable or not) closes, each count over its readable rows is exported as
``inferwatch_feature_data_quality_ratio{feature, check}``. Payloads that cannot
be read at all (a string where a number belongs) are counted in ``invalid`` and
dropped, as the drift aggregator does; the numeric features whose values made
them unreadable get check ``type_error``, a share of all the window's rows
(readable or not).

>>> from inferwatch.quality import build_profile
>>> profile = build_profile({"x": np.arange(100.0), "c": np.array(["a", "b"] * 50, dtype=object)})
>>> agg = DataQualityAggregator(profile, service="s", window=60.0, min_samples=4)
>>> rows = [{"x": 5.0, "c": "a"}, {"x": 500.0, "c": "z"}, {"x": None, "c": "b"}, {"x": 1.0, "c": None}]
>>> agg.consume("prediction", [(r, None, None) for r in rows + [{"x": "5", "c": "a"}]], 1.0)
>>> agg.consume("prediction", [], 61.0)
>>> agg.last["x"], agg.last["c"]
({'missing': 0.25, 'out_of_range': 0.25, 'type_error': 0.2}, {'missing': 0.25, 'unseen': 0.25})
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from inferwatch._exceptions import InputError
from inferwatch.model import metrics as catalog
from inferwatch.quality.online._rows import Layout
from inferwatch.quality.online._window import TumblingWindow
from inferwatch.quality.profile import CategoricalProfile, NumericProfile, Profile

__all__ = ["DataQualityAggregator"]


class DataQualityAggregator:
    """Missing, out-of-range and unseen shares per feature of the last closed window."""

    kinds: tuple[str, ...] = ("prediction",)

    def __init__(
        self, profile: Profile, *, service: str, model: str = "", window: float = 3600.0,
        min_samples: int = 100,
    ) -> None:
        if min_samples < 1:
            raise InputError(f"min_samples must be at least 1, got {min_samples}")
        self.labels = (service, model)
        self.min_samples = min_samples
        self._layout = Layout(profile)
        self._num = [f for f in profile.features if isinstance(f, NumericProfile)]
        self._cat = [f for f in profile.features if isinstance(f, CategoricalProfile)]
        self._sets = [frozenset(f.categories) for f in self._cat]
        self._window = TumblingWindow(window)
        self._lock = threading.Lock()
        self._reset()
        self.invalid = 0
        self.last: dict[str, dict[str, float]] | None = None
        """The last closed window's shares per feature and check (None before one closes)."""
        self.last_rows = 0

    def _reset(self) -> None:
        self._rows = 0
        self._seen = 0  # rows readable or not: the type errors' denominator
        self._num_type = np.zeros(len(self._num), np.int64)
        self._num_missing = np.zeros(len(self._num), np.int64)
        self._num_out = np.zeros(len(self._num), np.int64)
        self._cat_missing = np.zeros(len(self._cat), np.int64)
        self._cat_unseen = np.zeros(len(self._cat), np.int64)

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Count a batch of ``(features, confidence, probabilities)`` payloads."""
        with self._lock:
            self._roll(now)
            if not payloads:
                return
            items = [p[0] if isinstance(p, tuple) and p else p for p in payloads]
            block = self._layout.block(items)
            self.invalid += block.invalid
            if not block.invalid:
                self._seen += block.rows
            else:  # only then look for the features at fault (the common path pays nothing)
                for features in items:
                    errors, rows = self._type_errors(features)
                    self._num_type += errors
                    self._seen += rows  # a dropped batch's rows too: a share never passes 1
            if not block.rows:
                return
            self._rows += block.rows
            for j, f in enumerate(self._num):
                col = block.numeric[:, j]
                nan = np.isnan(col)
                self._num_missing[j] += int(nan.sum())
                self._num_out[j] += int(((col < f.minimum) | (col > f.maximum)).sum())
            for j, seen in enumerate(self._sets):
                cats = block.categorical[j]
                self._cat_missing[j] += sum(v is None for v in cats)
                self._cat_unseen[j] += sum(v is not None and v not in seen for v in cats)

    def _type_errors(self, features: Any) -> tuple[npt.NDArray[np.int64], int]:
        """Per numeric feature: the values of one payload that cannot be read as numbers; its rows."""
        out = np.zeros(len(self._num), np.int64)
        if isinstance(features, Mapping):  # a row, or a batch of columns; a string is never a number here
            first = next(iter(features.values()), None)
            rows = len(first) if isinstance(first, list | tuple | np.ndarray) else 1
            for j, f in enumerate(self._num):
                v = features.get(f.name)
                out[j] = sum(not _number(x) for x in (v if isinstance(v, list | tuple | np.ndarray) else [v]))
            return out, rows
        try:
            arr = np.asarray(features, dtype=object)
        except ValueError:  # ragged: a shape error, not a type error
            return out, 1
        arr = arr.reshape(1, -1) if arr.ndim == 1 else arr
        if arr.ndim == 2 and arr.shape[1] == len(self._layout.names):
            for j, f in enumerate(self._num):  # rows as arrays are cast like numpy's astype: "1.5" reads
                out[j] = sum(not _number(x, strings=True) for x in arr[:, self._layout.names.index(f.name)])
        return out, max(arr.shape[0], 1) if arr.ndim == 2 else 1

    def _roll(self, now: float) -> None:
        start = self._window.start
        if not (self._window.advance(now) and start is not None):
            return
        rows, seen = self._rows, self._seen
        # The window's evidence is every row it saw: a feature sent as text in every payload makes
        # no row readable, and that window must still publish its type errors.
        if seen >= self.min_samples:
            out: dict[str, dict[str, float]] = {}
            for j, f in enumerate(self._num):
                checks = {"type_error": self._num_type[j] / seen}
                if rows:  # the other checks read values: only readable rows have them
                    checks = {"missing": self._num_missing[j] / rows,
                              "out_of_range": self._num_out[j] / rows, **checks}
                out[f.name] = checks
            for j, cf in enumerate(self._cat):
                if rows:
                    out[cf.name] = {"missing": self._cat_missing[j] / rows,
                                    "unseen": self._cat_unseen[j] / rows}
            self.last = {k: {c: float(v) for c, v in d.items()} for k, d in out.items()}
            self.last_rows = seen
        self._reset()

    def collect(self, now: float) -> Iterable[Metric]:
        """The shares of the last closed window and its row count."""
        with self._lock:
            self._roll(now)
            last, rows = self.last, self.last_rows
        spec, win = catalog.FEATURE_DATA_QUALITY, catalog.DATA_QUALITY_WINDOW
        ratio = GaugeMetricFamily(spec.name, spec.help, labels=[*spec.labels])
        samples = GaugeMetricFamily(win.name, win.help, labels=[*win.labels])
        if last is not None:
            for feature, checks in last.items():
                for check, v in checks.items():
                    ratio.add_metric([*self.labels, feature, check], v)
            samples.add_metric(list(self.labels), float(rows))
        return [ratio, samples]

    def __repr__(self) -> str:
        return f"DataQualityAggregator(service={self.labels[0]!r}, model={self.labels[1]!r})"


def _number(v: Any, *, strings: bool = False) -> bool:
    """Whether a value reads as a number (None is missing, not a type error)."""
    if v is None:
        return True
    if isinstance(v, bool) or (isinstance(v, str) and not strings):
        return False
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True
