"""Loopback fakes of DingTalk, Feishu, the WeCom application API, Alibaba Cloud and Tencent Cloud.

Each checks what the platform documents (signature, JSON shape, size, rate) and
answers with the platform's own error codes. ``clock`` is the platform's clock
(seconds); the signature windows and rate limits are read against it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import urllib.parse
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from alerting.fakes import Reply, Request

Clock = Callable[[], float]


def _json(obj: Any, status: int = 200) -> Reply:
    return status, {"Content-Type": "application/json"}, json.dumps(obj, ensure_ascii=False).encode()


class _Window:
    """At most ``count`` in any ``per`` seconds; ``penalty``: refused for that long once over."""

    def __init__(self, count: int, per: float, penalty: float = 0.0) -> None:
        self.count, self.per, self.penalty = count, per, penalty
        self.sent: list[float] = []
        self.blocked_until = float("-inf")

    def allow(self, now: float) -> bool:
        if now < self.blocked_until:
            return False
        self.sent = [t for t in self.sent if t > now - self.per]
        if len(self.sent) >= self.count:
            self.blocked_until = now + self.penalty
            return False
        self.sent.append(now)
        return True


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
        self.window = _Window(20, 60.0, 600.0)
        self.pings: list[set[str]] = []
        self.texts: list[str] = []

    def __call__(self, r: Request) -> Reply:
        if r.method != "POST" or r.path != "/robot/send":
            return 404, {}, b""
        if r.query.get("access_token") != [self.token]:
            return _json({"errcode": 300001, "errmsg": "token is not exist"})
        if self.secret is not None and not self._signed(r):
            return _json({"errcode": 310000, "errmsg": "sign not match, more: [https://ding-doc.dingtalk.com]"})
        if not r.headers.get("content-type", "").startswith("application/json"):
            return _json({"errcode": 43004, "errmsg": "无效的HTTP HEADER Content-Type"})
        if len(r.body) > 20000:
            return _json({"errcode": 460101, "errmsg": "message too long, exceed 20000 bytes"})
        if not self.window.allow(self.clock()):
            return _json({"errcode": 130101, "errmsg": "send too fast, exceed 20 times per minute"})
        return self._message(r.json())

    def _signed(self, r: Request) -> bool:
        assert self.secret is not None
        ts, sign = r.query.get("timestamp", [""])[0], r.query.get("sign", [""])[0]
        if not ts.isdigit() or abs(int(ts) / 1000 - self.clock()) > 3600:
            return False
        want = hmac.new(self.secret.encode(), f"{ts}\n{self.secret}".encode(), hashlib.sha256).digest()
        return hmac.compare_digest(base64.b64encode(want).decode(), sign)  # parse_qs undid the URL-encoding

    def _message(self, b: Any) -> Reply:
        md = b.get("markdown") if isinstance(b, dict) else None
        if not isinstance(b, dict) or b.get("msgtype") != "markdown":
            return _json({"errcode": 40044, "errmsg": "不合法的消息类型"})
        if not isinstance(md, dict) or not all(isinstance(md.get(k), str) and md[k]
                                               for k in ("title", "text")):
            return _json({"errcode": 40035, "errmsg": "缺少参数 markdown.title/text"})
        if self.keywords and not any(k in md["title"] + md["text"] for k in self.keywords):
            return _json({"errcode": 310000, "errmsg": "keywords not in content"})
        at = b.get("at", {})
        mobiles, users = at.get("atMobiles", []), at.get("atUserIds", [])
        if not all(isinstance(x, list) and all(isinstance(i, str) for i in x) for x in (mobiles, users)):
            return _json({"errcode": 40035, "errmsg": "缺少参数 at"})
        # markdown pings a mobile or user id only when "@<it>" is also in the text
        pinged = {f"mobile:{m}" for m in mobiles if f"@{m}" in md["text"]}
        pinged |= {f"user:{u}" for u in users if f"@{u}" in md["text"]}
        self.pings.append(pinged | ({"@all"} if at.get("isAtAll") is True else set()))
        self.texts.append(md["text"])
        return _json({"errcode": 0, "errmsg": "ok"})


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
        self.minute, self.second = _Window(100, 60.0), _Window(5, 1.0)
        self.cards: list[dict[str, Any]] = []

    def __call__(self, r: Request) -> Reply:
        if r.method != "POST" or r.path != f"/open-apis/bot/v2/hook/{self.token}":
            return _json({"code": 19001, "data": {},
                          "msg": "param invalid: incoming webhook access token invalid"})
        if len(r.body) > 20 * 1024:
            return _json({"code": 9499, "data": {}, "msg": "Bad Request: request body exceeds 20KB"})
        try:
            b = r.json()
        except ValueError:
            return _json({"code": 9499, "data": {}, "msg": "Bad Request"})
        if self.secret is not None and not self._signed(b):
            return _json({"code": 19021, "data": {},
                          "msg": "sign match fail or timestamp is not within one hour from current time"})
        now = self.clock()
        if not (self.second.allow(now) and self.minute.allow(now)):
            return _json({"code": 11232, "data": {},
                          "msg": "frequency limited psm[lark.oapi.app_platform_runtime]"})
        problem = _card_problem(b)
        if problem:
            return _json({"code": 9499, "data": {}, "msg": f"Bad Request: {problem}"})
        if self.keywords and not any(k in json.dumps(b["card"], ensure_ascii=False) for k in self.keywords):
            return _json({"code": 19024, "data": {}, "msg": "Key Words Not Found"})
        self.cards.append(b["card"])
        return _json({"code": 0, "data": {}, "msg": "success"})

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


def _card_problem(b: Any) -> str:
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


def parse_query(url: str) -> dict[str, str]:
    """The query of ``url`` as a plain dict (a test helper)."""
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


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
        self.window = _Window(per_minute, 60.0)
        self.delivered: list[tuple[list[str], str]] = []
        self.gettoken_calls = 0

    def expire_all(self) -> None:
        self.tokens = dict.fromkeys(self.tokens, float("-inf"))

    def __call__(self, r: Request) -> Reply:
        if r.method == "GET" and r.path == "/cgi-bin/gettoken":
            return self._gettoken(r)
        if r.method == "POST" and r.path == "/cgi-bin/message/send":
            return self._send(r)
        return 404, {}, b""

    def _gettoken(self, r: Request) -> Reply:
        self.gettoken_calls += 1
        if r.query.get("corpid") != [self.corp_id]:
            return _json({"errcode": 40013, "errmsg": "invalid corpid"})
        if r.query.get("corpsecret") != [self.secret]:
            return _json({"errcode": 40001, "errmsg": "invalid credential"})
        token = f"ACCESS-TOKEN-{self.gettoken_calls:04d}-" + "x" * 32
        self.tokens[token] = self.clock() + 7200
        return _json({"errcode": 0, "errmsg": "ok", "access_token": token, "expires_in": 7200})

    def _send(self, r: Request) -> Reply:
        token = r.query.get("access_token", [""])[0]
        if token not in self.tokens:
            return _json({"errcode": 40014, "errmsg": "invalid access_token"})
        if self.clock() >= self.tokens[token]:
            return _json({"errcode": 42001, "errmsg": "access_token expired"})
        b = r.json()
        if b.get("agentid") != self.agent_id:
            return _json({"errcode": 40056, "errmsg": "invalid agentid"})
        content = (b.get("markdown") or {}).get("content") if b.get("msgtype") == "markdown" else None
        if not isinstance(content, str) or not content:
            return _json({"errcode": 44004, "errmsg": "empty content"})
        if len(content.encode()) > 2048:
            return _json({"errcode": 40058, "errmsg": "markdown.content exceed max length 2048"})
        if not self.window.allow(self.clock()):
            return _json({"errcode": 45009, "errmsg": "api freq out of limit"})
        asked = [u for u in str(b.get("touser", "")).split("|") if u]
        valid = sorted(self.users) if "@all" in asked else [u for u in asked if u in self.users]
        invalid = [u for u in asked if u not in self.users and u != "@all"]
        if not valid and not b.get("toparty") and not b.get("totag"):
            return _json({"errcode": 81013, "errmsg": "user & party & tag all invalid"})
        self.delivered.append((valid, content))
        return _json({"errcode": 0, "errmsg": "ok", "invaliduser": "|".join(invalid), "msgid": "MSGID"})


def _aliyun_error(status: int, code: str, message: str) -> Reply:
    return _json({"Code": code, "Message": message, "RequestId": "FAKE-REQUEST"}, status)


class FakeAliyun:
    """Alibaba Cloud RPC endpoint for ``SendSms`` (Dysmsapi) or ``SingleCallByTts`` (Dyvmsapi).

    Checks the common parameters and the signature (HTTP 400 ``SignatureDoesNotMatch``),
    the key (404 ``InvalidAccessKeyId.NotFound``), a ``Timestamp`` within 15 minutes (400
    ``InvalidTimeStamp.Expired``), a fresh nonce (400 ``SignatureNonceUsed``); then, as
    HTTP 200 codes: mainland numbers (``isv.MOBILE_NUMBER_ILLEGAL``), template variables of
    at most 35 characters (``isv.PARAM_LENGTH_LIMIT``) and one message or call a minute per
    number (``isv.BUSINESS_LIMIT_CONTROL``). ``sent``: (number, template variables).
    """

    def __init__(self, key_id: str, secret: str, clock: Clock, action: str) -> None:
        self.key_id, self.secret, self.clock, self.action = key_id, secret, clock, action
        self.nonces: set[str] = set()
        self.per_number: dict[str, _Window] = {}
        self.sent: list[tuple[str, dict[str, str]]] = []

    def __call__(self, r: Request) -> Reply:
        if r.method != "POST" or r.path != "/":
            return 404, {}, b""
        p = {k: v[0] for k, v in r.form().items()}
        if p.get("AccessKeyId") != self.key_id:
            return _aliyun_error(404, "InvalidAccessKeyId.NotFound", "Specified access key is not found.")
        common = {"Format": "JSON", "SignatureMethod": "HMAC-SHA1", "SignatureVersion": "1.0",
                  "Version": "2017-05-25", "Action": self.action}
        if any(p.get(k) != v for k, v in common.items()) or not p.get("RegionId"):
            return _aliyun_error(400, "MissingParameter", "a common parameter is missing or wrong")
        if p.get("Signature") != _rpc_sign(p, self.secret):
            return _aliyun_error(400, "SignatureDoesNotMatch",
                                 "Specified signature is not matched with our calculation.")
        stamp = datetime.strptime(p.get("Timestamp", ""), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        if abs(stamp.timestamp() - self.clock()) > 900:
            return _aliyun_error(400, "InvalidTimeStamp.Expired",
                                 "Specified time stamp or date value is expired.")
        if p["SignatureNonce"] in self.nonces:
            return _aliyun_error(400, "SignatureNonceUsed", "Specified signature nonce was used already.")
        self.nonces.add(p["SignatureNonce"])
        return self._deliver(p)

    def _deliver(self, p: dict[str, str]) -> Reply:
        sms = self.action == "SendSms"
        numbers = p.get("PhoneNumbers", "").split(",") if sms else [p.get("CalledNumber", "")]
        if not all(len(x) == 11 and x.startswith("1") and x.isdigit() for x in numbers):
            return _aliyun_error(200, "isv.MOBILE_NUMBER_ILLEGAL", "非法手机号")
        variables = json.loads(p.get("TemplateParam" if sms else "TtsParam", "{}"))
        if any(not isinstance(v, str) or len(v) > 35 for v in variables.values()):
            return _aliyun_error(200, "isv.PARAM_LENGTH_LIMIT", "参数超出长度限制")
        for number in numbers:
            if not self.per_number.setdefault(number, _Window(1, 60.0)).allow(self.clock()):
                return _aliyun_error(200, "isv.BUSINESS_LIMIT_CONTROL", "触发分钟级流控Permits:1")
        self.sent += [(x, variables) for x in numbers]
        extra = {"BizId": "900619746936498440^0"} if sms else {"CallId": "116012354148^102813784"}
        return _json({"Code": "OK", "Message": "OK", "RequestId": "FAKE-REQUEST", **extra})


def _rpc_sign(p: dict[str, str], secret: str) -> str:
    enc = lambda s: urllib.parse.quote(s, safe="~")  # noqa: E731 - the rule in one line, as documented
    canonical = "&".join(f"{enc(k)}={enc(v)}" for k, v in sorted(p.items()) if k != "Signature")
    to_sign = f"POST&%2F&{enc(canonical)}"
    return base64.b64encode(hmac.new(f"{secret}&".encode(), to_sign.encode(), hashlib.sha1).digest()).decode()


class FakeTencent:
    """Tencent Cloud API 3.0 endpoint for ``SendSms`` (sms) or ``SendTtsVoice`` (vms).

    Checks ``Authorization`` against the request actually received (``AuthFailure.SignatureFailure``),
    the SecretId (``AuthFailure.SecretIdNotFound``), ``X-TC-Timestamp`` within 5 minutes
    (``AuthFailure.SignatureExpire``), the action and version headers; SMS reports per number
    (``LimitExceeded.PhoneNumberThirtySecondLimit`` for a second text within 30 s, invalid
    E.164 ``InvalidParameterValue.IncorrectPhoneNumber``). ``sent``: (number, params).
    """

    def __init__(self, secret_id: str, secret_key: str, clock: Clock, service: str) -> None:
        self.secret_id, self.secret_key, self.clock, self.service = secret_id, secret_key, clock, service
        sms = service == "sms"
        self.action, self.version = ("SendSms", "2021-01-11") if sms else ("SendTtsVoice", "2020-09-02")
        self.per_number: dict[str, _Window] = {}
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, r: Request) -> Reply:
        problem = self._auth_problem(r)
        if problem:
            return self._error(*problem)
        if r.headers.get("x-tc-action") != self.action or r.headers.get("x-tc-version") != self.version:
            return self._error("InvalidAction", "the action or version is not of this service")
        p = r.json()
        if self.service == "vms":
            called = str(p.get("CalledNumber", ""))
            if not re.fullmatch(r"\+[1-9][0-9]{6,14}", called) or not p.get("TemplateId"):
                return self._error("InvalidParameterValue", "CalledNumber or TemplateId")
            self.sent.append((p["CalledNumber"], p))
            return _json({"Response": {"SendStatus": {"CallId": "fake-call", "SessionContext": ""},
                                       "RequestId": "fake"}})
        return _json({"Response": {"SendStatusSet": [self._sms(x, p) for x in p.get("PhoneNumberSet", [])],
                                   "RequestId": "fake"}})

    def _sms(self, number: str, p: dict[str, Any]) -> dict[str, Any]:
        code, message = "Ok", "send success"
        if not re.fullmatch(r"\+[1-9][0-9]{6,14}", number):
            code, message = "InvalidParameterValue.IncorrectPhoneNumber", "手机号格式错误"
        elif not self.per_number.setdefault(number, _Window(1, 30.0)).allow(self.clock()):
            code = "LimitExceeded.PhoneNumberThirtySecondLimit"
            message = "单个手机号30秒内下发短信条数超过上限"
        else:
            self.sent.append((number, p))
        return {"SerialNo": "fake", "PhoneNumber": number, "Fee": 1, "SessionContext": "", "Code": code,
                "Message": message, "IsoCode": "CN"}

    def _auth_problem(self, r: Request) -> tuple[str, str] | None:
        auth = r.headers.get("authorization", "")
        m = re.fullmatch(r"TC3-HMAC-SHA256 Credential=([^/]+)/(\d{4}-\d{2}-\d{2})/(\w+)/tc3_request, "
                         r"SignedHeaders=([a-z;-]+), Signature=([0-9a-f]{64})", auth)
        if m is None:
            return "AuthFailure.InvalidAuthorization", "Authorization header is malformed"
        if m[1] != self.secret_id:
            return "AuthFailure.SecretIdNotFound", "The SecretId is not found"
        ts = r.headers.get("x-tc-timestamp", "")
        if not ts.isdigit() or abs(int(ts) - self.clock()) > 300:
            return "AuthFailure.SignatureExpire", "Signature expired"
        names = m[4].split(";")
        canonical_headers = "".join(f"{h}:{r.headers.get(h, '').strip().lower()}\n" for h in names)
        canonical = (f"POST\n/\n\n{canonical_headers}\n{m[4]}\n" + hashlib.sha256(r.body).hexdigest())
        date = datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%d")
        to_sign = (f"TC3-HMAC-SHA256\n{ts}\n{date}/{self.service}/tc3_request\n"
                   + hashlib.sha256(canonical.encode()).hexdigest())
        key = f"TC3{self.secret_key}".encode()
        for part in (date, self.service, "tc3_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        want = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        if m[2] != date or m[3] != self.service or "content-type" not in names or "host" not in names \
                or not hmac.compare_digest(want, m[5]):
            return "AuthFailure.SignatureFailure", "The provided credentials could not be validated."
        return None

    def _error(self, code: str, message: str) -> Reply:
        return _json({"Response": {"Error": {"Code": code, "Message": message}, "RequestId": "fake"}})
