"""Window sketches: a window's sums as gauge samples that worker processes add up.

A streaming aggregator's window is a set of sums (bin counts, rows, anomalous
rows, confidence totals). Every one of them adds across worker processes, so
the service's window is the sum of its workers' windows: each worker publishes
its open and last closed windows as samples of a ``SKETCH_PREFIX`` family
(labelled with the window's start), the SDK's multiprocess store carries them
(one row per worker), and the reader adds the samples of the window it scores,
then computes PSI and ratios once on the sum. In one process the same path runs
on that process's sketch alone, so one worker and N workers share one formula.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from inferwatch.model import metrics as catalog

__all__ = ["Key", "decode", "encode", "is_sketch", "window_label"]

Key = tuple[str, ...]
"""A sketch value's key: the spec's label values after (service, model, window)."""


def window_label(start: float) -> str:
    """The ``window`` label of the window starting at ``start`` (every worker computes the same)."""
    return repr(float(start))


def is_sketch(family: Metric) -> bool:
    """Whether ``family`` is a sketch (published to other workers, never exposed)."""
    return family.name.startswith(catalog.SKETCH_PREFIX)


def encode(
    spec: catalog.MetricSpec, service: str, model: str, windows: Mapping[float, Mapping[Key, float]],
) -> GaugeMetricFamily:
    """One family holding the values of each window, keyed by its start.

    >>> fam = encode(catalog.CONFIDENCE_SKETCH, "s", "m", {60.0: {("count",): 3.0}})
    >>> [(s.labels["window"], s.labels["field"], s.value) for s in fam.samples]
    [('60.0', 'count', 3.0)]
    """
    family = GaugeMetricFamily(spec.name, spec.help, labels=spec.labels)
    for start, values in windows.items():
        label = window_label(start)
        for key, value in values.items():
            family.add_metric([service, model, label, *key], float(value))
    return family


def decode(
    families: Sequence[Metric], spec: catalog.MetricSpec, service: str, model: str, start: float,
) -> dict[Key, float]:
    """The values of window ``start``, each summed over every sample (worker) that holds it.

    >>> a = encode(catalog.CONFIDENCE_SKETCH, "s", "m", {0.0: {("count",): 3.0}, 60.0: {("count",): 1.0}})
    >>> b = encode(catalog.CONFIDENCE_SKETCH, "s", "m", {60.0: {("count",): 2.0}})
    >>> decode([a, b], catalog.CONFIDENCE_SKETCH, "s", "m", 60.0)
    {('count',): 3.0}
    """
    want, extra = window_label(start), spec.labels[3:]
    out: dict[Key, float] = {}
    for family in families:
        if family.name != spec.name:
            continue
        for s in family.samples:
            lb = s.labels
            if lb.get("window") == want and lb.get("service") == service and lb.get("model", "") == model:
                key = tuple(lb.get(name, "") for name in extra)
                out[key] = out.get(key, 0.0) + float(s.value)
    return out
