"""Fakes of DingTalk's and Feishu's group robots and WeCom's application API, checking as documented.

Each verifies the signature, the JSON shape, the size and the rate exactly as the
platform documents them and answers with the platform's own error codes;
``clock`` is the platform's clock (seconds). Serve one with ``LoopbackServer``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from inferwatch.alerting.notify.fakes._base import Clock, FakeRequest, Reply, Window, json_reply

__all__ = ["FakeDingTalk", "FakeFeishu", "FakeWeComApp", "card_problem"]


class FakeDingTalk:
    """DingTalk group robot (``/robot/send?access_token=``), as its documentation states.

    errcode 300001 unknown token; 310000 sign not match / keywords not in content
    (the signature's timestamp must be within an hour); 43004 bad Content-Type;
    40035 / 40044 missing or bad message; 460101 over 20,000 bytes; 130101 over 20
    messages a minute, after which the robot is refused for 10 minutes. ``pings``
    records whom each message would notify (``mobile:N``, ``user:ID``, ``@all``).
    """

    def __init__(self, token: str, secret: str | None, clock: Clock, keywords: tuple[str, ...] = ()) -> None:
        self.token, self.secret, self.clock, self.keywords = token, secret, clock, keywords
        self.window = Window(20, 60.0, 600.0)
        self.pings: list[set[str]] = []
        self.texts: list[str] = []

    def __call__(self, r: FakeRequest) -> Reply:
        if r.method != "POST" or r.path != "/robot/send":
            return 404, {}, b""
        if r.query.get("access_token") != [self.token]:
            return json_reply({"errcode": 300001, "errmsg": "token is not exist"})
        if self.secret is not None and not self._signed(r):
            return json_reply({"errcode": 310000, "errmsg": "sign not match, more: [https://ding-doc.dingtalk.com]"})
        if not r.headers.get("content-type", "").startswith("application/json"):
            return json_reply({"errcode": 43004, "errmsg": "无效的HTTP HEADER Content-Type"})
        if len(r.body) > 20000:
            return json_reply({"errcode": 460101, "errmsg": "message too long, exceed 20000 bytes"})
        if not self.window.allow(self.clock()):
            return json_reply({"errcode": 130101, "errmsg": "send too fast, exceed 20 times per minute"})
        return self._message(r.json())

    def _signed(self, r: FakeRequest) -> bool:
        assert self.secret is not None
        ts, sign = r.query.get("timestamp", [""])[0], r.query.get("sign", [""])[0]
        if not ts.isdigit() or abs(int(ts) / 1000 - self.clock()) > 3600:
            return False
        want = hmac.new(self.secret.encode(), f"{ts}\n{self.secret}".encode(), hashlib.sha256).digest()
        return hmac.compare_digest(base64.b64encode(want).decode(), sign)  # parse_qs undid the URL-encoding

    def _message(self, b: Any) -> Reply:
        md = b.get("markdown") if isinstance(b, dict) else None
        if not isinstance(b, dict) or b.get("msgtype") != "markdown":
            return json_reply({"errcode": 40044, "errmsg": "不合法的消息类型"})
        if not isinstance(md, dict) or not all(isinstance(md.get(k), str) and md[k]
                                               for k in ("title", "text")):
            return json_reply({"errcode": 40035, "errmsg": "缺少参数 markdown.title/text"})
        if self.keywords and not any(k in md["title"] + md["text"] for k in self.keywords):
            return json_reply({"errcode": 310000, "errmsg": "keywords not in content"})
        at = b.get("at", {})
        mobiles, users = at.get("atMobiles", []), at.get("atUserIds", [])
        if not all(isinstance(x, list) and all(isinstance(i, str) for i in x) for x in (mobiles, users)):
            return json_reply({"errcode": 40035, "errmsg": "缺少参数 at"})
        # markdown pings a mobile or user id only when "@<it>" is also in the text
        pinged = {f"mobile:{m}" for m in mobiles if f"@{m}" in md["text"]}
        pinged |= {f"user:{u}" for u in users if f"@{u}" in md["text"]}
        self.pings.append(pinged | ({"@all"} if at.get("isAtAll") is True else set()))
        self.texts.append(md["text"])
        return json_reply({"errcode": 0, "errmsg": "ok"})


_CARD_COLOURS = {"blue", "wathet", "turquoise", "green", "yellow", "orange", "red", "carmine", "violet",
                 "purple", "indigo", "grey", "default"}


class FakeFeishu:
    """Feishu custom robot (``/open-apis/bot/v2/hook/TOKEN``), as its documentation states.

    code 19001 unknown hook; 19021 "sign match fail or timestamp is not within one
    hour from current time"; 19024 "Key Words Not Found"; 9499 bad request (body
    over 20 KB, not JSON, card not in the card schema); 11232 "frequency limited"
    over 100 a minute or 5 a second. ``cards`` records the accepted cards.
    """

    def __init__(self, token: str, secret: str | None, clock: Clock, keywords: tuple[str, ...] = ()) -> None:
        self.token, self.secret, self.clock, self.keywords = token, secret, clock, keywords
        self.minute, self.second = Window(100, 60.0), Window(5, 1.0)
        self.cards: list[dict[str, Any]] = []

    def __call__(self, r: FakeRequest) -> Reply:
        if r.method != "POST" or r.path != f"/open-apis/bot/v2/hook/{self.token}":
            return json_reply({"code": 19001, "data": {},
                          "msg": "param invalid: incoming webhook access token invalid"})
        if len(r.body) > 20 * 1024:
            return json_reply({"code": 9499, "data": {}, "msg": "Bad Request: request body exceeds 20KB"})
        try:
            b = r.json()
        except ValueError:
            return json_reply({"code": 9499, "data": {}, "msg": "Bad Request"})
        if self.secret is not None and not self._signed(b):
            return json_reply({"code": 19021, "data": {},
                          "msg": "sign match fail or timestamp is not within one hour from current time"})
        now = self.clock()
        if not (self.second.allow(now) and self.minute.allow(now)):
            return json_reply({"code": 11232, "data": {},
                          "msg": "frequency limited psm[lark.oapi.app_platform_runtime]"})
        problem = card_problem(b)
        if problem:
            return json_reply({"code": 9499, "data": {}, "msg": f"Bad Request: {problem}"})
        if self.keywords and not any(k in json.dumps(b["card"], ensure_ascii=False) for k in self.keywords):
            return json_reply({"code": 19024, "data": {}, "msg": "Key Words Not Found"})
        self.cards.append(b["card"])
        return json_reply({"code": 0, "data": {}, "msg": "success"})

    def _signed(self, b: Any) -> bool:
        assert self.secret is not None
        ts, sign = str(b.get("timestamp", "")), str(b.get("sign", ""))
        if not ts.isdigit() or abs(int(ts) - self.clock()) > 3600:
            return False
        want = hmac.new(f"{ts}\n{self.secret}".encode(), b"", hashlib.sha256).digest()
        return hmac.compare_digest(base64.b64encode(want).decode(), sign)


def _text_ok(t: Any) -> bool:
    return (isinstance(t, dict) and t.get("tag") in ("plain_text", "lark_md")
            and isinstance(t.get("content"), str))


def _element_problem(e: Any) -> str:
    if not isinstance(e, dict):
        return "element not an object"
    if e.get("tag") == "div":
        fields = e.get("fields", [])
        if "text" in e and not _text_ok(e["text"]):
            return "div.text"
        if not isinstance(fields, list) or not all(isinstance(f, dict) and _text_ok(f.get("text"))
                                                   for f in fields):
            return "div.fields"
        return "" if "text" in e or fields else "div needs text or fields"
    if e.get("tag") == "action":
        acts = e.get("actions")
        ok = isinstance(acts, list) and acts and all(
            isinstance(a, dict) and a.get("tag") == "button" and _text_ok(a.get("text"))
            and str(a.get("url", "")).startswith(("http://", "https://")) for a in acts)
        return "" if ok else "action.actions"
    return "" if e.get("tag") in ("hr", "note", "markdown", "img") else f"unknown tag {e.get('tag')!r}"


def card_problem(b: Any) -> str:
    """What is wrong with a robot body's interactive card by the card schema ("" when nothing)."""
    if not isinstance(b, dict) or b.get("msg_type") != "interactive" or not isinstance(b.get("card"), dict):
        return "msg_type interactive with a card"
    card = b["card"]
    header = card.get("header", {})
    if not _text_ok(header.get("title")) or header.get("template", "blue") not in _CARD_COLOURS:
        return "header"
    elements = card.get("elements")
    if not isinstance(elements, list) or not elements:
        return "elements"
    return next((p for p in map(_element_problem, elements) if p), "")


class FakeWeComApp:
    """WeCom's application API: ``gettoken`` and ``message/send``, as documented.

    gettoken: 40013 invalid corpid, 40001 invalid credential; tokens last 7,200 s
    (``expire_all`` ends them early). message/send: 40014 invalid access_token,
    42001 access_token expired, 40056 invalid agentid, 40058 markdown over 2,048
    bytes, 81013 no valid recipient, 45009 over ``per_minute`` sends a minute;
    unknown users come back in ``invaliduser``. ``delivered``: (users, content).
    """

    def __init__(self, corp_id: str, secret: str, agent_id: int, users: set[str], clock: Clock,
                 per_minute: int = 1000) -> None:
        self.corp_id, self.secret, self.agent_id = corp_id, secret, agent_id
        self.users, self.clock = users, clock
        self.tokens: dict[str, float] = {}
        self.window = Window(per_minute, 60.0)
        self.delivered: list[tuple[list[str], str]] = []
        self.gettoken_calls = 0

    def expire_all(self) -> None:
        self.tokens = dict.fromkeys(self.tokens, float("-inf"))

    def __call__(self, r: FakeRequest) -> Reply:
        if r.method == "GET" and r.path == "/cgi-bin/gettoken":
            return self._gettoken(r)
        if r.method == "POST" and r.path == "/cgi-bin/message/send":
            return self._send(r)
        return 404, {}, b""

    def _gettoken(self, r: FakeRequest) -> Reply:
        self.gettoken_calls += 1
        if r.query.get("corpid") != [self.corp_id]:
            return json_reply({"errcode": 40013, "errmsg": "invalid corpid"})
        if r.query.get("corpsecret") != [self.secret]:
            return json_reply({"errcode": 40001, "errmsg": "invalid credential"})
        token = f"ACCESS-TOKEN-{self.gettoken_calls:04d}-" + "x" * 32
        self.tokens[token] = self.clock() + 7200
        return json_reply({"errcode": 0, "errmsg": "ok", "access_token": token, "expires_in": 7200})

    def _send(self, r: FakeRequest) -> Reply:
        token = r.query.get("access_token", [""])[0]
        if token not in self.tokens:
            return json_reply({"errcode": 40014, "errmsg": "invalid access_token"})
        if self.clock() >= self.tokens[token]:
            return json_reply({"errcode": 42001, "errmsg": "access_token expired"})
        b = r.json()
        if b.get("agentid") != self.agent_id:
            return json_reply({"errcode": 40056, "errmsg": "invalid agentid"})
        content = (b.get("markdown") or {}).get("content") if b.get("msgtype") == "markdown" else None
        if not isinstance(content, str) or not content:
            return json_reply({"errcode": 44004, "errmsg": "empty content"})
        if len(content.encode()) > 2048:
            return json_reply({"errcode": 40058, "errmsg": "markdown.content exceed max length 2048"})
        if not self.window.allow(self.clock()):
            return json_reply({"errcode": 45009, "errmsg": "api freq out of limit"})
        asked = [u for u in str(b.get("touser", "")).split("|") if u]
        valid = sorted(self.users) if "@all" in asked else [u for u in asked if u in self.users]
        invalid = [u for u in asked if u not in self.users and u != "@all"]
        if not valid and not b.get("toparty") and not b.get("totag"):
            return json_reply({"errcode": 81013, "errmsg": "user & party & tag all invalid"})
        self.delivered.append((valid, content))
        return json_reply({"errcode": 0, "errmsg": "ok", "invaliduser": "|".join(invalid), "msgid": "MSGID"})


