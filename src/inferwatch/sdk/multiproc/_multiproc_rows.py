"""How a worker's families become rows of the shared file, and merged rows families again."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Sample

__all__ = ["MONOTONIC_SUFFIXES", "Row", "family", "flatten"]

MONOTONIC_SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_count", "_sum"),
    "summary": ("_count", "_sum"),
}

Row = tuple[str, int, float, str | None, float | None]
"""One sample as published: family, monotonic flag, value, exemplar JSON, exemplar timestamp."""


def flatten(families: Iterable[Metric]) -> Iterator[tuple[tuple[str, str], Row]]:
    """The samples worth publishing, keyed by (sample name, canonical labels JSON)."""
    for f in families:
        suffixes = MONOTONIC_SUFFIXES.get(f.type)
        for s in f.samples:
            mono = suffixes is not None
            if suffixes is not None and (not s.name.endswith(suffixes) or s.name == f.name):
                continue  # _created, summary quantiles: not mergeable
            ex, ex_ts = None, None
            if s.exemplar is not None:
                ex_ts = float(s.exemplar.timestamp or 0.0)
                ex = json.dumps([s.exemplar.labels, s.exemplar.value, s.exemplar.timestamp])
            labels = json.dumps(sorted(s.labels.items()), separators=(",", ":"))
            yield (s.name, labels), (f.name, int(mono), float(s.value), ex, ex_ts)


def family(name: str, typ: str, help_: str, unit: str, samples: list[Sample]) -> Metric:
    """A family of merged samples, in exposition order."""
    out = Metric(name, help_, typ, unit)
    out.samples = sorted(samples, key=_sample_order)
    return out


_SUFFIX_RANK = {"_bucket": 0, "_count": 1, "_sum": 2}


def _sample_order(s: Sample) -> tuple[Any, ...]:
    """Series by labels; within a histogram series the buckets by bound, then _count, _sum."""
    rest = sorted((k, v) for k, v in s.labels.items() if k != "le")
    le = float(s.labels["le"]) if "le" in s.labels else 0.0
    return rest, _SUFFIX_RANK.get(s.name[s.name.rfind("_"):], 3), le
