"""A fake of Discord's Execute Webhook, checking the request as documented.

``POST /api/webhooks/<id>/<token>`` with a JSON body: ``content`` (1-2,000 characters) is
required here (inferwatch sends no embeds or files); ``username`` (1-80 characters) and
``allowed_mentions`` (an object) are optional. An accepted message answers 204; errors are
``{"message", "code"}``: 404 ``Unknown Webhook`` (10015: a wrong id or token), 400
``Invalid Form Body`` (50035) or ``Cannot send an empty message`` (50006), and 429 ``You
are being rate limited.`` with ``retry_after`` (seconds) past 5 messages in 2 seconds
(``clock`` is Discord's clock, in seconds).
"""

from __future__ import annotations

from typing import Any

from inferwatch.alerting.notify.fakes._base import Clock, FakeRequest, Reply, Window, json_reply

__all__ = ["FakeDiscord"]


def _error(status: int, message: str, code: int, **extra: Any) -> Reply:
    return json_reply({"message": message, "code": code, **extra}, status)


class FakeDiscord:
    """A webhook ``webhook_id``/``token``; ``sent`` keeps each accepted body."""

    def __init__(self, webhook_id: str, token: str, clock: Clock) -> None:
        self.path = f"/api/webhooks/{webhook_id}/{token}"
        self.clock = clock
        self.window = Window(5, 2.0)
        self.sent: list[dict[str, Any]] = []

    def __call__(self, r: FakeRequest) -> Reply:
        if r.method != "POST" or not r.path.startswith("/api/webhooks/"):
            return 404, {}, b""
        if r.path.split("?")[0] != self.path:
            return _error(404, "Unknown Webhook", 10015)
        try:
            body = r.json()
        except ValueError:
            return _error(400, "Invalid Form Body", 50035)
        problem = _problem(body)
        if problem:
            return _error(400, problem, 50006 if problem.startswith("Cannot") else 50035)
        if not self.window.allow(self.clock()):
            return _error(429, "You are being rate limited.", 0, retry_after=1.5, **{"global": False})
        self.sent.append(body)
        return 204, {}, b""


def _problem(body: Any) -> str:
    if not isinstance(body, dict):
        return "Invalid Form Body"
    content = body.get("content")
    if not isinstance(content, str) or not content.strip():
        return "Cannot send an empty message"
    if len(content) > 2000:
        return "Invalid Form Body"  # content: Must be 2000 or fewer in length.
    name = body.get("username")
    if name is not None and (not isinstance(name, str) or not 1 <= len(name) <= 80):
        return "Invalid Form Body"
    if not isinstance(body.get("allowed_mentions", {}), dict):
        return "Invalid Form Body"
    return ""
