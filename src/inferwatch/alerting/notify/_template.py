"""How notifications read: titles, text/markdown lines, Alertmanager's webhook JSON (version 4)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from inferwatch.alerting._notification import AlertGroup, Notification
from inferwatch.alerting.notify._message import WORDS, recovery_line, render, sender_line
from inferwatch.alerting.notify._message import trace_lines as message_trace_lines
from inferwatch.alerting.notify._summary import group_summary, shown_alerts
from inferwatch.model import Labels, alertmanager_fingerprints
from inferwatch.rules import Alert
from inferwatch.settings import GoTemplate, template_data

__all__ = ["ZERO_TIME", "alert_json", "go_message", "group_lines", "group_summary", "group_title",
           "notification_id", "notification_text", "parse_rfc3339", "rfc3339", "trace_lines", "truncate_utf8",
           "webhook_payload"]

ZERO_TIME = "0001-01-01T00:00:00Z"
"""Alertmanager's ``endsAt`` for an alert with no known end."""


@functools.lru_cache(maxsize=4096)  # a storm's alerts share their times
def rfc3339(t: float | None) -> str:
    """Unix seconds as RFC 3339 UTC (``None`` is Go's zero time, as Alertmanager writes it)."""
    if t is None:
        return ZERO_TIME
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@functools.lru_cache(maxsize=4096)  # a batch from Prometheus repeats the same few times
def parse_rfc3339(text: str) -> float | None:
    """RFC 3339 to Unix seconds; the zero time (or empty) is ``None``."""
    if not text or text.startswith("0001-01-01"):
        return None
    value = text.strip().replace("Z", "+00:00").replace("z", "+00:00")
    # Python < 3.11 parses at most 6 fraction digits; Go writes 9.
    if "." in value:
        head, rest = value.split(".", 1)
        digits = len(rest) - len(rest.lstrip("0123456789"))
        value = f"{head}.{rest[:min(digits, 6)]}{rest[digits:]}"
    dt = datetime.fromisoformat(value)
    if dt.tzinfo is None:
        raise ValueError(f"time {text!r} has no time zone")
    return dt.timestamp()


_UTC = ZoneInfo("UTC")


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def group_title(g: AlertGroup) -> str:
    """``[FIRING:3] HighLatency service=ranker``, as Alertmanager's default title reads."""
    n = len(g.firing()) if g.status == "firing" else len(g.resolved())
    labels = " ".join(f"{k}={v}" for k, v in g.labels.items() if k != "alertname")
    name = g.labels.get("alertname") or (g.alerts[0].name if g.alerts else "")
    tier = g.common_labels().get("tier", "")
    prefix = f"[{g.status.upper()}:{n}]" + (f" [{tier}]" if tier else "")
    return " ".join(x for x in (prefix, name, labels) if x)


def _value(a: Alert) -> str:
    return "" if math.isnan(a.value) else f" value={a.value:.4g}"


def group_lines(g: AlertGroup, *, markdown: bool = False) -> list[str]:
    """Summary, then one line per alert: what differs from the group (e.g. the instance)."""
    common = g.common_labels()
    out: list[str] = []
    summary = group_summary(g)
    if summary:
        out.append(f"> {summary}" if markdown else summary)
    for a in shown_alerts(g):
        own = " ".join(f"{k}={v}" for k, v in a.labels.items() if k not in common) or a.labels.get(
            "instance", a.name)
        bullet = "- " if markdown else "  "
        if a.resolved(g.now):  # what recovered, after how long, at what peak
            out.append(bullet + recovery_line(a, own, WORDS["en"], _UTC))
            continue
        out.append(f"{bullet}firing: {own}{_value(a)} (since {_when(a.starts_at)})")
        out.extend(trace_lines(a, markdown=markdown))
    return out


def trace_lines(a: Alert, *, markdown: bool = False) -> list[str]:
    """The example slow traces of a latency alert and the link to the slowest (none without them)."""
    return message_trace_lines(a, "en", markdown)


def notification_text(n: Notification, *, markdown: bool = False, external_url: str = "",
                      language: str = "en", timezone: str = "UTC") -> str:
    """The whole message: a title and lines per group, then notes and the dashboard link.

    In another language or time zone than English and UTC, the bilingual renderer writes it.
    """
    if language != "en" or timezone != "UTC":
        return render(n, language=language, timezone=timezone, external_url=external_url,
                      markdown=markdown).fit(1 << 30)
    parts: list[str] = []
    for g in n.groups if n.kind != "digest" else ():
        title = group_title(g)
        parts.append(f"**{title}**" if markdown else title)
        parts.extend(group_lines(g, markdown=markdown))
    parts.extend(n.notes)
    if external_url:
        parts.append(f"[dashboard]({external_url})" if markdown else f"dashboard: {external_url}")
    if n.sender:
        parts.append(sender_line(n))
    return "\n".join(parts)


def notification_id(n: Notification | AlertGroup) -> str | None:
    """The delivery core's stable id (idempotency key) of a notification or of one of its groups.

    ``Notification.id`` and ``AlertGroup.idempotency_key`` where the delivery core sets them;
    ``None`` before it does (read with ``getattr``: older notifications have neither).
    """
    value = getattr(n, "id", None) or getattr(n, "idempotency_key", None)
    return str(value) if value else None


def truncate_utf8(text: str, limit: int, pointer: str) -> str:
    """Cut ``text`` to at most ``limit`` UTF-8 bytes, ending with ``pointer`` when cut."""
    raw = text.encode()
    if len(raw) <= limit:
        return text
    room = max(limit - len(pointer.encode()) - 1, 0)
    head = raw[:room].decode("utf-8", errors="ignore")
    return f"{head}\n{pointer}"[: limit]


_AM_FINGERPRINTS: dict[Labels, str] = {}  # by label set; emptied past _AM_KEPT
_AM_KEPT = 1 << 16


def _am_fingerprints(alerts: Sequence[Alert]) -> list[str]:
    """Alertmanager's fingerprint of each alert: remembered, the new ones computed together."""
    known = {a.labels: _AM_FINGERPRINTS.get(a.labels) for a in alerts}
    todo = [ls for ls, fp in known.items() if fp is None]
    if todo:
        new = dict(zip(todo, alertmanager_fingerprints([ls.items_tuple for ls in todo]), strict=True))
        known.update(new)
        if len(_AM_FINGERPRINTS) + len(new) > _AM_KEPT:
            _AM_FINGERPRINTS.clear()
        _AM_FINGERPRINTS.update(new)
    return [str(known[a.labels]) for a in alerts]


def alert_json(a: Alert, now: float, fingerprint: str | None = None) -> dict[str, Any]:
    """One alert as Alertmanager's webhook writes it (``fingerprint`` when the caller has it)."""
    resolved = a.resolved(now)
    return {
        "status": "resolved" if resolved else "firing",
        "labels": a.labels.to_dict(),
        "annotations": dict(a.annotations),
        "startsAt": rfc3339(a.starts_at),
        "endsAt": rfc3339(a.ends_at) if resolved else ZERO_TIME,
        "generatorURL": a.generator_url,
        "fingerprint": fingerprint or _am_fingerprints([a])[0],  # as Alertmanager computes it
    }


def webhook_payload(receiver: str, g: AlertGroup, external_url: str, max_alerts: int = 0) -> dict[str, Any]:
    """Alertmanager's webhook body, ``version: "4"``."""
    alerts = list(g.alerts)
    truncated = 0
    if max_alerts and len(alerts) > max_alerts:
        truncated, alerts = len(alerts) - max_alerts, alerts[:max_alerts]
    common_ann = dict(g.alerts[0].annotations) if g.alerts else {}
    for a in g.alerts[1:]:
        common_ann = {k: v for k, v in common_ann.items() if a.annotations.get(k) == v}
    body: dict[str, Any] = {
        "version": "4",
        "groupKey": g.key,
        "truncatedAlerts": truncated,
        "status": g.status,
        "receiver": receiver,
        "groupLabels": g.labels.to_dict(),
        "commonLabels": g.common_labels().to_dict(),
        "commonAnnotations": common_ann,
        "externalURL": external_url,
        "alerts": [alert_json(a, g.now, fp) for a, fp in zip(alerts, _am_fingerprints(alerts), strict=True)],
    }
    if g.idempotency_key:  # the same on every attempt and after a restart: receivers can deduplicate
        body["notificationID"] = g.idempotency_key
    return body


def go_message(template: GoTemplate, receiver: str, n: Notification, external_url: str) -> str:
    """An Alertmanager Go template rendered for each of ``n``'s groups (one message per group there),
    on the data Alertmanager gives it; the groups' texts a blank line apart."""
    return "\n\n".join(template.render(template_data(webhook_payload(receiver, g, external_url)))
                        for g in n.groups)
