"""WeCom (企业微信) group robot: messages to ``/cgi-bin/webhook/send?key=KEY``.

The robot answers HTTP 200 even on failure; a non-zero ``errcode`` in the
body is the failure (45009: over 20 messages a minute, retried).

Mentions follow the robot API: ``mentioned_list`` (user ids) and
``mentioned_mobile_list`` (phone numbers), each allowing ``@all``, exist only
on ``msgtype: text``; markdown can mention a user id only, as ``<@userid>`` in
the content. So a receiver that mentions phone numbers or ``@all`` sends text
(content at most 2,048 bytes), any other markdown (at most 4,096 bytes); a
longer message is cut at a line boundary with "… N more alerts" and the
dashboard link, and the mentions are never the part that is cut.
"""

from __future__ import annotations

from typing import Any

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._classify import RETRYABLE_WECOM_ERRCODES, service_error
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._chat import ChatNotifier
from inferwatch.settings import WeComReceiverSpec

__all__ = ["WECOM_MAX_BYTES", "WECOM_TEXT_MAX_BYTES", "WeComNotifier"]

WECOM_MAX_BYTES = 4096
"""``markdown.content`` limit (UTF-8 bytes)."""
WECOM_TEXT_MAX_BYTES = 2048
"""``text.content`` limit (UTF-8 bytes)."""


class WeComNotifier(ChatNotifier[WeComReceiverSpec]):
    """Sends each notification as one message (markdown, or text when it must @mention by phone)."""

    kind = "wecom"

    def __init__(self, spec: WeComReceiverSpec, http: HttpClient, external_url: str = "", *,
                 language: str = "en", timezone: str = "UTC") -> None:
        super().__init__(spec, http, external_url, language=language, timezone=timezone)
        self._key = self._needs(spec.key, "key")
        self._url = spec.url.rstrip("/") + "/cgi-bin/webhook/send"
        self._userids, self._mobiles = spec.mentioned_list, spec.mentioned_mobile_list
        self.msgtype = "text" if self._mobiles or "@all" in self._userids else "markdown"

    def body(self, n: Notification) -> dict[str, Any]:
        """The JSON body the robot is sent; a long message is cut at a line, counting what is left out."""
        markdown = self.msgtype == "markdown"
        msg = self._render(n, markdown=markdown)
        if not markdown:
            inner: dict[str, Any] = {"content": msg.fit(WECOM_TEXT_MAX_BYTES)}
            if self._userids:
                inner["mentioned_list"] = list(self._userids)
            if self._mobiles:
                inner["mentioned_mobile_list"] = list(self._mobiles)
            return {"msgtype": "text", "text": inner}
        # An alert's label could carry "<@someone>": break it, so only our own mentions ping.
        msg = msg.mapped(lambda line: line.replace("<@", "<\u200b@"))
        mentions = " ".join(f"<@{u}>" for u in self._userids)
        content = msg.fit(WECOM_MAX_BYTES, keep=[mentions] if mentions else [])
        return {"msgtype": "markdown", "markdown": {"content": content}}

    def notify(self, n: Notification) -> None:
        """POST the message; a non-zero ``errcode`` raises ``NotifyError``."""
        key = self._key.reveal()
        resp = self._http.request("POST", self._url, params={"key": key}, json=self.body(n))
        try:
            answer = resp.json()
            code = int(answer.get("errcode", -1))
        except (ValueError, AttributeError, TypeError):
            raise NotifyError("unreadable answer (not WeCom's JSON)", retryable=True) from None
        if code != 0:
            raise service_error(code, str(answer.get("errmsg", ""))[:200], RETRYABLE_WECOM_ERRCODES, [key])
