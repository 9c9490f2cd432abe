"""``rules``: alert rules in YAML (the runtime rule model lives in ``inferwatch.rules``)."""

from __future__ import annotations

from pydantic import Field

from inferwatch.config._types import FrozenModel

__all__ = ["RulesConfig"]


class RulesConfig(FrozenModel):
    """Rule settings; owned by the rules package's issue, extended there."""

    default_pack: bool = Field(True, description="load the default rule pack")
