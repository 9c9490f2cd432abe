"""Which inferwatch receivers Alertmanager delivers itself, and as which integration."""

from __future__ import annotations

from typing import Any

from inferwatch.config import (
    DiscardReceiverSpec,
    EmailReceiverSpec,
    PagerDutyReceiverSpec,
    ReceiverSpec,
    SlackReceiverSpec,
    WebhookReceiverSpec,
)

__all__ = ["is_native", "native_receiver"]

# The PagerDuty severity inferwatch's own notifier sends for a tier.
_PD_SEVERITY = ('{{ if eq .CommonLabels.tier "P0" }}critical{{ else if eq .CommonLabels.tier "P1" }}'
                'error{{ else if eq .CommonLabels.tier "P2" }}warning{{ else }}info{{ end }}')


def is_native(spec: ReceiverSpec) -> bool:
    """Whether Alertmanager delivers this receiver itself (else inferwatch's receiver does)."""
    if isinstance(spec, PagerDutyReceiverSpec):
        return spec.routing_key is not None
    if isinstance(spec, EmailReceiverSpec):
        return bool(spec.smarthost and spec.to)
    if isinstance(spec, SlackReceiverSpec):
        return spec.webhook_url is not None
    if isinstance(spec, WebhookReceiverSpec):
        return bool(spec.url)
    return isinstance(spec, DiscardReceiverSpec)


def native_receiver(spec: ReceiverSpec) -> dict[str, Any]:
    """The Alertmanager integration of a receiver for which ``is_native`` holds."""
    if isinstance(spec, DiscardReceiverSpec):
        return {}  # Alertmanager's receiver without integrations
    if isinstance(spec, PagerDutyReceiverSpec) and spec.routing_key is not None:
        return {"pagerduty_configs": [{
            "send_resolved": spec.send_resolved, "routing_key": spec.routing_key.reveal(),
            "url": spec.url.rstrip("/") + "/v2/enqueue", "severity": _PD_SEVERITY,
            "description": '{{ .CommonLabels.alertname }} ({{ .CommonLabels.tier }}): '
                           '{{ .CommonAnnotations.summary }}',
            # The fields inferwatch's own PagerDuty notifier fills, from the same labels.
            "source": "{{ if .CommonLabels.service }}{{ .CommonLabels.service }}"
                      "{{ else }}inferwatch{{ end }}",
            "component": "{{ .CommonLabels.service }}", "group": "{{ .CommonLabels.dimension }}",
            "class": "{{ .CommonLabels.alertname }}",
        }]}
    if isinstance(spec, EmailReceiverSpec):
        email: dict[str, Any] = {"send_resolved": spec.send_resolved, "to": ", ".join(spec.to),
                                 "from": spec.from_, "smarthost": spec.smarthost,
                                 "require_tls": spec.starttls}
        if spec.username:
            email["auth_username"] = spec.username
        if spec.password is not None:
            email["auth_password"] = spec.password.reveal()
        return {"email_configs": [email]}
    if isinstance(spec, SlackReceiverSpec) and spec.webhook_url is not None:
        templates = {k: v for k, v in (("title", spec.title), ("text", spec.text)) if v is not None}
        return {"slack_configs": [{"send_resolved": spec.send_resolved,
                                   "api_url": spec.webhook_url.reveal(), **templates}]}
    if isinstance(spec, WebhookReceiverSpec):
        hook: dict[str, Any] = {"send_resolved": spec.send_resolved, "url": spec.url,
                                "max_alerts": spec.max_alerts}
        if spec.bearer_token is not None:
            hook["http_config"] = {"authorization": {"credentials": spec.bearer_token.reveal()}}
        return {"webhook_configs": [hook]}
    raise AssertionError(f"{spec.type} has no Alertmanager integration")  # pragma: no cover
