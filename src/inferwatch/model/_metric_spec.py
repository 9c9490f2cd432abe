"""A metric's written-down shape (``MetricSpec``) and the shorthands the catalog's sections share."""

from __future__ import annotations

from dataclasses import dataclass

from inferwatch.model._samples import MetricKind

__all__ = ["MetricSpec"]


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A metric's name (as exposed), kind, label names and help text."""

    name: str
    kind: MetricKind
    help: str
    labels: tuple[str, ...] = ()
    unit: str = ""

    @property
    def family(self) -> str:
        """The family name as prometheus-client wants it (counters lose ``_total``)."""
        if self.kind is MetricKind.COUNTER and self.name.endswith("_total"):
            return self.name[: -len("_total")]
        return self.name


_C, _G, _H, _U = MetricKind.COUNTER, MetricKind.GAUGE, MetricKind.HISTOGRAM, MetricKind.UNTYPED
_SVC = ("service", "model", "version")
