"""Samples to prometheus-client metric families, typed and described from the catalog."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    UnknownMetricFamily,
)

from inferwatch.model import CATALOG, MetricKind, MetricSpec, Sample

__all__ = ["SampleCollector"]

_FAMILY: dict[MetricKind, Any] = {
    MetricKind.COUNTER: CounterMetricFamily,
    MetricKind.GAUGE: GaugeMetricFamily,
}


class SampleCollector:
    """A prometheus-client collector exposing whatever ``source()`` returns.

    Each family's type and help come from the catalog; a label the sample
    lacks (an empty value) is exposed as ``""`` so every series of a family
    has the same label names.

    >>> from prometheus_client import CollectorRegistry, generate_latest
    >>> from inferwatch.collect import sample
    >>> from inferwatch.model import metrics
    >>> reg = CollectorRegistry()
    >>> reg.register(SampleCollector(lambda: [sample(metrics.NODE_LOAD1, 0.0, 0.5)]))
    >>> b"node_load1 0.5" in generate_latest(reg)
    True
    """

    def __init__(self, source: Callable[[], list[Sample]]) -> None:
        self._source = source

    def collect(self) -> Iterator[Metric]:
        """Families built from the current samples, in first-seen order."""
        groups: dict[str, list[Sample]] = {}
        for s in self._source():
            groups.setdefault(s.labels.name, []).append(s)
        for name, samples in groups.items():
            spec = CATALOG.get(name) or MetricSpec(name, MetricKind.UNTYPED, f"{name} (not in the catalog)")
            yield _family(spec, samples)


def _family(spec: MetricSpec, samples: list[Sample]) -> Metric:
    cls = _FAMILY.get(spec.kind, UnknownMetricFamily)
    family_name = spec.family if cls is CounterMetricFamily else spec.name
    fam = cls(family_name, spec.help, labels=list(spec.labels))
    for s in samples:
        fam.add_metric([s.labels.get(k, "") for k in spec.labels], s.v)
    out: Metric = fam
    return out
