"""Slack incoming webhook: ``{"text": ...}`` in Slack's mrkdwn; Slack answers ``ok``."""

from __future__ import annotations

from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting._template import notification_text, truncate_utf8
from inferwatch.config._receivers import SlackReceiverSpec

__all__ = ["SlackNotifier"]

# Slack truncates messages over 40,000 characters; stay well below.
_SLACK_MAX_BYTES = 39000


class SlackNotifier:
    """Posts each notification as one message."""

    def __init__(self, spec: SlackReceiverSpec, http: HttpClient, external_url: str = "") -> None:
        if spec.webhook_url is None:
            raise ValueError("a Slack receiver needs its webhook_url")
        self.name = f"slack[{spec.name}]"
        self._url = spec.webhook_url
        self._http = http
        self._external_url = external_url

    def notify(self, n: Notification) -> None:
        """POST the text (errors come as 4xx with a word such as ``invalid_payload``)."""
        text = notification_text(n, markdown=False, external_url=self._external_url)
        text = truncate_utf8(text, _SLACK_MAX_BYTES, "…(truncated)")
        self._http.request("POST", self._url.reveal(), json={"text": text})
