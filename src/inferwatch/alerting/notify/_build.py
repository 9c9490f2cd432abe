"""Receivers and actions built from their config specs (a missing credential falls back)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from inferwatch._exceptions import MissingCredentialError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notifier
from inferwatch.alerting.actions import (
    Action,
    CommandAction,
    DegradeAction,
    HttpAction,
    KubernetesScaleAction,
    RecordingAction,
    RollbackAction,
)
from inferwatch.alerting.notify._build_cn import CN_SPECS, build_cn_notifier
from inferwatch.alerting.notify._email import EmailNotifier
from inferwatch.alerting.notify._pagerduty import PagerDutyNotifier
from inferwatch.alerting.notify._phone import ScheduleNumbers
from inferwatch.alerting.notify._slack import SlackNotifier
from inferwatch.alerting.notify._terminal import FallbackNotifier, TerminalNotifier
from inferwatch.alerting.notify._twilio import TwilioNotifier
from inferwatch.alerting.notify._webhook import WebhookNotifier
from inferwatch.alerting.notify._wecom import WeComNotifier
from inferwatch.config import (
    ActionSpec,
    CommandActionSpec,
    DegradeActionSpec,
    DigestReceiverSpec,
    EmailReceiverSpec,
    HttpActionSpec,
    KubernetesScaleSpec,
    OnCallConfig,
    PagerDutyReceiverSpec,
    ReceiverSpec,
    RollbackActionSpec,
    SlackReceiverSpec,
    TerminalReceiverSpec,
    TwilioReceiverSpec,
    WebhookReceiverSpec,
    WeComReceiverSpec,
)
from inferwatch.model import parse_matchers

__all__ = ["build_action", "build_notifier", "recording_action"]


def build_notifier(spec: ReceiverSpec, http: HttpClient, external_url: str, stream: TextIO | None,
                   warn: Callable[[str], None] | None = None, *, language: str = "en",
                   timezone: str = "UTC", schedules: OnCallConfig | None = None) -> Notifier:
    """The notifier for a receiver spec; without credentials, a terminal fallback that says so once."""
    language = spec.language or language  # a receiver's own language wins
    terminal = TerminalNotifier(spec.name, stream, external_url, language=language, timezone=timezone)
    try:
        if isinstance(spec, CN_SPECS):
            oncall = ScheduleNumbers(schedules, spec.name) if schedules is not None else None
            return build_cn_notifier(spec, http, external_url, language=language, timezone=timezone,
                                     oncall=oncall)
        return _build(spec, http, external_url, terminal, language, timezone)
    except MissingCredentialError as exc:  # any other error is a bug or a bad config: it surfaces
        return FallbackNotifier(exc.receiver, f"no credentials: needs {exc.missing}", terminal, warn)


def _build(spec: ReceiverSpec, http: HttpClient, url: str, terminal: TerminalNotifier, language: str,
           timezone: str) -> Notifier:
    if isinstance(spec, WeComReceiverSpec):
        return WeComNotifier(spec, http, url, language=language, timezone=timezone)
    if isinstance(spec, PagerDutyReceiverSpec):
        return PagerDutyNotifier(spec, http, url)
    if isinstance(spec, TwilioReceiverSpec):
        return TwilioNotifier(spec, http)
    if isinstance(spec, SlackReceiverSpec):
        return SlackNotifier(spec, http, url, language=language, timezone=timezone)
    if isinstance(spec, EmailReceiverSpec):
        return EmailNotifier(spec, url, language=language, timezone=timezone)
    if isinstance(spec, WebhookReceiverSpec):
        return WebhookNotifier(spec, http, url)
    if isinstance(spec, TerminalReceiverSpec | DigestReceiverSpec):
        return terminal
    raise AssertionError(f"unhandled receiver type {spec!r}")  # pragma: no cover - union is closed


def build_action(spec: ActionSpec, http: HttpClient) -> Action:
    """The action for an action spec."""
    if isinstance(spec, KubernetesScaleSpec):
        return KubernetesScaleAction(spec)
    if isinstance(spec, HttpActionSpec):
        return HttpAction(spec, http)
    if isinstance(spec, CommandActionSpec):
        return CommandAction(spec)
    if isinstance(spec, DegradeActionSpec):
        return DegradeAction(spec, http)
    if isinstance(spec, RollbackActionSpec):
        return RollbackAction(spec, http)
    raise AssertionError(f"unhandled action type {spec!r}")  # pragma: no cover - union is closed


def recording_action(spec: ActionSpec) -> RecordingAction:
    """A recorder standing in for the action (replay); degrade and http restore on resolve."""
    matchers = tuple(m for t in spec.matchers for m in parse_matchers(t))
    restores = isinstance(spec, DegradeActionSpec) or (
        isinstance(spec, HttpActionSpec) and bool(spec.resolve_url))
    return RecordingAction(spec.name, matchers, restores)
