"""What voice and SMS receivers share: whom to call, and the short text a template variable takes.

The numbers are the receiver's ``to``; when it is empty, its ``oncall`` schedule
is asked through ``OnCallNumbers`` (the on-call work provides one; without it a
receiver that relies on a schedule fails with a clear, final error).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Protocol

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._message import WORDS, render
from inferwatch.alerting.oncall import oncall_at
from inferwatch.settings import MessageTemplate, OnCallConfig

__all__ = ["OnCallNumbers", "ScheduleNumbers", "SmsText", "alert_phrase", "call_or_text", "numbers_for",
           "text_later"]

log = logging.getLogger("inferwatch.alerting")

_UNSAFE = re.compile(r"[^\w\u4e00-\u9fff .:-]+")  # carriers refuse links and most symbols in variables
_MORE = {"en": " and {n} more", "zh-CN": " 等{n}项"}


class OnCallNumbers(Protocol):
    """The phone numbers of whoever is on call in ``schedule`` at ``at`` (Unix seconds)."""

    def numbers(self, schedule: str, at: float) -> Sequence[str]:
        """Numbers to call, first to last."""
        ...


class SmsText(Protocol):
    """An SMS receiver's text to some numbers (a voice receiver's fallback)."""

    def text(self, numbers: Sequence[str], n: Notification) -> None:
        """Text ``n``'s phrase to ``numbers``; ``NotifyError`` when it failed."""
        ...


def call_or_text(name: str, number: str, dial: Callable[[], str], fallback: SmsText | None,
                 n: Notification) -> tuple[str, str]:
    """Dial ``number``: ``(call id, "")``; when the call fails, text the number instead: ``("", why)``.

    Without a fallback, or when the text fails too, the call's ``NotifyError`` is raised (naming both).
    """
    try:
        return dial(), ""
    except NotifyError as exc:
        if fallback is None:
            raise
        try:
            fallback.text([number], n)
        except NotifyError as sms:
            raise NotifyError(f"{exc}; the SMS fallback failed too: {sms}", retryable=exc.retryable,
                              retry_after=exc.retry_after) from exc
        log.warning("%s: calling %s failed (%s): texted instead", name, number, exc)
        return "", str(exc)


def text_later(sms: SmsText | None, number: str, n: Notification) -> Callable[[], None] | None:
    """What a confirmed call keeps to text ``number`` if nobody answers (``None`` without a fallback)."""
    if sms is None:
        return None
    return lambda: sms.text([number], n)


class ScheduleNumbers:
    """``OnCallNumbers`` over ``alerting.oncall``: the on-call member's contact for this receiver.

    A member's ``contacts`` are keyed by receiver name; a receiver without its own key
    takes the member's ``phone``.
    """

    def __init__(self, config: OnCallConfig, receiver: str) -> None:
        self._config, self._receiver = config, receiver

    def numbers(self, schedule: str, at: float) -> Sequence[str]:
        """The number of whoever holds ``schedule`` (``NAME`` or ``NAME/LAYER``) at ``at``."""
        found = self._config.layer(schedule)
        if found is None:
            return []
        contacts = dict(oncall_at(found[0], found[1], at).contacts)
        number = contacts.get(self._receiver) or contacts.get("phone")
        return [number] if number else []


def numbers_for(to: Sequence[str], schedule: str, oncall: OnCallNumbers | None, at: float,
                receiver: str) -> list[str]:
    """``to``, else the schedule's numbers now; a final ``NotifyError`` when there are none."""
    if to:
        return list(to)
    found = list(oncall.numbers(schedule, at)) if oncall is not None and schedule else []
    if not found:
        why = "no on-call lookup is configured" if oncall is None else "nobody is on call"
        raise NotifyError(f"{receiver}: no number to call: 'to' is empty and {why} for {schedule!r}",
                          retryable=False)
    return found


def alert_phrase(n: Notification, language: str, max_chars: int,
                 template: MessageTemplate | None = None) -> str:
    """``P0 紧急 ServiceDown ranker``: tier, alert and service, at most ``max_chars`` characters.

    A receiver's ``template.title`` replaces the built-in phrase.
    """
    w = WORDS.get(language, WORDS["en"])
    groups = n.groups
    if not groups:
        return _UNSAFE.sub(" ", (n.notes or ("inferwatch",))[0])[:max_chars].strip()
    labels = groups[0].common_labels()
    tier = labels.get("tier", "")
    parts = [w.tiers.get(tier, tier), labels.get("alertname", ""), labels.get("service", "")]
    if groups[0].status == "resolved":
        parts.insert(0, w.resolved)
    if template is not None and template.title:
        parts = [render(n, language=language, template=template).title]
    text = _UNSAFE.sub(" ", " ".join(p for p in parts if p)).strip()
    more = len(n.alerts) - 1
    tail = _MORE.get(language, _MORE["en"]).format(n=more) if more > 0 else ""
    return (text[: max(max_chars - len(tail), 1)].rstrip() + tail)[:max_chars]
