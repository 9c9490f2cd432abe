"""The HTTP, command, degrade and rollback actions."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from inferwatch._exceptions import ActionError, NotifyError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting.actions._actions import fill_placeholders
from inferwatch.model import Matcher, parse_matchers
from inferwatch.rules import Alert
from inferwatch.settings import (
    CommandActionSpec,
    DegradeActionSpec,
    HttpActionSpec,
    RollbackActionSpec,
    redact_url,
)

__all__ = ["CommandAction", "DegradeAction", "HttpAction", "RollbackAction"]


def _matchers(texts: tuple[str, ...]) -> tuple[Matcher, ...]:
    return tuple(m for t in texts for m in parse_matchers(t))


def _call(http: HttpClient, method: str, url: str, body: dict[str, Any], token: Any) -> str:
    # The outcome goes into notes, the API and SQLite: the URL is shown without userinfo or query.
    headers = {"Authorization": f"Bearer {token.reveal()}"} if token is not None else {}
    try:
        resp = http.request(method, url, json=body, headers=headers)
    except NotifyError as exc:
        raise ActionError(f"{method} {redact_url(url)}: {exc}") from None
    return f"{method} {redact_url(url)} -> {resp.status_code}"


class HttpAction:
    """Calls ``url`` on fire and ``resolve_url`` (if set) on resolve; ``{label}`` placeholders filled."""

    def __init__(self, spec: HttpActionSpec, http: HttpClient) -> None:
        self.name, self.matchers, self._spec, self._http = spec.name, _matchers(spec.matchers), spec, http

    def fire(self, alert: Alert) -> str:
        """Call the fire URL."""
        s = self._spec
        return _call(self._http, s.method, fill_placeholders(s.url, alert.labels), s.body, s.bearer_token)

    def resolve(self, alert: Alert) -> str | None:
        """Call the resolve URL, if any."""
        s = self._spec
        if not s.resolve_url:
            return None
        url = fill_placeholders(s.resolve_url, alert.labels)
        return _call(self._http, s.method, url, s.resolve_body, s.bearer_token)


def _run(argv: tuple[str, ...], alert: Alert, timeout: float) -> str:
    env = {**os.environ, "INFERWATCH_ALERTNAME": alert.name,
           "INFERWATCH_ALERT_LABELS": json.dumps(alert.labels.to_dict())}
    args = [fill_placeholders(a, alert.labels) for a in argv]
    try:
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ActionError(f"command {args[0]!r}: {exc.__class__.__name__}: {exc}") from None
    if done.returncode != 0:
        raise ActionError(f"command {args[0]!r} exited {done.returncode}: {done.stderr.strip()[:200]}")
    return f"ran {args[0]} (exit 0)" + (f": {done.stdout.strip()[:200]}" if done.stdout.strip() else "")


class CommandAction:
    """Runs ``argv`` (no shell) with the alert in ``INFERWATCH_ALERT_LABELS``."""

    def __init__(self, spec: CommandActionSpec) -> None:
        self.name, self.matchers, self._spec = spec.name, _matchers(spec.matchers), spec

    def fire(self, alert: Alert) -> str:
        """Run the fire command."""
        return _run(self._spec.argv, alert, self._spec.timeout)

    def resolve(self, alert: Alert) -> str | None:
        """Run the resolve command, if any."""
        return _run(self._spec.resolve_argv, alert, self._spec.timeout) if self._spec.resolve_argv else None


class DegradeAction:
    """``POST {"enabled": true}`` to the service's admin endpoint; ``false`` on resolve."""

    def __init__(self, spec: DegradeActionSpec, http: HttpClient) -> None:
        self.name, self.matchers, self._spec, self._http = spec.name, _matchers(spec.matchers), spec, http

    def _set(self, alert: Alert, enabled: bool) -> str:
        if not self._spec.url:
            word = "degrade" if enabled else "restore"
            return f"skipped: no admin URL configured (would {word} {alert.labels.get('service', '')})"
        url = fill_placeholders(self._spec.url, alert.labels)
        _call(self._http, "POST", url, {"enabled": enabled}, self._spec.bearer_token)
        return f"{'degraded' if enabled else 'restored'} via {redact_url(url)}"

    def fire(self, alert: Alert) -> str:
        """Turn degraded mode on."""
        return self._set(alert, True)

    def resolve(self, alert: Alert) -> str | None:
        """Turn degraded mode off."""
        return self._set(alert, False)


class RollbackAction:
    """Rolls back only when ``enabled``; otherwise the outcome is a recommendation."""

    def __init__(self, spec: RollbackActionSpec, http: HttpClient) -> None:
        self.name, self.matchers, self._spec, self._http = spec.name, _matchers(spec.matchers), spec, http

    def fire(self, alert: Alert) -> str:
        """Roll back, or recommend it."""
        s = self._spec
        model = alert.labels.get("model") or alert.labels.get("service") or "the model"
        if not s.enabled or not (s.url or s.argv):
            return f"rollback of {model} to the previous version recommended (automatic rollback not enabled)"
        if s.url:
            return _call(self._http, "POST", fill_placeholders(s.url, alert.labels),
                         {"alert": alert.labels.to_dict()}, None)
        return _run(s.argv, alert, s.timeout)

    def resolve(self, alert: Alert) -> str | None:
        """A rollback is not undone automatically."""
        return None
