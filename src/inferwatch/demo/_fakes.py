"""Loopback stand-ins for the demo's P0 path: PagerDuty's Events API v2 and a Kubernetes API
server's Deployment ``scale`` subresource, each checking requests as the real service documents
them and keeping what it received, so the outage's page and scale-out really go over HTTP.

They are demo props, not test doubles of record: the receivers and actions are tested against
their own fakes in ``tests/alerting``. Both serve on the shipped
``alerting.notify.fakes.LoopbackServer``. Credentials are random per run and never printed.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inferwatch.alerting.notify.fakes import FakeRequest, LoopbackServer

__all__ = ["DemoFakes", "FakeKubernetes", "FakePagerDuty", "PageEvent", "ScaleChange"]

Reply = tuple[int, dict[str, Any]]
_MAX_BODY = 512 * 1024  # PagerDuty refuses events over 512 KB


def _serve(handle: Callable[[str, str, dict[str, str], bytes], Reply]) -> LoopbackServer:
    """The shipped loopback server (``alerting.notify.fakes``) answering JSON via ``handle``."""
    def answer(r: FakeRequest) -> tuple[int, dict[str, str], bytes]:
        status, obj = handle(r.method, r.path, r.headers, r.body)
        return status, {"Content-Type": "application/json"}, json.dumps(obj).encode()
    return LoopbackServer(answer).start()


def _json_body(body: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return obj if isinstance(obj, dict) else None


@dataclass(frozen=True)
class PageEvent:
    """One event the fake PagerDuty received, and the status it answered."""

    event_action: str
    dedup_key: str
    severity: str
    alertname: str
    status: int


class FakePagerDuty:
    """``POST /v2/enqueue``: 202 ``{"status": "success", "dedup_key"}`` or 400 ``invalid event``."""

    def __init__(self) -> None:
        self.routing_key = secrets.token_hex(16)  # 32 characters, as PagerDuty's integration keys
        self.events: list[PageEvent] = []
        self.incidents: dict[str, str] = {}
        """dedup_key -> "triggered" | "resolved"."""
        self._names: dict[str, str] = {}
        self._lock = threading.Lock()
        self._server = _serve(self._handle)
        self.url = self._server.url

    def _handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Reply:
        if method != "POST" or path != "/v2/enqueue":
            return 404, {"status": "not found"}
        if len(body) > _MAX_BODY:
            return 413, {"status": "invalid event", "message": "Request too large"}
        b = _json_body(body)
        if b is None:
            return 400, {"status": "invalid event", "message": "Event object is invalid", "errors": ["JSON"]}
        errors = self._check(b)
        if errors:
            return 400, {"status": "invalid event", "message": "Event object is invalid", "errors": errors}
        action, dedup = b["event_action"], str(b["dedup_key"])
        payload = b.get("payload") or {}
        with self._lock:
            if action == "trigger":
                self._names[dedup] = str(payload.get("class") or payload["summary"])
            self.incidents[dedup] = "resolved" if action == "resolve" else "triggered"
            self.events.append(PageEvent(action, dedup, str(payload.get("severity", "")),
                                         self._names.get(dedup, "?"), 202))
        return 202, {"status": "success", "message": "Event processed", "dedup_key": dedup}

    def _check(self, b: dict[str, Any]) -> list[str]:
        errors = []
        if b.get("routing_key") != self.routing_key:
            errors.append("Invalid routing key")
        if b.get("event_action") not in ("trigger", "acknowledge", "resolve"):
            errors.append("'event_action' is invalid")
        dedup = b.get("dedup_key")
        if b.get("event_action") in ("acknowledge", "resolve") and not dedup:
            errors.append("'dedup_key' is required for acknowledge and resolve")
        if not isinstance(dedup, str) or not 0 < len(dedup) <= 255:
            errors.append("'dedup_key' must be a string of at most 255 characters")
        if b.get("event_action") == "trigger":
            p = b.get("payload")
            if not isinstance(p, dict):
                return [*errors, "'payload' is missing"]
            if not isinstance(p.get("summary"), str) or not 0 < len(p["summary"]) <= 1024:
                errors.append("'payload.summary' is missing or over 1024 characters")
            if not p.get("source"):
                errors.append("'payload.source' is missing")
            if p.get("severity") not in ("critical", "error", "warning", "info"):
                errors.append("'payload.severity' is invalid")
        return errors

    def stop(self) -> None:
        """Stop serving."""
        self._server.stop()


@dataclass(frozen=True)
class ScaleChange:
    """One merge-patch of a Deployment's scale that changed its replicas."""

    deployment: str
    before: int
    after: int


class FakeKubernetes:
    """``GET``/``PATCH /apis/apps/v1/namespaces/{ns}/deployments/{name}/scale`` with a bearer token."""

    def __init__(self, deployments: dict[str, int]) -> None:
        self.token = secrets.token_urlsafe(24)
        self.replicas = dict(deployments)
        """"namespace/name" -> spec.replicas."""
        self.changes: list[ScaleChange] = []
        self._lock = threading.Lock()
        self._server = _serve(self._handle)
        self.url = self._server.url

    @staticmethod
    def _status(code: int, reason: str, message: str) -> Reply:
        return code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
                      "reason": reason, "code": code}

    def _handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Reply:
        parts = path.split("?")[0].strip("/").split("/")
        if len(parts) != 8 or parts[:4] != ["apis", "apps", "v1", "namespaces"] or parts[5] != "deployments" \
                or parts[7] != "scale":
            return self._status(404, "NotFound", "the server could not find the requested resource")
        if headers.get("authorization") != f"Bearer {self.token}":
            return self._status(401, "Unauthorized", "Unauthorized")
        ns, name = parts[4], parts[6]
        key = f"{ns}/{name}"
        with self._lock:
            if key not in self.replicas:
                return self._status(404, "NotFound", f'deployments.apps "{name}" not found')
            if method == "PATCH":
                if headers.get("content-type", "").split(";")[0] != "application/merge-patch+json":
                    return self._status(415, "UnsupportedMediaType", "the body of the request was in an "
                                        "unknown format")
                want = ((_json_body(body) or {}).get("spec") or {}).get("replicas")
                if not isinstance(want, int) or isinstance(want, bool) or want < 0:
                    return self._status(422, "Invalid", "spec.replicas: Invalid value")
                if want != self.replicas[key]:
                    self.changes.append(ScaleChange(key, self.replicas[key], want))
                self.replicas[key] = want
            elif method != "GET":
                return self._status(405, "MethodNotAllowed", f"the server does not allow {method} here")
            n = self.replicas[key]
        return 200, {"kind": "Scale", "apiVersion": "autoscaling/v1",
                     "metadata": {"name": name, "namespace": ns},
                     "spec": {"replicas": n}, "status": {"replicas": n}}

    def stop(self) -> None:
        """Stop serving."""
        self._server.stop()


@dataclass
class DemoFakes:
    """Both fakes, started together; the Deployment ``default/demo`` starts at one replica."""

    pagerduty: FakePagerDuty = field(default_factory=FakePagerDuty)
    kubernetes: FakeKubernetes = field(default_factory=lambda: FakeKubernetes({"default/demo": 1}))

    def stop(self) -> None:
        """Stop both."""
        self.pagerduty.stop()
        self.kubernetes.stop()
