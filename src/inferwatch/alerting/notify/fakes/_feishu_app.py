"""A fake of Feishu's IM API for an app's bot: token, send a card to a group, edit it, as documented.

``tenant_access_token/internal`` takes ``app_id`` and ``app_secret`` as JSON
(``Content-Type: application/json; charset=utf-8``) and answers a ``t-`` token
valid ``expire`` (7,200) seconds. ``im/v1/messages`` needs ``receive_id_type``,
``Authorization: Bearer <token>`` and a body of at most 30 KB whose ``content`` is
the card as a JSON *string*; it answers ``data.message_id`` (``om_...``). ``PATCH
im/v1/messages/{id}`` replaces a card the app sent, only when the old and the new
card both say ``config.update_multi: true`` (a shared card). Codes: 99991663
invalid token, 10014 app secret invalid, 99992402 field validation failed, 230002
the bot is not in the chat, 230001 invalid message id, 230099 not a shared card,
9499 bad request (the card schema, as the robot fake checks it).
"""

from __future__ import annotations

import json
from typing import Any

from inferwatch.alerting.notify.fakes._base import Clock, FakeRequest, Reply, json_reply
from inferwatch.alerting.notify.fakes._robots import card_problem

__all__ = ["FakeFeishuApp"]

_JSON = "application/json; charset=utf-8"


class FakeFeishuApp:
    """Feishu's IM API for one app whose bot is in ``chats``; ``cards``: message id -> its card now,
    ``edits``: (message id, card) in order, ``token_calls``: tokens fetched."""

    def __init__(self, app_id: str, app_secret: str, chats: set[str], clock: Clock) -> None:
        self.app_id, self.app_secret, self.chats, self.clock = app_id, app_secret, chats, clock
        self.tokens: dict[str, float] = {}
        self.cards: dict[str, dict[str, Any]] = {}
        self.sent: list[str] = []  # message ids in the order they were sent
        self.edits: list[tuple[str, dict[str, Any]]] = []
        self.token_calls = 0

    def __call__(self, r: FakeRequest) -> Reply:
        if r.headers.get("content-type", "") != _JSON:
            return _err(400, 99992402, "field validation failed: Content-Type")
        if r.method == "POST" and r.path == "/open-apis/auth/v3/tenant_access_token/internal":
            return self._token(r)
        if not self._authorised(r):
            return _err(400, 99991663, "Invalid access token for authorization. Please make a request "
                        "with token attached.")
        if len(r.body) > 30 * 1024:
            return _err(400, 230025, "The length of the message content reaches its limit.")
        if r.method == "POST" and r.path == "/open-apis/im/v1/messages":
            return self._send(r)
        if r.method == "PATCH" and r.path.startswith("/open-apis/im/v1/messages/"):
            return self._edit(r, r.path.rsplit("/", 1)[1])
        return 404, {}, b""

    def _token(self, r: FakeRequest) -> Reply:
        self.token_calls += 1
        b = r.json()
        if b.get("app_id") != self.app_id or b.get("app_secret") != self.app_secret:
            return _err(400, 10014, "app secret invalid")
        token = f"t-{self.token_calls:04d}" + "c" * 36
        self.tokens[token] = self.clock() + 7200
        return json_reply({"code": 0, "msg": "ok", "tenant_access_token": token, "expire": 7200})

    def _authorised(self, r: FakeRequest) -> bool:
        scheme, _, token = r.headers.get("authorization", "").partition(" ")
        return scheme == "Bearer" and self.clock() < self.tokens.get(token, float("-inf"))

    def _card(self, content: Any) -> tuple[dict[str, Any] | None, str]:
        if not isinstance(content, str):
            return None, "content must be a string (the card as JSON)"
        try:
            card = json.loads(content)
        except ValueError:
            return None, "content is not JSON"
        return card, card_problem({"msg_type": "interactive", "card": card})

    def _send(self, r: FakeRequest) -> Reply:
        if r.query.get("receive_id_type") != ["chat_id"]:
            return _err(400, 99992402, "field validation failed: receive_id_type")
        b = r.json()
        if b.get("msg_type") != "interactive":
            return _err(400, 99992402, "field validation failed: msg_type")
        if b.get("receive_id") not in self.chats:
            return _err(400, 230002, "Bot/User can NOT be out of the chat.")
        card, problem = self._card(b.get("content"))
        if card is None or problem:
            return _err(400, 9499, f"Bad Request: {problem}")
        mid = f"om_{len(self.sent) + 1:032x}"
        self.cards[mid] = card
        self.sent.append(mid)
        return json_reply({"code": 0, "msg": "success", "data": {
            "message_id": mid, "msg_type": "interactive", "chat_id": b["receive_id"]}})

    def _edit(self, r: FakeRequest, mid: str) -> Reply:
        if mid not in self.cards:
            return _err(400, 230001, "Your request contains an invalid request parameter, "
                        "ext=invalid message_id")
        card, problem = self._card(r.json().get("content"))
        if card is None or problem:
            return _err(400, 9499, f"Bad Request: {problem}")
        if not all(c.get("config", {}).get("update_multi") is True for c in (card, self.cards[mid])):
            return _err(400, 230099, "Failed to update card: not a shared card (config.update_multi)")
        self.cards[mid] = card
        self.edits.append((mid, card))
        return json_reply({"code": 0, "msg": "success", "data": {}})


def _err(status: int, code: int, msg: str) -> Reply:
    return json_reply({"code": code, "msg": msg, "data": {}}, status)
