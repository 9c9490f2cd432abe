"""The SDK's own config: a plain frozen dataclass validated without pydantic (the SDK must import light).

The server's YAML has an ``sdk:`` section (``inferwatch.settings.SdkConfig``, pydantic) with
the same fields; ``Monitor`` takes either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from inferwatch._exceptions import ConfigError
from inferwatch.model import metrics

__all__ = ["DEFAULT_BUCKETS", "SdkConfig", "sdk_config"]

DEFAULT_BUCKETS: tuple[float, ...] = metrics.LATENCY_BUCKETS
"""The default latency histogram bounds, seconds (1 ms to 10 s)."""


@dataclass(frozen=True, slots=True)
class SdkConfig:
    """How the SDK records: the bounded queue's size and the latency histogram's bounds.

    >>> SdkConfig(queue_size=1024).buckets[:3]
    (0.001, 0.0025, 0.005)
    >>> SdkConfig(buckets=(0.5, 0.1))
    Traceback (most recent call last):
    ...
    inferwatch._exceptions.ConfigError: sdk.buckets: must be strictly increasing numbers, got (0.5, 0.1)
    """

    queue_size: int = 65536
    buckets: tuple[float, ...] = DEFAULT_BUCKETS

    def __post_init__(self) -> None:
        q = self.queue_size
        if not isinstance(q, int) or isinstance(q, bool) or q < 1:
            raise ConfigError(f"sdk.queue_size: must be an integer >= 1, got {q!r}")
        b = self.buckets
        if isinstance(b, list):  # as pydantic accepted: kept frozen as a tuple
            b = tuple(b)
            object.__setattr__(self, "buckets", b)
        ok = isinstance(b, tuple) and b and all(
            isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in b)
        if not ok or any(y <= x for x, y in pairwise(b)):
            raise ConfigError(
                f"sdk.buckets: must be strictly increasing numbers, got {b!r}")


def sdk_config(config: Any) -> SdkConfig:
    """``config`` as an ``SdkConfig`` (``None``: defaults; the YAML's ``sdk:`` section is copied)."""
    if config is None:
        return SdkConfig()
    if isinstance(config, SdkConfig):
        return config
    try:
        return SdkConfig(queue_size=config.queue_size, buckets=tuple(config.buckets))
    except (AttributeError, TypeError):
        raise ConfigError(f"Monitor: config must be an SdkConfig, got {config!r}") from None
