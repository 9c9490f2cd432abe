"""Discord webhook: ``POST {webhook_url}`` with ``{"content", "allowed_mentions"}`` (Execute Webhook).

The request (https://discord.com/developers/docs/resources/webhook#execute-webhook): JSON with
``content`` (up to 2,000 characters), optionally ``username`` (shown instead of the webhook's
name) and ``allowed_mentions``. inferwatch sends ``{"parse": []}`` there, so an ``@everyone``,
``@here`` or ``<@id>`` inside a label is shown and pings nobody, and escapes Discord's markdown
characters, so a label can neither format the message nor hide a link in ``[text](url)``.
Discord answers 204 (no content); 400 (``code`` 50035: an invalid body; 50006: empty) and
401/404 (``code`` 10015: unknown webhook, its token wrong or the webhook deleted) are not
retried; 429 (with ``retry_after``) and 5xx are. The token is part of the URL: never logged
nor quoted in an error. A long message keeps whole alert blocks within 2,000 UTF-8 bytes
(never more characters than that) and says how many alerts it left out.
"""

from __future__ import annotations

import re
from typing import Any

from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._chat import ChatNotifier
from inferwatch.settings import DiscordReceiverSpec

__all__ = ["DISCORD_MAX_BYTES", "DiscordNotifier", "discord_escape"]

DISCORD_MAX_BYTES = 2000
"""``content`` is at most 2,000 characters; counting UTF-8 bytes keeps under it in any script."""

_MARKDOWN = re.compile(r"([\\*_~`|>\[\]()#-])")


def discord_escape(text: str) -> str:
    r"""Backslash before each of Discord's markdown characters (Discord shows them without it).

    >>> discord_escape("p99 > 1s [see](http://x) *now*")
    'p99 \\> 1s \\[see\\]\\(http://x\\) \\*now\\*'
    """
    return _MARKDOWN.sub(r"\\\1", text)


class DiscordNotifier(ChatNotifier[DiscordReceiverSpec]):
    """Posts each notification as one message to one channel's webhook."""

    kind = "discord"

    def __init__(self, spec: DiscordReceiverSpec, http: HttpClient, external_url: str = "", *,
                 language: str = "en", timezone: str = "UTC") -> None:
        super().__init__(spec, http, external_url, language=language, timezone=timezone)
        self._url = self._needs(spec.webhook_url, "webhook_url")

    def body(self, n: Notification) -> dict[str, Any]:
        """The JSON body of Execute Webhook."""
        msg = self._render(n, markdown=False)
        body: dict[str, Any] = {"content": msg.mapped(discord_escape).fit(DISCORD_MAX_BYTES),
                                "allowed_mentions": {"parse": []}}
        if self._spec.username:
            body["username"] = self._spec.username
        return body

    def notify(self, n: Notification) -> None:
        """POST the message (204 expected; the shared classifier decides what a failure is worth)."""
        self._http.request("POST", self._url, json=self.body(n))
