"""PagerDuty Events API v2: ``trigger`` while a group fires, ``acknowledge`` when someone acknowledged
it (the incident changes state in place), ``resolve`` when it ends.

The ``dedup_key`` is a hash of the group key, so every flush of a group (and a
resend after a crash) updates one incident; optional payload fields
(``component``, ``group``, ``class``) are left out when empty. P0 is sent as
``critical``: the urgency that phones the on-call engineer.
"""

from __future__ import annotations

import hashlib
import json

from inferwatch._exceptions import MissingCredentialError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import AlertGroup, Notification
from inferwatch.alerting.notify._template import group_lines, group_title, rfc3339
from inferwatch.settings import PagerDutyReceiverSpec

__all__ = ["PAGERDUTY_MAX_BYTES", "PagerDutyNotifier", "dedup_key", "fit_lines", "pagerduty_severity"]

_SEVERITY = {"P0": "critical", "P1": "error", "P2": "warning"}
_SUMMARY_MAX = 1024
PAGERDUTY_MAX_BYTES = 512 * 1024
"""Events API payloads are limited to 512 KB (PagerDuty's Events API v2 overview)."""


def pagerduty_severity(tier: str, severity: str = "") -> str:
    """PagerDuty's severity (critical, error, warning, info) for a tier or severity label."""
    if tier in _SEVERITY:
        return _SEVERITY[tier]
    return {"critical": "critical", "major": "error", "warning": "warning"}.get(severity, "info")


def fit_lines(lines: list[str], room: int) -> list[str]:
    """The first lines whose JSON takes at most ``room`` bytes, then "… and N more" when cut.

    >>> fit_lines(["a" * 10] * 5, 40)
    ['aaaaaaaaaa', '… and 4 more']
    """
    costs = [len(json.dumps(line).encode()) + 2 for line in lines]  # quoted, escaped, ", "
    if sum(costs) <= room:
        return lines
    room -= len(json.dumps(f"… and {len(lines)} more").encode()) + 2
    used = 0
    for i, cost in enumerate(costs):
        if used + cost > room:
            return [*lines[:i], f"… and {len(lines) - i} more"]
        used += cost
    return lines  # pragma: no cover - the sum did not fit, so some line does not


def dedup_key(group_key: str) -> str:
    """The incident's key: the same for every event of one alert group (64 hex, under the 255 limit)."""
    return hashlib.sha256(group_key.encode()).hexdigest()


class PagerDutyNotifier:
    """One event per alert group."""

    def __init__(self, spec: PagerDutyReceiverSpec, http: HttpClient, external_url: str = "") -> None:
        self.name = f"pagerduty[{spec.name}]"
        if spec.routing_key is None:
            raise MissingCredentialError(self.name, "routing_key")
        self._key = spec.routing_key
        self._url = spec.url.rstrip("/") + "/v2/enqueue"
        self._http = http
        self._external_url = external_url

    def event(self, g: AlertGroup, replica: str = "", kind: str = "alerts") -> dict[str, object]:
        """The Events API v2 body for one group (``replica``: the HA replica sending it; ``kind``
        ``acknowledged``: the acknowledge event, which takes no payload)."""
        acked = kind == "acknowledged" and g.status == "firing"
        body: dict[str, object] = {
            "routing_key": self._key.reveal(),
            "dedup_key": dedup_key(g.key),
            "event_action": "acknowledge" if acked else "trigger" if g.status == "firing" else "resolve",
        }
        if g.status == "firing" and not acked:
            common = g.common_labels()
            payload: dict[str, object] = {
                "summary": group_title(g)[:_SUMMARY_MAX],
                "source": common.get("service") or common.get("instance") or "inferwatch",
                "severity": pagerduty_severity(common.get("tier", ""), common.get("severity", "")),
                "timestamp": rfc3339(min(a.starts_at for a in g.alerts)),
            }
            optional = {"component": common.get("service", ""), "group": common.get("dimension", ""),
                        "class": common.get("alertname", "")}
            payload.update({k: v for k, v in optional.items() if v})
            body["payload"] = payload
            body["client"] = "inferwatch"
            if self._external_url:
                body["client_url"] = self._external_url
            details: dict[str, object] = {"alerts": [], "firing": len(g.firing())}
            if replica:
                details["replica"] = replica
            payload["custom_details"] = details
            room = PAGERDUTY_MAX_BYTES - len(json.dumps(body).encode()) - 64
            details["alerts"] = fit_lines(group_lines(g), room)
        return body

    def notify(self, n: Notification) -> None:
        """POST one event per group (202 expected)."""
        for g in n.groups:
            self._http.request("POST", self._url, json=self.event(g, n.sender, n.kind), secrets=(self._key,))
