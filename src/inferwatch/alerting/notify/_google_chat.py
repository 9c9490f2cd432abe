"""Google Chat: a space's incoming webhook, ``POST {webhook_url}`` with ``{"text": ...}``; its spec too.

The request (https://developers.google.com/workspace/chat/quickstart/webhooks, and the
``Message`` resource of ``spaces.messages.create``): ``POST
https://chat.googleapis.com/v1/spaces/SPACE/messages?key=KEY&token=TOKEN`` with a JSON
``Message``; inferwatch sends ``text`` only, plain text in Google Chat's own markup, kept within
4,096 UTF-8 bytes (never more characters than Chat shows in one message; whole alert blocks, and
how many were left out). ``<users/all>`` in a message mentions everyone in the space, so every
``<`` of the text is followed by a zero-width space: a label can neither mention anyone nor hide
a link in ``<url|text>``. Chat answers 200 with the created ``Message``; errors are a
``google.rpc.Status`` (``{"error": {"code", "message", "status"}}``): 400 ``INVALID_ARGUMENT``
(a wrong key, a bad body), 401/403 (a wrong token), 404 (no such space) are not retried; 429
``RESOURCE_EXHAUSTED`` (a webhook may post about once a second to a space) and 5xx are. The key
and token are in the URL: never logged nor quoted in an error.

The spec lives here, beside its notifier: ``alerting.notify``'s registry line makes it one of
the config's receiver types.
"""

from __future__ import annotations

import urllib.parse
from typing import Any, Literal

from pydantic import Field, field_validator

from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._chat import ChatNotifier
from inferwatch.settings import RateLimitSpec, ReceiverBase, Secret

__all__ = ["GOOGLE_CHAT_MAX_BYTES", "GoogleChatNotifier", "GoogleChatReceiverSpec", "google_chat_escape"]

GOOGLE_CHAT_MAX_BYTES = 4096
"""``text`` kept within 4,096 UTF-8 bytes: under Chat's limits on a message in any script."""

_EXAMPLE = "https://chat.googleapis.com/v1/spaces/SPACE/messages?key=KEY&token=TOKEN"


class GoogleChatReceiverSpec(ReceiverBase):
    """A Google Chat space's incoming webhook (its URL holds the webhook's key and token)."""

    type: Literal["google_chat"] = "google_chat"
    webhook_url: Secret | None = Field(None, description=_EXAMPLE)
    # a webhook may post about once a second to a space
    rate_limit: RateLimitSpec | None = Field(default_factory=lambda: RateLimitSpec(count=60, per=60.0))

    @field_validator("webhook_url")
    @classmethod
    def _url(cls, v: Secret | None) -> Secret | None:
        if v is None:
            return None
        parts = urllib.parse.urlsplit(v.reveal())
        query = dict(urllib.parse.parse_qsl(parts.query))
        # the value is never echoed: it holds the webhook's key and token
        if (parts.scheme not in ("http", "https") or not parts.path.endswith("/messages")
                or not query.get("key") or not query.get("token")):
            raise ValueError(f"must be the space's full webhook URL, such as {_EXAMPLE}")
        return v


def google_chat_escape(text: str) -> str:
    """A zero-width space after each ``<``: shown the same, it mentions no one and links nothing.

    >>> google_chat_escape("<users/all> see <http://x|here>")
    '<\\u200busers/all> see <\\u200bhttp://x|here>'
    """
    return text.replace("<", "<\u200b")


class GoogleChatNotifier(ChatNotifier[GoogleChatReceiverSpec]):
    """Posts each notification as one message to one space."""

    kind = "google_chat"

    def __init__(self, spec: GoogleChatReceiverSpec, http: HttpClient, external_url: str = "", *,
                 language: str = "en", timezone: str = "UTC") -> None:
        super().__init__(spec, http, external_url, language=language, timezone=timezone)
        self._url = self._needs(spec.webhook_url, "webhook_url")

    def body(self, n: Notification) -> dict[str, Any]:
        """The JSON ``Message`` created in the space."""
        msg = self._render(n, markdown=False)
        return {"text": msg.mapped(google_chat_escape).fit(GOOGLE_CHAT_MAX_BYTES)}

    def notify(self, n: Notification) -> None:
        """POST the message (200 expected; the shared classifier decides what a failure is worth)."""
        self._http.request("POST", self._url, json=self.body(n))
