"""``baseline``: defaults for dynamic thresholds."""

from __future__ import annotations

from inferwatch.config._types import FrozenModel

__all__ = ["BaselineConfig"]


class BaselineConfig(FrozenModel):
    """Dynamic-baseline defaults; owned by the baseline issue, extended there."""
