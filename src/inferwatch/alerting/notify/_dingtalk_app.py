"""A DingTalk app's robot: interactive cards (``StandardCard``) it sends can be updated in place later.

A group robot's webhook cannot change a message it sent; an app's robot can. The
app's ``appKey`` and ``appSecret`` buy an ``accessToken``
(``POST /v1.0/oauth2/accessToken``, valid ``expireIn`` seconds, 2 h), cached until
shortly before then and fetched again at once when a call answers
``InvalidAuthentication``. A card goes with ``POST
/v1.0/im/v1.0/robot/interactiveCards/send`` ("机器人发送互动卡片": ``cardTemplateId``
``StandardCard``, ``openConversationId``, ``robotCode``, ``cardBizId`` chosen by the
sender, ``cardData`` the card as a JSON string) and is replaced with ``PUT
/v1.0/im/robots/interactiveCards`` ("更新机器人发送互动卡片", the same ``cardBizId``).
The token travels in the ``x-acs-dingtalk-access-token`` header. Errors come as
HTTP 4xx with a string ``code``: a QPS limit (or HTTP 429) is retried, the rest final.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._http import AccessToken, HttpClient
from inferwatch.model import Clock
from inferwatch.settings import DingTalkReceiverSpec

__all__ = ["DingTalkApp"]

EARLY_S = 300.0  # refresh this long before the token's stated expiry
STALE_TOKEN = "InvalidAuthentication"
_ERRORS = (400, 401, 403, 429)


class DingTalkApp:
    """The three calls inferwatch makes as a DingTalk app's robot: token, send a card, update it."""

    def __init__(self, spec: DingTalkReceiverSpec, http: HttpClient, clock: Clock) -> None:
        assert spec.app_secret is not None  # the spec checks the app's fields come together
        self._spec, self._secret, self._http, self._clock = spec, spec.app_secret, http, clock
        self._base = spec.api_url.rstrip("/") + "/v1.0"
        self._token = AccessToken(self._fetch_token, self._clock, EARLY_S)

    def token(self, *, refresh: bool = False) -> str:
        """The cached access token, fetched when missing, near expiry or ``refresh``."""
        return self._token.get(refresh=refresh)

    def _fetch_token(self) -> tuple[str, float]:
        resp = self._http.request("POST", self._base + "/oauth2/accessToken", accept=_ERRORS,
                                  json={"appKey": self._spec.app_key, "appSecret": self._secret.reveal()},
                                  secrets=(self._secret,))
        answer = self._check(resp.status_code, self._answer(resp), "oauth2/accessToken")
        token = answer.get("accessToken")
        if not isinstance(token, str) or not token:
            raise NotifyError("oauth2/accessToken: no accessToken in the answer", retryable=True)
        return token, float(answer.get("expireIn", 7200))

    def send(self, card: dict[str, Any]) -> str:
        """Send ``card`` to the group; its ``cardBizId`` (for ``update``)."""
        biz = uuid.uuid4().hex
        self._call("POST", "/im/v1.0/robot/interactiveCards/send", {
            "cardTemplateId": "StandardCard", "openConversationId": self._spec.open_conversation_id,
            "robotCode": self._spec.robot_code, "cardBizId": biz,
            "cardData": json.dumps(card, ensure_ascii=False)})
        return biz

    def update(self, biz: str, card: dict[str, Any]) -> None:
        """Replace the card sent as ``biz``."""
        self._call("PUT", "/im/robots/interactiveCards", {
            "cardBizId": biz, "cardData": json.dumps(card, ensure_ascii=False),
            "updateOptions": {"updateCardDataByKey": False}})

    def _call(self, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        content = json.dumps(body, ensure_ascii=False).encode()
        for refresh in (False, True):
            token = self.token(refresh=refresh)
            resp = self._http.request(method, self._base + path, content=content, accept=_ERRORS, headers={
                "Content-Type": "application/json", "x-acs-dingtalk-access-token": token})
            answer = self._answer(resp)
            if answer.get("code") != STALE_TOKEN:
                break
        return self._check(resp.status_code, answer, path.rsplit("/", 1)[-1])

    @staticmethod
    def _answer(resp: Any) -> dict[str, Any]:
        try:
            answer = resp.json() if resp.content else {}
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise NotifyError("unreadable answer (not DingTalk's JSON)", retryable=True)
        return answer

    def _check(self, status: int, answer: dict[str, Any], what: str) -> dict[str, Any]:
        if status < 300:
            return answer
        code, text = str(answer.get("code", status)), str(answer.get("message", ""))[:200]
        text = text.replace(self._secret.reveal(), "<secret>")
        raise NotifyError(f"{what}: {code}: {text}".rstrip(": "),
                          retryable=status == 429 or "QpsLimit" in code or status >= 500)
