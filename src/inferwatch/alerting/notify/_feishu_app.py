"""A Feishu app's bot (the IM API): cards it sends can be edited in place later.

A group robot's webhook cannot change a message it sent; an app can. The app's
``app_id`` and ``app_secret`` buy a ``tenant_access_token``
(``POST /open-apis/auth/v3/tenant_access_token/internal``, valid ``expire``
seconds, 2 h), cached until shortly before then and fetched again at once when
a call answers 99991663 (invalid token). A card is sent with
``POST /open-apis/im/v1/messages?receive_id_type=chat_id`` (``content``: the card
as a JSON string; the answer's ``data.message_id``, ``om_...``) and edited with
``PATCH /open-apis/im/v1/messages/{message_id}``; only a shared card
(``config.update_multi: true``, before and after) can be edited, within 14 days.
A card's request body is at most 30 KB. Rate limits (99991400, 230020) are
retried; the rest are final.
"""

from __future__ import annotations

import json
from typing import Any

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._classify import service_error
from inferwatch.alerting._http import AccessToken, HttpClient
from inferwatch.model import Clock
from inferwatch.settings import FeishuReceiverSpec

__all__ = ["FEISHU_APP_MAX_BYTES", "FeishuApp"]

FEISHU_APP_MAX_BYTES = 30 * 1024
"""A card message's request body limit ("卡片及富文本消息请求体最大不能超过30KB")."""
RETRYABLE = frozenset({99991400, 230020, 99991663})  # a token refused twice in a row: try again later
STALE_TOKEN = 99991663
EARLY_S = 300.0  # refresh this long before the token's stated expiry
_JSON = {"Content-Type": "application/json; charset=utf-8"}


class FeishuApp:
    """The three calls inferwatch makes as a Feishu app: token, send a card, edit a card."""

    def __init__(self, spec: FeishuReceiverSpec, http: HttpClient, clock: Clock) -> None:
        assert spec.app_secret is not None  # the spec checks app_id, app_secret and chat_id come together
        self._spec, self._secret, self._http, self._clock = spec, spec.app_secret, http, clock
        self._base = spec.api_url.rstrip("/") + "/open-apis"
        self._token = AccessToken(self._fetch_token, self._clock, EARLY_S)

    def token(self, *, refresh: bool = False) -> str:
        """The cached tenant access token, fetched when missing, near expiry or ``refresh``."""
        return self._token.get(refresh=refresh)

    def _fetch_token(self) -> tuple[str, float]:
        answer = self._answer(self._http.request(
            "POST", self._base + "/auth/v3/tenant_access_token/internal", headers=_JSON,
            json={"app_id": self._spec.app_id, "app_secret": self._secret.reveal()},
            secrets=(self._secret,), accept=(400, 401, 403)))
        token = answer.get("tenant_access_token")
        if not isinstance(token, str) or not token:
            raise NotifyError("tenant_access_token: no token in the answer", retryable=True)
        return token, float(answer.get("expire", 7200))

    def send(self, card: dict[str, Any]) -> str:
        """Post ``card`` to the group; its ``message_id``."""
        body = {"receive_id": self._spec.chat_id, "msg_type": "interactive",
                "content": json.dumps(card, ensure_ascii=False)}
        data = self._call("POST", "/im/v1/messages", body, {"receive_id_type": "chat_id"}).get("data")
        mid = data.get("message_id") if isinstance(data, dict) else None
        if not isinstance(mid, str) or not mid:
            raise NotifyError("im/v1/messages: no message_id in the answer", retryable=False)
        return mid

    def edit(self, message_id: str, card: dict[str, Any]) -> None:
        """Replace the card of message ``message_id`` (a shared card the app sent)."""
        content = json.dumps(card, ensure_ascii=False)
        self._call("PATCH", f"/im/v1/messages/{message_id}", {"content": content})

    def _call(self, method: str, path: str, body: dict[str, Any], params: dict[str, str] | None = None,
              ) -> dict[str, Any]:
        content = json.dumps(body, ensure_ascii=False).encode()
        for refresh in (False, True):
            token = self.token(refresh=refresh)
            answer = self._answer(self._http.request(
                method, self._base + path, params=params, content=content, accept=(400, 401, 403),
                headers={**_JSON, "Authorization": f"Bearer {token}"}), check=False)
            if int(answer.get("code", -1)) != STALE_TOKEN:
                break
        return self._check(answer, [token])

    def _answer(self, resp: Any, *, check: bool = True) -> dict[str, Any]:
        try:
            answer = resp.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise NotifyError("unreadable answer (not Feishu's JSON)", retryable=True)
        return self._check(answer) if check else answer

    def _check(self, answer: dict[str, Any], secrets: list[str] | None = None) -> dict[str, Any]:
        code = int(answer.get("code", -1))
        if code != 0:
            raise service_error(code, str(answer.get("msg", ""))[:200], RETRYABLE,
                                [*(secrets or []), self._secret.reveal()])
        return answer

