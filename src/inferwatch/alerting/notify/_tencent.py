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
from datetime import UTC, datetime
from typing import Any

from inferwatch._exceptions import MissingCredentialError, NotifyError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._phone import OnCallNumbers, alert_phrase, numbers_for
from inferwatch.config import TencentSmsReceiverSpec, TencentVoiceReceiverSpec
from inferwatch.model import Clock, SystemClock

__all__ = ["CONTENT_TYPE", "TencentSmsNotifier", "TencentVoiceNotifier", "tc3_authorization",
           "tencent_retryable"]

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
    """One voice call per number reading the alert (``SendTtsVoice``, VMS 2020-09-02)."""

    def __init__(self, spec: TencentVoiceReceiverSpec, http: HttpClient, *, language: str = "en",
                 clock: Clock | None = None, oncall: OnCallNumbers | None = None) -> None:
        super().__init__(spec, http, "tencent_voice", "vms", "2020-09-02", language=language, clock=clock,
                         oncall=oncall)
        self._voice = spec

    def notify(self, n: Notification) -> None:
        """Call every number; the first failure raises (the numbers before it were called)."""
        for number in self.numbers(n):
            self.call("SendTtsVoice", {
                "TemplateId": self._voice.template_id, "TemplateParamSet": self.param(n),
                "CalledNumber": number, "VoiceSdkAppid": self._voice.voice_sdk_app_id,
                "PlayTimes": self._voice.play_times, "SessionContext": n.id[:64]})


class TencentSmsNotifier(_TencentApi):
    """One ``SendSms`` (2021-01-11) to every number; each number's status is checked."""

    def __init__(self, spec: TencentSmsReceiverSpec, http: HttpClient, *, language: str = "en",
                 clock: Clock | None = None, oncall: OnCallNumbers | None = None) -> None:
        super().__init__(spec, http, "tencent_sms", "sms", "2021-01-11", language=language, clock=clock,
                         oncall=oncall)
        self._sms = spec

    def notify(self, n: Notification) -> None:
        """Text every number; a number that failed raises (retried only if every failure may pass later)."""
        answer = self.call("SendSms", {
            "PhoneNumberSet": self.numbers(n), "SmsSdkAppId": self._sms.sms_sdk_app_id,
            "SignName": self._sms.sign_name, "TemplateId": self._sms.template_id,
            "TemplateParamSet": self.param(n), "SessionContext": n.id[:64]})
        failed = [s for s in answer.get("SendStatusSet", []) if str(s.get("Code")) != "Ok"]
        if failed:
            codes = sorted({str(s.get("Code")) for s in failed})
            total = len(answer["SendStatusSet"])
            raise NotifyError(f"{len(failed)} of {total} numbers failed: {', '.join(codes)}",
                              retryable=all(tencent_retryable(c) for c in codes), retry_after=RETRY_LATER_S)
