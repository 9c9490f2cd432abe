"""``alerting``: routes, receivers, inhibition, digest and actions."""

from __future__ import annotations

from inferwatch.config._types import FrozenModel

__all__ = ["AlertingConfig"]


class AlertingConfig(FrozenModel):
    """Notification pipeline settings; owned by the alerting issue, extended there."""
