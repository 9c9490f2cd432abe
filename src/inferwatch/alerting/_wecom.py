"""WeCom (企业微信) group robot: markdown messages to ``/cgi-bin/webhook/send?key=KEY``.

The robot answers HTTP 200 even on failure; a non-zero ``errcode`` in the
body is the failure (45009: over 20 messages a minute, retried). Content is
at most 4096 bytes; longer messages are cut with a pointer to the dashboard.
"""

from __future__ import annotations

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._classify import RETRYABLE_WECOM_ERRCODES, service_error
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting._template import notification_text, truncate_utf8
from inferwatch.config._receivers import WeComReceiverSpec

__all__ = ["WECOM_MAX_BYTES", "WeComNotifier"]

WECOM_MAX_BYTES = 4096


class WeComNotifier:
    """Sends each notification as one markdown message."""

    def __init__(self, spec: WeComReceiverSpec, http: HttpClient, external_url: str = "") -> None:
        if spec.key is None:
            raise ValueError("a WeCom receiver needs its key")
        self.name = f"wecom[{spec.name}]"
        self._key = spec.key
        self._url = spec.url.rstrip("/") + "/cgi-bin/webhook/send"
        self._mentions = spec.mentioned_mobile_list
        self._http = http
        self._external_url = external_url

    def render(self, n: Notification) -> str:
        """The markdown content, cut to WeCom's limit."""
        text = notification_text(n, markdown=True, external_url=self._external_url)
        if self._mentions:
            text += "\n" + " ".join(f"<@{m}>" for m in self._mentions)
        pointer = f"…(truncated; full list: {self._external_url or 'the inferwatch dashboard'})"
        return truncate_utf8(text, WECOM_MAX_BYTES, pointer)

    def notify(self, n: Notification) -> None:
        """POST the message; a non-zero ``errcode`` raises ``NotifyError``."""
        body = {"msgtype": "markdown", "markdown": {"content": self.render(n)}}
        resp = self._http.request("POST", self._url, params={"key": self._key.reveal()}, json=body)
        try:
            answer = resp.json()
            code = int(answer.get("errcode", -1))
        except (ValueError, AttributeError, TypeError):
            raise NotifyError(f"unreadable answer: {resp.text[:100]!r}", retryable=True) from None
        if code != 0:
            raise service_error(code, str(answer.get("errmsg", "")), RETRYABLE_WECOM_ERRCODES)
