"""``sdk``: the recorder's queue and histogram buckets."""

from __future__ import annotations

from itertools import pairwise

from pydantic import Field, field_validator

from inferwatch.config._types import FrozenModel

__all__ = ["DEFAULT_BUCKETS", "SdkConfig"]

# Inference latencies: 1 ms to 10 s, roughly x2 / x2.5 steps.
DEFAULT_BUCKETS: tuple[float, ...] = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)


class SdkConfig(FrozenModel):
    """How the SDK records."""

    queue_size: int = Field(65536, ge=1, description="bounded queue between request and aggregator")
    buckets: tuple[float, ...] = Field(DEFAULT_BUCKETS, description="latency histogram bounds, s")

    @field_validator("buckets")
    @classmethod
    def _increasing(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if not v or any(b <= a for a, b in pairwise(v)):
            raise ValueError("buckets must be a non-empty, strictly increasing list")
        return v
