"""``scrape``: the fixed targets and the jobs whose targets are discovered."""

from __future__ import annotations

from pydantic import Field, model_validator

from inferwatch.settings._types import FrozenModel
from inferwatch.settings.scrape._scrape import ScrapeTarget
from inferwatch.settings.scrape._scrape_job import ScrapeJob

__all__ = ["ScrapeConfig"]


class ScrapeConfig(FrozenModel):
    """All scrape targets; (job, instance) pairs must be unique, and so must the jobs' names."""

    targets: tuple[ScrapeTarget, ...] = ()
    jobs: tuple[ScrapeJob, ...] = ()
    prometheus_config: str | None = Field(
        None, description="a prometheus.yml whose scrape_configs are read as they are (added to jobs; "
        "relative to this file; docs/discovery.md)")

    @model_validator(mode="after")
    def _unique(self) -> ScrapeConfig:
        seen: set[tuple[str, str]] = set()
        for t in self.targets:
            key = (t.job, t.instance)
            if key in seen:
                raise ValueError(f"two targets with job={t.job!r} and instance={t.instance!r}")
            seen.add(key)
        fixed = {t.job for t in self.targets}
        names: set[str] = set()
        for j in self.jobs:
            if j.job in names or j.job in fixed:
                raise ValueError(f"job {j.job!r} is named twice (scrape.jobs names are unique, and "
                                 "not used by scrape.targets)")
            names.add(j.job)
        return self
