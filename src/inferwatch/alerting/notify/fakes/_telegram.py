"""A fake of Telegram's Bot API ``sendMessage``, checking the request as documented.

``POST /bot<token>/sendMessage`` with a JSON body: ``chat_id`` (an integer or a string:
a numeric id or ``@channelusername``) and ``text`` (1-4096 characters) are required;
``message_thread_id`` (integer) and ``disable_notification`` (boolean) are optional. An
answer is ``{"ok": true, "result": <Message>}`` or ``{"ok": false, "error_code": N,
"description": ...}`` with status N: 401 ``Unauthorized`` (wrong token), 404 (unknown
method), 400 ``Bad Request: ...`` (chat not found, empty or too long text), 429 ``Too Many
Requests: retry after S`` with ``parameters.retry_after`` (a chat gets about 20
messages a minute; ``clock`` is Telegram's clock, in seconds).
"""

from __future__ import annotations

from typing import Any

from inferwatch.alerting.notify.fakes._base import Clock, FakeRequest, Reply, Window, json_reply

__all__ = ["FakeTelegram"]



def _error(code: int, description: str, **extra: Any) -> Reply:
    return json_reply({"ok": False, "error_code": code, "description": description, **extra}, code)


class FakeTelegram:
    """A bot with ``token`` that may post to ``chats``; ``sent`` keeps each accepted body."""

    def __init__(self, token: str, chats: tuple[str, ...], clock: Clock) -> None:
        self.token, self.chats, self.clock = token, chats, clock
        self.window = Window(20, 60.0)
        self.sent: list[dict[str, Any]] = []

    def __call__(self, r: FakeRequest) -> Reply:
        if r.method != "POST" or not r.path.startswith("/bot"):
            return 404, {}, b""
        token, _, method = r.path[len("/bot"):].partition("/")
        if token != self.token:
            return _error(401, "Unauthorized")
        if method != "sendMessage":
            return _error(404, "Not Found")
        try:
            body = r.json()
        except ValueError:
            return _error(400, "Bad Request: can't parse JSON")
        problem = _problem(body, self.chats)
        if problem:
            return _error(400, f"Bad Request: {problem}")
        if not self.window.allow(self.clock()):
            return _error(429, "Too Many Requests: retry after 30", parameters={"retry_after": 30})
        self.sent.append(body)
        chat = {"id": body["chat_id"], "type": "group"}
        return json_reply({"ok": True, "result": {"message_id": len(self.sent), "chat": chat,
                                                  "date": int(self.clock()), "text": body["text"]}})


def _problem(body: Any, chats: tuple[str, ...]) -> str:
    if not isinstance(body, dict):
        return "request body is not an object"
    chat, text = body.get("chat_id"), body.get("text")
    if not isinstance(chat, int | str) or isinstance(chat, bool) or str(chat) not in chats:
        return "chat not found"
    if not isinstance(text, str) or not text.strip():
        return "message text is empty"
    if len(text) > 4096:
        return "message is too long"
    if "parse_mode" in body and body["parse_mode"] not in ("MarkdownV2", "HTML", "Markdown"):
        return "unsupported parse_mode"
    thread = body.get("message_thread_id")
    if thread is not None and (not isinstance(thread, int) or isinstance(thread, bool)):
        return "message thread not found"
    if not isinstance(body.get("disable_notification", False), bool):
        return "disable_notification must be a boolean"
    return ""
