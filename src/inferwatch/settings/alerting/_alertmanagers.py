"""``alerting.alertmanagers`` and ``alerting.external_labels``: alerts pushed to existing Alertmanagers.

    alerting:
      external_labels: {cluster: eu-1}
      alertmanagers:
        - url: http://alertmanager-0:9093
        - {url: https://am.example.org/team, bearer_token: "..."}

As Prometheus does: every firing alert is posted to ``<url>/api/v2/alerts``
of each Alertmanager, re-sent every minute while it fires with an ``endsAt``
a few resends ahead, and posted once more with its ``endsAt`` when it resolves.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from inferwatch.settings._types import Duration, FrozenModel, Secret, http_url

__all__ = ["AlertmanagerSpec"]


class AlertmanagerSpec(FrozenModel):
    """One Alertmanager (or one member of a cluster: list each, as Prometheus does)."""

    url: str = Field(description="base URL, e.g. http://127.0.0.1:9093 (with its path prefix, if any)")
    timeout: Duration = Field(10.0, gt=0, description="per POST")
    bearer_token: Secret | None = None

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        return http_url(url, "http://127.0.0.1:9093").rstrip("/")
