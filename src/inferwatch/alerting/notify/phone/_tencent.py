"""Tencent Cloud voice (VMS ``SendTtsVoice``) and SMS (``SendSms``) over API 3.0, signed TC3-HMAC-SHA256.

The signature (signature v3): the canonical request ``POST\\n/\\n\\n`` + the
signed headers (``content-type`` and ``host``, lower-case, ``name:value\\n``)
+ ``\\ncontent-type;host\\n`` + hex SHA-256 of the body; the string to sign
``TC3-HMAC-SHA256\\n{timestamp}\\n{date}/{service}/tc3_request\\n`` + hex SHA-256
of the canonical request; the key derived as HMAC-SHA256 chains from
``"TC3" + SecretKey`` over the UTC date, the service and ``tc3_request``.

Every answer is HTTP 200 with ``Response``; ``Response.Error.Code`` is a
failure: request-rate and per-number limits (``RequestLimitExceeded*``,
``LimitExceeded.PhoneNumberThirtySecondLimit`` / ``OneHourLimit``) and
``InternalError*`` are retried later, the rest (``AuthFailure.*``,
``InvalidParameter*``, daily limits) are final. SMS reports per number in
``SendStatusSet``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.parse
from collections.abc import Sequence
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
from inferwatch.settings import TencentSmsReceiverSpec, TencentVoiceReceiverSpec

__all__ = ["CONTENT_TYPE", "TencentSmsNotifier", "TencentVoiceNotifier", "tc3_authorization",
           "tencent_call_report", "tencent_retryable"]

CONTENT_TYPE = "application/json; charset=utf-8"
RETRY_LATER_S = 30.0  # the shortest per-number window (30 s)
_LATER = ("RequestLimitExceeded", "InternalError", "LimitExceeded.PhoneNumberThirtySecondLimit",
          "LimitExceeded.PhoneNumberOneHourLimit", "LimitExceeded.DeliveryFrequencyLimit")


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def tc3_authorization(secret_id: str, secret_key: str, service: str, host: str, payload: bytes,
                      timestamp: int) -> str:
    """The ``Authorization`` header of a POST of ``payload`` (JSON) to ``host`` at ``timestamp``."""
    canonical = (f"POST\n/\n\ncontent-type:{CONTENT_TYPE}\nhost:{host}\n\ncontent-type;host\n"
                 + hashlib.sha256(payload).hexdigest())
    date = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")  # UTC, not the local day
    scope = f"{date}/{service}/tc3_request"
    to_sign = f"TC3-HMAC-SHA256\n{timestamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    key = _hmac(_hmac(_hmac(f"TC3{secret_key}".encode(), date), service), "tc3_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return (f"TC3-HMAC-SHA256 Credential={secret_id}/{scope}, SignedHeaders=content-type;host, "
            f"Signature={signature}")


def tencent_retryable(code: str) -> bool:
    """Whether an error ``Code`` is worth another attempt later."""
    return code.startswith(_LATER)


class _TencentApi:
    """A signed API 3.0 call to one Tencent Cloud service."""

    def __init__(self, spec: TencentVoiceReceiverSpec | TencentSmsReceiverSpec, http: HttpClient, kind: str,
                 service: str, version: str, *, language: str, clock: Clock | None,
                 oncall: OnCallNumbers | None) -> None:
        self.name = f"{kind}[{spec.name}]"
        if spec.secret_key is None or not spec.secret_id:
            raise MissingCredentialError(self.name, "secret_id and secret_key")
        self._key = spec.secret_key
        self._spec, self._http, self._language = spec, http, spec.language or language
        self._service, self._version = service, version
        self._clock = clock or SystemClock()  # the timestamp must be within 5 minutes of Tencent's clock
        self._oncall = oncall

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        """POST the signed request; the ``Response`` object, or ``NotifyError`` for its ``Error``."""
        payload = json.dumps(params, ensure_ascii=False, separators=(",", ":")).encode()
        host = urllib.parse.urlsplit(self._spec.url).netloc
        ts = int(self._clock.now())
        headers = {"Authorization": tc3_authorization(self._spec.secret_id, self._key.reveal(), self._service,
                                                      host, payload, ts),
                   "Content-Type": CONTENT_TYPE, "X-TC-Action": action, "X-TC-Timestamp": str(ts),
                   "X-TC-Version": self._version, "X-TC-Region": self._spec.region}
        resp = self._http.request("POST", self._spec.url.rstrip("/") + "/", content=payload, headers=headers,
                                  secrets=[self._key])
        try:
            answer = resp.json()["Response"]
            error = answer.get("Error")
        except (ValueError, KeyError, TypeError, AttributeError):
            raise NotifyError("unreadable answer (not Tencent Cloud's JSON)", retryable=True) from None
        if error:
            code = str(error.get("Code", ""))
            raise _error(code, str(error.get("Message", "")))
        return dict(answer)

    def numbers(self, n: Notification) -> list[str]:
        """Whom to call or text (E.164)."""
        return numbers_for(self._spec.to, self._spec.oncall, self._oncall, self._clock.now(), self.name)

    def param(self, n: Notification) -> list[str]:
        """``TemplateParamSet``: the alert's phrase as the template's one variable."""
        return [alert_phrase(n, self._language, self._spec.param_max_chars, self._spec.template)]


def _error(code: str, message: str) -> NotifyError:
    later = tencent_retryable(code)
    return NotifyError(f"{code}: {message[:200]}", retryable=later,
                       retry_after=RETRY_LATER_S if later else None)


class TencentVoiceNotifier(_TencentApi):
    """One voice call per number reading the alert (``SendTtsVoice``, VMS 2020-09-02).

    With ``confirm`` each call (``SendStatus.CallId``) goes to ``calls``, and Tencent's status
    callback (``voiceprompt_callback``, posted to the server) says whether it was answered.
    """

    def __init__(self, spec: TencentVoiceReceiverSpec, http: HttpClient, *, language: str = "en",
                 clock: Clock | None = None, oncall: OnCallNumbers | None = None,
                 calls: CallWatch | None = None) -> None:
        super().__init__(spec, http, "tencent_voice", "vms", "2020-09-02", language=language, clock=clock,
                         oncall=oncall)
        self._voice, self._calls = spec, calls
        self._sms = None if spec.sms_fallback is None else TencentSmsNotifier(
            _fallback_spec(spec), http, language=language, clock=clock, oncall=oncall)

    def notify(self, n: Notification) -> None:
        """Call every number; a failed call is texted (``sms_fallback``) or raises (the numbers before it
        were called)."""
        for number in self.numbers(n):
            params = {"TemplateId": self._voice.template_id, "TemplateParamSet": self.param(n),
                      "CalledNumber": number, "VoiceSdkAppid": self._voice.voice_sdk_app_id,
                      "PlayTimes": self._voice.play_times, "SessionContext": n.id[:64]}
            call_id, error = call_or_text(self.name, number, partial(self._dial, params), self._sms, n)
            if self._voice.confirm and self._calls is not None and n.groups and n.groups[0].firing():
                self._calls.placed(Call(
                    self.name, number, call_id, tuple(g.key for g in n.groups), self._clock.now(), self,
                    params, rounds=self._voice.rounds, interval=self._voice.round_interval, error=error,
                    texted=bool(error), fallback=text_later(self._sms, number, n)))

    def _dial(self, params: dict[str, Any]) -> str:
        return str(self.call("SendTtsVoice", params).get("SendStatus", {}).get("CallId", ""))

    def redial(self, call: Call) -> str:
        """The same call again; its new ``CallId``."""
        return self._dial(dict(call.params))

    def outcome(self, call: Call) -> CallOutcome:
        """What the status callback said of ``call`` (pending until it came)."""
        found = self._calls.reported(call.call_id) if self._calls is not None else None
        return found or CallOutcome("pending")


class TencentSmsNotifier(_TencentApi):
    """One ``SendSms`` (2021-01-11) to every number; each number's status is checked."""

    def __init__(self, spec: TencentSmsReceiverSpec, http: HttpClient, *, language: str = "en",
                 clock: Clock | None = None, oncall: OnCallNumbers | None = None) -> None:
        super().__init__(spec, http, "tencent_sms", "sms", "2021-01-11", language=language, clock=clock,
                         oncall=oncall)
        self._sms = spec

    def notify(self, n: Notification) -> None:
        """Text every number; a number that failed raises (retried only if every failure may pass later)."""
        self.text(self.numbers(n), n)

    def text(self, numbers: Sequence[str], n: Notification) -> None:
        """Text ``n``'s phrase to ``numbers``; each number's status is checked."""
        answer = self.call("SendSms", {
            "PhoneNumberSet": list(numbers), "SmsSdkAppId": self._sms.sms_sdk_app_id,
            "SignName": self._sms.sign_name, "TemplateId": self._sms.template_id,
            "TemplateParamSet": self.param(n), "SessionContext": n.id[:64]})
        failed = [s for s in answer.get("SendStatusSet", []) if str(s.get("Code")) != "Ok"]
        if failed:
            codes = sorted({str(s.get("Code")) for s in failed})
            total = len(answer["SendStatusSet"])
            raise NotifyError(f"{len(failed)} of {total} numbers failed: {', '.join(codes)}",
                              retryable=all(tencent_retryable(c) for c in codes), retry_after=RETRY_LATER_S)


def _fallback_spec(voice: TencentVoiceReceiverSpec) -> TencentSmsReceiverSpec:
    """The SMS receiver a voice receiver's ``sms_fallback`` stands for: same key, numbers, language."""
    fb = voice.sms_fallback
    assert fb is not None
    return TencentSmsReceiverSpec(
        name=voice.name, secret_id=voice.secret_id, secret_key=voice.secret_key, region=voice.region,
        to=voice.to, oncall=voice.oncall, language=voice.language, template=voice.template,
        param_max_chars=voice.param_max_chars, sms_sdk_app_id=fb.sms_sdk_app_id, sign_name=fb.sign_name,
        template_id=fb.template_id, url=fb.url)


def tencent_call_report(body: object) -> tuple[str, str, CallOutcome] | None:
    """The call id, the number called (E.164) and the outcome in a VMS status callback (``None``: not one).

    ``voiceprompt_callback.result``: ``0`` answered, ``1`` not answered, ``2`` the call failed;
    ``voice_failure_callback`` (a number that could not be reached) is not answered either.
    """
    if not isinstance(body, dict):
        return None
    for key, answered in (("voiceprompt_callback", None), ("voice_failure_callback", False)):
        cb = body.get(key)
        if isinstance(cb, dict) and isinstance(cb.get("callid"), str) and cb["callid"]:
            ok = str(cb.get("result")) == "0" if answered is None else answered
            fields = ("result", "accept_time", "start_calltime", "end_calltime", "fee", "failure_code",
                      "failure_reason")
            detail = {k: str(cb[k]) for k in fields if cb.get(k) not in (None, "")}
            number = f"+{cb.get('nationcode') or '86'}{cb.get('mobile') or ''}"
            return cb["callid"], number, CallOutcome("answered" if ok else "unanswered", detail)
    return None
