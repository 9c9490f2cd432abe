"""The collector contract: ``collect(now)`` returns samples named after catalog specs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from inferwatch.model import Labels, MetricSpec, Sample

__all__ = ["Collector", "sample"]


@runtime_checkable
class Collector(Protocol):
    """Something that reads the machine and returns one batch of samples.

    ``collect`` never raises: a part that cannot be read is left out (and
    logged once by the collector), so one missing source never hides the rest.
    """

    name: str

    def collect(self, now: float) -> list[Sample]:
        """Read everything once; every sample is stamped ``now`` (Unix seconds)."""
        ...


def sample(spec: MetricSpec, now: float, value: float, labels: Mapping[str, str] | None = None) -> Sample:
    """A sample of ``spec`` with ``labels`` (which must be exactly the spec's label names)."""
    got = dict(labels or {})
    if tuple(sorted(got)) != tuple(sorted(spec.labels)):
        raise ValueError(f"{spec.name}: labels {sorted(got)} do not match the catalog's {list(spec.labels)}")
    got["__name__"] = spec.name
    return Sample(Labels(got), now, float(value))
