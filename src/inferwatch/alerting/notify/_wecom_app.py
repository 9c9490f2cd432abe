"""WeCom (企业微信) application messages: ``gettoken``, then ``message/send`` to users, parties or tags.

The corp id and the application's secret buy an ``access_token`` valid for
``expires_in`` seconds (7,200); it is cached until shortly before then and
fetched again at once when a send answers 40014 (invalid) or 42001 (expired),
so a token revoked early costs one extra request, not a failed notification.
Messages are markdown, at most 2,048 bytes (the application API's limit, half
the group robot's). 45009 (over the frequency limit) and -1 (busy) are
retried; a bad secret (40001), corp id (40013), agent (40056) or recipients
(81013) are final. Recipients WeCom did not reach are logged by id.
"""

from __future__ import annotations

import logging
from typing import Any

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._classify import service_error
from inferwatch.alerting._http import AccessToken, HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._chat import ChatNotifier
from inferwatch.alerting.notify._template import go_message, truncate_utf8
from inferwatch.model import Clock, SystemClock
from inferwatch.settings import WeComAppReceiverSpec

__all__ = ["WECOM_APP_MAX_BYTES", "WeComAppNotifier"]

log = logging.getLogger("inferwatch.alerting")
WECOM_APP_MAX_BYTES = 2048
"""``markdown.content`` limit of application messages (UTF-8 bytes)."""
RETRYABLE = frozenset({45009, -1, 40014, 42001})  # a token that went bad twice in a row: try again later
STALE_TOKEN = frozenset({40014, 42001})
EARLY_S = 300.0  # refresh this long before the token's stated expiry (clock skew, a slow request)
DUPLICATE_CHECK_S = 1800  # WeCom drops a repeat of the same content within this: a retry is not doubled


class WeComAppNotifier(ChatNotifier[WeComAppReceiverSpec]):
    """Sends each notification as one markdown application message."""

    kind = "wecom_app"

    def __init__(self, spec: WeComAppReceiverSpec, http: HttpClient, external_url: str = "", *,
                 language: str = "en", timezone: str = "UTC", clock: Clock | None = None) -> None:
        super().__init__(spec, http, external_url, language=spec.language or language, timezone=timezone)
        self._secret = self._needs(spec.secret, "secret")
        self._clock = clock or SystemClock()
        self._base = spec.url.rstrip("/")
        self._token = AccessToken(self._fetch_token, self._clock, EARLY_S)

    def token(self, *, refresh: bool = False) -> str:
        """The cached access token, fetched when missing, near expiry or ``refresh``."""
        return self._token.get(refresh=refresh)

    def _fetch_token(self) -> tuple[str, float]:
        answer = self._answer(self._http.request(
            "GET", self._base + "/cgi-bin/gettoken",
            params={"corpid": self._spec.corp_id, "corpsecret": self._secret.reveal()}))
        code = int(answer.get("errcode", 0))
        if code != 0 or not isinstance(answer.get("access_token"), str):
            raise service_error(code, f"gettoken: {str(answer.get('errmsg', ''))[:200]}",
                                frozenset({45009, -1}), [self._secret.reveal()])
        return answer["access_token"], float(answer.get("expires_in", 7200))

    def body(self, n: Notification) -> dict[str, Any]:
        """The JSON body of ``message/send``."""
        s = self._spec
        message = s.go_template("message")
        if message is not None:  # the alertmanager.yml's own message
            own = go_message(message, s.name, n, self._external_url)
            content = truncate_utf8(own, WECOM_APP_MAX_BYTES, "…(truncated)")
        else:
            content = self._render(n, markdown=True).fit(WECOM_APP_MAX_BYTES)
        body: dict[str, Any] = {key: "|".join(ids) for key, ids in (
            ("touser", s.to_user), ("toparty", s.to_party), ("totag", s.to_tag)) if ids}
        body.update({"msgtype": "markdown", "agentid": s.agent_id,
                     "markdown": {"content": content},
                     "enable_duplicate_check": 1, "duplicate_check_interval": DUPLICATE_CHECK_S})
        return body

    def notify(self, n: Notification) -> None:
        """Send; on a stale token fetch a new one and send once more."""
        body = self.body(n)
        token = self.token()
        answer = self._send(token, body)
        code = int(answer.get("errcode", -1))
        if code in STALE_TOKEN:
            token = self.token(refresh=True)
            answer = self._send(token, body)
            code = int(answer.get("errcode", -1))
        if code != 0:
            raise service_error(code, str(answer.get("errmsg", ""))[:200], RETRYABLE,
                                [token, self._secret.reveal()])
        missed = {k: answer[k] for k in ("invaliduser", "invalidparty", "invalidtag") if answer.get(k)}
        if missed:
            log.warning("%s: delivered, but not to %s", self.name, missed)

    def _send(self, token: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._answer(self._http.request("POST", self._base + "/cgi-bin/message/send",
                                               params={"access_token": token}, json=body))

    def _answer(self, resp: Any) -> dict[str, Any]:
        try:
            answer = resp.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise NotifyError("unreadable answer (not WeCom's JSON)", retryable=True)
        return answer
