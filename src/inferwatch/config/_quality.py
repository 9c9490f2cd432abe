"""``quality``: drift windows, thresholds and reference profiles."""

from __future__ import annotations

from pydantic import Field

from inferwatch.config._types import Duration, FrozenModel

__all__ = ["QualityConfig"]


class QualityConfig(FrozenModel):
    """Model-quality monitoring settings; owned by the quality issue, extended there."""

    window: Duration = Field(3600.0, description="drift window (DESIGN.md: 1 h)")
    psi_warning: float = 0.1
    psi_review: float = 0.25
    psi_rollback: float = 0.5
