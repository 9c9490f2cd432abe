"""Alibaba Cloud voice (Dyvmsapi ``SingleCallByTts``) and SMS (Dysmsapi ``SendSms``) over the RPC API.

Every request carries the common parameters and a ``Signature`` (RPC signature
version 1.0): the parameters sorted by name, each name and value
percent-encoded (RFC 3986: only ``A-Z a-z 0-9 - _ . ~`` left as they are, so a
space is ``%20``, ``*`` ``%2A``, ``~`` itself), joined with ``&``; the string
to sign is ``METHOD&%2F&`` plus that text percent-encoded once more; the
signature is base64 HMAC-SHA1 keyed by ``AccessKeySecret + "&"``.

The answer's ``Code`` decides: ``OK``; throttling (``isv.BUSINESS_LIMIT_CONTROL``
— a number called or texted too often —, ``Throttling*``, ``ServiceUnavailable``,
``InternalError``, a reused nonce) is retried later; the rest (signature, key,
number, template) is final.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import urllib.parse
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any

from inferwatch._exceptions import MissingCredentialError, NotifyError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify.phone._phone import (
    OnCallNumbers,
    alert_phrase,
    call_or_text,
    numbers_for,
    text_later,
)
from inferwatch.alerting.oncall import Call, CallOutcome, CallWatch
from inferwatch.model import Clock, SystemClock
from inferwatch.settings import AliyunSmsReceiverSpec, AliyunVoiceReceiverSpec

__all__ = ["AliyunSmsNotifier", "AliyunVoiceNotifier", "aliyun_retryable", "percent_encode", "rpc_signature"]

API_VERSION = "2017-05-25"  # Dysmsapi and Dyvmsapi alike
VOICE_PROD_ID = "11000000300006"  # QueryCallDetailByCallId's ProdId of voice notifications (语音通知)
RETRY_LATER_S = 60.0  # the per-number limit is counted per minute


def percent_encode(text: str) -> str:
    """RFC 3986 encoding as the RPC signature wants it (``~`` kept, space ``%20``)."""
    return urllib.parse.quote(text, safe="~")


def rpc_signature(params: Mapping[str, str], access_key_secret: str, method: str = "POST") -> str:
    """The ``Signature`` of ``params`` (every other parameter of the request)."""
    canonical = "&".join(f"{percent_encode(k)}={percent_encode(v)}"
                         for k, v in sorted(params.items()) if k != "Signature")
    to_sign = f"{method}&{percent_encode('/')}&{percent_encode(canonical)}"
    digest = hmac.new(f"{access_key_secret}&".encode(), to_sign.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def aliyun_retryable(code: str) -> bool:
    """Whether an answer ``Code`` is worth another attempt later."""
    return code == "isv.BUSINESS_LIMIT_CONTROL" or code.startswith(("Throttling", "ServiceUnavailable",
                                                                      "InternalError", "SignatureNonceUsed"))


class _AliyunRpc:
    """A signed RPC call to one Alibaba Cloud endpoint."""

    def __init__(self, spec: AliyunVoiceReceiverSpec | AliyunSmsReceiverSpec, http: HttpClient, kind: str, *,
                 language: str, clock: Clock | None, nonce: Callable[[], str] | None,
                 oncall: OnCallNumbers | None) -> None:
        self.name = f"{kind}[{spec.name}]"
        if spec.access_key_secret is None or not spec.access_key_id:
            raise MissingCredentialError(self.name, "access_key_id and access_key_secret")
        self._secret = spec.access_key_secret
        self._spec, self._http, self._language = spec, http, spec.language or language
        self._clock = clock or SystemClock()  # Timestamp must be within 15 minutes of Alibaba's clock
        self._nonce = nonce or (lambda: str(uuid.uuid4()))
        self._oncall = oncall

    def signed(self, action: str, params: Mapping[str, str]) -> dict[str, str]:
        """``params`` with the common parameters and the ``Signature``."""
        stamp = datetime.fromtimestamp(self._clock.now(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        out = {"AccessKeyId": self._spec.access_key_id, "Action": action, "Format": "JSON",
               "RegionId": self._spec.region, "SignatureMethod": "HMAC-SHA1", "SignatureNonce": self._nonce(),
               "SignatureVersion": "1.0", "Timestamp": stamp, "Version": API_VERSION, **params}
        out["Signature"] = rpc_signature(out, self._secret.reveal(), "POST")
        return out

    def call(self, action: str, params: Mapping[str, str]) -> dict[str, Any]:
        """POST the signed form; raise ``NotifyError`` unless ``Code`` is ``OK``."""
        resp = self._http.request("POST", self._spec.url.rstrip("/") + "/", data=self.signed(action, params),
                                  secrets=[self._secret], accept=(400, 403, 404))
        try:
            answer = resp.json()
            code = str(answer.get("Code", ""))
        except (ValueError, AttributeError):
            raise NotifyError(f"HTTP {resp.status_code}: unreadable answer",
                              retryable=resp.status_code >= 500) from None
        if code != "OK":
            later = aliyun_retryable(code)
            raise NotifyError(f"{code}: {str(answer.get('Message', ''))[:200]}", retryable=later,
                              retry_after=RETRY_LATER_S if later else None)
        return dict(answer)

    def numbers(self, n: Notification) -> list[str]:
        """Whom to call or text."""
        return numbers_for(self._spec.to, self._spec.oncall, self._oncall, self._clock.now(), self.name)

    def param(self, n: Notification) -> str:
        """The template variables as the JSON text the API takes."""
        phrase = alert_phrase(n, self._language, self._spec.param_max_chars, self._spec.template)
        return json.dumps({self._spec.param_name: phrase}, ensure_ascii=False, separators=(",", ":"))


class AliyunVoiceNotifier(_AliyunRpc):
    """One text-to-speech call per number (``SingleCallByTts``), reading the alert's phrase.

    With ``confirm`` each call goes to ``calls`` (the pipeline's ``CallWatch``), which asks
    ``QueryCallDetailByCallId`` how it went: its ``Data`` is empty until the call's record
    exists; a record with a ``startDate`` (or a ``duration``) was answered, one without was not.
    """

    def __init__(self, spec: AliyunVoiceReceiverSpec, http: HttpClient, *, language: str = "en",
                 clock: Clock | None = None, nonce: Callable[[], str] | None = None,
                 oncall: OnCallNumbers | None = None, calls: CallWatch | None = None) -> None:
        super().__init__(spec, http, "aliyun_voice", language=language, clock=clock, nonce=nonce,
                         oncall=oncall)
        self._voice, self._calls = spec, calls
        self._sms = None if spec.sms_fallback is None else AliyunSmsNotifier(
            _fallback_spec(spec), http, language=language, clock=clock, nonce=nonce, oncall=oncall)

    def notify(self, n: Notification) -> None:
        """Call every number; a failed call is texted (``sms_fallback``) or raises (the numbers before it
        were called)."""
        for number in self.numbers(n):
            params = {"CalledNumber": number, "TtsCode": self._voice.tts_code, "TtsParam": self.param(n),
                      "PlayTimes": str(self._voice.play_times), "OutId": (n.id or "inferwatch")[:15]}
            if self._voice.called_show_number:
                params["CalledShowNumber"] = self._voice.called_show_number
            call_id, error = call_or_text(self.name, number, partial(self._dial, params), self._sms, n)
            if self._voice.confirm and self._calls is not None and n.groups and n.groups[0].firing():
                self._calls.placed(Call(
                    self.name, number, call_id, tuple(g.key for g in n.groups), self._clock.now(), self,
                    params, rounds=self._voice.rounds, interval=self._voice.round_interval, error=error,
                    texted=bool(error), fallback=text_later(self._sms, number, n)))

    def _dial(self, params: Mapping[str, str]) -> str:
        return str(self.call("SingleCallByTts", params).get("CallId", ""))

    def redial(self, call: Call) -> str:
        """The same call again; its new ``CallId``."""
        return self._dial(call.params)

    def outcome(self, call: Call) -> CallOutcome:
        """How ``call`` went, from its record (``QueryCallDetailByCallId``)."""
        answer = self.call("QueryCallDetailByCallId", {"CallId": call.call_id, "ProdId": VOICE_PROD_ID,
                                                        "QueryDate": str(int(call.placed * 1000))})
        data = answer.get("Data")
        try:
            record = json.loads(data) if isinstance(data, str) and data else data
        except ValueError:
            record = None
        if not isinstance(record, dict) or not record:
            return CallOutcome("pending")
        fields = ("state", "stateDesc", "startDate", "endDate", "duration")
        detail = {k: str(record[k]) for k in fields if record.get(k) not in (None, "")}
        started = bool(record.get("startDate")) or _number(record.get("duration")) > 0
        return CallOutcome("answered" if started else "unanswered", detail)


def _number(value: object) -> float:
    try:
        return float(str(value))
    except ValueError:
        return 0.0


class AliyunSmsNotifier(_AliyunRpc):
    """One ``SendSms`` to every number at once."""

    def __init__(self, spec: AliyunSmsReceiverSpec, http: HttpClient, *, language: str = "en",
                 clock: Clock | None = None, nonce: Callable[[], str] | None = None,
                 oncall: OnCallNumbers | None = None) -> None:
        super().__init__(spec, http, "aliyun_sms", language=language, clock=clock, nonce=nonce,
                         oncall=oncall)
        self._sms = spec

    def notify(self, n: Notification) -> None:
        """Text every number."""
        self.text(self.numbers(n), n)

    def text(self, numbers: Sequence[str], n: Notification) -> None:
        """Text ``n``'s phrase to ``numbers``."""
        self.call("SendSms", {"PhoneNumbers": ",".join(numbers), "SignName": self._sms.sign_name,
                              "TemplateCode": self._sms.template_code, "TemplateParam": self.param(n),
                              "OutId": (n.id or "inferwatch")[:64]})


def _fallback_spec(voice: AliyunVoiceReceiverSpec) -> AliyunSmsReceiverSpec:
    """The SMS receiver a voice receiver's ``sms_fallback`` stands for: same AccessKey, numbers, language."""
    fb = voice.sms_fallback
    assert fb is not None
    return AliyunSmsReceiverSpec(
        name=voice.name, access_key_id=voice.access_key_id, access_key_secret=voice.access_key_secret,
        region=voice.region, to=voice.to, oncall=voice.oncall, language=voice.language,
        template=voice.template, param_name=fb.param_name, param_max_chars=voice.param_max_chars,
        sign_name=fb.sign_name, template_code=fb.template_code, url=fb.url)
