"""Generic webhook: Alertmanager's webhook JSON (``version: "4"``), one POST per group.

When the delivery core gives a group its stable idempotency key, it is sent as
the ``Idempotency-Key`` header (and, by ``webhook_payload``, in the body), so a
receiver can drop the repeat of a send that a crash interrupted. inferwatch's own
lines travel as ``notes``, an escalation step as ``escalation`` and, in an HA pair, the
replica that sent it as ``replica``, beside Alertmanager's keys.
"""

from __future__ import annotations

from inferwatch._exceptions import MissingCredentialError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._template import notification_id, webhook_payload
from inferwatch.settings import WebhookReceiverSpec

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
        for g in n.groups:
            body = webhook_payload(n.receiver, g, self._external_url, self._spec.max_alerts)
            if n.notes:  # inferwatch's lines (escalation step, acknowledgement link), beside Alertmanager's
                body["notes"] = list(n.notes)
            if n.step:
                body["escalation"] = {"policy": n.escalation, "step": n.step}
            if n.sender:  # the HA replica that sent it
                body["replica"] = n.sender
            key = notification_id(g)
            sent = {**headers, IDEMPOTENCY_HEADER: key} if key else headers
            self._http.request("POST", self._spec.url, json=body, headers=sent)
