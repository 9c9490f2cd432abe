"""Loopback fakes of the services receivers and actions talk to; each checks requests as documented."""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def form(self) -> dict[str, list[str]]:
        return urllib.parse.parse_qs(self.body.decode())


Reply = tuple[int, dict[str, str], bytes]
Handler = Callable[[Request], Reply]


@dataclass
class FakeService:
    """An HTTP server on 127.0.0.1; ``handler`` answers, ``requests`` records, ``replies`` overrides."""

    handler: Handler
    requests: list[Request] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    got: threading.Event = field(default_factory=threading.Event)

    def start(self) -> FakeService:
        fake = self

        class H(BaseHTTPRequestHandler):
            def _do(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                u = urllib.parse.urlsplit(self.path)
                req = Request(self.command, u.path, urllib.parse.parse_qs(u.query),
                              {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(n))
                fake.requests.append(req)
                status, headers, body = fake.replies.pop(0) if fake.replies else fake.handler(req)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                fake.got.set()

            do_GET = do_POST = do_PATCH = do_PUT = _do

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def _json(status: int, obj: Any) -> Reply:
    return status, {"Content-Type": "application/json"}, json.dumps(obj).encode()


def _bad(msg: str) -> Reply:
    return _json(400, {"error": msg})


def wecom_handler(key: str) -> Handler:
    """WeCom group robot: errcode in a 200 body; 93000 bad key, 40058 content over 4096 bytes."""
    def h(r: Request) -> Reply:
        if r.method != "POST" or r.path != "/cgi-bin/webhook/send":
            return 404, {}, b""
        if r.query.get("key") != [key]:
            return _json(200, {"errcode": 93000, "errmsg": "invalid webhook url"})
        if not r.headers.get("content-type", "").startswith("application/json"):
            return _json(200, {"errcode": 40008, "errmsg": "invalid message type"})
        body = r.json()
        if body.get("msgtype") != "markdown" or not isinstance(body.get("markdown", {}).get("content"), str):
            return _json(200, {"errcode": 40008, "errmsg": "invalid message type"})
        if len(body["markdown"]["content"].encode()) > 4096:
            return _json(200, {"errcode": 40058, "errmsg": "markdown.content exceed max length 4096"})
        return _json(200, {"errcode": 0, "errmsg": "ok"})
    return h


def pagerduty_handler(routing_key: str) -> Handler:
    """Events API v2: 202 accepted; 400 invalid event."""
    def h(r: Request) -> Reply:
        if r.method != "POST" or r.path != "/v2/enqueue":
            return 404, {}, b""
        b = r.json()
        if b.get("routing_key") != routing_key or len(routing_key) == 0:
            return _json(400, {"status": "invalid event", "message": "Event object is invalid",
                               "errors": ["Invalid routing key"]})
        if b.get("event_action") not in ("trigger", "acknowledge", "resolve") or not b.get("dedup_key"):
            return _bad("event_action")
        if len(b["dedup_key"]) > 255:  # the documented maximum
            return _json(400, {"status": "invalid event", "message": "Event object is invalid",
                               "errors": ["'dedup_key' is too long"]})
        if b["event_action"] == "trigger":
            p = b.get("payload", {})
            if not p.get("summary") or not p.get("source") or p.get("severity") not in (
                    "critical", "error", "warning", "info") or len(p["summary"]) > 1024:
                return _json(400, {"status": "invalid event", "message": "Event object is invalid",
                                   "errors": ["payload"]})
        return _json(202, {"status": "success", "message": "Event processed", "dedup_key": b["dedup_key"]})
    return h


def twilio_handler(sid: str, token: str) -> Handler:
    """Calls API: form-encoded To/From/Twiml with basic auth; 201 Created."""
    def h(r: Request) -> Reply:
        if r.method != "POST" or r.path != f"/2010-04-01/Accounts/{sid}/Calls.json":
            return _json(404, {"code": 20404, "message": "not found"})
        auth = "Basic " + base64.b64encode(f"{sid}:{token}".encode()).decode()
        if r.headers.get("authorization") != auth:
            return _json(401, {"code": 20003, "message": "Authenticate"})
        if r.headers.get("content-type") != "application/x-www-form-urlencoded":
            return _json(400, {"code": 21218, "message": "bad content type"})
        f = r.form()
        if not f.get("To") or not f.get("From") or not f.get("Twiml", [""])[0].startswith("<Response>"):
            return _json(400, {"code": 21201, "message": "No 'To' number is specified"})
        return _json(201, {"sid": "CA" + "0" * 32, "status": "queued"})
    return h


def slack_handler(path: str) -> Handler:
    """Incoming webhook: 200 'ok'; 400 invalid_payload; 404 no_service."""
    def h(r: Request) -> Reply:
        if r.path != path:
            return 404, {}, b"no_service"
        try:
            text = r.json().get("text")
        except ValueError:
            text = None
        if not isinstance(text, str) or not text:
            return 400, {}, b"invalid_payload"
        return 200, {"Content-Type": "text/plain"}, b"ok"
    return h


def webhook_handler() -> Handler:
    """Any receiver of Alertmanager's webhook: checks version 4 and required keys."""
    def h(r: Request) -> Reply:
        b = r.json()
        keys = {"version", "groupKey", "truncatedAlerts", "status", "receiver", "groupLabels",
                "commonLabels", "commonAnnotations", "externalURL", "alerts"}
        if b.get("version") != "4" or set(b) != keys:
            return _bad("not version 4")
        return 200, {}, b""
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
