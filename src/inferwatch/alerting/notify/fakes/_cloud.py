"""Fakes of Alibaba Cloud's and Tencent Cloud's voice and SMS APIs, checking signatures as documented."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import urllib.parse
from datetime import UTC, datetime
from typing import Any

from inferwatch.alerting.notify.fakes._base import Clock, FakeRequest, Reply, Window, json_reply

__all__ = ["FakeAliyun", "FakeTencent"]


def _aliyun_error(status: int, code: str, message: str) -> Reply:
    return json_reply({"Code": code, "Message": message, "RequestId": "FAKE-REQUEST"}, status)


class FakeAliyun:
    """Alibaba Cloud RPC endpoint for ``SendSms`` (Dysmsapi) or ``SingleCallByTts`` (Dyvmsapi).

    Checks the common parameters and the signature (HTTP 400 ``SignatureDoesNotMatch``),
    the key (404 ``InvalidAccessKeyId.NotFound``), a ``Timestamp`` within 15 minutes (400
    ``InvalidTimeStamp.Expired``), a fresh nonce (400 ``SignatureNonceUsed``); then, as
    HTTP 200 codes: mainland numbers (``isv.MOBILE_NUMBER_ILLEGAL``), template variables of
    at most 35 characters (``isv.PARAM_LENGTH_LIMIT``) and one message or call a minute per
    number (``isv.BUSINESS_LIMIT_CONTROL``). ``sent``: (number, template variables).

    Voice also answers ``QueryCallDetailByCallId`` (ProdId ``11000000300006``) as documented:
    ``Data`` a JSON text, empty until the call's record exists (``RECORD_AFTER_S`` after the
    call); the record has a ``startDate`` and ``duration`` when the call was answered. Whether
    each call to a number is answered: ``answers[number]``, one entry per call, then ``answer``.
    """

    RECORD_AFTER_S = 20.0

    def __init__(self, key_id: str, secret: str, clock: Clock, action: str) -> None:
        self.key_id, self.secret, self.clock, self.action = key_id, secret, clock, action
        self.nonces: set[str] = set()
        self.per_number: dict[str, Window] = {}
        self.sent: list[tuple[str, dict[str, str]]] = []
        self.answers: dict[str, list[bool]] = {}
        self.answer = False
        self.calls: dict[str, tuple[str, bool, float]] = {}  # CallId: (number, answered, when)
        self.queries: list[str] = []  # CallIds asked about

    def __call__(self, r: FakeRequest) -> Reply:
        if r.method != "POST" or r.path != "/":
            return 404, {}, b""
        p = {k: v[0] for k, v in r.form().items()}
        if p.get("AccessKeyId") != self.key_id:
            return _aliyun_error(404, "InvalidAccessKeyId.NotFound", "Specified access key is not found.")
        common = {"Format": "JSON", "SignatureMethod": "HMAC-SHA1", "SignatureVersion": "1.0",
                  "Version": "2017-05-25",
                  "Action": "QueryCallDetailByCallId" if p.get("Action") == "QueryCallDetailByCallId"
                  and self.action == "SingleCallByTts" else self.action}
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
        return self._query(p) if p["Action"] == "QueryCallDetailByCallId" else self._deliver(p)

    def _query(self, p: dict[str, str]) -> Reply:
        if p.get("ProdId") != "11000000300006" or not p.get("QueryDate", "").isdigit():
            return _aliyun_error(200, "isv.INVALID_PARAMETERS", "ProdId or QueryDate")
        self.queries.append(p.get("CallId", ""))
        found = self.calls.get(p.get("CallId", ""))
        if found is None or self.clock() < found[2] + self.RECORD_AFTER_S:
            return json_reply({"Code": "OK", "Message": "OK", "RequestId": "FAKE-REQUEST", "Data": ""})
        number, answered, at = found
        start = datetime.fromtimestamp(at + 8 * 3600 + 10, UTC).strftime("%Y-%m-%d %H:%M:%S")  # Beijing time
        record = {"caller": "", "callee": number, "gmtCreate": start,
                  "state": "200000" if answered else "200005",
                  "stateDesc": "用户接听" if answered else "用户未接听",
                  "startDate": start if answered else "",
                  "endDate": start if answered else "", "duration": 15 if answered else 0}
        return json_reply({"Code": "OK", "Message": "OK", "RequestId": "FAKE-REQUEST",
                           "Data": json.dumps(record, ensure_ascii=False)})

    def _deliver(self, p: dict[str, str]) -> Reply:
        sms = self.action == "SendSms"
        numbers = p.get("PhoneNumbers", "").split(",") if sms else [p.get("CalledNumber", "")]
        if not all(len(x) == 11 and x.startswith("1") and x.isdigit() for x in numbers):
            return _aliyun_error(200, "isv.MOBILE_NUMBER_ILLEGAL", "非法手机号")
        variables = json.loads(p.get("TemplateParam" if sms else "TtsParam", "{}"))
        if any(not isinstance(v, str) or len(v) > 35 for v in variables.values()):
            return _aliyun_error(200, "isv.PARAM_LENGTH_LIMIT", "参数超出长度限制")
        for number in numbers:
            if not self.per_number.setdefault(number, Window(1, 60.0)).allow(self.clock()):
                return _aliyun_error(200, "isv.BUSINESS_LIMIT_CONTROL", "触发分钟级流控Permits:1")
        self.sent += [(x, variables) for x in numbers]
        extra = {"BizId": "900619746936498440^0"}
        if not sms:
            extra = {"CallId": f"{116012354148 + len(self.calls)}^102813784"}
            script = self.answers.get(numbers[0], [])
            self.calls[extra["CallId"]] = (numbers[0], script.pop(0) if script else self.answer, self.clock())
        return json_reply({"Code": "OK", "Message": "OK", "RequestId": "FAKE-REQUEST", **extra})


def _rpc_sign(p: dict[str, str], secret: str) -> str:
    def enc(text: str) -> str:
        return urllib.parse.quote(text, safe="~")  # RFC 3986, as the RPC signature wants

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
        self.per_number: dict[str, Window] = {}
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.call_ids: list[str] = []  # each voice call's CallId, as its status callback names it

    def __call__(self, r: FakeRequest) -> Reply:
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
            call_id = f"fake-call-{len(self.sent)}"
            self.call_ids.append(call_id)
            return json_reply({"Response": {"SendStatus": {"CallId": call_id, "SessionContext": ""},
                                            "RequestId": "fake"}})
        statuses = [self._sms(x, p) for x in p.get("PhoneNumberSet", [])]
        return json_reply({"Response": {"SendStatusSet": statuses, "RequestId": "fake"}})

    def status_callback(self, call_id: str, answered: bool) -> dict[str, Any]:
        """The status callback Tencent posts after voice call ``call_id`` (``voiceprompt_callback``)."""
        number = self.sent[self.call_ids.index(call_id)][0]
        t = int(self.clock())
        return {"voiceprompt_callback": {
            "result": "0" if answered else "1", "accept_time": str(t + 5) if answered else "0",
            "call_from": "",
            "callid": call_id, "end_calltime": str(t + 20), "fee": "1" if answered else "0",
            "mobile": number.removeprefix("+86"), "nationcode": "86", "start_calltime": str(t)}}

    def _sms(self, number: str, p: dict[str, Any]) -> dict[str, Any]:
        code, message = "Ok", "send success"
        if not re.fullmatch(r"\+[1-9][0-9]{6,14}", number):
            code, message = "InvalidParameterValue.IncorrectPhoneNumber", "手机号格式错误"
        elif not self.per_number.setdefault(number, Window(1, 30.0)).allow(self.clock()):
            code = "LimitExceeded.PhoneNumberThirtySecondLimit"
            message = "单个手机号30秒内下发短信条数超过上限"
        else:
            self.sent.append((number, p))
        return {"SerialNo": "fake", "PhoneNumber": number, "Fee": 1, "SessionContext": "", "Code": code,
                "Message": message, "IsoCode": "CN"}

    def _auth_problem(self, r: FakeRequest) -> tuple[str, str] | None:
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
        return json_reply({"Response": {"Error": {"Code": code, "Message": message}, "RequestId": "fake"}})
