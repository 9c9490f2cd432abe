"""The shared vocabulary of alert tiers and monitoring dimensions (DESIGN.md)."""

from __future__ import annotations

import enum

__all__ = ["DEFAULT_INTERVAL_S", "Dimension", "Tier"]


class Tier(enum.StrEnum):
    """Alert tier; each maps to a severity label and a response."""

    P0 = "P0"
    P1 = "P1"
    P2 = "P2"

    @property
    def severity(self) -> str:
        """The ``severity`` label value: P0 critical, P1 major, P2 warning."""
        return {"P0": "critical", "P1": "major", "P2": "warning"}[self.value]


class Dimension(enum.StrEnum):
    """The four monitoring dimensions."""

    INFRASTRUCTURE = "infrastructure"
    SERVICE = "service"
    QUALITY = "quality"
    BUSINESS = "business"


# Default collection interval per dimension, seconds (DESIGN.md table).
DEFAULT_INTERVAL_S: dict[Dimension, float] = {
    Dimension.INFRASTRUCTURE: 15.0,
    Dimension.SERVICE: 60.0,
    Dimension.QUALITY: 3600.0,
    Dimension.BUSINESS: 86400.0,
}
