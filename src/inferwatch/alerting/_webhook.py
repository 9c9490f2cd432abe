"""Generic webhook: Alertmanager's webhook JSON (``version: "4"``), one POST per group."""

from __future__ import annotations

from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting._template import webhook_payload
from inferwatch.config._receivers import WebhookReceiverSpec

__all__ = ["WebhookNotifier"]


class WebhookNotifier:
    """Posts each group as Alertmanager would."""

    def __init__(self, spec: WebhookReceiverSpec, http: HttpClient, external_url: str = "") -> None:
        if not spec.url:
            raise ValueError("a webhook receiver needs its url")
        self.name = f"webhook[{spec.name}]"
        self._spec = spec
        self._http = http
        self._external_url = external_url

    def notify(self, n: Notification) -> None:
        """POST every group."""
        headers = {}
        if self._spec.bearer_token is not None:
            headers["Authorization"] = f"Bearer {self._spec.bearer_token.reveal()}"
        for g in n.groups:
            body = webhook_payload(n.receiver, g, self._external_url, self._spec.max_alerts)
            self._http.request("POST", self._spec.url, json=body, headers=headers)
