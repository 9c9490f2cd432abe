"""``template test``: what a receiver would send for some alerts, rendered and captured, never sent.

The receiver is built as ``serve`` builds it, over an HTTP transport that
records each request and answers every platform's "ok" (errcode 0, code 0,
``Code: OK``, a Tencent ``Response``, a token), so signing, cutting and the
body are exactly those of a real send. Secrets and tokens are blanked out of
what is shown; an e-mail is shown as the message it would be.
"""

from __future__ import annotations

import io
import json
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from inferwatch._exceptions import InputError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import AlertGroup, Notification
from inferwatch.alerting._route import Route
from inferwatch.alerting.notify import EmailNotifier, build_notifier, parse_rfc3339
from inferwatch.model import Labels, is_valid_label_name
from inferwatch.rules import Alert
from inferwatch.settings import BaseAlertingConfig, Secret, redact_text

__all__ = ["Captured", "alerts_from_document", "preview"]

_OK = {"errcode": 0, "errmsg": "ok", "code": 0, "msg": "success", "Code": "OK", "Message": "OK",
       "access_token": "preview-access-token", "expires_in": 7200,
       "Response": {"RequestId": "preview", "SendStatusSet": []}, "status": "success"}


@dataclass(frozen=True, slots=True)
class Captured:
    """One request the receiver would make (secrets blanked)."""

    method: str
    url: str
    body: str

    def show(self) -> str:
        """``POST url`` then the body."""
        return f"{f'{self.method} {self.url}'.rstrip()}\n{self.body}".rstrip()


def _alert(raw: Any, where: str) -> Alert:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("labels"), Mapping):
        raise InputError(f"{where}: an alert needs a 'labels' mapping")
    labels = Labels({str(k): str(v) for k, v in raw["labels"].items()})
    bad = next((k for k in labels if not is_valid_label_name(k)), None)
    if bad is not None:
        raise InputError(f"{where}.labels: invalid label name {bad!r}")
    try:
        starts = parse_rfc3339(str(raw.get("startsAt", ""))) or 0.0
        ends = parse_rfc3339(str(raw.get("endsAt", "")))
        value = float(raw.get("value", "nan"))
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None
    if raw.get("status", "firing") != "resolved":
        ends = None
    annotations = {str(k): str(v) for k, v in (raw.get("annotations") or {}).items()}
    return Alert(labels, annotations, starts, ends, value, str(raw.get("generatorURL", "")))


def alerts_from_document(doc: Any, source: str) -> list[Alert]:
    """Alerts from Alertmanager's webhook JSON, a list of alerts, or one alert (``labels``, ``startsAt``)."""
    if isinstance(doc, Mapping) and "alerts" in doc:
        doc = doc["alerts"]
    items = doc if isinstance(doc, list) else [doc]
    if not items:
        raise InputError(f"{source}: no alerts")
    return [_alert(a, f"{source}: alerts[{i}]") for i, a in enumerate(items)]


def _notification(config: BaseAlertingConfig, receiver: str, alerts: Sequence[Alert],
                  now: float) -> Notification:
    root = Route.build(config.route)
    groups: dict[tuple[tuple[str, str], ...], list[Alert]] = {}
    for a in alerts:
        routes = root.match(a.labels)
        route = next((r for r in routes if r.options.receiver == receiver), routes[0])
        groups.setdefault(tuple(route.options.group_labels(a.labels).items()), []).append(a)
    return Notification(receiver, tuple(
        AlertGroup(f"{{}}:{dict(key)}", Labels(dict(key)), tuple(members), now)
        for key, members in groups.items()), id="preview")


def _secrets(spec: Any) -> list[str]:
    found: list[str] = []
    for value in spec.__dict__.values():
        if isinstance(value, Secret):
            raw = value.reveal()
            parts = urllib.parse.urlsplit(raw)
            # a URL itself is not blanked whole: its host and path still say where the message goes
            found += [raw] if not parts.scheme else []
            found += [v for _, v in urllib.parse.parse_qsl(parts.query)]
            last = parts.path.rstrip("/").rpartition("/")[2]  # a robot's token (Feishu), not "open-apis"
            found += [last] if len(last) >= 9 else []
    return found


def _show_body(request: httpx.Request) -> str:
    raw = request.content.decode(errors="replace")
    if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        return "\n".join(f"{k}={v}" for k, v in urllib.parse.parse_qsl(raw))
    try:
        return json.dumps(json.loads(raw), ensure_ascii=False, indent=2)
    except ValueError:
        return raw


def preview(config: BaseAlertingConfig, receiver: str, alerts: Sequence[Alert], now: float,
            external_url: str = "") -> list[Captured]:
    """What ``receiver`` would send for ``alerts`` at ``now`` (an ``InputError`` for an unknown one)."""
    spec = next((r for r in config.effective_receivers() if r.name == receiver), None)
    if spec is None:
        known = ", ".join(sorted(r.name for r in config.effective_receivers()))
        raise InputError(f"no receiver {receiver!r} (known: {known})")
    requests: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, json=_OK)

    stream, warned = io.StringIO(), list[str]()
    http = HttpClient(transport=httpx.MockTransport(answer))
    notifier = build_notifier(spec, http, external_url, stream, warned.append, language=config.language,
                              timezone=config.timezone)
    n = _notification(config, receiver, alerts, now)
    if isinstance(notifier, EmailNotifier):
        mail = notifier.message(n)
        skip = ("content-transfer-encoding", "mime-version")
        headers = "".join(f"{k}: {v}\n" for k, v in mail.items() if k.lower() not in skip)
        return [Captured("SMTP", "", f"{headers}\n{mail.get_content()}")]
    notifier.notify(n)
    secrets = _secrets(spec)
    out = [Captured(r.method, redact_text(str(r.url.copy_with(query=None)), secrets),
                    redact_text(_show_body(r), secrets)) for r in requests if r.method != "GET"]
    if stream.getvalue():
        note = f"({warned[0]})\n" if warned else ""
        out.append(Captured("PRINT", "", note + stream.getvalue()))
    return out
