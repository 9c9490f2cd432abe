"""``scrape``: the Prometheus-text targets the embedded server scrapes."""

from __future__ import annotations

from pydantic import Field

from inferwatch.config._types import Duration, FrozenModel
from inferwatch.model import Dimension

__all__ = ["ScrapeConfig", "ScrapeTarget"]


class ScrapeTarget(FrozenModel):
    """One scrape target; ``interval`` defaults by dimension (DESIGN.md)."""

    job: str
    url: str
    dimension: Dimension = Dimension.SERVICE
    interval: Duration | None = None
    timeout: Duration = 10.0
    labels: dict[str, str] = Field(default_factory=dict)


class ScrapeConfig(FrozenModel):
    """All scrape targets."""

    targets: tuple[ScrapeTarget, ...] = ()
