"""Loopback fakes of the services receivers and actions talk to; each checks requests as documented."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar
from xml.etree import ElementTree

from inferwatch.alerting.notify.fakes import FakeRequest, LoopbackServer, Reply

# One loopback base for every fake: the shipped one (``inferwatch.alerting.notify.fakes``).
Request = FakeRequest
FakeService = LoopbackServer
Handler = Callable[[Request], Reply]


def _json(status: int, obj: Any) -> Reply:
    return status, {"Content-Type": "application/json"}, json.dumps(obj).encode()


def _bad(msg: str) -> Reply:
    return _json(400, {"error": msg})


class FakeWeCom:
    """WeCom group robot, as its API documents it.

    Failures come as HTTP 200 with an ``errcode`` (93000 bad key, 40008 bad message,
    40058 content too long: text 2,048 bytes, markdown 4,096). ``pings`` records, per
    message, whom it would notify (``user:ID``, ``mobile:NUMBER``, ``@all``):
    ``mentioned_list`` / ``mentioned_mobile_list`` count only on ``msgtype: text``; in
    markdown only ``<@userid>`` in the content pings.
    """

    LIMITS: ClassVar[dict[str, int]] = {"text": 2048, "markdown": 4096}

    def __init__(self, key: str, clock: Callable[[], float] | None = None) -> None:
        self.key = key
        self.pings: list[set[str]] = []
        self.clock = clock  # with a clock: at most 20 messages a minute, else errcode 45009
        self._sent: list[float] = []

    def __call__(self, r: Request) -> Reply:
        if r.method != "POST" or r.path != "/cgi-bin/webhook/send":
            return 404, {}, b""
        if r.query.get("key") != [self.key]:
            return _json(200, {"errcode": 93000, "errmsg": "invalid webhook url"})
        if not r.headers.get("content-type", "").startswith("application/json"):
            return _json(200, {"errcode": 40008, "errmsg": "invalid message type"})
        if self.clock is not None:
            now = self.clock()
            self._sent = [t for t in self._sent if t > now - 60]
            if len(self._sent) >= 20:
                return _json(200, {"errcode": 45009, "errmsg": "api freq out of limit"})
            self._sent.append(now)
        body = r.json()
        kind = body.get("msgtype")
        inner = body.get(kind) if kind in self.LIMITS else None
        if not isinstance(inner, dict) or not isinstance(inner.get("content"), str):
            return _json(200, {"errcode": 40008, "errmsg": "invalid message type"})
        if len(inner["content"].encode()) > self.LIMITS[kind]:
            return _json(200, {"errcode": 40058, "errmsg": f"{kind}.content exceed max length "
                                                           f"{self.LIMITS[kind]}"})
        if kind == "text":
            lists = [inner.get("mentioned_list", []), inner.get("mentioned_mobile_list", [])]
            if not all(isinstance(x, list) and all(isinstance(i, str) for i in x) for x in lists):
                return _json(200, {"errcode": 40008, "errmsg": "invalid mentioned_list"})
            users, mobiles = lists
            self.pings.append({"@all" if m == "@all" else f"user:{m}" for m in users}
                              | {"@all" if m == "@all" else f"mobile:{m}" for m in mobiles})
        else:  # markdown: the mention lists are ignored; <@userid> in the content pings a user id
            self.pings.append({f"user:{u}" for u in re.findall(r"<@([^>@\s]+)>", inner["content"])})
        return _json(200, {"errcode": 0, "errmsg": "ok"})


def wecom_handler(key: str, clock: Callable[[], float] | None = None) -> FakeWeCom:
    """WeCom group robot (see ``FakeWeCom``)."""
    return FakeWeCom(key, clock)


PD_KEY = "0123456789abcdef0123456789abcdef"  # 32 characters, as PagerDuty's integration keys


def _pd_invalid(error: str) -> Reply:
    return _json(400, {"status": "invalid event", "message": "Event object is invalid", "errors": [error]})


def pagerduty_handler(routing_key: str = PD_KEY) -> Handler:
    """Events API v2: 202 accepted; 400 invalid event (key of 32, dedup_key <= 255, payload fields)."""
    def h(r: Request) -> Reply:
        if r.method != "POST" or r.path != "/v2/enqueue":
            return 404, {}, b""
        if len(r.body) > 512 * 1024:  # "Events API payloads are limited to 512 KB"
            return _pd_invalid("payload too large")
        b = r.json()
        if len(str(b.get("routing_key", ""))) != 32 or b.get("routing_key") != routing_key:
            return _pd_invalid("Invalid routing key")
        if b.get("event_action") not in ("trigger", "acknowledge", "resolve"):
            return _pd_invalid("'event_action' is invalid")
        if not b.get("dedup_key") or len(b["dedup_key"]) > 255:  # the documented maximum
            return _pd_invalid("'dedup_key' is missing or too long")
        if b["event_action"] == "trigger":
            problem = _pd_payload_problem(b.get("payload", {}))
            if problem:
                return _pd_invalid(problem)
        return _json(202, {"status": "success", "message": "Event processed", "dedup_key": b["dedup_key"]})
    return h


def _pd_payload_problem(p: dict[str, Any]) -> str:
    if not p.get("summary") or len(p["summary"]) > 1024 or not p.get("source"):
        return "'payload.summary' and 'payload.source' are required, summary at most 1024"
    if p.get("severity") not in ("critical", "error", "warning", "info"):
        return "'payload.severity' is invalid"
    if "timestamp" in p:
        try:
            datetime.fromisoformat(str(p["timestamp"]).replace("Z", "+00:00"))
        except ValueError:
            return "'payload.timestamp' is not ISO 8601"
    # Optional strings: when sent, non-empty (stricter than PagerDuty, which would show an empty field).
    for name in ("component", "group", "class"):
        if name in p and (not isinstance(p[name], str) or not p[name]):
            return f"'payload.{name}' is empty"
    return ""


def twilio_handler(sid: str, token: str) -> Handler:
    """Calls API: form-encoded E.164 To/From and Twiml (valid XML, at most 4,000 characters), basic auth."""
    def h(r: Request) -> Reply:
        if r.method != "POST" or r.path != f"/2010-04-01/Accounts/{sid}/Calls.json":
            return _json(404, {"code": 20404, "message": "not found"})
        auth = "Basic " + base64.b64encode(f"{sid}:{token}".encode()).decode()
        if r.headers.get("authorization") != auth:
            return _json(401, {"code": 20003, "message": "Authenticate"})
        if r.headers.get("content-type") != "application/x-www-form-urlencoded":
            return _json(400, {"code": 21218, "message": "bad content type"})
        f = r.form()
        for name, code in (("To", 21211), ("From", 21212)):
            if not re.fullmatch(r"\+[1-9][0-9]{1,14}", f.get(name, [""])[0]):
                return _json(400, {"code": code, "message": f"Invalid '{name}' Phone Number"})
        twiml = f.get("Twiml", [""])[0]
        if len(twiml) > 4000:
            return _json(400, {"code": 32018, "message": "Twiml size exceeded maximum allowed value of 4000 "
                                                         "characters"})
        try:
            root = ElementTree.fromstring(twiml)
        except ElementTree.ParseError:
            return _json(400, {"code": 12100, "message": "Document parse failure"})
        if root.tag != "Response":
            return _json(400, {"code": 12100, "message": "Document parse failure"})
        return _json(201, {"sid": "CA" + "0" * 32, "status": "queued"})
    return h


class FakeSlack:
    """Incoming webhook: 200 ``ok``; 400 ``invalid_payload`` / ``no_text``; 404 ``no_service``.

    ``pings`` records the mentions Slack would act on (``<!channel>``, ``<!here>``,
    ``<!everyone>``, ``<@U…>``, ``<!subteam^…>``); ``shown`` the text as displayed
    (``&amp;``, ``&lt;``, ``&gt;`` decoded).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.pings: list[str] = []
        self.shown: list[str] = []

    def __call__(self, r: Request) -> Reply:
        if r.path != self.path:
            return 404, {}, b"no_service"
        try:
            text = r.json().get("text")
        except ValueError:
            return 400, {}, b"invalid_payload"
        if not isinstance(text, str) or not text:
            return 400, {}, b"no_text"
        self.pings += re.findall(r"<(![a-z]+(?:\^[^>|]*)?|@[A-Z0-9]+)(?:\|[^>]*)?>", text)
        self.shown.append(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
        return 200, {"Content-Type": "text/plain"}, b"ok"


def slack_handler(path: str) -> FakeSlack:
    """Slack incoming webhook (see ``FakeSlack``)."""
    return FakeSlack(path)


def webhook_handler() -> Handler:
    """Any receiver of Alertmanager's webhook: checks version 4 and required keys.

    ``notificationID``, ``notes``, ``escalation`` and ``replica`` are inferwatch's optional extras
    (alerting/notify/_webhook.py); a ``notificationID`` must equal the ``Idempotency-Key`` header.
    """
    def h(r: Request) -> Reply:
        b = r.json()
        keys = {"version", "groupKey", "truncatedAlerts", "status", "receiver", "groupLabels",
                "commonLabels", "commonAnnotations", "externalURL", "alerts"}
        if b.get("version") != "4" or set(b) - {"notificationID", "notes", "escalation", "replica"} != keys:
            return _bad("not version 4")
        if "notificationID" in b and r.headers.get("idempotency-key") != b["notificationID"]:
            return _bad("Idempotency-Key header and notificationID differ")
        return 200, {}, b""
    return h


def echo_handler(status: int = 400) -> Handler:
    """A misbehaving receiver that answers ``status`` echoing the whole request back."""
    def h(r: Request) -> Reply:
        echo = {"error": "bad request", "path": r.path, "query": r.query, "headers": r.headers,
                "body": r.body.decode(errors="replace")}
        return _json(status, echo)
    return h


class FakeKube:
    """Kubernetes API server with Deployments' scale subresource (GET and merge-patch PATCH)."""

    def __init__(self, token: str, replicas: dict[str, int]) -> None:
        self.token = token
        self.replicas = dict(replicas)

    def __call__(self, r: Request) -> Reply:
        parts = r.path.strip("/").split("/")
        # /apis/apps/v1/namespaces/{ns}/deployments/{name}/scale
        if len(parts) != 8 or parts[:4] != ["apis", "apps", "v1", "namespaces"] or parts[5] != "deployments" \
                or parts[7] != "scale":
            return _json(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
        if r.headers.get("authorization") != f"Bearer {self.token}":
            return _json(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
        key = f"{parts[4]}/{parts[6]}"
        if key not in self.replicas:
            return _json(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
        if r.method == "PATCH":
            if r.headers.get("content-type") != "application/merge-patch+json":
                return _json(415, {"kind": "Status", "code": 415, "reason": "UnsupportedMediaType"})
            self.replicas[key] = int(r.json()["spec"]["replicas"])
        elif r.method != "GET":
            return _json(405, {"kind": "Status", "code": 405})
        return _json(200, {"kind": "Scale", "apiVersion": "autoscaling/v1",
                           "metadata": {"name": parts[6], "namespace": parts[4]},
                           "spec": {"replicas": self.replicas[key]},
                           "status": {"replicas": self.replicas[key]}})


HC_UUID = "5bf66975-d4c7-4bf5-bcc8-b8d8a82ea278"


def healthchecks_handler(uuid: str = HC_UUID) -> Handler:
    """healthchecks.io's Pinging API: HEAD, GET or POST to /UUID signals success, 200 "OK";
    an unknown check is 404 "not found" (a body, up to 100 kB, is kept in the ping's log)."""
    def h(r: Request) -> Reply:
        if r.method not in ("HEAD", "GET", "POST"):
            return 405, {}, b""
        if r.path != f"/{uuid}":
            return 404, {"Content-Type": "text/plain"}, b"not found"
        if len(r.body) > 100_000:
            return 400, {"Content-Type": "text/plain"}, b"body too large"
        return 200, {"Content-Type": "text/plain"}, b"OK"
    return h


def opsgenie_heartbeat_handler(name: str, api_key: str) -> Handler:
    """Opsgenie's Heartbeat API ping: GET, POST or PUT /v2/heartbeats/NAME/ping with
    ``Authorization: GenieKey KEY``; 202 "PONG - Heartbeat received", 401/403 without the key."""
    def h(r: Request) -> Reply:
        if r.method not in ("GET", "POST", "PUT"):
            return 405, {}, b""
        if r.headers.get("authorization") != f"GenieKey {api_key}":
            return _json(401, {"message": "Could not authenticate", "took": 0.001, "requestId": "x"})
        if r.path != f"/v2/heartbeats/{name}/ping":
            return _json(404, {"message": "Heartbeat with name [x] does not exist", "took": 0.001})
        return _json(202, {"result": "PONG - Heartbeat received", "took": 0.006, "requestId": "x"})
    return h
