"""``collect``: host and GPU collection."""

from __future__ import annotations

from pydantic import Field

from inferwatch.settings._types import Duration, FrozenModel

__all__ = ["CollectConfig"]


class CollectConfig(FrozenModel):
    """Collector settings; owned by the infrastructure issue, extended there."""

    interval: Duration = Field(15.0, description="host and GPU collection interval")
    gpu: bool = Field(True, description="collect GPU metrics through NVML (off: host and process only)")
