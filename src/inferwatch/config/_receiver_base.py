"""What every receiver spec shares: name, retries, rate limit, language (both receiver modules use it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from inferwatch.config._message_template import MessageTemplate
from inferwatch.config._types import Duration, FrozenModel

__all__ = ["RateLimitSpec"]


class RateLimitSpec(FrozenModel):
    """At most ``count`` messages per ``per`` seconds; excess is merged, not dropped."""

    count: int = Field(20, ge=1)
    per: Duration = Field(60.0, gt=0)


class _Receiver(FrozenModel):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    send_resolved: bool = Field(True, description="also notify when the alerts resolve")
    max_attempts: int = Field(5, ge=1, le=50, description="attempts before giving up")
    rate_limit: RateLimitSpec | None = None
    language: Literal["en", "zh-CN"] | None = Field(
        None, description="language of this receiver's messages (default: alerting.language)")
    template: MessageTemplate | None = Field(
        None, description="this receiver's title and per-alert line (WeCom, DingTalk, Feishu, voice, SMS)")
