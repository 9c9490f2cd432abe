"""A fake of DingTalk's new server API for an app's robot: token, interactive cards sent and updated.

``POST /v1.0/oauth2/accessToken`` takes ``appKey`` and ``appSecret`` and answers
``accessToken`` valid ``expireIn`` (7,200) seconds. ``POST
/v1.0/im/v1.0/robot/interactiveCards/send`` and ``PUT /v1.0/im/robots/interactiveCards``
need the token in ``x-acs-dingtalk-access-token`` and JSON; sending takes
``cardTemplateId`` (``StandardCard``), ``robotCode``, ``openConversationId`` (a group
the robot is in), a new ``cardBizId`` and ``cardData`` (the card as a JSON *string*:
``config``, ``header.title.text``, ``contents``); updating takes a known ``cardBizId``
and new ``cardData``. Errors are HTTP 4xx with a string ``code``: 401
InvalidAuthentication (token), 400 invalidClientIdOrSecret, 400 param.invalid,
400 chatbot.notFound, 400 duplicate cardBizId, 429 QpsLimit past ``per_second``.
"""

from __future__ import annotations

import json
from typing import Any

from inferwatch.alerting.notify.fakes._base import Clock, FakeRequest, Reply, Window, json_reply

__all__ = ["FakeDingTalkApp"]


class FakeDingTalkApp:
    """DingTalk's robot interactive cards for one app; ``cards``: cardBizId -> its card now, ``sent``:
    cardBizIds in order, ``updates``: (cardBizId, card) in order, ``token_calls``."""

    def __init__(self, app_key: str, app_secret: str, robot_code: str, groups: set[str], clock: Clock,
                 per_second: int = 20) -> None:
        self.app_key, self.app_secret, self.robot_code, self.groups = app_key, app_secret, robot_code, groups
        self.clock, self.window = clock, Window(per_second, 1.0)
        self.tokens: dict[str, float] = {}
        self.cards: dict[str, dict[str, Any]] = {}
        self.sent: list[str] = []
        self.updates: list[tuple[str, dict[str, Any]]] = []
        self.token_calls = 0

    def __call__(self, r: FakeRequest) -> Reply:
        if not r.headers.get("content-type", "").startswith("application/json"):
            return _err(400, "param.invalid", "Content-Type must be application/json")
        if r.method == "POST" and r.path == "/v1.0/oauth2/accessToken":
            return self._token(r.json())
        if self.clock() >= self.tokens.get(r.headers.get("x-acs-dingtalk-access-token", ""), float("-inf")):
            return _err(401, "InvalidAuthentication", "不合法的access_token")
        if not self.window.allow(self.clock()):
            return _err(429, "Forbidden.AccessDenied.QpsLimitForApi", "调用该接口触发了限流")
        if r.method == "POST" and r.path == "/v1.0/im/v1.0/robot/interactiveCards/send":
            return self._send(r.json())
        if r.method == "PUT" and r.path == "/v1.0/im/robots/interactiveCards":
            return self._update(r.json())
        return 404, {}, b""

    def _token(self, b: Any) -> Reply:
        self.token_calls += 1
        if b.get("appKey") != self.app_key or b.get("appSecret") != self.app_secret:
            return _err(400, "invalidClientIdOrSecret", "无效的clientId或者clientSecret")
        token = f"{self.token_calls:04d}" + "d" * 28
        self.tokens[token] = self.clock() + 7200
        return json_reply({"accessToken": token, "expireIn": 7200})

    def _send(self, b: Any) -> Reply:
        if b.get("cardTemplateId") != "StandardCard":
            return _err(400, "card.templateEmpty", "卡片模板ID为空")
        if b.get("robotCode") != self.robot_code:
            return _err(400, "chatbot.notFound", "机器人不存在")
        if b.get("openConversationId") not in self.groups:
            return _err(400, "param.invalid", "openConversationId: 机器人不在该群")
        biz = b.get("cardBizId")
        if not isinstance(biz, str) or not biz or biz in self.cards:
            return _err(400, "param.invalid", "cardBizId: empty or duplicate")
        card, problem = _card(b.get("cardData"))
        if problem:
            return _err(400, "param.invalid", f"cardData: {problem}")
        self.cards[biz] = card
        self.sent.append(biz)
        return json_reply({"processQueryKey": f"pqk-{len(self.sent)}"})

    def _update(self, b: Any) -> Reply:
        biz = b.get("cardBizId")
        if biz not in self.cards:
            return _err(400, "param.invalid", "cardBizId: no such card")
        card, problem = _card(b.get("cardData"))
        if problem or not isinstance(b.get("updateOptions", {}), dict):
            return _err(400, "param.invalid", f"cardData: {problem or 'updateOptions'}")
        self.cards[biz] = card
        self.updates.append((biz, card))
        return json_reply({"success": True, "result": True})


def _card(data: Any) -> tuple[dict[str, Any], str]:
    if not isinstance(data, str):
        return {}, "must be a string (the card as JSON)"
    try:
        card = json.loads(data)
    except ValueError:
        return {}, "not JSON"
    title = card.get("header", {}).get("title", {}) if isinstance(card, dict) else {}
    if not isinstance(title, dict) or title.get("type") != "text" or not isinstance(title.get("text"), str):
        return {}, "header.title"
    contents = card.get("contents")
    if not isinstance(contents, list) or not contents or not all(
            isinstance(c, dict) and c.get("type") in ("text", "markdown", "action", "divider", "image")
            for c in contents):
        return {}, "contents"
    for action in (c for c in contents if c["type"] == "action"):
        if not all(isinstance(a, dict) and a.get("actionType") == "openLink"
                   and str(a.get("url", {}).get("all", "")).startswith(("http://", "https://"))
                   for a in action.get("actions", [])):
            return {}, "contents.actions"
    return card, ""


def _err(status: int, code: str, message: str) -> Reply:
    return json_reply({"code": code, "message": message, "requestid": "FAKE-REQUEST-ID"}, status)
