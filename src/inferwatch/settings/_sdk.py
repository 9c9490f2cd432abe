"""``sdk``: the recorder's queue and histogram buckets."""

from __future__ import annotations

from itertools import pairwise

from pydantic import Field, field_validator

from inferwatch.model import metrics
from inferwatch.settings._types import FrozenModel

__all__ = ["DEFAULT_BUCKETS", "SdkConfig"]

DEFAULT_BUCKETS = metrics.LATENCY_BUCKETS


class SdkConfig(FrozenModel):
    """The YAML's ``sdk:`` section (``Monitor`` takes it or ``inferwatch.sdk.SdkConfig``, its light twin)."""

    queue_size: int = Field(65536, ge=1, description="bounded queue between request and aggregator")
    buckets: tuple[float, ...] = Field(DEFAULT_BUCKETS, description="latency histogram bounds, s")

    @field_validator("buckets")
    @classmethod
    def _increasing(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if not v or any(b <= a for a, b in pairwise(v)):
            raise ValueError("buckets must be a non-empty, strictly increasing list")
        return v
