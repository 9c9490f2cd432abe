"""The always-firing ``Watchdog`` and the request each dead man's switch expects for it.

One request per interval, in the shape each service documents:

- ``webhook``: Alertmanager's webhook JSON (version 4) with one firing ``Watchdog``,
  as kube-prometheus routes it (another inferwatch's ``/api/v1/heartbeats/NAME``, or any
  receiver that takes Alertmanager's webhook); ``key`` is sent as a bearer token.
- ``healthchecks``: a POST to the check's ping URL (``https://hc-ping.com/UUID``); the
  body is a line that healthchecks.io keeps in the ping's log.
- ``pagerduty``: an Events API v2 ``trigger`` (``routing_key``, one ``dedup_key`` so every
  send updates one alert, severity ``info``), for a service whose event rules turn the
  Watchdog's absence into a page (Dead Man's Snitch, or an orchestration on ``class``).
- ``opsgenie``: the Heartbeat API's ping, ``POST .../v2/heartbeats/NAME/ping`` with
  ``Authorization: GenieKey KEY``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inferwatch._exceptions import MissingCredentialError
from inferwatch.alerting._notification import AlertGroup
from inferwatch.alerting.notify import rfc3339, webhook_payload
from inferwatch.model import Labels
from inferwatch.rules import Alert
from inferwatch.settings import HeartbeatKind, Secret

__all__ = ["PAGERDUTY_EVENTS_URL", "WATCHDOG", "HeartbeatRequest", "HeartbeatTarget", "watchdog_alert",
           "watchdog_request"]

WATCHDOG = "Watchdog"
PAGERDUTY_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"
_DESCRIPTION = ("This alert always fires while inferwatch runs, so that the whole alerting path is known "
                "to work; an outside dead man's switch pages when it stops arriving.")


@dataclass(frozen=True)
class HeartbeatTarget:
    """Where the Watchdog goes, secrets resolved (``alerting.heartbeat`` read with its env and files)."""

    kind: HeartbeatKind
    url: Secret
    key: Secret | None = None

    def __post_init__(self) -> None:
        if self.kind in ("pagerduty", "opsgenie") and self.key is None:
            what = "routing key" if self.kind == "pagerduty" else "API key (GenieKey)"
            raise MissingCredentialError(f"alerting.heartbeat ({self.kind})", f"key (its {what})")


@dataclass(frozen=True)
class HeartbeatRequest:
    """One HTTP request, ready for ``HttpClient.request``."""

    method: str
    url: Secret
    headers: dict[str, str] = field(default_factory=dict)
    json: Any = None
    content: str | None = None
    accept: tuple[int, ...] = ()


def watchdog_alert(source: str, since: float) -> Alert:
    """The Watchdog: firing since ``since`` (the sender's start), no end."""
    labels = Labels({"alertname": WATCHDOG, "severity": "none", "replica": source})
    return Alert(labels, {"summary": f"inferwatch on {source} is alive", "description": _DESCRIPTION},
                 since, None, 1.0)


def watchdog_request(target: HeartbeatTarget, source: str, since: float, now: float,
                     external_url: str = "") -> HeartbeatRequest:
    """The request that says "alive" to ``target``'s service, at ``now``."""
    alert = watchdog_alert(source, since)
    if target.kind == "healthchecks":
        return HeartbeatRequest("POST", target.url, {"Content-Type": "text/plain; charset=utf-8"},
                                content=f"{WATCHDOG} from inferwatch on {source} at {rfc3339(now)}")
    if target.kind == "opsgenie":
        assert target.key is not None
        return HeartbeatRequest("POST", target.url, {"Authorization": f"GenieKey {target.key.reveal()}"})
    if target.kind == "pagerduty":
        assert target.key is not None
        return HeartbeatRequest("POST", target.url, json=_pagerduty(alert, target.key, source, now))
    group = AlertGroup(f'{{}}:{{alertname="{WATCHDOG}"}}', Labels({"alertname": WATCHDOG}), (alert,), now)
    headers = {"Authorization": f"Bearer {target.key.reveal()}"} if target.key is not None else {}
    body = webhook_payload("heartbeat", group, external_url)
    return HeartbeatRequest("POST", target.url, headers, json=body)


def _pagerduty(alert: Alert, key: Secret, source: str, now: float) -> dict[str, Any]:
    return {
        "routing_key": key.reveal(),
        "event_action": "trigger",
        "dedup_key": f"inferwatch-watchdog-{source}",
        "payload": {
            "summary": alert.annotations["summary"],
            "source": source,
            "severity": "info",
            "timestamp": rfc3339(now),
            "component": "inferwatch",
            "class": WATCHDOG,
            "custom_details": {"description": _DESCRIPTION, "firing_since": rfc3339(alert.starts_at)},
        },
    }
