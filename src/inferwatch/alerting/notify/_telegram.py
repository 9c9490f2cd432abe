"""Telegram bot: ``POST {url}/bot{token}/sendMessage`` with ``{"chat_id", "text"}`` (Bot API).

The request (https://core.telegram.org/bots/api#sendmessage): JSON with ``chat_id`` (a
numeric id, or ``@channelusername``), ``text`` (1-4096 characters after entity parsing;
sent as plain text, no ``parse_mode``, so a label can never format or link anything),
optionally ``message_thread_id`` (a forum topic) and ``disable_notification``. Telegram
answers ``{"ok": true, "result": {...}}``, or ``{"ok": false, "error_code": N,
"description": "..."}`` with the same HTTP status; 429 carries
``parameters.retry_after`` (seconds), and 5xx and 429 are retried. The token is part of
the path: it is never logged nor quoted in an error. A long message keeps whole alert
blocks within 4,096 UTF-8 bytes (never more characters than that) and says how many
alerts it left out.
"""

from __future__ import annotations

from typing import Any

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._chat import ChatNotifier
from inferwatch.alerting.notify._template import go_message, truncate_utf8
from inferwatch.settings import Secret, TelegramReceiverSpec, redact_text

__all__ = ["TELEGRAM_MAX_BYTES", "TelegramNotifier"]

TELEGRAM_MAX_BYTES = 4096
"""``text`` is at most 4,096 characters; counting UTF-8 bytes keeps under it in any script."""


class TelegramNotifier(ChatNotifier[TelegramReceiverSpec]):
    """Sends each notification as one plain-text message to one chat."""

    kind = "telegram"

    def __init__(self, spec: TelegramReceiverSpec, http: HttpClient, external_url: str = "", *,
                 language: str = "en", timezone: str = "UTC") -> None:
        super().__init__(spec, http, external_url, language=language, timezone=timezone)
        self._token = self._needs(spec.bot_token, "bot_token")
        self._url = Secret(f"{spec.url.rstrip('/')}/bot{self._token.reveal()}/sendMessage")

    def body(self, n: Notification) -> dict[str, Any]:
        """The JSON body of ``sendMessage``."""
        message = self._spec.go_template("message")
        if message is not None:  # the alertmanager.yml's own message
            own = go_message(message, self._spec.name, n, self._external_url)
            text = truncate_utf8(own, TELEGRAM_MAX_BYTES, "…(truncated)")
        else:
            text = self._render(n, markdown=False).fit(TELEGRAM_MAX_BYTES)
        body: dict[str, Any] = {"chat_id": self._spec.chat_id, "text": text}
        if self._spec.message_thread_id is not None:
            body["message_thread_id"] = self._spec.message_thread_id
        if self._spec.disable_notification:
            body["disable_notification"] = True
        return body

    def notify(self, n: Notification) -> None:
        """POST the message; a non-2xx answer or ``"ok": false`` raises ``NotifyError``."""
        resp = self._http.request("POST", self._url, secrets=[self._token], json=self.body(n))
        try:
            ok = resp.json().get("ok") is True
        except (ValueError, AttributeError):
            raise NotifyError("unreadable answer (not Telegram's JSON)", retryable=True) from None
        if not ok:
            said = redact_text(resp.text[:200], [self._token.reveal()])
            raise NotifyError(f"not sent: {said}", retryable=False)
