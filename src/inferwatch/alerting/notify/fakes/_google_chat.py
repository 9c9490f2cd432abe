"""A fake of a Google Chat space's incoming webhook, checking the request as documented.

``POST /v1/spaces/<space>/messages?key=<key>&token=<token>`` with a JSON ``Message``; here
``text`` (1-4,096 characters) is required and the fields inferwatch does not send are refused as
unknown, as Chat refuses a name it does not know. An accepted message answers 200 with the
created ``Message`` (``name``, ``text``, ``createTime``); errors are ``google.rpc.Status``
(``{"error": {"code", "message", "status"}}``): 404 ``NOT_FOUND`` (no such space), 400
``INVALID_ARGUMENT`` (a wrong key, a body that is not a message), 401 ``UNAUTHENTICATED`` (a
wrong token), 429 ``RESOURCE_EXHAUSTED`` past one message a second (``clock`` is Chat's clock,
in seconds).
"""

from __future__ import annotations

from typing import Any

from inferwatch.alerting.notify.fakes._base import Clock, FakeRequest, Reply, Window, json_reply

__all__ = ["FakeGoogleChat"]

_KNOWN = {"text", "cardsV2", "thread", "accessoryWidgets", "privateMessageViewer", "fallbackText"}
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}


def _error(code: int, message: str) -> Reply:
    return json_reply({"error": {"code": code, "message": message, "status": _STATUS[code]}}, code)


class FakeGoogleChat:
    """The webhook of space ``space`` with ``key`` and ``token``; ``sent`` keeps each accepted body."""

    def __init__(self, space: str, key: str, token: str, clock: Clock) -> None:
        self.path = f"/v1/spaces/{space}/messages"
        self.key, self.token = key, token
        self.clock = clock
        self.window = Window(1, 1.0)
        self.sent: list[dict[str, Any]] = []

    def __call__(self, r: FakeRequest) -> Reply:
        if r.method != "POST" or not r.path.startswith("/v1/spaces/"):
            return 404, {}, b""
        if r.path != self.path:
            return _error(404, "Requested entity was not found.")
        if r.query.get("key") != [self.key]:
            return _error(400, "API key not valid. Please pass a valid API key.")
        if r.query.get("token") != [self.token]:
            return _error(401, "Request had invalid authentication credentials.")
        if not r.headers.get("content-type", "").startswith("application/json"):
            return _error(400, "Invalid JSON payload received.")
        try:
            body = r.json()
        except ValueError:
            return _error(400, "Invalid JSON payload received.")
        problem = _problem(body)
        if problem:
            return _error(400, problem)
        if not self.window.allow(self.clock()):
            return _error(429, "Resource has been exhausted (e.g. check quota).")
        self.sent.append(body)
        return json_reply({"name": f"{self.path.removeprefix('/v1/')}/{len(self.sent)}", "text": body["text"],
                           "createTime": "2026-12-07T00:00:00Z"})


def _problem(body: Any) -> str:
    if not isinstance(body, dict):
        return "Invalid JSON payload received. Expected an object."
    unknown = sorted(set(body) - _KNOWN)
    if unknown:
        return f'Invalid JSON payload received. Unknown name "{unknown[0]}": Cannot find field.'
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        return "Message cannot be empty. Discarded message must contain text or cards."
    if len(text) > 4096:
        return "Message text is too long."
    return ""
