"""Generic webhook: Alertmanager's webhook JSON (``version: "4"``), one POST per group.

When the delivery core gives the notification a stable id, it is sent as the
``Idempotency-Key`` header and the ``idempotencyKey`` field (suffixed with the
group's index when a notification carries several groups), so a receiver can
drop the repeat of a send that a crash interrupted.
"""

from __future__ import annotations

from inferwatch._exceptions import MissingCredentialError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting._template import notification_id, webhook_payload
from inferwatch.config._receivers import WebhookReceiverSpec

__all__ = ["IDEMPOTENCY_HEADER", "WebhookNotifier"]

IDEMPOTENCY_HEADER = "Idempotency-Key"


class WebhookNotifier:
    """Posts each group as Alertmanager would."""

    def __init__(self, spec: WebhookReceiverSpec, http: HttpClient, external_url: str = "") -> None:
        self.name = f"webhook[{spec.name}]"
        if not spec.url:
            raise MissingCredentialError(self.name, "url")
        self._spec = spec
        self._http = http
        self._external_url = external_url

    def notify(self, n: Notification) -> None:
        """POST every group."""
        headers = {}
        if self._spec.bearer_token is not None:
            headers["Authorization"] = f"Bearer {self._spec.bearer_token.reveal()}"
        nid = notification_id(n)
        for i, g in enumerate(n.groups):
            body = webhook_payload(n.receiver, g, self._external_url, self._spec.max_alerts)
            if nid:
                key = nid if len(n.groups) == 1 else f"{nid}-{i}"
                body["idempotencyKey"] = key
                headers = {**headers, IDEMPOTENCY_HEADER: key}
            self._http.request("POST", self._spec.url, json=body, headers=headers)
