"""What every receiver spec shares (name, retries, rate limit, language) and checks several use."""

from __future__ import annotations

import re
import urllib.parse
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, model_validator

from inferwatch.model import parse_matchers
from inferwatch.settings._gotemplate import GoTemplate
from inferwatch.settings._message_template import MessageTemplate
from inferwatch.settings._types import Duration, FrozenModel, Secret

__all__ = [
    "LANGUAGES",
    "MOBILE",
    "GoTemplated",
    "RateLimitSpec",
    "ReceiverBase",
    "check_matchers",
    "phones",
    "webhook_secret",
]


class RateLimitSpec(FrozenModel):
    """At most ``count`` messages per ``per`` seconds; excess is merged, not dropped."""

    count: int = Field(20, ge=1)
    per: Duration = Field(60.0, gt=0)


class ReceiverBase(FrozenModel):
    """What every receiver spec has; each type adds its literal ``type`` and its own fields."""

    if TYPE_CHECKING:  # each spec declares it as its Literal; here only for the type checker
        type: str

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    send_resolved: bool = Field(True, description="also notify when the alerts resolve")
    max_attempts: int = Field(5, ge=1, le=50, description="attempts before giving up")
    rate_limit: RateLimitSpec | None = None
    language: Literal["en", "zh-CN"] | None = Field(
        None, description="language of this receiver's messages (default: alerting.language)")
    template: MessageTemplate | None = Field(
        None, description="this receiver's title and per-alert line (WeCom, DingTalk, Feishu, voice, SMS)")


class GoTemplated(FrozenModel):
    """Fields written as Alertmanager's Go templates, and the definitions they may call."""

    go_fields: ClassVar[tuple[str, ...]] = ()
    go_templates: tuple[str, ...] = Field(
        (), description="Go template definitions ({{ define }}) the Go-template fields may call: the "
        "text of an alertmanager.yml's templates: files, read with it")

    @model_validator(mode="after")
    def _go_templates(self) -> GoTemplated:
        for name in self.go_fields:
            if getattr(self, name) is not None:
                try:
                    GoTemplate(getattr(self, name), self.go_templates)  # outside the subset: refused here
                except ValueError as exc:
                    raise ValueError(f"{name}: {exc}") from None
        return self

    def go_template(self, name: str) -> GoTemplate | None:
        """The field ``name`` parsed (None when unset)."""
        value = getattr(self, name)
        return GoTemplate(value, self.go_templates) if value is not None else None


LANGUAGES = ("en", "zh-CN")


MOBILE = re.compile(r"\+?[0-9][0-9-]{4,19}")


def webhook_secret(url: Secret | None, example: str, token_in: str) -> Secret | None:
    if url is None:
        return None
    parts = urllib.parse.urlsplit(url.reveal())
    query = dict(urllib.parse.parse_qsl(parts.query))
    has_token = bool(query.get("access_token")) if token_in == "query" else len(parts.path.rstrip("/")) > 1
    # the value is never echoed: it holds the robot's token
    if parts.scheme not in ("http", "https") or not parts.netloc or not has_token:
        raise ValueError(f"must be the robot's full webhook URL, such as {example}")
    return url


def phones(v: tuple[str, ...], e164: bool = False) -> tuple[str, ...]:
    pattern = re.compile(r"\+[1-9][0-9]{6,14}") if e164 else MOBILE
    bad = [m for m in v if not pattern.fullmatch(m)]
    if bad:
        raise ValueError(f"not a phone number{' in E.164 (+8613800000000)' if e164 else ''}: "
                         f"{', '.join(map(repr, bad))}")
    return v


def check_matchers(value: tuple[str, ...]) -> tuple[str, ...]:
    """Validate Alertmanager-style matcher strings (``severity="critical"``)."""
    for text in value:
        parse_matchers(text)
    return value
